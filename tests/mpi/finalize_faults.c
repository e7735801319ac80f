/* A rank dies inside MPI_Finalize (MPI 4.0 section 11.2.2: MPI_Finalize is collective over the connected
 * processes; cohort's is a barrier of the survivors, after which each rank leaves).
 *
 *   finalize_faults [library]
 *
 * The test kills rank 1 with COHORT_INJECT_FAILURE=rank=1,at=coll.round,hit=1: between the two rounds of
 * cohort's dissemination barrier over 4 ranks, the first collective of the program. Ranks 0 and 2 then
 * complete the barrier and leave; rank 3 waits for rank 1's second-round message, finds it dead and
 * repairs with ranks that are gone, which must not wait for them. Before MPI_Finalize every rank checks a
 * ring of point-to-point messages (no collective, so that the hook's first hit is in MPI_Finalize); after it,
 * each survivor prints its PASS line with the values it checked.
 *
 * With `library`, the test kills rank 1 with at=finalize.library: after cohort's barrier, in a job where
 * nobody knew a failure, right before the MPI library's own finalize, which then waits for it (MPICH) until
 * cohort's bound ends the process with code 0. Each rank prints its PASS line before MPI_Finalize, and the
 * test asserts that the job ends with code 0. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size == 4, "finalize_faults runs on 4 ranks, not %d", size);
  const int library = argc > 1 && !strcmp(argv[1], "library");
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  int out = rank * 10 + 7, in = -1;
  CHECK(MPI_Sendrecv(&out, 1, MPI_INT, next, 0, &in, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE) ==
            MPI_SUCCESS, "sendrecv");
  CHECK(in == prev * 10 + 7, "got %d from rank %d", in, prev);
  if (library) {
    TEST_PASS("got %d from rank %d; MPI_Finalize next", in, prev);
    MPI_Finalize();
    return 0;
  }
  CHECK(MPI_Finalize() == MPI_SUCCESS, "MPI_Finalize");
  /* (MPI is finalized: one line with write(2), no MPI call) */
  char line[128];
  int n = snprintf(line, sizeof line, "cohort-test: rank %d PASS MPI_Finalize returned; got %d from rank %d\n",
                   rank, in, prev);
  fflush(stdout);
  if (write(1, line, (size_t)n) < 0) return 1;
  return 0;
}
