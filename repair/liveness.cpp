#include "repair/liveness.hpp"

namespace cohort::repair {

GroupCreation::GroupCreation(int size, int me, const RankSet &known_failed)
    : size_(size), me_(me), knows_dead_(!known_failed.empty()) {}

RankSet GroupCreation::live() const {
  RankSet out;
  for (int m = 0; m < size_; ++m) {
    if (!contains(failed_, m)) out.push_back(m);
  }
  return out;
}

GroupCreation::Action GroupCreation::start() {
  if (knows_dead_) return Action{Action::kAgree, {}, 0};
  return Action{Action::kCreate, live(), 0};
}

GroupCreation::Action GroupCreation::on_created(bool made) {
  made_ = made;
  return Action{Action::kAgree, {}, made ? 1 : 0};
}

GroupCreation::Action GroupCreation::on_decided(int flag, const RankSet &failed) {
  if (contains(failed, me_)) return Action{Action::kFenced, {}, 0};
  // NOTE: equal sets, not only a set flag: a member that died after making the communicator leaves the
  // AND at 1, but the survivors must not keep a communicator holding a dead member.
  if (flag != 0 && failed == failed_) {
    done_ = true;
    return Action{Action::kDone, live(), 1};
  }
  failed_ = failed;
  ++attempt_;
  made_ = false;
  return Action{Action::kCreate, live(), 0};
}

}  // namespace cohort::repair
