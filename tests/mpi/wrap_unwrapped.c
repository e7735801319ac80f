/* The unwrapped-call watchdog. Rank 2 is killed by COHORT_INJECT_FAILURE (set by the
 * test). Rank 0 then calls MPI_Win_create_dynamic, a collective that cohort does not wrap, alone (rank 2 is
 * dead, the others never call it): it waits forever. cohort must log one line naming MPI_Win_create_dynamic (the test's
 * EXPECT). Ranks 1 and 3 wait
 * without MPI. After WAIT_S seconds every live rank prints PASS and exits (rank 0 from a second thread,
 * its main thread being stuck).
 *   wrap_unwrapped WAIT_S
 * Launched under a hard timeout (TIMEOUT in tests/mpi/wrap_tests.cmake). */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"

static int wait_s = 10;

static void *finish_later(void *arg) {
  (void)arg;
  sleep_ms(wait_s * 1000L);
  TEST_PASS("alive after %d s", wait_s);
  _exit(0);
  return NULL;
}

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(argc == 2 && size == 4, "usage: wrap_unwrapped WAIT_S (4 ranks)");
  wait_s = atoi(argv[1]);
  MPI_Win win;
  MPI_Barrier(MPI_COMM_WORLD);
  pthread_t t;
  pthread_create(&t, NULL, finish_later, NULL);
  if (rank == 0) {
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win); /* the other ranks never join: blocks forever */
    CHECK(0, "MPI_Win_create_dynamic returned");
  }
  pthread_join(t, NULL);
  return 0;
}
