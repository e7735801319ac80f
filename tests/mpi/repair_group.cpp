// Non-collective creation over a group's live members (repair/liveness.hpp) through the
// wrapped MPI_Comm_create_group, and the group agreement (cohort_group_agree), on real ranks.
//
// The group G is world ranks g-1, g-2, ..., 0 (descending, g = n/2 + 1); the other ranks are outsiders.
// Every surviving member checks the new communicator's size, members and order (G without the dead, in
// group order) and an Allreduce over it, then a group agreement's AND and failed set. Outsiders never
// call anything of the group's, and must finish their own work:
//   busy      they run 200 Allreduces among themselves and check each sum
//   blocked   they sit in a blocking MPI_Recv from a member, which sends only once it has its
//             communicator (the creation cannot have needed them)
//
//   repair_group nofail busy|blocked
//   repair_group dead V busy|blocked      member V dies (SIGKILL) just before the call
//   repair_group during V busy|blocked    member V dies inside the call (the test sets
//                                         COHORT_INJECT_FAILURE=rank=V,at=group.create|group.confirm)
//   repair_group parent busy|blocked      the parent (MPI_COMM_WORLD) is faulty: the last outsider dies
//                                         before the call; outsiders are then `blocked`
//   repair_group from_group <any of the above>   the same through MPI 4.0's MPI_Comm_create_from_group
//                                         (built where the MPI has it: COHORT_HAVE_COMM_CREATE_FROM_GROUP)
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "repair_common.hpp"  // includes <mpi.h>, which must come before cohort.h for the group calls

#include "cohort/cohort.h"

using namespace repair_test;

namespace {

int me, n, g;
bool from_group = false;  // MPI_Comm_create_from_group instead of MPI_Comm_create_group
constexpr int kTag = 77, kDoneTag = 78;

std::vector<int> group_ranks() {
  std::vector<int> out;
  for (int r = g - 1; r >= 0; --r) out.push_back(r);
  return out;
}

void member(const std::vector<int> &dead, const std::vector<int> &outsiders, bool blocked) {
  std::vector<int> granks = group_ranks();
  MPI_Group world, group;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, g, granks.data(), &group);
  MPI_Comm comm = MPI_COMM_NULL;
  const char *call = from_group ? "MPI_Comm_create_from_group" : "MPI_Comm_create_group";
  if (from_group) {
#if defined(COHORT_HAVE_COMM_CREATE_FROM_GROUP)
    CHECK(MPI_Comm_create_from_group(group, "cohort.test.group", MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm) ==
              MPI_SUCCESS,
          "MPI_Comm_create_from_group failed");
    MPI_Errhandler eh;
    MPI_Comm_get_errhandler(comm, &eh);
    CHECK(eh == MPI_ERRORS_RETURN, "MPI_Comm_create_from_group: the new communicator lacks the given error handler");
#else
    CHECK(false, "this MPI has no MPI_Comm_create_from_group");
#endif
  } else {
    CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, group, kTag, &comm) == MPI_SUCCESS, "MPI_Comm_create_group failed");
  }
  std::vector<int> expect;
  for (int r : granks) {
    if (!has(dead, r)) expect.push_back(r);
  }
  check_comm(comm, expect, call);
  int rank = -1;
  MPI_Comm_rank(comm, &rank);
  CHECK(expect[static_cast<std::size_t>(rank)] == me, "rank %d in the new communicator is world rank %d", rank,
        expect[static_cast<std::size_t>(rank)]);
  // The group agreement: AND of (1 << position in G) complements; the dead are reported as group ranks.
  int pos = static_cast<int>(std::find(granks.begin(), granks.end(), me) - granks.begin());
  int flag = ~(1 << pos), want = ~0, failed[16], nfailed = -1;
  for (std::size_t i = 0; i < granks.size(); ++i) {
    if (!has(dead, granks[i])) want &= ~(1 << i);
  }
  CHECK(cohort_group_agree(group, kTag, &flag, failed, 16, &nfailed) == MPI_SUCCESS, "cohort_group_agree failed");
  CHECK(flag == want, "group agree: flag %#x, expected %#x", flag, want);
  std::vector<int> got(failed, failed + nfailed), want_failed;
  for (std::size_t i = 0; i < granks.size(); ++i) {
    if (has(dead, granks[i])) want_failed.push_back(static_cast<int>(i));
  }
  CHECK(got == want_failed, "group agree: failed %s, expected %s (group ranks)", show(got).c_str(),
        show(want_failed).c_str());
  if (blocked && rank == 0) {
    for (int o : outsiders) PMPI_Send(&me, 1, MPI_INT, o, kDoneTag, MPI_COMM_WORLD);
  }
  int ok = 1;
  std::vector<int> lost;
  cohort::repair::agree(comm, &ok, &lost);  // nobody leaves while another still needs its answers
  TEST_PASS("member: communicator over %zu live members of %d", expect.size(), g);
}

void outsider(const std::vector<int> &outsiders, bool blocked, MPI_Comm own) {
  if (blocked) {
    int from = -1;
    // NOTE: under the ulfm backend a receive from MPI_ANY_SOURCE on MPI_COMM_WORLD fails while a failure
    // there is unacknowledged (MPIX_ERR_PROC_FAILED_PENDING): acknowledge and receive again, as a ULFM
    // program does. The heartbeat backend never returns an error here.
    PMPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_SUCCESS;
    for (int tries = 0; tries < 100; ++tries) {
      rc = PMPI_Recv(&from, 1, MPI_INT, MPI_ANY_SOURCE, kDoneTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (cohort::repair::error_kind(rc) != cohort::repair::ErrorKind::proc_failed) break;
      cohort::repair::ack_failed(MPI_COMM_WORLD);
    }
    CHECK(rc == MPI_SUCCESS, "outsider: MPI_Recv from a member failed (code %d)", rc);
    CHECK(from >= 0 && from < g, "outsider got %d", from);
    TEST_PASS("outsider: stayed blocked until the group had its communicator (from world rank %d)", from);
    return;
  }
  int want = 0;
  for (int o : outsiders) want += o;
  for (int i = 0; i < 200; ++i) {
    int sum = -1;
    PMPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, own);
    CHECK(sum == want, "outsider allreduce %d: %d, expected %d", i, sum, want);
  }
  TEST_PASS("outsider: 200 allreduces among %zu outsiders", outsiders.size());
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  me = world_rank();
  n = world_size();
  g = n / 2 + 1;
  if (argc >= 2 && std::strcmp(argv[1], "from_group") == 0) {
    from_group = true;
    --argc;
    ++argv;
  }
  CHECK(argc >= 3, "usage: repair_group [from_group] nofail|dead V|during V|parent busy|blocked");
  std::vector<int> dead, outsiders;
  for (int r = g; r < n; ++r) outsiders.push_back(r);
  const char *mode = argv[1];
  bool blocked = std::strcmp(argv[argc - 1], "blocked") == 0;
  if (std::strcmp(mode, "dead") == 0 || std::strcmp(mode, "during") == 0) dead = {std::atoi(argv[2])};
  if (std::strcmp(mode, "parent") == 0) {
    dead = {n - 1};
    blocked = true;
  }
  std::vector<int> live_outsiders;
  for (int o : outsiders) {
    if (!has(dead, o)) live_outsiders.push_back(o);
  }
  // The outsiders' own communicator, made before any death: under the ulfm backend a raw creation over
  // MPI_COMM_WORLD fails once world holds a dead process (repair/group_ulfm.cpp), and this test is about
  // the members' calls. (Its members hold no dead rank whenever the outsiders use it: not `blocked`.)
  MPI_Comm own = MPI_COMM_NULL;
  PMPI_Comm_split(MPI_COMM_WORLD, me >= g ? 1 : 0, me, &own);
  if (std::strcmp(mode, "dead") == 0 || std::strcmp(mode, "parent") == 0) kill_victims(dead);
  if (me < g) {
    member(dead, live_outsiders, blocked);
  } else {
    outsider(live_outsiders, blocked, own);
  }
  fflush(stdout);
  usleep(500 * 1000);
  _exit(0);
}
