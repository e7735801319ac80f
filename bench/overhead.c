/* bench/overhead: the cost of cohort's wrappers, measured in one process (Legio's method), beside the
 * floor that cohort's design is built on. Four variants of each call alternate batch by batch, so that
 * all see the same machine state:
 *   real        __real_MPI_X: the MPI library's own blocking call (as resolved by the linker's --wrap), on
 *               MPI_COMM_WORLD.
 *   nb          PMPI_IX (PMPI_Ibarrier for the barrier) polled with PMPI_Test, on world_dup, a PMPI_Comm_dup of
 *               MPI_COMM_WORLD made once (cohort's substitute is not world either).
 *   nb_confirm  nb, then PMPI_Ibarrier on world_dup polled with PMPI_Test: the protocol cohort runs (call, then
 *               confirming barrier), without cohort's bookkeeping.
 *   wrapped     MPI_X, through cohort's driver.
 * PMPI_ names go straight to MPI: cohort's --wrap only intercepts MPI_ names. Each batch pair round runs
 * the four in a rotated order (round i starts with variant i mod 4), so none always goes first. Per call
 * and size it reports the median batch time per call of each and the ratios over real.
 *
 *   overhead [batches] [csv path]       (default 15 rounds; CSV appended, header if new)
 *
 * CSV columns: mpi,ranks,call,bytes,batches,calls_per_batch,real_us,wrapped_us,ratio (= wrapped/real),
 * nb_us,nb_confirm_us,nb_ratio (= nb/real),nb_confirm_ratio (= nb_confirm/real).
 * Calls: MPI_Barrier, MPI_Bcast (root 0), MPI_Reduce (MPI_SUM of doubles, root 0), MPI_Allreduce
 * (MPI_SUM of doubles), MPI_Gatherv (root 0, every rank's block of the size at its offset) and
 * MPI_Alltoall (a block of the size to every rank), and MPI_Iallreduce+Wait (MPI_Iallreduce then MPI_Wait, as
 * MPI_Allreduce; its nb floors are MPI_Allreduce's); sizes 8 B and 64 KiB (per block for Gatherv and
 * Alltoall). The batch time is the slowest rank's. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef COHORT_BENCH_PRELOAD
/* overhead_preload: built without cohort, run with `cohort-run --preload` (bench/run_preload.sh): MPI_X is
 * libcohort-preload.so's entry point, and "real" is the MPI library's own PMPI_X. */
#define __real_MPI_Barrier PMPI_Barrier
#define __real_MPI_Bcast PMPI_Bcast
#define __real_MPI_Reduce PMPI_Reduce
#define __real_MPI_Allreduce PMPI_Allreduce
#define __real_MPI_Gatherv PMPI_Gatherv
#define __real_MPI_Alltoall PMPI_Alltoall
#define __real_MPI_Iallreduce PMPI_Iallreduce
#define __real_MPI_Wait PMPI_Wait
#else
int __real_MPI_Barrier(MPI_Comm comm);
int __real_MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm);
int __real_MPI_Reduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm);
int __real_MPI_Allreduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);
int __real_MPI_Gatherv(const void *s, int sc, MPI_Datatype st, void *r, const int rc[], const int d[], MPI_Datatype rt,
                       int root, MPI_Comm comm);
int __real_MPI_Alltoall(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm comm);
int __real_MPI_Iallreduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                          MPI_Request *req);
int __real_MPI_Wait(MPI_Request *req, MPI_Status *status);
#endif

typedef enum { BARRIER, BCAST, REDUCE, ALLREDUCE, GATHERV, ALLTOALL, IALLREDUCE } Op;
static const char *names[] = {"MPI_Barrier", "MPI_Bcast",    "MPI_Reduce",         "MPI_Allreduce",
                              "MPI_Gatherv", "MPI_Alltoall", "MPI_Iallreduce+Wait"};
static int *counts, *displs; /* Gatherv: n per rank, rank r's block at r * n */
typedef enum { REAL, NB, NB_CONFIRM, WRAPPED, VARIANTS } Variant;

static MPI_Comm world_dup; /* PMPI_Comm_dup(MPI_COMM_WORLD), for the nonblocking floors */

static void poll(MPI_Request *req) {
  int done = 0;
  while (!done) PMPI_Test(req, &done, MPI_STATUS_IGNORE);
}

/* The MPI's own nonblocking variant on world_dup, polled to completion; with confirm, then a polled Ibarrier. */
static void nonblocking(Op op, int confirm, double *a, double *b, int n) {
  MPI_Request req;
  switch (op) {
    case BARRIER: PMPI_Ibarrier(world_dup, &req); break;
    case BCAST: PMPI_Ibcast(a, n, MPI_DOUBLE, 0, world_dup, &req); break;
    case REDUCE: PMPI_Ireduce(a, b, n, MPI_DOUBLE, MPI_SUM, 0, world_dup, &req); break;
    case ALLREDUCE:
    case IALLREDUCE: PMPI_Iallreduce(a, b, n, MPI_DOUBLE, MPI_SUM, world_dup, &req); break;
    case GATHERV: PMPI_Igatherv(a, n, MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, 0, world_dup, &req); break;
    case ALLTOALL: PMPI_Ialltoall(a, n, MPI_DOUBLE, b, n, MPI_DOUBLE, world_dup, &req); break;
  }
  poll(&req);
  if (confirm) {
    PMPI_Ibarrier(world_dup, &req);
    poll(&req);
  }
}

static void one(Op op, Variant v, double *a, double *b, int n) {
  if (v == NB || v == NB_CONFIRM) {
    nonblocking(op, v == NB_CONFIRM, a, b, n);
    return;
  }
  int wrapped = v == WRAPPED;
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
    case GATHERV:
      wrapped ? MPI_Gatherv(a, n, MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD)
              : __real_MPI_Gatherv(a, n, MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      break;
    case ALLTOALL:
      wrapped ? MPI_Alltoall(a, n, MPI_DOUBLE, b, n, MPI_DOUBLE, MPI_COMM_WORLD)
              : __real_MPI_Alltoall(a, n, MPI_DOUBLE, b, n, MPI_DOUBLE, MPI_COMM_WORLD);
      break;
    case IALLREDUCE: {
      MPI_Request req;
      if (wrapped) {
        MPI_Iallreduce(a, b, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
      } else {
        __real_MPI_Iallreduce(a, b, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
        __real_MPI_Wait(&req, MPI_STATUS_IGNORE);
      }
      break;
    }
  }
}

/* One batch of k calls; returns the slowest rank's time per call (s). */
static double batch(Op op, Variant v, int k, double *a, double *b, int n) {
  __real_MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int i = 0; i < k; ++i) one(op, v, a, b, n);
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
  PMPI_Comm_dup(MPI_COMM_WORLD, &world_dup);
  int batches = argc > 1 ? atoi(argv[1]) : 15;
  if (batches < 1) batches = 1;
  const char *csv = argc > 2 ? argv[2] : NULL;
  const char *mpi =
#ifdef OPEN_MPI
      "openmpi";
#else
      "mpich";
#endif
  const int sizes[] = {8, 65536};
  int n_max = 65536 / (int)sizeof(double);
  /* (Gatherv and Alltoall: a block per rank) */
  double *a = calloc((size_t)n_max * (size_t)size, sizeof(double)), *b = calloc((size_t)n_max * (size_t)size, sizeof(double));
  counts = malloc(sizeof(int) * (size_t)size), displs = malloc(sizeof(int) * (size_t)size);
  double *t[VARIANTS];
  for (int v = 0; v < VARIANTS; ++v) t[v] = malloc(sizeof(double) * (size_t)batches);
  FILE *out = NULL;
  if (rank == 0 && csv) {
    FILE *probe = fopen(csv, "r");
    out = fopen(csv, "a");
    if (!out) {
      fprintf(stderr, "overhead: cannot open %s\n", csv);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (!probe)
      fprintf(out, "mpi,ranks,call,bytes,batches,calls_per_batch,real_us,wrapped_us,ratio,"
                   "nb_us,nb_confirm_us,nb_ratio,nb_confirm_ratio\n");
    else fclose(probe);
  }
  for (int op = BARRIER; op <= IALLREDUCE; ++op) {
    for (int si = 0; si < 2; ++si) {
      if (op == BARRIER && si == 1) continue;
      int bytes = op == BARRIER ? 0 : sizes[si], n = bytes / (int)sizeof(double);
      for (int r = 0; r < size; ++r) counts[r] = n, displs[r] = r * n;
      /* about 20 ms per batch: calibrate on the raw call */
      double per = batch((Op)op, REAL, 20, a, b, n);
      int k = (int)(0.02 / (per > 1e-7 ? per : 1e-7));
      if (k < 10) k = 10;
      if (k > 5000) k = 5000;
      __real_MPI_Bcast(&k, 1, MPI_INT, 0, MPI_COMM_WORLD);
      for (int v = 0; v < VARIANTS; ++v) batch((Op)op, (Variant)v, k / 4 + 1, a, b, n); /* warm up every path */
      for (int i = 0; i < batches; ++i)
        /* NOTE: rotate the order each round, so that no variant always goes first or follows the same one */
        for (int j = 0; j < VARIANTS; ++j) {
          int v = (i + j) % VARIANTS;
          t[v][i] = batch((Op)op, (Variant)v, k, a, b, n);
        }
      double m[VARIANTS];
      for (int v = 0; v < VARIANTS; ++v) m[v] = median(t[v], batches) * 1e6;
      if (rank == 0) {
        printf("%-19s %6d B  %2d ranks  real %9.2f us  nb %9.2f us  nb+barrier %9.2f us  wrapped %9.2f us  "
               "ratio %.3f  (nb %.3f, nb+barrier %.3f; %d x %d calls)\n",
               names[op], bytes, size, m[REAL], m[NB], m[NB_CONFIRM], m[WRAPPED], m[WRAPPED] / m[REAL],
               m[NB] / m[REAL], m[NB_CONFIRM] / m[REAL], batches, k);
        fflush(stdout);
        if (out)
          fprintf(out, "%s,%d,%s,%d,%d,%d,%.3f,%.3f,%.4f,%.3f,%.3f,%.4f,%.4f\n", mpi, size, names[op], bytes,
                  batches, k, m[REAL], m[WRAPPED], m[WRAPPED] / m[REAL], m[NB], m[NB_CONFIRM], m[NB] / m[REAL],
                  m[NB_CONFIRM] / m[REAL]);
      }
    }
  }
  if (out) fclose(out);
  free(a), free(b), free(counts), free(displs);
  for (int v = 0; v < VARIANTS; ++v) free(t[v]);
  PMPI_Comm_free(&world_dup);
  MPI_Finalize();
  return 0;
}
