/* replica_wtime: a program whose control flow depends on MPI_Wtime, for the replication tests
 * (tests/mpi/replica_tests.cmake, tests/mpi/replica_wtime.sh). Each rank works in steps of about 1 ms and
 * reads MPI_Wtime after each one, until the time it read passed SECONDS after its first read; it folds
 * every time it read into a checksum. Every other rank then sends rank 0 its step count and checksum, and
 * rank 0 prints one line per rank and `cohort-test: rank 0 PASS`. Each process (every replica: a plain
 * POSIX file, written by each) also writes its own rank's line to DIR/<rank>.<process id>. Under
 * replication the times are the leader's (MPI 4.0, 9.6 MPI_Wtime; docs/design/replication.md): every
 * replica of a rank takes the same steps and writes the same line, also when a replica dies mid-loop.
 *   replica_wtime SECONDS DIR */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void line_of(char *out, size_t n, int rank, long long steps, unsigned long long sum) {
  snprintf(out, n, "rank %d: %lld steps, times checksum %016llx", rank, steps, sum);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: replica_wtime SECONDS DIR\n");
    return 2;
  }
  const double seconds = atof(argv[1]);
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const double t0 = MPI_Wtime();
  double t = t0, prev = t0;
  long long steps = 0;
  unsigned long long sum = 1469598103934665603ULL;
  int ok = 1;
  while (t - t0 <= seconds) {
    usleep(1000);
    ++steps;
    t = MPI_Wtime();
    if (t < prev) ok = 0; /* the times a program reads never go back */
    prev = t;
    uint64_t bits;
    memcpy(&bits, &t, sizeof bits);
    sum = (sum ^ bits) * 1099511628211ULL;
  }
  const double tick = MPI_Wtick();
  if (!(tick > 0.0)) ok = 0;
  char mine[128];
  line_of(mine, sizeof mine, rank, steps, sum);
  char path[4096];
  snprintf(path, sizeof path, "%s/%d.%ld", argv[2], rank, (long)getpid());
  FILE *f = fopen(path, "w");
  if (f == NULL) {
    fprintf(stderr, "replica_wtime: cannot write %s\n", path);
    ok = 0;
  } else {
    fprintf(f, "%s\n", mine);
    fclose(f);
  }
  long long msg[3] = {steps, (long long)sum, ok};
  if (rank == 0) {
    printf("%s\n", mine);
    int all_ok = ok;
    for (int r = 1; r < size; ++r) {
      MPI_Recv(msg, 3, MPI_LONG_LONG, r, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      char other[128];
      line_of(other, sizeof other, r, msg[0], (unsigned long long)msg[1]);
      printf("%s\n", other);
      if (msg[2] != 1 || msg[0] < 1) all_ok = 0;
    }
    if (steps < 1) all_ok = 0;
    printf("cohort-test: rank 0 %s (all %d ranks checked)\n", all_ok ? "PASS" : "FAIL", size);
    fflush(stdout);
  } else {
    MPI_Send(msg, 3, MPI_LONG_LONG, 0, 7, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
