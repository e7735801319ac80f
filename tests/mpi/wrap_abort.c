/* MPI_Abort through cohort stops the whole job: rank 1 aborts with code 3 while the others wait in a
 * barrier that can never complete; the launcher must end (no hang) with a failure. */
#include <unistd.h>

#include "check.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) {
    usleep(200 * 1000);
    MPI_Abort(MPI_COMM_WORLD, 3);
    CHECK(0, "MPI_Abort returned");
  }
  MPI_Barrier(MPI_COMM_WORLD); /* rank 1 never comes: only the abort ends this */
  CHECK(0, "the barrier completed without rank 1");
  return 0;
}
