// The ulfm backend of repair/group.hpp: a simple fallback, not the liveness discovery of
// repair/liveness.hpp (ULFM's failure knowledge is the MPI's own, and its MPIX_Comm_agree/shrink need a
// communicator, which is what is being created). group_create calls MPI_Comm_create_group(MPI_COMM_WORLD)
// over the members not known dead (acknowledged on MPI_COMM_WORLD, or known to the detector); ULFM fails that call on the members when one of them dies, and the
// fallback then retries (tag unchanged) without the members then known dead, up to the group's size
// times. The result is made uniform by a ULFM agreement on it and, if that reports a failure, a ULFM
// shrink. group_agree creates such a communicator and agrees on it (the communicator is kept, never
// freed: freeing could wait on a dead member). Unlike the heartbeat backend, members that disagree on who
// is dead when they call can make the creation fail on all of them (5 retries, then the error code).
#include <algorithm>

#include "detector/inject.hpp"
#include "detector/log.hpp"
#include "detector/runtime.hpp"
#include "repair/group.hpp"
#include "repair/repair.hpp"

namespace cohort::repair {
namespace {


// MPI_COMM_WORLD ranks of comm's members, in comm order.
std::vector<int> members_of(MPI_Comm comm) {
  MPI_Group g;
  PMPI_Comm_group(comm, &g);
  std::vector<int> out = world_ranks_of_group(g);
  PMPI_Group_free(&g);
  return out;
}

}  // namespace

int group_create(MPI_Group group, int tag, MPI_Comm *newcomm, std::vector<int> *failed, const char *call) {
  *newcomm = MPI_COMM_NULL;
  std::vector<int> world = world_ranks_of_group(group);
  if (member_position(world, call) < 0) return MPI_ERR_GROUP;
  MPI_Errhandler saved;
  PMPI_Comm_get_errhandler(MPI_COMM_WORLD, &saved);
  PMPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rc = MPI_ERR_OTHER;
  MPI_Comm made = MPI_COMM_NULL;
  std::vector<int> live;
  for (std::size_t attempt = 0; attempt <= world.size() + 5 && made == MPI_COMM_NULL; ++attempt) {
    // NOTE: the failures ULFM reported so far (acknowledged on MPI_COMM_WORLD) and the detector's.
    std::vector<int> acked;
    ack_failed(MPI_COMM_WORLD);
    get_failed(MPI_COMM_WORLD, &acked);
    live.clear();
    for (int w : world) {
      if (!detector::is_failed(w) && !std::binary_search(acked.begin(), acked.end(), w)) live.push_back(w);
    }
    MPI_Group wg, sub;
    PMPI_Comm_group(MPI_COMM_WORLD, &wg);
    PMPI_Group_incl(wg, static_cast<int>(live.size()), live.data(), &sub);
    inject::point("group.create");
    rc = PMPI_Comm_create_group(MPI_COMM_WORLD, sub, tag, &made);
    PMPI_Group_free(&sub);
    PMPI_Group_free(&wg);
    if (rc != MPI_SUCCESS) made = MPI_COMM_NULL;
  }
  PMPI_Comm_set_errhandler(MPI_COMM_WORLD, saved);
  PMPI_Errhandler_free(&saved);
  if (made == MPI_COMM_NULL) {
    COHORT_LOG_ERROR("%s: MPI_Comm_create_group over the group's %zu live members failed (code %d)", call,
                     live.size(), rc);
    return rc;
  }
  register_comm(made, MPI_COMM_NULL);
  inject::point("group.confirm");
  int ok = 1;
  std::vector<int> lost;
  agree(made, &ok, &lost);
  if (!lost.empty()) {
    MPI_Comm shrunk = MPI_COMM_NULL;
    rc = shrink(made, &shrunk);
    if (rc != MPI_SUCCESS) return rc;
    made = shrunk;
    live = members_of(made);
  }
  *newcomm = made;
  if (failed != nullptr) {
    failed->clear();
    for (std::size_t i = 0; i < world.size(); ++i) {
      if (std::find(live.begin(), live.end(), world[i]) == live.end()) failed->push_back(static_cast<int>(i));
    }
  }
  return MPI_SUCCESS;
}

int group_agree(MPI_Group group, int tag, int *flag, std::vector<int> *failed, const char *call) {
  MPI_Comm comm = MPI_COMM_NULL;
  std::vector<int> left_out;
  int rc = group_create(group, tag, &comm, &left_out, call);
  if (rc != MPI_SUCCESS) return rc;
  std::vector<int> world = world_ranks_of_group(group), sub;
  inject::point("group.agree");
  rc = agree(comm, flag, &sub);
  std::vector<int> comm_world = members_of(comm);
  for (int s : sub) {
    auto it = std::find(world.begin(), world.end(), comm_world[static_cast<std::size_t>(s)]);
    left_out.push_back(static_cast<int>(it - world.begin()));
  }
  std::sort(left_out.begin(), left_out.end());
  *failed = left_out;
  return rc;
}

}  // namespace cohort::repair
