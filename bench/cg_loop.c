/* bench/cg_loop: a conjugate-gradient-like loop end to end, with and without cohort in one process: per
 * iteration some local work (a stencil sweep over N doubles: about 25 us at N = 32768 here) and one 8-byte
 * MPI_Allreduce (the dot product), 200 iterations. N (default 32768 doubles per rank) sets the work. Two variants alternate run by run (rotated start):
 *   real     __real_MPI_Allreduce, the MPI library's own call on MPI_COMM_WORLD;
 *   wrapped  MPI_Allreduce through cohort (its confirmation window: COHORT_CONFIRM_WINDOW).
 * Reports the median loop time of each over RUNS runs and wrapped/real; appends one CSV line:
 *   mpi,ranks,window,max_bytes,n,iterations,runs,real_ms,wrapped_ms,ratio
 *   cg_loop [runs] [csv path] [N] [cart]     (default 15 runs; cart: the Allreduce runs on a periodic 1-D
 *                                             Cartesian communicator made with MPI_Cart_create, not on MPI_COMM_WORLD) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int __real_MPI_Allreduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);

#define NMAX (1 << 20)
#define ITER 200

static int N = 32768;
static MPI_Comm comm = MPI_COMM_WORLD; /* or a Cartesian communicator made through cohort (4th argument cart) */
static double x[NMAX], y[NMAX];

static double loop(int wrapped) {
  double rho = 1.0;
  __real_MPI_Allreduce(MPI_IN_PLACE, &rho, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* line up */
  double t0 = MPI_Wtime();
  for (int it = 0; it < ITER; ++it) {
    double local = 0.0;
    for (int i = 1; i < N - 1; ++i) {
      y[i] = 2.0 * x[i] - 0.5 * (x[i - 1] + x[i + 1]) + 1e-3 * rho;
      local += x[i] * y[i];
    }
    for (int i = 0; i < N; ++i) x[i] = 0.999 * x[i] + 1e-6 * y[i];
    double global = 0.0;
    if (wrapped)
      MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, comm);
    else
      __real_MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, comm);
    rho = global * 1e-9;
  }
  double t = MPI_Wtime() - t0, slowest = 0.0;
  __real_MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

static int cmp(const void *a, const void *b) {
  double d = *(const double *)a - *(const double *)b;
  return (d > 0) - (d < 0);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int runs = argc > 1 ? atoi(argv[1]) : 15;
  if (runs < 1 || runs > 1000) runs = 15;
  if (argc > 3) N = atoi(argv[3]);
  if (N < 3 || N > NMAX) N = 32768;
  const int cart = argc > 4 && argv[4][0] == 'c';
  if (cart) {
    int dims[1] = {size}, periods[1] = {1};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &comm);
  }
  for (int i = 0; i < N; ++i) x[i] = 1.0 + (i % 7) * 0.01 + rank;
  double *t[2];
  t[0] = malloc(sizeof(double) * (size_t)runs);
  t[1] = malloc(sizeof(double) * (size_t)runs);
  loop(0); /* warm-up */
  loop(1);
  for (int r = 0; r < runs; ++r) {
    int first = r % 2;
    t[first][r] = loop(first);
    t[1 - first][r] = loop(1 - first);
  }
  qsort(t[0], (size_t)runs, sizeof(double), cmp);
  qsort(t[1], (size_t)runs, sizeof(double), cmp);
  double real = t[0][runs / 2] * 1e3, wrapped = t[1][runs / 2] * 1e3;
  if (rank == 0) {
#ifdef OPEN_MPI
    const char *mpi = "openmpi";
#else
    const char *mpi = "mpich";
#endif
    const char *w = getenv("COHORT_CONFIRM_WINDOW"), *mb = getenv("COHORT_CONFIRM_MAX_BYTES");
    printf("cg_loop %s %d ranks%s, window %s, N %d: %d iterations, median of %d runs: real %.3f ms, wrapped %.3f ms, "
           "wrapped/real %.3f\n", mpi, size, cart ? " (Cartesian communicator)" : "", w ? w : "1", N, ITER, runs, real,
           wrapped, wrapped / real);
    if (argc > 2) {
      FILE *f = fopen(argv[2], "a");
      if (f) {
        fseek(f, 0, SEEK_END);
        if (ftell(f) == 0) fprintf(f, "mpi,ranks,window,max_bytes,n,iterations,runs,real_ms,wrapped_ms,ratio\n");
        fprintf(f, "%s,%d,%s,%s,%d,%d,%d,%.4f,%.4f,%.4f\n", mpi, size, w ? w : "1", mb ? mb : "4096", N, ITER, runs,
                real, wrapped, wrapped / real);
        fclose(f);
      }
    }
  }
  free(t[0]);
  free(t[1]);
  MPI_Finalize();
  return 0;
}
