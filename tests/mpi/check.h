/* Helpers for multi-rank test programs: a rank that finds a wrong value prints one FAIL line and exits 1;
 * a rank that checked everything prints `cohort-test: rank R PASS`, which tests/mpi/run.sh counts. */
#ifndef COHORT_TEST_CHECK_H
#define COHORT_TEST_CHECK_H
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int check_world_rank(void) {
  int r = -1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

#define CHECK(cond, ...)                                                                    \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      fprintf(stdout, "cohort-test: rank %d FAIL %s:%d: %s: ", check_world_rank(), __FILE__, \
              __LINE__, #cond);                                                             \
      fprintf(stdout, __VA_ARGS__);                                                         \
      fprintf(stdout, "\n");                                                                \
      fflush(stdout);                                                                       \
      exit(1);                                                                              \
    }                                                                                       \
  } while (0)

#define TEST_PASS(...)                                                   \
  do {                                                                   \
    fprintf(stdout, "cohort-test: rank %d PASS ", check_world_rank());   \
    fprintf(stdout, __VA_ARGS__);                                        \
    fprintf(stdout, "\n");                                               \
    fflush(stdout);                                                      \
  } while (0)
#endif
