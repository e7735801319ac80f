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
 *   overhead [batches] [csv path] [dir]  (default 15 rounds; CSV appended, header if new; "-": no CSV;
 *                                         dir: where the file rows write, see below)
 *
 * CSV columns: mpi,ranks,call,bytes,batches,calls_per_batch,real_us,wrapped_us,ratio (= wrapped/real),
 * nb_us,nb_confirm_us,nb_ratio (= nb/real),nb_confirm_ratio (= nb_confirm/real).
 * Calls: MPI_Barrier, MPI_Bcast (root 0), MPI_Reduce (MPI_SUM of doubles, root 0), MPI_Allreduce
 * (MPI_SUM of doubles), MPI_Gather and MPI_Gatherv (root 0, every rank's block of the size at its offset),
 * MPI_Allgather and MPI_Alltoall (a block of the size from/to every rank), and MPI_Iallreduce+Wait
 * (MPI_Iallreduce then MPI_Wait, as MPI_Allreduce; its nb floors are MPI_Allreduce's); sizes 8 B and 64 KiB
 * (per block for the gathers and Alltoall). Then:
 *   MPI_Put+Win_fence  8 B and 64 KiB: each rank puts to its right neighbour, then fences. real: PMPI_Put and
 *                      PMPI_Win_fence on a window made with PMPI_Win_create on world_dup; wrapped: a window
 *                      from MPI_Win_create on MPI_COMM_WORLD (cohort's); nb: cohort's design on a raw window
 *                      held in PMPI_Win_lock_all(MPI_MODE_NOCHECK): PMPI_Put, PMPI_Win_flush of every rank,
 *                      PMPI_Win_sync; nb_confirm adds the polled PMPI_Ibarrier and a second PMPI_Win_sync.
 *   MPI_Put+Win_fence/msg  the same real and wrapped calls as MPI_Put+Win_fence, beside the floor of a fence
 *                      built on two-sided messages instead of RMA (no MPI_Win_flush, which never returns
 *                      when its target dies): nb: every rank sends each other rank one message per fence
 *                      (the put's data to its right neighbour, an empty one to the others: a target cannot
 *                      know who put to it), receives one from each, polled with PMPI_Testall, and copies the
 *                      received data into the window's memory; nb_confirm adds the polled PMPI_Ibarrier
 *                      (the design's floor with COHORT_CONFIRM_WINDOW > 1; at the default, 1, the exchange
 *                      confirms the fence itself and nb is the floor).
 *   MPI_File_write_at_all  1 MiB per rank, each rank its own block (rank * 1 MiB) of one file per variant, in
 *                      a fresh directory under [dir] (default $TMPDIR, else /tmp), removed at the end. real:
 *                      PMPI_File_open on world_dup + PMPI_File_write_at_all; wrapped: MPI_File_open on
 *                      MPI_COMM_WORLD + MPI_File_write_at_all (cohort's); nb: cohort's design, a per-rank
 *                      PMPI_File_open over MPI_COMM_SELF + PMPI_File_write_at; nb_confirm adds the polled
 *                      PMPI_Ibarrier.
 * The batch time is the slowest rank's.
 * Environment: OVERHEAD_CALLS, a comma-separated list of call names (as in the CSV): only those rows;
 * OVERHEAD_BYTES, 8 or 65536: only that size of the calls measured at both. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef COHORT_BENCH_PRELOAD
/* overhead_preload: built without cohort, run with `cohort-run --preload` (bench/run_preload.sh): MPI_X is
 * libcohort-preload.so's entry point, and "real" is the MPI library's own PMPI_X. */
#define __real_MPI_Barrier PMPI_Barrier
#define __real_MPI_Bcast PMPI_Bcast
#define __real_MPI_Reduce PMPI_Reduce
#define __real_MPI_Allreduce PMPI_Allreduce
#define __real_MPI_Gather PMPI_Gather
#define __real_MPI_Gatherv PMPI_Gatherv
#define __real_MPI_Allgather PMPI_Allgather
#define __real_MPI_Alltoall PMPI_Alltoall
#define __real_MPI_Iallreduce PMPI_Iallreduce
#define __real_MPI_Wait PMPI_Wait
#else
int __real_MPI_Barrier(MPI_Comm comm);
int __real_MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm);
int __real_MPI_Reduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm);
int __real_MPI_Allreduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);
int __real_MPI_Gather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, int root, MPI_Comm comm);
int __real_MPI_Allgather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm comm);
int __real_MPI_Gatherv(const void *s, int sc, MPI_Datatype st, void *r, const int rc[], const int d[], MPI_Datatype rt,
                       int root, MPI_Comm comm);
int __real_MPI_Alltoall(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm comm);
int __real_MPI_Iallreduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                          MPI_Request *req);
int __real_MPI_Wait(MPI_Request *req, MPI_Status *status);
#endif

typedef enum { REAL, NB, NB_CONFIRM, WRAPPED, VARIANTS } Variant;
typedef enum {
  BARRIER, BCAST, REDUCE, ALLREDUCE, GATHER, GATHERV, ALLGATHER, ALLTOALL, IALLREDUCE, PUT_FENCE, PUT_FENCE_MSG, FILE_WRITE, OPS
} Op;
static const char *names[] = {"MPI_Barrier",   "MPI_Bcast",      "MPI_Reduce",          "MPI_Allreduce",
                              "MPI_Gather",    "MPI_Gatherv",    "MPI_Allgather",       "MPI_Alltoall",
                              "MPI_Iallreduce+Wait", "MPI_Put+Win_fence", "MPI_Put+Win_fence/msg",
                              "MPI_File_write_at_all"};
enum { FILE_BYTES = 1 << 20 };
static int *counts, *displs; /* Gatherv: n per rank, rank r's block at r * n */

static MPI_Comm world_dup; /* PMPI_Comm_dup(MPI_COMM_WORLD), for the nonblocking floors */
static int me, right;      /* this rank, and its right neighbour (the target of the puts) */
/* Windows and files of the MPI_Put+Win_fence and MPI_File_write_at_all rows, one per variant (nb_confirm
 * shares nb's): made by setup_rma_files, freed by teardown_rma_files. */
static MPI_Win win[VARIANTS];
static MPI_File file[VARIANTS];
static char *win_mem; /* the windows' memory: one 64 KiB part per window */

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
    case GATHER: PMPI_Igather(a, n, MPI_DOUBLE, b, n, MPI_DOUBLE, 0, world_dup, &req); break;
    case GATHERV: PMPI_Igatherv(a, n, MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, 0, world_dup, &req); break;
    case ALLGATHER: PMPI_Iallgather(a, n, MPI_DOUBLE, b, n, MPI_DOUBLE, world_dup, &req); break;
    case ALLTOALL: PMPI_Ialltoall(a, n, MPI_DOUBLE, b, n, MPI_DOUBLE, world_dup, &req); break;
    case PUT_FENCE: {
      /* NOTE: cohort's fence: flush every live target, confirm, sync (wrap/rma/fence.cpp, wrap/rma/helper_batch.hpp) */
      int size;
      PMPI_Comm_size(world_dup, &size);
      PMPI_Put(a, n, MPI_DOUBLE, right, 0, n, MPI_DOUBLE, win[NB]);
      for (int r = 0; r < size; ++r) PMPI_Win_flush(r, win[NB]);
      PMPI_Win_sync(win[NB]);
      req = MPI_REQUEST_NULL;
      break;
    }
    case PUT_FENCE_MSG: {
      int size, left;
      PMPI_Comm_size(world_dup, &size);
      left = (me + size - 1) % size;
      MPI_Request r[2 * 64];
      int k = 0;
      if (size > 64) MPI_Abort(MPI_COMM_WORLD, 2);
      for (int p = 0; p < size; ++p) {
        if (p == me) continue;
        PMPI_Irecv(p == left ? b : NULL, p == left ? n : 0, MPI_DOUBLE, p, 7, world_dup, &r[k++]);
        PMPI_Isend(a, p == right ? n : 0, MPI_DOUBLE, p, 7, world_dup, &r[k++]);
      }
      MPI_Status st[2 * 64];
      for (int done = 0; !done;) PMPI_Testall(k, r, &done, st);
      memcpy(win_mem + 65536, b, (size_t)n * sizeof(double));
      req = MPI_REQUEST_NULL;
      break;
    }
    case FILE_WRITE:
      PMPI_File_write_at(file[NB], (MPI_Offset)me * FILE_BYTES, a, n, MPI_DOUBLE, MPI_STATUS_IGNORE);
      req = MPI_REQUEST_NULL;
      break;
    default: return;
  }
  if (req != MPI_REQUEST_NULL) poll(&req);
  if (confirm) {
    PMPI_Ibarrier(world_dup, &req);
    poll(&req);
    if (op == PUT_FENCE) PMPI_Win_sync(win[NB]);
  }
}


/* Makes the windows and opens the files (in a fresh directory under dir_base; its path in dir) of the
 * issue-12 rows. */
static void setup_rma_files(const char *dir_base, char *dir, size_t dir_len) {
  MPI_Aint part = 65536;
  char *b = win_mem = calloc(3, (size_t)part);
  PMPI_Win_create(b, part, 1, MPI_INFO_NULL, world_dup, &win[REAL]);
  PMPI_Win_fence(0, win[REAL]);
  PMPI_Win_create(b + part, part, 1, MPI_INFO_NULL, world_dup, &win[NB]);
  PMPI_Win_lock_all(MPI_MODE_NOCHECK, win[NB]);
  win[NB_CONFIRM] = win[NB];
  MPI_Win_create(b + 2 * part, part, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win[WRAPPED]);
  MPI_Win_fence(0, win[WRAPPED]);
  if (me == 0) {
    snprintf(dir, dir_len, "%s/cohort-overhead-XXXXXX", dir_base);
    if (!mkdtemp(dir)) {
      fprintf(stderr, "overhead[rank 0]: cannot make a directory under %s\n", dir_base);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  __real_MPI_Bcast(dir, (int)dir_len, MPI_CHAR, 0, MPI_COMM_WORLD);
  char path[4200];
  int mode = MPI_MODE_CREATE | MPI_MODE_WRONLY, rc;
  snprintf(path, sizeof path, "%s/real", dir);
  rc = PMPI_File_open(world_dup, path, mode, MPI_INFO_NULL, &file[REAL]);
  snprintf(path, sizeof path, "%s/nb", dir);
  rc |= PMPI_File_open(MPI_COMM_SELF, path, mode, MPI_INFO_NULL, &file[NB]);
  file[NB_CONFIRM] = file[NB];
  snprintf(path, sizeof path, "%s/wrapped", dir);
  rc |= MPI_File_open(MPI_COMM_WORLD, path, mode, MPI_INFO_NULL, &file[WRAPPED]);
  if (rc != MPI_SUCCESS) {
    fprintf(stderr, "overhead[rank %d]: MPI_File_open in %s failed\n", me, dir);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

static void teardown_rma_files(const char *dir) {
  PMPI_Win_fence(MPI_MODE_NOSUCCEED, win[REAL]);
  PMPI_Win_free(&win[REAL]);
  PMPI_Win_unlock_all(win[NB]);
  PMPI_Win_free(&win[NB]);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win[WRAPPED]);
  MPI_Win_free(&win[WRAPPED]);
  PMPI_File_close(&file[REAL]);
  PMPI_File_close(&file[NB]);
  MPI_File_close(&file[WRAPPED]);
  free(win_mem);
  __real_MPI_Barrier(MPI_COMM_WORLD);
  if (me == 0) {
    const char *leaf[] = {"real", "nb", "wrapped"};
    char path[4200];
    for (int i = 0; i < 3; ++i) snprintf(path, sizeof path, "%s/%s", dir, leaf[i]), unlink(path);
    rmdir(dir);
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
    case GATHER:
      wrapped ? MPI_Gather(a, n, MPI_DOUBLE, b, n, MPI_DOUBLE, 0, MPI_COMM_WORLD)
              : __real_MPI_Gather(a, n, MPI_DOUBLE, b, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      break;
    case ALLGATHER:
      wrapped ? MPI_Allgather(a, n, MPI_DOUBLE, b, n, MPI_DOUBLE, MPI_COMM_WORLD)
              : __real_MPI_Allgather(a, n, MPI_DOUBLE, b, n, MPI_DOUBLE, MPI_COMM_WORLD);
      break;
    case PUT_FENCE:
    case PUT_FENCE_MSG:
      if (wrapped) {
        MPI_Put(a, n, MPI_DOUBLE, right, 0, n, MPI_DOUBLE, win[WRAPPED]);
        MPI_Win_fence(0, win[WRAPPED]);
      } else {
        PMPI_Put(a, n, MPI_DOUBLE, right, 0, n, MPI_DOUBLE, win[REAL]);
        PMPI_Win_fence(0, win[REAL]);
      }
      break;
    case FILE_WRITE: {
      MPI_Offset at = (MPI_Offset)me * FILE_BYTES;
      wrapped ? MPI_File_write_at_all(file[WRAPPED], at, a, n, MPI_DOUBLE, MPI_STATUS_IGNORE)
              : PMPI_File_write_at_all(file[REAL], at, a, n, MPI_DOUBLE, MPI_STATUS_IGNORE);
      break;
    }
    case GATHERV:
      wrapped ? MPI_Gatherv(a, n, MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD)
              : __real_MPI_Gatherv(a, n, MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      break;
    case ALLTOALL:
      wrapped ? MPI_Alltoall(a, n, MPI_DOUBLE, b, n, MPI_DOUBLE, MPI_COMM_WORLD)
              : __real_MPI_Alltoall(a, n, MPI_DOUBLE, b, n, MPI_DOUBLE, MPI_COMM_WORLD);
      break;
    case OPS: break;
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

/* Whether name is an item of the comma-separated list (every name when list is NULL or empty). */
static int listed(const char *list, const char *name) {
  if (!list || !*list) return 1;
  size_t n = strlen(name);
  for (const char *p = list; p; p = strchr(p, ',')) {
    if (*p == ',') ++p;
    if (strncmp(p, name, n) == 0 && (p[n] == ',' || p[n] == '\0')) return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  me = rank, right = (rank + 1) % size;
  PMPI_Comm_dup(MPI_COMM_WORLD, &world_dup);
  int batches = argc > 1 ? atoi(argv[1]) : 15;
  if (batches < 1) batches = 1;
  const char *csv = argc > 2 && strcmp(argv[2], "-") != 0 ? argv[2] : NULL;
  const char *dir_base = argc > 3 ? argv[3] : getenv("TMPDIR");
  if (!dir_base || !*dir_base) dir_base = "/tmp";
  const char *mpi =
#ifdef OPEN_MPI
      "openmpi";
#else
      "mpich";
#endif
  const int sizes[] = {8, 65536};
  int n_max = 65536 / (int)sizeof(double);
  /* (the gathers and Alltoall: a block per rank; the file write: 1 MiB) */
  size_t elems = (size_t)n_max * (size_t)size;
  if (elems < FILE_BYTES / sizeof(double)) elems = FILE_BYTES / sizeof(double);
  double *a = calloc(elems, sizeof(double)), *b = calloc(elems, sizeof(double));
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
  char dir[4096] = "";
  setup_rma_files(dir_base, dir, sizeof dir);
  const char *only = getenv("OVERHEAD_CALLS");
  const char *only_bytes = getenv("OVERHEAD_BYTES");
  int one_size = only_bytes && *only_bytes ? atoi(only_bytes) : 0;
  for (int op = BARRIER; op < OPS; ++op) {
    if (!listed(only, names[op])) continue;
    for (int si = 0; si < 2; ++si) {
      if ((op == BARRIER || op == FILE_WRITE) && si == 1) continue;
      if (one_size && op != BARRIER && op != FILE_WRITE && sizes[si] != one_size) continue;
      int bytes = op == BARRIER ? 0 : op == FILE_WRITE ? FILE_BYTES : sizes[si], n = bytes / (int)sizeof(double);
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
        printf("%-21s %7d B  %2d ranks  real %9.2f us  nb %9.2f us  nb+barrier %9.2f us  wrapped %9.2f us  "
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
  teardown_rma_files(dir);
  if (out) fclose(out);
  free(a), free(b), free(counts), free(displs);
  for (int v = 0; v < VARIANTS; ++v) free(t[v]);
  PMPI_Comm_free(&world_dup);
  MPI_Finalize();
  return 0;
}
