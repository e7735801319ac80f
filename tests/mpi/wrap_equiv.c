/* Fault-free equivalence: every wrapped collective gives, on every rank, byte for byte the buffers that
 * the raw MPI call (PMPI_*) gives from the same starting buffers, for several datatypes (int, double and
 * a strided vector type), counts (0, 1, 7, 1000), roots (every rank) and MPI_IN_PLACE variants, on
 * MPI_COMM_WORLD and on communicators made with MPI_Comm_dup and MPI_Comm_split.
 * With the argument `nonblocking`, every wrapped collective below runs as its nonblocking variant
 * (MPI_Iallreduce, ...) completed by MPI_Wait and, every other call, by an MPI_Test polling loop. */
#include <mpi.h>
#include <stdint.h>
#include <string.h>

#include <cohort/cohort.h>

#include "check.h"

static int nb = 0;  /* `nonblocking`: the macros below call MPI_I<call> + a completion instead */
static int nb_complete(int rc, MPI_Request *req) {
  static int calls = 0;
  if (rc != MPI_SUCCESS) return rc;
  if (++calls % 2) return MPI_Wait(req, MPI_STATUS_IGNORE);
  int flag = 0;
  while (!flag && rc == MPI_SUCCESS) rc = MPI_Test(req, &flag, MPI_STATUS_IGNORE);
  CHECK(*req == MPI_REQUEST_NULL, "MPI_Test left a completed request active");
  return rc;
}
#define NB(blocking, nonblocking, ...) \
  (nb ? nb_complete(nonblocking(__VA_ARGS__, &nb_req), &nb_req) : blocking(__VA_ARGS__))
static MPI_Request nb_req;
#define MPI_Barrier(...) NB(MPI_Barrier, MPI_Ibarrier, __VA_ARGS__)
#define MPI_Bcast(...) NB(MPI_Bcast, MPI_Ibcast, __VA_ARGS__)
#define MPI_Reduce(...) NB(MPI_Reduce, MPI_Ireduce, __VA_ARGS__)
#define MPI_Allreduce(...) NB(MPI_Allreduce, MPI_Iallreduce, __VA_ARGS__)
#define MPI_Scan(...) NB(MPI_Scan, MPI_Iscan, __VA_ARGS__)
#define MPI_Exscan(...) NB(MPI_Exscan, MPI_Iexscan, __VA_ARGS__)
#define MPI_Gather(...) NB(MPI_Gather, MPI_Igather, __VA_ARGS__)
#define MPI_Gatherv(...) NB(MPI_Gatherv, MPI_Igatherv, __VA_ARGS__)
#define MPI_Scatter(...) NB(MPI_Scatter, MPI_Iscatter, __VA_ARGS__)
#define MPI_Scatterv(...) NB(MPI_Scatterv, MPI_Iscatterv, __VA_ARGS__)
#define MPI_Allgather(...) NB(MPI_Allgather, MPI_Iallgather, __VA_ARGS__)
#define MPI_Allgatherv(...) NB(MPI_Allgatherv, MPI_Iallgatherv, __VA_ARGS__)
#define MPI_Alltoall(...) NB(MPI_Alltoall, MPI_Ialltoall, __VA_ARGS__)
#define MPI_Alltoallv(...) NB(MPI_Alltoallv, MPI_Ialltoallv, __VA_ARGS__)
#define MPI_Alltoallw(...) NB(MPI_Alltoallw, MPI_Ialltoallw, __VA_ARGS__)
#define MPI_Reduce_scatter(...) NB(MPI_Reduce_scatter, MPI_Ireduce_scatter, __VA_ARGS__)
#define MPI_Reduce_scatter_block(...) NB(MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, __VA_ARGS__)

#define MAXC 1000
static int rank, size;
static const int counts[] = {0, 7, 1, MAXC};
static int ncounts = 4;  /* "quick" (for MPICH, slow when oversubscribed): counts 0 and 7, roots 0 and last */
static int quick = 0;

/* Buffers big enough for size blocks of MAXC elements and a gap each, of the widest type (vector: stride 2
 * doubles). */
static size_t bufbytes(void) { return (size_t)size * (MAXC + 1) * 2 * sizeof(double) + 64; }

/* Irregular v-arguments: rank r's block has c elements (c / 2 where r + shift is odd); blocks lie in reverse
 * rank order with a one-element gap after each. Returns the number of elements spanned. */
static int vlayout(int n, int c, int shift, int *cnt, int *dsp) {
  int at = 0;
  for (int r = n - 1; r >= 0; --r) {
    cnt[r] = (r + shift) % 2 ? c / 2 : c;
    dsp[r] = at;
    at += cnt[r] + 1;
  }
  return at;
}

/* Fills with values that depend on rank, position and seed; doubles hold small integers (exact sums). */
static void fill(void *buf, size_t bytes, int seed) {
  double *d = buf;
  for (size_t i = 0; i < bytes / sizeof(double); ++i) d[i] = (double)((rank * 131 + (int)i * 7 + seed) % 1000);
}

typedef struct {
  MPI_Datatype type;
  const char *name;
  int reducible;
} Type;

static void same(const void *a, const void *b, size_t bytes, const char *what, const char *type, int count,
                 int root) {
  CHECK(memcmp(a, b, bytes) == 0, "%s differs from raw MPI (type %s, count %d, root %d)", what, type, count, root);
}

typedef int (*AllFn)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
static int allreduce(const void *s, void *r, int c, MPI_Datatype t, MPI_Op o, MPI_Comm m) {
  return MPI_Allreduce(s, r, c, t, o, m);
}
static int scan(const void *s, void *r, int c, MPI_Datatype t, MPI_Op o, MPI_Comm m) {
  return MPI_Scan(s, r, c, t, o, m);
}
static const struct {
  const char *name;
  AllFn wrapped, raw;
} all[] = {{"MPI_Allreduce", allreduce, PMPI_Allreduce}, {"MPI_Scan", scan, PMPI_Scan}};

/* The collectives without a root, v/w and all-to-all variants and reduce-scatters, for one type and count. */
static void check_v(MPI_Comm comm, MPI_Datatype ty, const char *tn, int reducible, int c, int seed, char *a, char *b,
                    char *sa, char *sb, size_t bytes) {
  int me, n;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  MPI_Aint lb, ext;
  MPI_Type_get_extent(ty, &lb, &ext);
  int cnt[64], dsp[64], scnt[64], sdsp[64], rcnt[64], rdsp[64], sbyte[64], rbyte[64];
  MPI_Datatype tys[64];
  vlayout(n, c, 0, cnt, dsp);
  vlayout(n, c, me, rcnt, rdsp); /* from rank r: c, or c / 2 when r + me is odd; the same rule sends */
  vlayout(n, c, me, scnt, sdsp);
  for (int r = 0; r < n; ++r) sbyte[r] = sdsp[r] * (int)ext, rbyte[r] = rdsp[r] * (int)ext, tys[r] = ty;
#define PREP() (fill(a, bytes, seed), memcpy(b, a, bytes), fill(sa, bytes, seed + 1), memcpy(sb, sa, bytes))
  PREP();
  CHECK(MPI_Allgatherv(sa, cnt[me], ty, a, cnt, dsp, ty, comm) == MPI_SUCCESS, "MPI_Allgatherv");
  PMPI_Allgatherv(sb, cnt[me], ty, b, cnt, dsp, ty, comm);
  same(a, b, bytes, "MPI_Allgatherv", tn, c, -1);
  PREP();
  MPI_Allgatherv(MPI_IN_PLACE, cnt[me], ty, a, cnt, dsp, ty, comm);
  PMPI_Allgatherv(MPI_IN_PLACE, cnt[me], ty, b, cnt, dsp, ty, comm);
  same(a, b, bytes, "MPI_Allgatherv in place", tn, c, -1);
  PREP();
  CHECK(MPI_Alltoall(sa, c, ty, a, c, ty, comm) == MPI_SUCCESS, "MPI_Alltoall");
  PMPI_Alltoall(sb, c, ty, b, c, ty, comm);
  same(a, b, bytes, "MPI_Alltoall", tn, c, -1);
  PREP();
  MPI_Alltoall(MPI_IN_PLACE, c, ty, a, c, ty, comm);
  PMPI_Alltoall(MPI_IN_PLACE, c, ty, b, c, ty, comm);
  same(a, b, bytes, "MPI_Alltoall in place", tn, c, -1);
  PREP();
  CHECK(MPI_Alltoallv(sa, scnt, sdsp, ty, a, rcnt, rdsp, ty, comm) == MPI_SUCCESS, "MPI_Alltoallv");
  PMPI_Alltoallv(sb, scnt, sdsp, ty, b, rcnt, rdsp, ty, comm);
  same(a, b, bytes, "MPI_Alltoallv", tn, c, -1);
  PREP();
  MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, a, rcnt, rdsp, ty, comm);
  PMPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, b, rcnt, rdsp, ty, comm);
  same(a, b, bytes, "MPI_Alltoallv in place", tn, c, -1);
  PREP();
  CHECK(MPI_Alltoallw(sa, scnt, sbyte, tys, a, rcnt, rbyte, tys, comm) == MPI_SUCCESS, "MPI_Alltoallw");
  PMPI_Alltoallw(sb, scnt, sbyte, tys, b, rcnt, rbyte, tys, comm);
  same(a, b, bytes, "MPI_Alltoallw", tn, c, -1);
  if (!reducible) return;
  MPI_Op ops[] = {MPI_SUM, MPI_MAX};
  for (int o = 0; o < 2; ++o) {
    PREP();
    CHECK(MPI_Reduce_scatter_block(sa, a, c, ty, ops[o], comm) == MPI_SUCCESS, "MPI_Reduce_scatter_block");
    PMPI_Reduce_scatter_block(sb, b, c, ty, ops[o], comm);
    same(a, b, bytes, "MPI_Reduce_scatter_block", tn, c, -1);
    PREP();
    MPI_Reduce_scatter_block(MPI_IN_PLACE, a, c, ty, ops[o], comm);
    PMPI_Reduce_scatter_block(MPI_IN_PLACE, b, c, ty, ops[o], comm);
    same(a, b, bytes, "MPI_Reduce_scatter_block in place", tn, c, -1);
    PREP();
    CHECK(MPI_Reduce_scatter(sa, a, cnt, ty, ops[o], comm) == MPI_SUCCESS, "MPI_Reduce_scatter");
    PMPI_Reduce_scatter(sb, b, cnt, ty, ops[o], comm);
    same(a, b, bytes, "MPI_Reduce_scatter", tn, c, -1);
    PREP();
    MPI_Reduce_scatter(MPI_IN_PLACE, a, cnt, ty, ops[o], comm);
    PMPI_Reduce_scatter(MPI_IN_PLACE, b, cnt, ty, ops[o], comm);
    same(a, b, bytes, "MPI_Reduce_scatter in place", tn, c, -1);
    /* Exscan: rank 0's buffer is undefined in MPI (cohort leaves it untouched): compared from rank 1 on */
    PREP();
    CHECK(MPI_Exscan(sa, a, c, ty, ops[o], comm) == MPI_SUCCESS, "MPI_Exscan");
    PMPI_Exscan(sb, b, c, ty, ops[o], comm);
    if (me > 0) same(a, b, bytes, "MPI_Exscan", tn, c, -1);
    PREP();
    MPI_Exscan(MPI_IN_PLACE, a, c, ty, ops[o], comm);
    PMPI_Exscan(MPI_IN_PLACE, b, c, ty, ops[o], comm);
    if (me > 0) same(a, b, bytes, "MPI_Exscan in place", tn, c, -1);
  }
  double x[3] = {1, 2, 3}, y[3] = {10, 20, 30};
  CHECK(MPI_Reduce_local(x, y, 3, MPI_DOUBLE, MPI_SUM) == MPI_SUCCESS && y[2] == 33, "MPI_Reduce_local");
#undef PREP
}

static void check_comm(MPI_Comm comm, Type *types, int ntypes) {
  int me, n;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  size_t bytes = bufbytes();
  char *a = malloc(bytes), *b = malloc(bytes), *sa = malloc(bytes), *sb = malloc(bytes);
  MPI_Op ops[] = {MPI_SUM, MPI_MAX};
  for (int t = 0; t < ntypes; ++t) {
    MPI_Datatype ty = types[t].type;
    for (int ci = 0; ci < ncounts; ++ci) {
      int c = counts[ci];
      for (int root = 0; root < n; root += quick && n > 1 ? n - 1 : 1) {
        int seed = t * 10 + ci + root * 100;
#define PREP() (fill(a, bytes, seed), memcpy(b, a, bytes), fill(sa, bytes, seed + 1), memcpy(sb, sa, bytes))
        PREP();
        CHECK(MPI_Bcast(a, c, ty, root, comm) == MPI_SUCCESS, "MPI_Bcast");
        PMPI_Bcast(b, c, ty, root, comm);
        same(a, b, bytes, "MPI_Bcast", types[t].name, c, root);

        PREP();
        CHECK(MPI_Gather(sa, c, ty, a, c, ty, root, comm) == MPI_SUCCESS, "MPI_Gather");
        PMPI_Gather(sb, c, ty, b, c, ty, root, comm);
        same(a, b, bytes, "MPI_Gather", types[t].name, c, root);

        PREP();
        MPI_Gather(me == root ? MPI_IN_PLACE : sa, c, ty, a, c, ty, root, comm);
        PMPI_Gather(me == root ? MPI_IN_PLACE : sb, c, ty, b, c, ty, root, comm);
        same(a, b, bytes, "MPI_Gather in place", types[t].name, c, root);

        int cnt[64], dsp[64];
        vlayout(n, c, 0, cnt, dsp);
        PREP();
        CHECK(MPI_Gatherv(sa, cnt[me], ty, a, cnt, dsp, ty, root, comm) == MPI_SUCCESS, "MPI_Gatherv");
        PMPI_Gatherv(sb, cnt[me], ty, b, cnt, dsp, ty, root, comm);
        same(a, b, bytes, "MPI_Gatherv", types[t].name, c, root);
        PREP();
        MPI_Gatherv(me == root ? MPI_IN_PLACE : sa, cnt[me], ty, a, cnt, dsp, ty, root, comm);
        PMPI_Gatherv(me == root ? MPI_IN_PLACE : sb, cnt[me], ty, b, cnt, dsp, ty, root, comm);
        same(a, b, bytes, "MPI_Gatherv in place", types[t].name, c, root);
        PREP();
        CHECK(MPI_Scatterv(sa, cnt, dsp, ty, a, cnt[me], ty, root, comm) == MPI_SUCCESS, "MPI_Scatterv");
        PMPI_Scatterv(sb, cnt, dsp, ty, b, cnt[me], ty, root, comm);
        same(a, b, bytes, "MPI_Scatterv", types[t].name, c, root);
        PREP();
        MPI_Scatterv(sa, cnt, dsp, ty, me == root ? MPI_IN_PLACE : a, cnt[me], ty, root, comm);
        PMPI_Scatterv(sb, cnt, dsp, ty, me == root ? MPI_IN_PLACE : b, cnt[me], ty, root, comm);
        same(a, b, bytes, "MPI_Scatterv in place", types[t].name, c, root);

        PREP();
        CHECK(MPI_Scatter(sa, c, ty, a, c, ty, root, comm) == MPI_SUCCESS, "MPI_Scatter");
        PMPI_Scatter(sb, c, ty, b, c, ty, root, comm);
        same(a, b, bytes, "MPI_Scatter", types[t].name, c, root);

        if (!types[t].reducible) continue;
        for (int o = 0; o < 2; ++o) {
          PREP();
          CHECK(MPI_Reduce(sa, a, c, ty, ops[o], root, comm) == MPI_SUCCESS, "MPI_Reduce");
          PMPI_Reduce(sb, b, c, ty, ops[o], root, comm);
          same(a, b, bytes, "MPI_Reduce", types[t].name, c, root);
          PREP();
          MPI_Reduce(me == root ? MPI_IN_PLACE : sa, a, c, ty, ops[o], root, comm);
          PMPI_Reduce(me == root ? MPI_IN_PLACE : sb, b, c, ty, ops[o], root, comm);
          same(a, b, bytes, "MPI_Reduce in place", types[t].name, c, root);
        }
      }
      int seed = t * 10 + ci;
      PREP();
      CHECK(MPI_Allgather(sa, c, ty, a, c, ty, comm) == MPI_SUCCESS, "MPI_Allgather");
      PMPI_Allgather(sb, c, ty, b, c, ty, comm);
      same(a, b, bytes, "MPI_Allgather", types[t].name, c, -1);
      PREP();
      MPI_Allgather(MPI_IN_PLACE, c, ty, a, c, ty, comm);
      PMPI_Allgather(MPI_IN_PLACE, c, ty, b, c, ty, comm);
      same(a, b, bytes, "MPI_Allgather in place", types[t].name, c, -1);
      check_v(comm, ty, types[t].name, types[t].reducible, c, seed, a, b, sa, sb, bytes);
      if (!types[t].reducible) continue;
      for (int o = 0; o < 2; ++o) {
        for (int k = 0; k < 2; ++k) { /* the same checks for MPI_Allreduce and MPI_Scan */
          PREP();
          CHECK(all[k].wrapped(sa, a, c, ty, ops[o], comm) == MPI_SUCCESS, "%s", all[k].name);
          all[k].raw(sb, b, c, ty, ops[o], comm);
          same(a, b, bytes, all[k].name, types[t].name, c, -1);
          PREP();
          all[k].wrapped(MPI_IN_PLACE, a, c, ty, ops[o], comm);
          all[k].raw(MPI_IN_PLACE, b, c, ty, ops[o], comm);
          same(a, b, bytes, all[k].name, types[t].name, c, -1);
        }
      }
#undef PREP
    }
  }
  CHECK(MPI_Barrier(comm) == MPI_SUCCESS, "MPI_Barrier");
  free(a), free(b), free(sa), free(sb);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "quick") == 0) quick = 1, ncounts = 2;
    if (strcmp(argv[i], "nonblocking") == 0) nb = 1;
  }
  MPI_Datatype vec;
  MPI_Type_vector(1, 1, 2, MPI_DOUBLE, &vec); /* one double, extent of one: resized below to stride 2 */
  MPI_Datatype strided;
  MPI_Type_create_resized(vec, 0, 2 * sizeof(double), &strided);
  MPI_Type_commit(&strided);
  Type types[] = {{MPI_INT, "MPI_INT", 1}, {MPI_DOUBLE, "MPI_DOUBLE", 1}, {strided, "strided double", 0}};
  int ntypes = 3;

  check_comm(MPI_COMM_WORLD, types, ntypes);

  MPI_Comm dup, raw_dup, half, raw_half;
  CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup) == MPI_SUCCESS, "MPI_Comm_dup");
  PMPI_Comm_dup(MPI_COMM_WORLD, &raw_dup);
  int r1, r2, s1, s2;
  MPI_Comm_rank(dup, &r1), PMPI_Comm_rank(raw_dup, &r2), MPI_Comm_size(dup, &s1), PMPI_Comm_size(raw_dup, &s2);
  CHECK(r1 == r2 && s1 == s2, "dup: rank %d size %d, raw MPI rank %d size %d", r1, s1, r2, s2);
  check_comm(dup, types, ntypes);

  /* split: two colors, keys reverse the order */
  CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half) == MPI_SUCCESS, "MPI_Comm_split");
  PMPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &raw_half);
  MPI_Comm_rank(half, &r1), PMPI_Comm_rank(raw_half, &r2), MPI_Comm_size(half, &s1), PMPI_Comm_size(raw_half, &s2);
  CHECK(r1 == r2 && s1 == s2, "split: rank %d size %d, raw MPI rank %d size %d", r1, s1, r2, s2);
  check_comm(half, types, ntypes);
  MPI_Comm none;
  CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? 0 : MPI_UNDEFINED, 0, &none) == MPI_SUCCESS, "split undefined");
  CHECK((rank == 0) == (none != MPI_COMM_NULL), "MPI_UNDEFINED gives MPI_COMM_NULL");
  if (none != MPI_COMM_NULL) MPI_Comm_free(&none);

  /* a communicator cohort did not create passes through */
  check_comm(raw_half, types, 2);

  CHECK(MPI_Comm_free(&half) == MPI_SUCCESS && half == MPI_COMM_NULL, "MPI_Comm_free");
  CHECK(MPI_Comm_free(&dup) == MPI_SUCCESS && dup == MPI_COMM_NULL, "MPI_Comm_free");
  PMPI_Comm_free(&raw_half);
  PMPI_Comm_free(&raw_dup);
  CHECK(cohort_call_count(nb ? "MPI_Ibcast" : "MPI_Bcast") > 0 && cohort_call_count("MPI_Comm_split") == 2,
        "wrappers entered");
  CHECK(cohort_call_count(nb ? "MPI_Ialltoallw" : "MPI_Alltoallw") > 0 && cohort_call_count("MPI_Reduce_local") > 0,
        "new wrappers entered");
  MPI_Type_free(&strided);
  MPI_Type_free(&vec);
  TEST_PASS("%d ranks: every collective equals raw MPI", size);
  MPI_Finalize();
  return 0;
}
