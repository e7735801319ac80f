/* bench/replica_cg: a conjugate-gradient-like loop that calls only MPI (no __real_ calls), so that it runs
 * under replication: per iteration a stencil sweep over N doubles per rank (local work) and one 8-byte
 * MPI_Allreduce on MPI_COMM_WORLD (the dot product). Built twice from this source: `replica_cg` (linked with
 * cohort) and `replica_cg_raw` (the MPI library only); bench/run_replica.sh launches them alternately.
 *
 *   replica_cg [runs] [N]        (default 5 runs of 200 iterations after 20 warm-up ones; N = 32768)
 *
 * Output (rank 0): `replica_cg,<N>,<median over runs of the slowest rank's loop time, ms>,<checksum>,<peak
 * resident memory of rank 0, KiB>`; the checksum (the final dot product) is the same for every variant and
 * tells that the work was done. (Under replication rank 0's leader prints.) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

enum { kIterations = 200, kWarmup = 20, kMaxRuns = 64 };

static double loop(double *x, double *y, int n, int iterations) {
  double rho = 1.0;
  for (int it = 0; it < iterations; ++it) {
    double local = 0.0;
    for (int i = 1; i < n - 1; ++i) {
      y[i] = 2.0 * x[i] - 0.5 * (x[i - 1] + x[i + 1]) + 1e-3 / (1.0 + rho);
      local += y[i] * y[i];
    }
    for (int i = 1; i < n - 1; ++i) x[i] = y[i] / (1.0 + 1e-6 * local);
    MPI_Allreduce(&local, &rho, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  return rho;
}

static int by_value(const void *a, const void *b) {
  double d = *(const double *)a - *(const double *)b;
  return (d > 0) - (d < 0);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int runs = argc > 1 ? atoi(argv[1]) : 5;
  int n = argc > 2 ? atoi(argv[2]) : 32768;
  if (runs < 1 || runs > kMaxRuns || n < 3) {
    if (rank == 0) fprintf(stderr, "usage: replica_cg [runs 1..%d] [N >= 3]\n", kMaxRuns);
    MPI_Finalize();
    return 2;
  }
  double *x = malloc(sizeof(double) * (size_t)n), *y = malloc(sizeof(double) * (size_t)n);
  double times[kMaxRuns], rho = 0.0;
  for (int r = 0; r < runs; ++r) {
    for (int i = 0; i < n; ++i) x[i] = y[i] = 1.0 + (double)((i * 7 + rank) % 13) / 13.0;
    loop(x, y, n, kWarmup);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    rho = loop(x, y, n, kIterations);
    double mine = (MPI_Wtime() - t0) * 1e3, slowest = 0.0;
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    times[r] = slowest;
  }
  if (rank == 0) {
    /* NOTE: rank 0's own peak, not a reduction of every rank's: the replicas of a rank differ in memory,
     * and a message carrying it would differ between them, which SDC checking rightly reports. */
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    qsort(times, (size_t)runs, sizeof times[0], by_value);
    printf("replica_cg,%d,%.3f,%.9e,%ld\n", n, times[runs / 2], rho, ru.ru_maxrss);
  }
  free(x);
  free(y);
  MPI_Finalize();
  return 0;
}
