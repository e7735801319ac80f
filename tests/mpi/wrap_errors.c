/* Errors of the MPI library reach the program's error handler.
 *   wrap_errors bcast-truncate   rank 0 broadcasts 8 ints, the others receive with count 4: MPI reports a
 *                                truncation on each receiver, whose MPI_Bcast must return that error after
 *                                calling the error handler of MPI_COMM_WORLD once. The receivers then exit
 *                                (without further MPI); the root's call completes over the survivors once
 *                                they are found gone, and it prints PASS too.
 * Launched under a hard timeout (TIMEOUT in tests/mpi/wrap_tests.cmake). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static int handler_calls = 0;
static int handler_code = MPI_SUCCESS;

static void record_error(MPI_Comm *comm, int *code, ...) {
  (void)comm;
  ++handler_calls;
  handler_code = *code;
}

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  CHECK(argc == 2 && strcmp(argv[1], "bcast-truncate") == 0, "usage: wrap_errors bcast-truncate");
  MPI_Errhandler eh;
  MPI_Comm_create_errhandler(record_error, &eh);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
  int buf[8];
  for (int i = 0; i < 8; ++i) buf[i] = rank == 0 ? 100 + i : -1;
  int rc = MPI_Bcast(buf, rank == 0 ? 8 : 4, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    CHECK(rc == MPI_SUCCESS, "the root's MPI_Bcast returned %d", rc);
    CHECK(handler_calls == 0, "the root's error handler was called %d times", handler_calls);
    TEST_PASS("root: MPI_Bcast returned MPI_SUCCESS");
    _exit(0);
  }
  char msg[MPI_MAX_ERROR_STRING] = "";
  int len = 0, cls = -1;
  if (rc != MPI_SUCCESS) {
    MPI_Error_string(rc, msg, &len);
    MPI_Error_class(rc, &cls);
  }
  CHECK(rc != MPI_SUCCESS, "a truncated MPI_Bcast returned MPI_SUCCESS");
  CHECK(handler_calls == 1 && handler_code == rc, "the error handler was called %d times (code %d, returned %d)",
        handler_calls, handler_code, rc);
  TEST_PASS("MPI_Bcast returned error class %d (%s) through the error handler", cls, msg);
  _exit(0);
}
