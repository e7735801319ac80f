/* Every rank's MPI_Init, MPI_Comm_rank/size and MPI_Barrier went through cohort's wrappers. */
#include <cohort/cohort.h>

#include "check.h"

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(cohort_call_count("MPI_Init") == 1, "MPI_Init count %ld", cohort_call_count("MPI_Init"));
  CHECK(cohort_call_count("MPI_Barrier") == 2, "MPI_Barrier count %ld", cohort_call_count("MPI_Barrier"));
  CHECK(cohort_call_count("MPI_Comm_rank") >= 1, "MPI_Comm_rank not wrapped");
  CHECK(cohort_call_count("MPI_Bogus") == -1, "unknown call counted");
  TEST_PASS("size %d", size);
  MPI_Finalize();
  return 0;
}
