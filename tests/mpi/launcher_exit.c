/* Exit-code rules of cohort-run (README, "Launching: cohort-run"), one way of ending per mode:
 *   launcher_exit kill R        rank R dies by SIGKILL after a barrier; the others notice it in a second
 *                               barrier (so they record it dead) and exit 0: excused, cohort-run exits 0
 *   launcher_exit unnoticed R   rank R dies by SIGKILL after a barrier; the others exit 0 at once, before
 *                               any of them can learn it: not excused (137)
 *   launcher_exit fail R        rank R exits 1 after a barrier; the others exit 0
 *   launcher_exit segv R        rank R dies of SIGSEGV (abort R: SIGABRT); the others notice it and exit 0:
 *                               a crash is never excused
 *   launcher_exit all-segv -    every rank dies of SIGSEGV after a barrier
 *   launcher_exit early R       rank R dies by SIGKILL before MPI_Init; the others wait in MPI_Init for it
 *   launcher_exit sleep -       every rank sleeps 30 s after MPI_Init (killed by injection or --timeout)
 * Each launch runs under a hard timeout (TIMEOUT in tests/mpi/CMakeLists.txt: cohort-run's --timeout and
 * ctest's own). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static int launcher_rank(void) {
  const char *v = getenv("PMI_RANK");
  if (v == NULL) v = getenv("OMPI_COMM_WORLD_RANK");
  return v == NULL ? -1 : atoi(v);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: launcher_exit kill|unnoticed|fail|segv|abort|all-segv|early|sleep RANK\n");
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
  MPI_Barrier(MPI_COMM_WORLD);
  if (strcmp(mode, "all-segv") == 0) raise(SIGSEGV);
  if (rank == victim) {
    if (strcmp(mode, "kill") == 0 || strcmp(mode, "unnoticed") == 0) raise(SIGKILL);
    if (strcmp(mode, "segv") == 0) raise(SIGSEGV);
    if (strcmp(mode, "abort") == 0) abort();
    fflush(stdout);
    _exit(1);
  }
  if (strcmp(mode, "unnoticed") != 0 && strcmp(mode, "fail") != 0) {
    /* The survivors' barrier completes only once each of them knows the victim dead. */
    MPI_Barrier(MPI_COMM_WORLD);
  } else {
    sleep_ms(500);
  }
  TEST_PASS("exits 0");
  _exit(0);
}
