/* Survivors one call apart, then point-to-point between them (README, "one call apart").
 *
 *   call_apart ROUNDS
 *
 * Rank 1 is killed by the test's COHORT_INJECT_FAILURE=rank=1,at=confirm.posted,hit=1: it completed the
 * first MPI_Allreduce and posted the barrier that confirms it, then died. Some survivors' barriers complete
 * (they return from the call: one call ahead) and others' do not (they agree, one call behind, and stay in
 * the call until the ones ahead take part in that agreement). Then every survivor sends to the next survivor
 * and receives from the previous one, ROUNDS times, before any other collective: a survivor ahead that
 * waits for a message from one behind must take part in the repair from inside its receive, or both wait
 * for good. Every survivor checks the first sum (rank 1's share included: it completed the call), each
 * message, and a last MPI_Allreduce over the survivors.
 *
 *   call_apart ROUNDS barrier
 *
 * The first call is a MPI_Barrier, which returns without a confirmation (its completion proves every member
 * entered it). The test kills rank 1 with at=coll.round,hit=1: between the two rounds of cohort's
 * dissemination barrier (4 ranks), so the rank that waits for rank 1's second-round message never completes
 * the barrier while the others return from it and go on to the point-to-point rounds. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK((argc == 2 || (argc == 3 && strcmp(argv[2], "barrier") == 0)) && size >= 4,
        "usage: call_apart ROUNDS [barrier] (at least 4 ranks)");
  int rounds = atoi(argv[1]);
  const int barrier = argc == 3;
  const int dead = 1;
  int v = rank + 1, sum = -1;
  if (barrier) {
    CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS, "first barrier");
  } else {
    CHECK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS, "first allreduce");
    CHECK(sum == size * (size + 1) / 2, "first allreduce: %d, not %d (rank %d completed it)", sum,
          size * (size + 1) / 2, dead);
  }
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  if (next == dead) next = (next + 1) % size;
  if (prev == dead) prev = (prev + size - 1) % size;
  for (int i = 0; i < rounds; ++i) {
    int out = rank * 1000 + i, in = -1;
    CHECK(MPI_Sendrecv(&out, 1, MPI_INT, next, i, &in, 1, MPI_INT, prev, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE) ==
              MPI_SUCCESS, "sendrecv round %d", i);
    CHECK(in == prev * 1000 + i, "round %d: got %d from rank %d", i, in, prev);
  }
  int live = size * (size + 1) / 2 - (dead + 1);
  CHECK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS, "last allreduce");
  CHECK(sum == live, "last allreduce: %d, not %d", sum, live);
  TEST_PASS("%d rounds of point-to-point after a death in the first %s", rounds,
            barrier ? "barrier" : "call's confirmation");
  MPI_Finalize();
  return 0;
}
