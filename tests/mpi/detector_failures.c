/* detector_failures VICTIMS SECONDS [SETTLE_MS]
 * VICTIMS: "none" or comma-separated MPI_COMM_WORLD ranks that COHORT_INJECT_FAILURE (set by the test) kills or
 * stops. Every survivor polls cohort_failed_count() until it reaches the number of victims (deadline:
 * SECONDS), then checks that cohort_failed_ranks() is exactly the victims, that cohort_is_alive agrees,
 * and that no further rank is declared failed during a settle time (SETTLE_MS, default one heartbeat
 * timeout), which also keeps the survivors' detectors running for a victim that is merely paused.
 * A victim that is still running at the deadline (injection or fencing did not happen) fails. */
#include <cohort/cohort.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(argc == 3 || argc == 4, "usage: detector_failures VICTIMS SECONDS [SETTLE_MS]");
  int victims[256], nv = 0, me_victim = 0;
  for (char *tok = strcmp(argv[1], "none") == 0 ? NULL : strtok(argv[1], ","); tok != NULL && nv < 256; tok = strtok(NULL, ",")) {
    victims[nv] = atoi(tok);
    CHECK(victims[nv] >= 0 && victims[nv] < size, "victim %d out of range", victims[nv]);
    if (victims[nv] == rank) me_victim = 1;
    ++nv;
  }
  qsort(victims, nv, sizeof(int), cmp_int);
  double deadline = now_s() + atof(argv[2]);
  const char *t = getenv("COHORT_HB_TIMEOUT_MS");
  long settle_ms = argc == 4 ? atol(argv[3]) : t ? atol(t) : 1000;
  MPI_Barrier(MPI_COMM_WORLD);

  if (me_victim) {
    while (now_s() < deadline) sleep_ms(10);
    CHECK(0, "victim rank %d still running after the deadline", rank);
  }
  while (cohort_failed_count() < nv && now_s() < deadline) sleep_ms(5);
  CHECK(cohort_failed_count() == nv, "%d failures known, expected %d", cohort_failed_count(), nv);
  sleep_ms(settle_ms);
  int got[256];
  int n = cohort_failed_ranks(got, 256);
  CHECK(n == nv, "cohort_failed_ranks returned %d ranks, expected %d", n, nv);
  qsort(got, n, sizeof(int), cmp_int);
  for (int i = 0; i < n; ++i) {
    CHECK(got[i] == victims[i], "failed set differs at %d: %d vs %d", i, got[i], victims[i]);
    CHECK(cohort_is_alive(got[i]) == 0, "cohort_is_alive(%d) != 0", got[i]);
  }
  int alive = 0;
  for (int r = 0; r < size; ++r) alive += cohort_is_alive(r) == 1;
  CHECK(alive == size - nv, "%d ranks alive, expected %d", alive, size - nv);
  CHECK(cohort_is_alive(size) == -1, "out-of-range rank not rejected");
  TEST_PASS("failed set of %d rank(s) matches", nv);
  /* NOTE: end through MPI_Finalize, never _exit: a process that ends without it is a failed rank, and its
   * observer on this host sees that at once (pidfd), while other survivors may still be checking. The
   * wrapper's survivors-only barrier keeps every survivor here until all have checked, and it skips the
   * MPI library's own finalize after failures (which hangs in MPICH). */
  MPI_Finalize();
  return 0;
}
