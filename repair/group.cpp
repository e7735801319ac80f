// The heartbeat backend of repair/group.hpp: the group's agreements and creations, over the primitives
// of repair/mpi_only.cpp, driven by the state machine of repair/liveness.hpp.
#include <algorithm>

#include "cohort/cohort.h"
#include "detector/inject.hpp"
#include "detector/log.hpp"
#include "repair/group.hpp"
#include "repair/liveness.hpp"

namespace cohort::repair {
namespace {

enum Kind { kAgreeCall = 1, kCreateCall = 2 };
constexpr int kMaxErrors = 5;

// Group ranks of `world` (group order) that this rank's detector knows dead.
RankSet known_failed(const std::vector<int> &world) {
  RankSet out;
  for (std::size_t i = 0; i < world.size(); ++i) {
    if (detail::known_dead(world[i])) out.push_back(static_cast<int>(i));
  }
  return out;
}


std::vector<int> pick(const std::vector<int> &world, const RankSet &members) {
  std::vector<int> out;
  for (int m : members) out.push_back(world[static_cast<std::size_t>(m)]);
  return out;
}

}  // namespace

int group_agree(MPI_Group group, int tag, int *flag, std::vector<int> *failed, const char *call) {
  if (!detail::live()) return MPI_ERR_OTHER;
  std::vector<int> world = world_ranks_of_group(group);
  if (member_position(world, call) < 0) return MPI_ERR_GROUP;
  std::uint64_t id = detail::add_group(world, tag, kAgreeCall);
  inject::point("group.agree");
  detail::agree_over(id, flag, failed);
  return MPI_SUCCESS;
}

int group_create(MPI_Group group, int tag, MPI_Comm *newcomm, std::vector<int> *failed, const char *call) {
  *newcomm = MPI_COMM_NULL;
  if (!detail::live()) return MPI_ERR_OTHER;
  std::vector<int> world = world_ranks_of_group(group);
  int me = member_position(world, call);
  if (me < 0) return MPI_ERR_GROUP;
  std::uint64_t id = detail::add_group(world, tag, kCreateCall);
  GroupCreation g(static_cast<int>(world.size()), me, known_failed(world));
  MPI_Comm made = MPI_COMM_NULL;
  int rc = MPI_SUCCESS, errors = 0;
  for (GroupCreation::Action a = g.start();;) {
    switch (a.kind) {
      case GroupCreation::Action::kCreate:
        inject::point("group.create");
        made = MPI_COMM_NULL;
        rc = detail::create_over(pick(world, a.members), id, g.failed().size(), &made);
        a = g.on_created(rc == MPI_SUCCESS && made != MPI_COMM_NULL);
        break;
      case GroupCreation::Action::kAgree: {
        inject::point("group.confirm");
        int flag = a.flag;
        RankSet decided;
        RankSet before = g.failed();
        detail::agree_over(id, &flag, &decided);
        // NOTE: the decision is uniform, so every survivor counts the same errors and gives up together.
        // NOTE: counted from the decision only (no new failure, yet not made everywhere), so that every
        // survivor gives up at the same attempt.
        if (flag == 0 && decided == before && g.attempt() > 0 && ++errors >= kMaxErrors) {
          COHORT_LOG_ERROR("%s: MPI_Comm_create_group over %zu members failed (code %d)", call,
                           world.size() - decided.size(), rc);
          return rc != MPI_SUCCESS ? rc : MPI_ERR_OTHER;
        }
        if (flag == 0 || decided != before) {
          COHORT_LOG_INFO("%s: attempt %d did not complete on every member; retrying", call, g.attempt());
        }
        a = g.on_decided(flag, decided);
        break;
      }
      case GroupCreation::Action::kDone:
        *newcomm = made;
        detail::register_created(made, id);
        if (failed != nullptr) *failed = g.failed();
        return MPI_SUCCESS;
      case GroupCreation::Action::kFenced:
        log::fatal(COHORT_EXIT_FENCED, "%s: the group's survivors agreed that this rank is dead", call);
    }
  }
}

}  // namespace cohort::repair
