/* solver_app: a program that uses the solver library (its own MPI_Allreduce inside a shared library).
 *
 *   solver_app count <K> escapes|covered
 *                                   fault-free: K dot products; counts the MPI_Allreduce calls cohort saw
 *                                   (cohort_call_count) during them: `escapes` expects 0 (the `--wrap`
 *                                   build: the library's calls reach MPI directly), `covered` expects K
 *                                   (preloaded).
 *   solver_app survive <K> <ms>     K dot products, <ms> apart, while ranks die: every result must be the
 *                                   sum over the ranks alive at the time; the last one over the survivors.
 *
 * Rank r holds x = (r+1, ...), y = (1, ...) with 4 entries, so a dot product over the ranks in S is
 * 4 * sum(r+1, r in S). Prints `cohort-test: rank R PASS` or `... FAIL <why>` (tests/mpi/run.sh judges).
 * cohort's API is looked up at run time (dlsym), so the same source works linked with cohort or not. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "solver.h"

static long call_count(const char *name) {
  long (*fn)(const char *) = (long (*)(const char *))dlsym(RTLD_DEFAULT, "cohort_call_count");
  return fn ? fn(name) : -1;
}

static int failed_ranks(int *out, int max) {
  int (*fn)(int *, int) = (int (*)(int *, int))dlsym(RTLD_DEFAULT, "cohort_failed_ranks");
  return fn ? fn(out, max) : -1;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *mode = argc > 1 ? argv[1] : "count";
  int k = argc > 2 ? atoi(argv[2]) : 10;
  const char *expect_seen = strcmp(mode, "count") == 0 && argc > 3 ? argv[3] : "covered";
  int gap_ms = strcmp(mode, "survive") == 0 && argc > 3 ? atoi(argv[3]) : 0;
  double x[4], y[4];
  for (int i = 0; i < 4; ++i) x[i] = rank + 1, y[i] = 1.0;
  double all = 4.0 * size * (size + 1) / 2.0;
  char why[200] = "";
  long before = call_count("MPI_Allreduce");
  double d = 0.0;
  for (int i = 0; i < k && !why[0]; ++i) {
    if (gap_ms > 0) sleep_ms(gap_ms);
    int rc = solver_dot(x, y, 4, &d, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) snprintf(why, sizeof why, "solver_dot %d returned %d", i, rc);
    /* A sum over any set of ranks that includes this one: between 4 * (rank+1) and the full sum. */
    else if (d < 4.0 * (rank + 1) || d > all) snprintf(why, sizeof why, "dot %d = %g is no sum over ranks", i, d);
  }
  long seen = call_count("MPI_Allreduce") - before;
  if (!why[0] && strcmp(mode, "count") == 0) {
    printf("rank %d: cohort saw %ld of the solver's %d MPI_Allreduce calls\n", rank, before < 0 ? -1 : seen, k);
    long want = strcmp(expect_seen, "escapes") == 0 ? 0 : k;
    if (d != all) snprintf(why, sizeof why, "dot = %g, expected %g", d, all);
    else if (before < 0) snprintf(why, sizeof why, "cohort_call_count is absent: cohort is not loaded");
    else if (seen != want) snprintf(why, sizeof why, "cohort saw %ld calls, expected %ld (%s)", seen, want, expect_seen);
  } else if (!why[0]) {
    /* After the last dot product every survivor knows the failed set: the result is over the others. */
    int dead[64];
    int nd = failed_ranks(dead, 64);
    double expect = all;
    for (int i = 0; i < nd; ++i) expect -= 4.0 * (dead[i] + 1);
    printf("rank %d: last dot product %g over %d of %d ranks\n", rank, d, size - (nd < 0 ? 0 : nd), size);
    if (nd <= 0) snprintf(why, sizeof why, "no failed rank known (cohort API %s)", nd < 0 ? "absent" : "says none");
    else if (d != expect) snprintf(why, sizeof why, "last dot = %g, expected %g over the survivors", d, expect);
  }
  if (why[0]) printf("cohort-test: rank %d FAIL %s\n", rank, why);
  else printf("cohort-test: rank %d PASS\n", rank);
  fflush(stdout);
  MPI_Finalize();
  return 0;
}
