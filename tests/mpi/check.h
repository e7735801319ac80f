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

/* NOTE: one fputs per line: MPICH's stdout may be unbuffered, and three separate writes from several
 * ranks interleave in the launcher's output. */
#define TEST_PASS(...)                                                              \
  do {                                                                              \
    char test_pass_msg_[512], test_pass_line_[640];                                 \
    snprintf(test_pass_msg_, sizeof test_pass_msg_, __VA_ARGS__);                   \
    snprintf(test_pass_line_, sizeof test_pass_line_, "cohort-test: rank %d PASS %s\n", \
             check_world_rank(), test_pass_msg_);                                   \
    fputs(test_pass_line_, stdout);                                                 \
    fflush(stdout);                                                                 \
  } while (0)
#endif
