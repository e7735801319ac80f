/* hello: every rank says hello through cohort's wrappers, then they meet at a barrier. */
#include <mpi.h>
#include <stdio.h>

#include <cohort/cohort.h>

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Barrier(MPI_COMM_WORLD);
  printf("hello from rank %d of %d (MPI_Barrier through cohort: %s)\n", rank, size,
         cohort_call_count("MPI_Barrier") == 1 ? "yes" : "no");
  MPI_Finalize();
  return 0;
}
