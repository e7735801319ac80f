/* bench/overhead: the cost of cohort's wrappers, measured in one process (Legio's method): batches of
 * wrapped calls (MPI_X, through cohort's driver) alternate with batches of the same calls made directly
 * (__real_MPI_X, the MPI library's own, as resolved by the linker's --wrap), so that both see the same
 * machine state. Per call and size it reports the median batch time per call of each and their ratio.
 *
 *   overhead [batches] [csv path]       (default 15 batch pairs; CSV appended, header if new)
 *
 * Calls: MPI_Barrier, MPI_Bcast (root 0), MPI_Reduce (MPI_SUM of doubles, root 0), MPI_Allreduce
 * (MPI_SUM of doubles); sizes 8 B and 64 KiB. The batch time is the slowest rank's. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int __real_MPI_Barrier(MPI_Comm comm);
int __real_MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm);
int __real_MPI_Reduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm);
int __real_MPI_Allreduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);

typedef enum { BARRIER, BCAST, REDUCE, ALLREDUCE } Op;
static const char *names[] = {"MPI_Barrier", "MPI_Bcast", "MPI_Reduce", "MPI_Allreduce"};

static void one(Op op, int wrapped, double *a, double *b, int n) {
  switch (op) {
    case BARRIER: wrapped ? MPI_Barrier(MPI_COMM_WORLD) : __real_MPI_Barrier(MPI_COMM_WORLD); break;
    case BCAST:
      wrapped ? MPI_Bcast(a, n, MPI_DOUBLE, 0, MPI_COMM_WORLD) : __real_MPI_Bcast(a, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      break;
    case REDUCE:
      wrapped ? MPI_Reduce(a, b, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD)
              : __real_MPI_Reduce(a, b, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
      break;
    case ALLREDUCE:
      wrapped ? MPI_Allreduce(a, b, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD)
              : __real_MPI_Allreduce(a, b, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      break;
  }
}

/* One batch of k calls; returns the slowest rank's time per call (s). */
static double batch(Op op, int wrapped, int k, double *a, double *b, int n) {
  __real_MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int i = 0; i < k; ++i) one(op, wrapped, a, b, n);
  double t = (MPI_Wtime() - t0) / k, slowest;
  __real_MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

static int cmp(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int batches = argc > 1 ? atoi(argv[1]) : 15;
  const char *csv = argc > 2 ? argv[2] : NULL;
  const char *mpi =
#ifdef OPEN_MPI
      "openmpi";
#else
      "mpich";
#endif
  const int sizes[] = {8, 65536};
  int n_max = 65536 / (int)sizeof(double);
  double *a = calloc((size_t)n_max, sizeof(double)), *b = calloc((size_t)n_max, sizeof(double));
  double *tw = malloc(sizeof(double) * (size_t)batches), *tr = malloc(sizeof(double) * (size_t)batches);
  FILE *out = NULL;
  if (rank == 0 && csv) {
    FILE *probe = fopen(csv, "r");
    out = fopen(csv, "a");
    if (!out) {
      fprintf(stderr, "overhead: cannot open %s\n", csv);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (!probe) fprintf(out, "mpi,ranks,call,bytes,batches,calls_per_batch,real_us,wrapped_us,ratio\n");
    else fclose(probe);
  }
  for (int op = BARRIER; op <= ALLREDUCE; ++op) {
    for (int si = 0; si < 2; ++si) {
      if (op == BARRIER && si == 1) continue;
      int bytes = op == BARRIER ? 0 : sizes[si], n = bytes / (int)sizeof(double);
      /* about 20 ms per batch: calibrate on the raw call */
      double per = batch((Op)op, 0, 20, a, b, n);
      int k = (int)(0.02 / (per > 1e-7 ? per : 1e-7));
      if (k < 10) k = 10;
      if (k > 5000) k = 5000;
      __real_MPI_Bcast(&k, 1, MPI_INT, 0, MPI_COMM_WORLD);
      batch((Op)op, 1, k / 4 + 1, a, b, n); /* warm up both paths */
      batch((Op)op, 0, k / 4 + 1, a, b, n);
      for (int i = 0; i < batches; ++i) {
        /* NOTE: alternate which goes first, so that neither always follows the other */
        if (i % 2) {
          tw[i] = batch((Op)op, 1, k, a, b, n);
          tr[i] = batch((Op)op, 0, k, a, b, n);
        } else {
          tr[i] = batch((Op)op, 0, k, a, b, n);
          tw[i] = batch((Op)op, 1, k, a, b, n);
        }
      }
      double mr = median(tr, batches) * 1e6, mw = median(tw, batches) * 1e6;
      if (rank == 0) {
        printf("%-14s %6d B  %2d ranks  real %9.2f us  wrapped %9.2f us  ratio %.3f  (%d x %d calls)\n", names[op],
               bytes, size, mr, mw, mw / mr, batches, k);
        fflush(stdout);
        if (out) fprintf(out, "%s,%d,%s,%d,%d,%d,%.3f,%.3f,%.4f\n", mpi, size, names[op], bytes, batches, k, mr, mw, mw / mr);
      }
    }
  }
  if (out) fclose(out);
  free(a), free(b), free(tw), free(tr);
  MPI_Finalize();
  return 0;
}
