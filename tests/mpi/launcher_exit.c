/* Exit-code rules of cohort-run (README, "Launching: cohort-run"), one way of ending per mode:
 *   launcher_exit kill R        rank R dies by SIGKILL after a barrier; the others notice it in a second
 *                               barrier (so they record it dead) and exit 0: excused, cohort-run exits 0
 *   launcher_exit unnoticed R   rank R dies by SIGKILL after a barrier; the others exit 0 at once, before
 *                               any of them can learn it: not excused (137)
 *   launcher_exit fail R        rank R exits 1 after a barrier, without MPI_Finalize; the others notice it
 *                               and exit 0 (failed; excused under --tolerate exit)
 *   launcher_exit fail-unnoticed R   the same, but the others exit 0 at once (never excused)
 *   launcher_exit segv R        rank R dies of SIGSEGV (abort R: SIGABRT); the others notice it and exit 0
 *                               (crashed; excused under --tolerate crash)
 *   launcher_exit all-segv -    every rank dies of SIGSEGV after a barrier
 *   launcher_exit early R       rank R dies by SIGKILL before MPI_Init; the others wait in MPI_Init for it
 *   launcher_exit sleep -       every rank sleeps 30 s after MPI_Init (killed by injection or --timeout)
 * Signals and the launcher:
 *   launcher_exit sleep-across R S   after a barrier the others call sleep(S) once, and rank R dies by SIGKILL
 *                               1 s later: the sleep must return 0 after S s by CLOCK_MONOTONIC (no signal
 *                               cuts it short), and their MPI_Allreduce then counts the survivors
 *   launcher_exit env NAME=VALUE   every rank finds NAME=VALUE in its environment (set by a launcher option
 *                               that cohort-run passed on, e.g. -genv / -x)
 * Each launch runs under a hard timeout (TIMEOUT in tests/mpi/CMakeLists.txt: cohort-run's --timeout and
 * ctest's own). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static int launcher_rank(void) {
  const char *v = getenv("PMI_RANK");
  if (v == NULL) v = getenv("OMPI_COMM_WORLD_RANK");
  return v == NULL ? -1 : atoi(v);
}

static double monotonic_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Every rank checks NAME=VALUE in its environment; the ranks count those that found it. */
static void check_env(const char *assignment) {
  const char *eq = strchr(assignment, '=');
  CHECK(eq != NULL, "env mode needs NAME=VALUE, not '%s'", assignment);
  char name[256];
  snprintf(name, sizeof name, "%.*s", (int)(eq - assignment), assignment);
  const char *got = getenv(name);
  CHECK(got != NULL && strcmp(got, eq + 1) == 0, "%s is '%s', expected '%s' (from the launcher option)", name,
        got == NULL ? "(unset)" : got, eq + 1);
  int size, one = 1, count = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Allreduce(&one, &count, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK(count == size, "%d of %d ranks found %s", count, size, name);
  TEST_PASS("%s=%s", name, got);
}

/* The survivors of `victim` sleep(seconds) once while it dies (1 s in) and they learn it: nothing may cut
 * the sleep short, neither the launcher's signals at the death (MPICH's SIGUSR1) nor cohort's. */
static void sleep_across_death(int victim, unsigned seconds) {
  double start = monotonic_s();
  unsigned left = sleep(seconds);
  double slept = monotonic_s() - start;
  CHECK(left == 0 && slept >= seconds - 0.01, "sleep(%u) returned %u after %.3f s", seconds, left, slept);
  int size, one = 1, count = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Allreduce(&one, &count, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK(count == size - 1, "MPI_Allreduce counted %d survivors, expected %d", count, size - 1);
  TEST_PASS("sleep(%u) slept %.3f s (rank %d dead)", seconds, slept, victim);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: launcher_exit kill|unnoticed|fail|fail-unnoticed|segv|abort|all-segv|early|sleep RANK\n"
                    "       launcher_exit sleep-across RANK SECONDS | env NAME=VALUE\n");
    return 2;
  }
  const char *mode = argv[1];
  int victim = atoi(argv[2]);
  if (strcmp(mode, "early") == 0 && launcher_rank() == victim) raise(SIGKILL);
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (strcmp(mode, "sleep") == 0) {
    /* NOTE: not sleep(30): a rank whose own injected kill was due a few ms after another rank's woke up at
     * hydra's SIGUSR1, passed and exited 0. */
    sleep_ms(30 * 1000);
    TEST_PASS("slept");
    _exit(0);
  }
  if (strcmp(mode, "env") == 0) {
    check_env(argv[2]);
    MPI_Finalize();
    return 0;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (strcmp(mode, "all-segv") == 0) raise(SIGSEGV);
  if (rank == victim) {
    if (strcmp(mode, "sleep-across") == 0) sleep_ms(1000);
    if (strcmp(mode, "kill") == 0 || strcmp(mode, "unnoticed") == 0 || strcmp(mode, "sleep-across") == 0) raise(SIGKILL);
    if (strcmp(mode, "segv") == 0) raise(SIGSEGV);
    if (strcmp(mode, "abort") == 0) abort();
    fflush(stdout);
    _exit(1);
  }
  if (strcmp(mode, "sleep-across") == 0) {
    CHECK(argc == 4, "sleep-across needs RANK SECONDS");
    sleep_across_death(victim, (unsigned)atoi(argv[3]));
    _exit(0);
  }
  if (strcmp(mode, "unnoticed") != 0 && strcmp(mode, "fail-unnoticed") != 0) {
    /* The survivors' barrier completes only once each of them knows the victim dead. */
    MPI_Barrier(MPI_COMM_WORLD);
  } else {
    sleep_ms(500);
  }
  TEST_PASS("exits 0");
  _exit(0);
}
