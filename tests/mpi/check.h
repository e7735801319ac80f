/* Helpers for multi-rank test programs: a rank that finds a wrong value prints one FAIL line and exits 1;
 * a rank that checked everything prints `cohort-test: rank R PASS`, which tests/mpi/run.sh counts. */
#ifndef COHORT_TEST_CHECK_H
#define COHORT_TEST_CHECK_H
#include <mpi.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

static int check_world_rank(void) {
  int r = -1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

/* NOTE: each line leaves in one write(2): MPICH's launcher interleaves the output of ranks at write
 * boundaries, and stdout may be unbuffered there. */
static void check_line(const char *head, const char *fmt, ...) __attribute__((format(printf, 2, 3), unused));
static void check_line(const char *head, const char *fmt, ...) {
  char line[1024];
  int n = snprintf(line, sizeof line, "cohort-test: rank %d %s", check_world_rank(), head);
  va_list ap;
  va_start(ap, fmt);
  if (n >= 0 && n < (int)sizeof line) n += vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
  va_end(ap);
  if (n < 0 || n > (int)sizeof line - 2) n = (int)sizeof line - 2;
  line[n++] = '\n';
  fflush(stdout);
  if (write(STDOUT_FILENO, line, (size_t)n) < 0) {
  }
}

#define CHECK(cond, ...)                                                                      \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      char check_what_[768];                                                                  \
      snprintf(check_what_, sizeof check_what_, __VA_ARGS__);                                 \
      check_line("FAIL ", "%s:%d: %s: %s", __FILE__, __LINE__, #cond, check_what_);           \
      exit(1);                                                                                \
    }                                                                                         \
  } while (0)

#define TEST_PASS(...) check_line("PASS ", __VA_ARGS__)
#endif
