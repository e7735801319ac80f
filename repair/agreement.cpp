#include "repair/agreement.hpp"

#include <algorithm>
#include <utility>

namespace cohort::repair {

bool merge_into(RankSet *set, const RankSet &add) {
  if (add.empty()) return false;
  RankSet out;
  out.reserve(set->size() + add.size());
  std::set_union(set->begin(), set->end(), add.begin(), add.end(), std::back_inserter(out));
  if (out.size() == set->size()) return false;
  set->swap(out);
  return true;
}

bool contains(const RankSet &set, int member) { return std::binary_search(set.begin(), set.end(), member); }

int LiveTree::live_count() const { return size_ - static_cast<int>(failed_->size()); }

int LiveTree::position(int member) const {
  auto it = std::lower_bound(failed_->begin(), failed_->end(), member);
  if (it != failed_->end() && *it == member) return -1;
  return member - static_cast<int>(it - failed_->begin());
}

int LiveTree::member_at(int position) const {
  int x = position;
  for (int f : *failed_) {
    if (f > x) break;
    ++x;
  }
  return x;
}

int LiveTree::parent(int member) const {
  long p = position(member);
  if (p <= 0) return -1;
  long w = 1;
  while ((p / w) % radix_ == 0) w *= radix_;
  return member_at(static_cast<int>(p - ((p / w) % radix_) * w));
}

std::vector<int> LiveTree::children(int member) const {
  std::vector<int> out;
  long p = position(member);
  if (p < 0) return out;
  long m = live_count();
  long low = 1;  // weight of p's lowest non-zero digit: p's children sit below it
  if (p == 0) {
    low = m;
  } else {
    while ((p / low) % radix_ == 0) low *= radix_;
  }
  long top = 1;
  while (top * radix_ < low && p + top * radix_ < m) top *= radix_;
  for (long w = top; w >= 1; w /= radix_) {
    if (w >= low && p != 0) continue;
    for (long v = 1; v < radix_ && p + v * w < m; ++v) out.push_back(member_at(static_cast<int>(p + v * w)));
  }
  return out;
}

Agreement::Agreement(int size, int me, int flag, RankSet known_failed, int radix)
    : size_(size), me_(me), input_(flag), radix_(radix), view_(std::move(known_failed)) {
  std::sort(view_.begin(), view_.end());
  view_.erase(std::unique(view_.begin(), view_.end()), view_.end());
  view_changed();
}

void Agreement::on_failure(int member) {
  if (fenced_) return;
  merge({member}, false);
}

void Agreement::on_message(int from, const AgreeMsg &msg) {
  if (fenced_) return;
  switch (msg.type) {
    case AgreeMsg::kDecide:
      // NOTE: a DECIDE from a member already in the view is dropped; this is what keeps a decision of a
      // round that the others have abandoned from overtaking the round they are in (see the header).
      if (decided_ || contains(view_, from)) {
        merge(msg.failed, true);
        return;
      }
      decide(msg.flag, msg.failed, from);
      return;
    case AgreeMsg::kView:
      merge(msg.failed, true);
      return;
    case AgreeMsg::kContrib:
      if (decided_) {
        send(from, AgreeMsg::kDecide, dflag_, dfailed_);
        merge(msg.failed, true);
        return;
      }
      merge(msg.failed, true);
      if (fenced_ || contains(view_, from)) return;
      if (msg.failed.size() < view_.size()) {
        send(from, AgreeMsg::kView, 0, view_);
        return;
      }
      // Same size after merging means the same set: this contribution is for the current round.
      auto it = contribs_.find(from);
      if (it == contribs_.end() || it->second.tag.size() < msg.failed.size()) {
        contribs_[from] = Contribution{msg.flag, msg.failed};
      }
      try_complete();
      return;
  }
}

std::vector<Outgoing> Agreement::take_outbox() {
  std::vector<Outgoing> out;
  out.swap(outbox_);
  return out;
}

RankSet Agreement::take_learned() {
  RankSet out;
  out.swap(learned_);
  return out;
}

void Agreement::merge(const RankSet &add, bool from_message) {
  RankSet before;
  if (from_message) before = view_;
  if (!merge_into(&view_, add)) return;
  if (from_message) {
    RankSet fresh;
    std::set_difference(view_.begin(), view_.end(), before.begin(), before.end(), std::back_inserter(fresh));
    merge_into(&learned_, fresh);
  }
  view_changed();
}

void Agreement::view_changed() {
  if (contains(view_, me_)) {
    fenced_ = true;
    outbox_.clear();
    return;
  }
  if (decided_) {
    flood(-1);
    return;
  }
  sent_for_view_ = false;
  for (auto it = contribs_.begin(); it != contribs_.end();) {
    it = it->second.tag.size() == view_.size() ? std::next(it) : contribs_.erase(it);
  }
  try_complete();
}

void Agreement::try_complete() {
  if (decided_ || fenced_ || sent_for_view_) return;
  LiveTree tree(size_, &view_, radix_);
  int flag = input_;
  for (int child : tree.children(me_)) {
    auto it = contribs_.find(child);
    if (it == contribs_.end() || it->second.tag.size() != view_.size()) return;
    flag &= it->second.flag;
  }
  int parent = tree.parent(me_);
  if (parent < 0) {
    decide(flag, view_, -1);
    return;
  }
  sent_for_view_ = true;
  send(parent, AgreeMsg::kContrib, flag, view_);
}

void Agreement::decide(int flag, RankSet failed, int except) {
  decided_ = true;
  dflag_ = flag;
  dfailed_ = std::move(failed);
  contribs_.clear();
  if (contains(dfailed_, me_)) {
    fenced_ = true;
    outbox_.clear();
    return;
  }
  // The decided failed set joins the view (the caller declares them dead); the flood then goes along the
  // tree over the larger view, which is the one the others are converging to.
  RankSet before = view_;
  if (merge_into(&view_, dfailed_)) {
    RankSet fresh;
    std::set_difference(view_.begin(), view_.end(), before.begin(), before.end(), std::back_inserter(fresh));
    merge_into(&learned_, fresh);
  }
  flood(except);
}

void Agreement::flood(int except) {
  LiveTree tree(size_, &view_, radix_);
  int parent = tree.parent(me_);
  for (int child : tree.children(me_)) {
    if (child != except) send(child, AgreeMsg::kDecide, dflag_, dfailed_);
  }
  if (parent >= 0 && parent != except) send(parent, AgreeMsg::kDecide, dflag_, dfailed_);
}

void Agreement::send(int to, AgreeMsg::Type type, int flag, const RankSet &failed) {
  outbox_.push_back(Outgoing{to, AgreeMsg{type, flag, failed}});
}

}  // namespace cohort::repair
