// repair::revoke while the other members sit in a collective on that communicator: they wait in
// wrap::wait with Watch.revocable (the wrappers' poll loop) and must all come out with `revoked`; then
// the survivors shrink the revoked communicator.
//
//   repair_revoke basic   the last rank revokes a registered duplicate of MPI_COMM_WORLD
//   repair_revoke dies    the same, but the revoker dies after its first notice (the test sets
//                         COHORT_INJECT_FAILURE=rank=<last>,at=revoke.notice,hit=2): the member that got
//                         the notice passes it on once it learns the revoker is dead
#include <unistd.h>

#include <cstring>

#include "repair_common.hpp"
#include "wrap/core/progress.hpp"

using namespace repair_test;

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me = world_rank(), n = world_size(), revoker = n - 1;
  CHECK(argc == 2 && (std::strcmp(argv[1], "basic") == 0 || std::strcmp(argv[1], "dies") == 0),
        "usage: repair_revoke basic|dies");
  bool dies = std::strcmp(argv[1], "dies") == 0;
  MPI_Comm comm;
  PMPI_Comm_dup(MPI_COMM_WORLD, &comm);
  cohort::repair::register_comm(comm, MPI_COMM_WORLD);
  PMPI_Barrier(MPI_COMM_WORLD);
  if (me == revoker) {
    usleep(300 * 1000);  // the others are inside their barrier by now
    CHECK(!cohort::repair::is_revoked(comm), "revoked before anyone revoked it");
    cohort::repair::revoke(comm);  // with `dies`, this rank is killed inside
    CHECK(cohort::repair::is_revoked(comm), "the revoking rank does not see its own revocation");
  } else {
    MPI_Request req;
    PMPI_Ibarrier(comm, &req);  // the revoker never joins: only the revocation can end this wait
    cohort::wrap::Watch watch;
    watch.revocable = comm;
    cohort::wrap::WaitResult got = cohort::wrap::wait(&req, MPI_STATUS_IGNORE, watch);
    CHECK(got == cohort::wrap::WaitResult::revoked, "the barrier ended with %d, not revoked", static_cast<int>(got));
    CHECK(cohort::repair::is_revoked(comm), "is_revoked is false after the wait saw the revocation");
  }
  CHECK(!cohort::repair::is_revoked(MPI_COMM_WORLD), "MPI_COMM_WORLD revoked too");
  // Recovery as in ULFM: agree and shrink still work on the revoked communicator.
  std::vector<int> dead;
  if (dies) dead.push_back(revoker);
  int flag = 1;
  std::vector<int> failed;
  cohort::repair::agree(comm, &flag, &failed);
  CHECK(flag == 1 && failed == dead, "agree on the revoked comm: flag %d, failed %s", flag, show(failed).c_str());
  MPI_Comm fresh;
  CHECK(cohort::repair::shrink(comm, &fresh) == MPI_SUCCESS, "shrink of the revoked comm failed");
  check_comm(fresh, survivors(n, dead), "shrink(revoked)");
  CHECK(!cohort::repair::is_revoked(fresh), "the shrunk communicator is revoked");
  cohort::repair::agree(fresh, &flag, &failed);  // nobody leaves while another still needs its answers
  TEST_PASS("revocation reached every member%s; shrunk to %zu", dies ? " although the revoker died" : "",
            survivors(n, dead).size());
  usleep(300 * 1000);
  _exit(0);
}
