/* Helpers for multi-rank test programs: a rank that finds a wrong value prints one FAIL line and exits 1;
 * a rank that checked everything prints `cohort-test: rank R PASS`, which tests/mpi/run.sh counts. */
#ifndef COHORT_TEST_CHECK_H
#define COHORT_TEST_CHECK_H
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_world_rank(void) {
  int r = -1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

/* NOTE: each line is formatted first and written with one fputs: MPICH forwards ranks' output in chunks,
 * and a line written in pieces interleaves with other ranks' lines. */
#define CHECK_LINE_(prefix_fmt, prefix_arg, ...)                                   \
  do {                                                                             \
    char check_line_[1024];                                                        \
    int check_n_ = snprintf(check_line_, sizeof check_line_, prefix_fmt, prefix_arg); \
    if (check_n_ < 0 || check_n_ >= (int)sizeof check_line_) check_n_ = 0;         \
    snprintf(check_line_ + check_n_, sizeof check_line_ - 1 - (size_t)check_n_, __VA_ARGS__); \
    strcat(check_line_, "\n");                                                     \
    fputs(check_line_, stdout);                                                    \
    fflush(stdout);                                                                \
  } while (0)

#define CHECK(cond, ...)                                                                    \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      char check_where_[256];                                                               \
      snprintf(check_where_, sizeof check_where_, "cohort-test: rank %d FAIL %s:%d: %s: ",  \
               check_world_rank(), __FILE__, __LINE__, #cond);                              \
      CHECK_LINE_("%s", check_where_, __VA_ARGS__);                                         \
      exit(1);                                                                              \
    }                                                                                       \
  } while (0)

#define TEST_PASS(...) CHECK_LINE_("cohort-test: rank %d PASS ", check_world_rank(), __VA_ARGS__)
#endif
