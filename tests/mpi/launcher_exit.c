/* Exit-code rules of cohort-run, without any cohort recovery involved:
 *   launcher_exit kill R   rank R dies by SIGKILL after a barrier; the others exit 0 without more MPI
 *   launcher_exit fail R   rank R exits 1 after a barrier; the others exit 0
 * Each launch runs under a hard timeout of 60 s (TIMEOUT 60 in tests/mpi/CMakeLists.txt: cohort-run's
 * --timeout and ctest's own). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  CHECK(argc == 3, "usage: launcher_exit kill|fail RANK");
  int victim = atoi(argv[2]);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == victim) {
    if (strcmp(argv[1], "kill") == 0) raise(SIGKILL);
    fflush(stdout);
    _exit(1);
  }
  usleep(500 * 1000);
  TEST_PASS("exits 0 without further communication");
  _exit(0);
}
