/* The fault matrix of the collectives and communicator calls: one call, run once per step, with ranks
 * killed just before it or during it, and every survivor's buffers and return codes asserted.
 *
 *   wrap_faults CALL [root=R] [expect=ok|skip|error|abort] [complete=test] [freetype] [ignoredtype] STEP...
 *     CALL   barrier bcast reduce allreduce scan gather scatter allgather gatherv scatterv allgatherv
 *            alltoall alltoallv alltoallw reduce_scatter reduce_scatter_block exscan dup split
 *            create split_type idup dup_with_info (the communicator constructors: all on one node here, so
 *            split_type is a dup; create makes one group per parity, like split)
 *            (the blocking collectives of wrap/calls.def; tests/mpi/wrap_tests.cmake takes the list from there),
 *            or i + one of them but the communicator calls (ibarrier, iallreduce, ...): the nonblocking
 *            variant, completed by MPI_Wait (complete=test: by an MPI_Test polling loop); with
 *            `persistent` (where the MPI has MPI 4.0's persistent collectives) the persistent one instead:
 *            each step makes the request with MPI_<Call>_init, starts and completes it twice (the same
 *            buffers, so the same outcome), then frees it; the inject hook counts both starts
 *            (alltoallw: with derived datatypes, freed right after the init)
 *     STEP   none | before:V[+V...] | during:V[+V...]
 *            before: rank V kills itself (SIGKILL) right before the call; the others enter the call.
 *            during: rank V dies inside the call; the test's environment arranges it with
 *                    COHORT_INJECT_FAILURE=rank=V,at=<call>.posted[,hit=k]. Its contribution may or
 *                    may not be in the result (it posted before dying), but every survivor must see
 *                    the same result.
 *     expect (for a dead root) skip: MPI_SUCCESS; error: a code of class cohort_err_proc_failed() under
 *            MPI_ERRORS_RETURN; abort: the call must not return (the job stops).
 *
 * Rank r contributes (j+1) << r to element j, so a sum names exactly the ranks that contributed: its
 * mask must contain every surviving rank and only ranks that were alive when the call started.
 * The v-calls use irregular counts (vcount) and displacements in reverse rank order with gaps (vdispl);
 * a block that rank r sends to rank t holds pair(r, t, j).
 * At the end the survivors compare what each step gave them (an Allgather through cohort). */
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>

#include <cohort/cohort.h>

#include "check.h"

#define COUNT 3
#define MAXSTEPS 8
#define UNTOUCHED (-7LL)

static int rank, size, root = 0;
/* CALL i<call> (e.g. iallreduce): the nonblocking variant, completed by MPI_Wait, or with complete=test by
 * an MPI_Test polling loop; the same assertions as the blocking call's. */
static int nb = 0, nb_test = 0;
static MPI_Request nb_req;
/* freetype: the data-movement calls (not the reductions: MPI_SUM needs a predefined type) use LL, a derived
 * datatype made for each step and freed right after the nonblocking call returned, as MPI allows */
static int freetype = 0;
static MPI_Datatype LL = MPI_LONG_LONG;
/* ignoredtype: the datatype argument that MPI ignores at a non-root (a Gather's recvtype, a Scatter's
 * sendtype, and their v variants') names no datatype there, as an uninitialised variable would not: a
 * wrapper that queried it would fail or abort */
static int ignoredtype = 0;
static MPI_Datatype at_root_only(MPI_Datatype t);
static int nb_complete(int rc) {
  if (freetype && LL != MPI_LONG_LONG) MPI_Type_free(&LL);  /* (LL is then MPI_DATATYPE_NULL) */
  if (rc != MPI_SUCCESS) return rc;
  CHECK(nb_req != MPI_REQUEST_NULL, "no request");
  if (!nb_test) return MPI_Wait(&nb_req, MPI_STATUS_IGNORE);
  int flag = 0;
  while (!flag && rc == MPI_SUCCESS) rc = MPI_Test(&nb_req, &flag, MPI_STATUS_IGNORE);
  return rc;
}
static int persistent = 0;
/* a persistent request just made (rc, its init's code): started and completed twice, then freed */
static int p_complete(int rc) {
  if (rc != MPI_SUCCESS) return rc;
  for (int round = 0; round < 2 && rc == MPI_SUCCESS; ++round) {
    rc = MPI_Start(&nb_req);
    if (rc == MPI_SUCCESS) rc = nb_complete(rc);
    CHECK(nb_req != MPI_REQUEST_NULL, "a completed persistent request is inactive, not null");
  }
  int frc = MPI_Request_free(&nb_req);
  CHECK(frc == MPI_SUCCESS && nb_req == MPI_REQUEST_NULL, "MPI_Request_free of the persistent request");
  return rc;
}
#if defined(COHORT_HAVE_PERSISTENT_COLL)
#define NB(blocking, nonblocking, ...)                                                      \
  (persistent ? p_complete(blocking##_init(__VA_ARGS__, MPI_INFO_NULL, &nb_req))            \
   : nb       ? nb_complete(nonblocking(__VA_ARGS__, &nb_req))                              \
              : blocking(__VA_ARGS__))
#else
#define NB(blocking, nonblocking, ...) (nb ? nb_complete(nonblocking(__VA_ARGS__, &nb_req)) : blocking(__VA_ARGS__))
#endif
static MPI_Datatype at_root_only(MPI_Datatype t) { return ignoredtype && rank != root ? (MPI_Datatype)0 : t; }
static const char *call, *expect = "ok";
static unsigned dead = 0; /* ranks known dead before the current step (bit r) */
static unsigned may = 0;  /* ranks dying during the current step */

static long long contribution(int r, int j) { return (long long)(j + 1) << r; }
static long long block(int r, int j) { return r * 1000LL + j; }

/* mask must contain every rank alive through the step and only ranks alive when it started */
static void check_mask(unsigned mask, unsigned within, const char *what) {
  unsigned must = ~dead & ~may & within, can = ~dead & within;
  CHECK((mask & must) == must && (mask & ~can) == 0, "%s: contributors 0x%x, expected all of 0x%x within 0x%x",
        what, mask, must, can);
}

static unsigned all_ranks(void) { return size >= 32 ? ~0u : (1u << size) - 1; }

static void check_sum(const long long *v, unsigned within, const char *what) {
  unsigned mask = (unsigned)v[0];
  for (int j = 0; j < COUNT; ++j) CHECK(v[j] == (long long)(j + 1) * mask, "%s: element %d is %lld", what, j, v[j]);
  check_mask(mask, within, what);
}

/* Gathered blocks: a live rank's block at its original offset, a dead rank's slot untouched. */
static unsigned check_blocks(const long long *v, const char *what) {
  unsigned present = 0;
  for (int r = 0; r < size; ++r) {
    int here = v[r * COUNT] != UNTOUCHED;
    for (int j = 0; j < COUNT; ++j)
      CHECK(v[r * COUNT + j] == (here ? block(r, j) : UNTOUCHED), "%s: slot %d element %d is %lld", what, r, j,
            v[r * COUNT + j]);
    if (here) present |= 1u << r;
  }
  check_mask(present, all_ranks(), what);
  return present;
}

/* The members of a new communicator, as a mask of world ranks, checked to be in the expected order. */
static unsigned members(MPI_Comm c, int descending) {
  int n, me;
  MPI_Comm_size(c, &n);
  MPI_Comm_rank(c, &me);
  int *w = malloc(sizeof(int) * (size_t)n);
  for (int i = 0; i < n; ++i) w[i] = -1;
  CHECK(MPI_Allgather(&rank, 1, MPI_INT, w, 1, MPI_INT, c) == MPI_SUCCESS, "Allgather on the new communicator");
  unsigned m = 0;
  CHECK(w[me] == rank, "my slot holds %d", w[me]);
  for (int i = 0; i < n; ++i) {
    CHECK(w[i] >= 0, "member %d of %d has no world rank", i, n);
    if (i > 0) CHECK(descending ? w[i] < w[i - 1] : w[i] > w[i - 1], "members out of order at %d", i);
    m |= 1u << w[i];
  }
  free(w);
  return m;
}

/* Irregular blocks: rank r's count (1..3) and displacement (reverse rank order, a gap after each block). */
static int vcount(int r) { return 1 + r % 3; }
static int vdispl(int r) { return (size - 1 - r) * (COUNT + 1); }
static long long pair(int from, int to, int j) { return from * 1000LL + to * 10 + j; }

/* Blocks at given displacements: each rank's block is all there (`value`) or all untouched, every other
 * element untouched. Returns the mask of ranks present. */
static unsigned check_placed(const long long *v, int n, const int *counts, const int *displs, int to,
                             const char *what) {
  unsigned present = 0;
  int owner[32 * (COUNT + 1)];
  for (int i = 0; i < n; ++i) owner[i] = -1;
  for (int r = 0; r < size; ++r) {
    int here = counts[r] > 0 && v[displs[r]] != UNTOUCHED;
    for (int j = 0; j < counts[r]; ++j) {
      owner[displs[r] + j] = r;
      long long want = here ? (to < 0 ? block(r, j) : pair(r, to, j)) : UNTOUCHED;
      CHECK(v[displs[r] + j] == want, "%s: rank %d's element %d is %lld", what, r, j, v[displs[r] + j]);
    }
    if (here) present |= 1u << r;
  }
  for (int i = 0; i < n; ++i)
    if (owner[i] < 0) CHECK(v[i] == UNTOUCHED, "%s: element %d outside every block is %lld", what, i, v[i]);
  check_mask(present, all_ranks(), what);
  return present;
}

/* A reduction of n elements (n <= COUNT) followed by untouched ones. */
static unsigned check_sum_n(const long long *v, int n, unsigned within, const char *what) {
  unsigned mask = (unsigned)v[0];
  for (int j = 0; j < n; ++j) CHECK(v[j] == (long long)(j + 1) * mask, "%s: element %d is %lld", what, j, v[j]);
  for (int j = n; j < COUNT; ++j) CHECK(v[j] == UNTOUCHED, "%s: element %d beyond my block is %lld", what, j, v[j]);
  check_mask(mask, within, what);
  return mask;
}

/* Runs the call once; returns what every survivor must agree on (a digest of the outcome). */
static long long step(void) {
  long long in[COUNT], out[COUNT], all[32 * (COUNT + 1)], sendall[32 * (COUNT + 1)];
  long long to_each[32 * (COUNT + 1)], contrib_all[32 * COUNT];
  int counts[32], displs[32], rcounts[32], rdispls[32], bytes[32], rbytes[32];
  MPI_Datatype types[32];
  if (freetype) {
    MPI_Type_contiguous(1, MPI_LONG_LONG, &LL);
    MPI_Type_commit(&LL);
  }
  for (int j = 0; j < COUNT; ++j) in[j] = contribution(rank, j), out[j] = UNTOUCHED;
  for (int i = 0; i < 32 * (COUNT + 1); ++i) all[i] = UNTOUCHED, to_each[i] = UNTOUCHED, sendall[i] = UNTOUCHED;
  for (int r = 0; r < size; ++r)
    for (int j = 0; j < COUNT; ++j) sendall[r * COUNT + j] = block(r, j), contrib_all[r * COUNT + j] = contribution(rank, j);
  /* v-layouts: rank r's block of vcount(r) at vdispl(r); alltoallv: what I send to t is vcount(rank + t) */
  for (int r = 0; r < size; ++r) {
    counts[r] = vcount(r), displs[r] = vdispl(r);
    rcounts[r] = vcount(r + rank), rdispls[r] = vdispl(r);
    bytes[r] = displs[r] * (int)sizeof(long long), rbytes[r] = rdispls[r] * (int)sizeof(long long);
    types[r] = LL;
    for (int j = 0; j < vcount(rank + r); ++j) to_each[vdispl(r) + j] = pair(rank, r, j);
  }
  const int nv = size * (COUNT + 1);
  int rc = MPI_SUCCESS;
  int rooted = 1;
  if (!strcmp(call, "barrier")) {
    rooted = 0;
    rc = NB(MPI_Barrier, MPI_Ibarrier, MPI_COMM_WORLD);
  } else if (!strcmp(call, "bcast")) {
    long long *b = rank == root ? sendall + root * COUNT : out;
    rc = NB(MPI_Bcast, MPI_Ibcast, b, COUNT, LL, root, MPI_COMM_WORLD);
  } else if (!strcmp(call, "reduce")) {
    rc = NB(MPI_Reduce, MPI_Ireduce, in, out, COUNT, MPI_LONG_LONG, MPI_SUM, root, MPI_COMM_WORLD);
  } else if (!strcmp(call, "allreduce")) {
    rooted = 0;
    rc = NB(MPI_Allreduce, MPI_Iallreduce, in, out, COUNT, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  } else if (!strcmp(call, "scan")) {
    rooted = 0;
    rc = NB(MPI_Scan, MPI_Iscan, in, out, COUNT, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  } else if (!strcmp(call, "gather")) {
    rc = NB(MPI_Gather, MPI_Igather, sendall + rank * COUNT, COUNT, LL, all, COUNT, at_root_only(LL), root,
            MPI_COMM_WORLD);
  } else if (!strcmp(call, "scatter")) {
    rc = NB(MPI_Scatter, MPI_Iscatter, sendall, COUNT, at_root_only(LL), out, COUNT, LL, root, MPI_COMM_WORLD);
  } else if (!strcmp(call, "allgather")) {
    rooted = 0;
    rc = NB(MPI_Allgather, MPI_Iallgather, sendall + rank * COUNT, COUNT, LL, all, COUNT, LL, MPI_COMM_WORLD);
  } else if (!strcmp(call, "gatherv")) {
    long long mine[COUNT];
    for (int j = 0; j < COUNT; ++j) mine[j] = block(rank, j);
    rc = NB(MPI_Gatherv, MPI_Igatherv, mine, vcount(rank), LL, all, counts, displs, at_root_only(LL), root,
            MPI_COMM_WORLD);
  } else if (!strcmp(call, "scatterv")) {
    long long src[32 * (COUNT + 1)];
    for (int r = 0; r < size; ++r)
      for (int j = 0; j < vcount(r); ++j) src[vdispl(r) + j] = block(r, j);
    rc = NB(MPI_Scatterv, MPI_Iscatterv, src, counts, displs, at_root_only(LL), out, vcount(rank), LL, root,
            MPI_COMM_WORLD);
  } else if (!strcmp(call, "allgatherv")) {
    rooted = 0;
    long long mine[COUNT];
    for (int j = 0; j < COUNT; ++j) mine[j] = block(rank, j);
    rc = NB(MPI_Allgatherv, MPI_Iallgatherv, mine, vcount(rank), LL, all, counts, displs, LL, MPI_COMM_WORLD);
  } else if (!strcmp(call, "alltoall")) {
    rooted = 0;
    long long src[32 * COUNT];
    for (int r = 0; r < size; ++r)
      for (int j = 0; j < COUNT; ++j) src[r * COUNT + j] = pair(rank, r, j);
    rc = NB(MPI_Alltoall, MPI_Ialltoall, src, COUNT, LL, all, COUNT, LL, MPI_COMM_WORLD);
  } else if (!strcmp(call, "alltoallv") || !strcmp(call, "alltoallw")) {
    rooted = 0;
    int scounts[32];
    for (int r = 0; r < size; ++r) scounts[r] = vcount(rank + r);
    if (!strcmp(call, "alltoallv"))
      rc = NB(MPI_Alltoallv, MPI_Ialltoallv, to_each, scounts, displs, LL, all, rcounts, rdispls, LL, MPI_COMM_WORLD);
#if defined(COHORT_HAVE_PERSISTENT_COLL)
    else if (persistent) {
      /* derived datatypes in both arrays, freed right after the init as MPI allows: every start must work */
      MPI_Datatype dt[32];
      for (int r = 0; r < size; ++r) {
        MPI_Type_contiguous(1, MPI_LONG_LONG, &dt[r]);
        MPI_Type_commit(&dt[r]);
      }
      rc = MPI_Alltoallw_init(to_each, scounts, bytes, dt, all, rcounts, rbytes, dt, MPI_COMM_WORLD, MPI_INFO_NULL,
                              &nb_req);
      for (int r = 0; r < size; ++r) MPI_Type_free(&dt[r]);
      rc = p_complete(rc);
    }
#endif
    else
      rc = NB(MPI_Alltoallw, MPI_Ialltoallw, to_each, scounts, bytes, types, all, rcounts, rbytes, types, MPI_COMM_WORLD);
  } else if (!strcmp(call, "reduce_scatter")) {
    rooted = 0;
    /* block r has vcount(r) elements, packed in rank order; its element j holds contribution(rank, j) */
    long long src[32 * COUNT];
    int k = 0;
    for (int r = 0; r < size; ++r)
      for (int j = 0; j < vcount(r); ++j) src[k++] = contribution(rank, j);
    rc = NB(MPI_Reduce_scatter, MPI_Ireduce_scatter, src, out, counts, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  } else if (!strcmp(call, "reduce_scatter_block")) {
    rooted = 0;
    rc = NB(MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, contrib_all, out, COUNT, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  } else if (!strcmp(call, "exscan")) {
    rooted = 0;
    rc = NB(MPI_Exscan, MPI_Iexscan, in, out, COUNT, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  } else if (!strcmp(call, "dup") || !strcmp(call, "split") || !strcmp(call, "create") ||
             !strcmp(call, "split_type") || !strcmp(call, "idup") || !strcmp(call, "dup_with_info")) {
    rooted = 0;
    MPI_Comm c = MPI_COMM_NULL;
    /* split and create: by parity, in descending rank order; the others: everyone, ascending */
    int split = !strcmp(call, "split") || !strcmp(call, "create");
    if (!strcmp(call, "split")) {
      rc = MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &c);
    } else if (!strcmp(call, "create")) {
      /* each parity its own group (disjoint groups), listed from the highest rank down */
      int ranks[32], n = 0;
      for (int r = size - 1; r >= 0; --r)
        if (r % 2 == rank % 2) ranks[n++] = r;
      MPI_Group world, g;
      MPI_Comm_group(MPI_COMM_WORLD, &world);
      MPI_Group_incl(world, n, ranks, &g);
      rc = MPI_Comm_create(MPI_COMM_WORLD, g, &c);
      MPI_Group_free(&g);
      MPI_Group_free(&world);
    } else if (!strcmp(call, "split_type")) {
      rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c);
    } else if (!strcmp(call, "idup")) {
      MPI_Request req = MPI_REQUEST_NULL;
      rc = MPI_Comm_idup(MPI_COMM_WORLD, &c, &req);
      CHECK(rc == MPI_SUCCESS && MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS && req == MPI_REQUEST_NULL,
            "MPI_Comm_idup's request");
    } else if (!strcmp(call, "dup_with_info")) {
      MPI_Info info;
      MPI_Info_create(&info);
      MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
      rc = MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &c);
      MPI_Info_free(&info);
    } else {
      rc = MPI_Comm_dup(MPI_COMM_WORLD, &c);
    }
    CHECK(rc == MPI_SUCCESS && c != MPI_COMM_NULL, "MPI_Comm_%s returned %d", call, rc);
    /* a duplicate stays congruent to its parent, degraded or not */
    if (!split && strcmp(call, "split_type")) {
      int cmp = -1;
      CHECK(MPI_Comm_compare(MPI_COMM_WORLD, c, &cmp) == MPI_SUCCESS && cmp == MPI_CONGRUENT,
            "MPI_Comm_compare(world, %s) gave %d", call, cmp);
    }
    unsigned within = all_ranks();
    if (split)
      for (int r = 0; r < size; ++r)
        if (r % 2 != rank % 2) within &= ~(1u << r);
    unsigned m = members(c, split);
    /* everyone alive when the call started may be a member; the survivors of the call must be */
    check_mask(m, within, call);
    int n;
    MPI_Comm_size(c, &n);
    CHECK(n == __builtin_popcount(m), "size %d for %d members", n, __builtin_popcount(m));
    CHECK(MPI_Comm_free(&c) == MPI_SUCCESS && c == MPI_COMM_NULL, "MPI_Comm_free");
    return m;
  } else {
    CHECK(0, "unknown call '%s'", call);
  }
  int root_dead = rooted && ((dead >> root) & 1);
  if (root_dead && strcmp(expect, "ok")) {
    CHECK(strcmp(expect, "abort"), "MPI_%s returned %d although the policy is abort", call, rc);
    if (!strcmp(expect, "skip")) CHECK(rc == MPI_SUCCESS, "policy skip: MPI_%s returned %d", call, rc);
    if (!strcmp(expect, "error")) {
      int cls = -1;
      MPI_Error_class(rc, &cls);
      CHECK(rc != MPI_SUCCESS && cls == cohort_err_proc_failed(),
            "policy error: MPI_%s returned %d (class %d), expected class %d", call, rc, cls, cohort_err_proc_failed());
    }
    return rc;
  }
  CHECK(rc == MPI_SUCCESS, "MPI_%s returned %d", call, rc);
  if (!strcmp(call, "barrier")) return 0;
  if (!strcmp(call, "bcast")) {
    const long long *b = rank == root ? sendall + root * COUNT : out;
    for (int j = 0; j < COUNT; ++j) CHECK(b[j] == block(root, j), "bcast: element %d is %lld", j, b[j]);
    return b[0];
  }
  if (!strcmp(call, "reduce")) {
    if (rank != root) return 0;
    check_sum(out, all_ranks(), "reduce");
    return out[0];
  }
  if (!strcmp(call, "allreduce")) {
    check_sum(out, all_ranks(), "allreduce");
    return out[0];
  }
  if (!strcmp(call, "scan")) {
    check_sum(out, (2u << rank) - 1, "scan");
    return out[0];
  }
  if (!strcmp(call, "gather")) return rank == root ? check_blocks(all, "gather") : 0;
  if (!strcmp(call, "gatherv")) return rank == root ? check_placed(all, nv, counts, displs, -1, "gatherv") : 0;
  if (!strcmp(call, "allgatherv")) return check_placed(all, nv, counts, displs, -1, "allgatherv");
  if (!strcmp(call, "scatterv")) {
    for (int j = 0; j < COUNT; ++j)
      CHECK(out[j] == (j < vcount(rank) ? block(rank, j) : UNTOUCHED), "scatterv: element %d is %lld", j, out[j]);
    return out[0];
  }
  /* all-to-all: the ranks I received from are the same on every survivor (a dying rank's blocks reached
   * all or none of them), so the mask is the outcome */
  if (!strcmp(call, "alltoall")) {
    int c[32], d[32];
    for (int r = 0; r < size; ++r) c[r] = COUNT, d[r] = r * COUNT;
    return check_placed(all, size * COUNT, c, d, rank, "alltoall");
  }
  if (!strcmp(call, "alltoallv") || !strcmp(call, "alltoallw")) return check_placed(all, nv, rcounts, rdispls, rank, call);
  if (!strcmp(call, "reduce_scatter")) return check_sum_n(out, vcount(rank), all_ranks(), "reduce_scatter");
  if (!strcmp(call, "reduce_scatter_block")) return check_sum_n(out, COUNT, all_ranks(), "reduce_scatter_block");
  if (!strcmp(call, "exscan")) {
    /* the prefix over the live ranks before me; untouched where there is none */
    if (out[0] == UNTOUCHED) {
      for (int j = 0; j < COUNT; ++j) CHECK(out[j] == UNTOUCHED, "exscan: element %d is %lld", j, out[j]);
      check_mask(0, (1u << rank) - 1, "exscan (untouched)");
      return 0;
    }
    CHECK(rank > 0, "exscan: rank 0's buffer was written");
    check_sum(out, (1u << rank) - 1, "exscan");
    return out[0];
  }
  if (!strcmp(call, "allgather")) return check_blocks(all, "allgather");
  /* scatter: my original block */
  for (int j = 0; j < COUNT; ++j) CHECK(out[j] == block(rank, j), "scatter: element %d is %lld", j, out[j]);
  return out[0];
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(argc >= 3 && size <= 31, "usage: wrap_faults CALL [root=R] [expect=...] STEP...");
  call = argv[1];
  /* the nonblocking variants: "i" + a blocking call's name (no blocking collective starts with "i"; idup is
   * the communicator constructor MPI_Comm_idup, run as such) */
  if (call[0] == 'i' && strcmp(call, "idup") != 0) nb = 1, ++call;
  long long digest[MAXSTEPS];
  int nsteps = 0;
  for (int i = 2; i < argc; ++i) {
    if (!strncmp(argv[i], "root=", 5)) {
      root = atoi(argv[i] + 5);
      continue;
    }
    if (!strcmp(argv[i], "persistent")) {
#if defined(COHORT_HAVE_PERSISTENT_COLL)
      CHECK(nb, "persistent: name the nonblocking call (i<call>)");
      persistent = 1;
#else
      CHECK(0, "persistent: this MPI has no persistent collectives");
#endif
      continue;
    }
    if (!strcmp(argv[i], "freetype")) {
      CHECK(nb, "freetype: name the nonblocking call (i<call>)");
      freetype = 1;
      continue;
    }
    if (!strcmp(argv[i], "ignoredtype")) {
      ignoredtype = 1;
      continue;
    }
    if (!strcmp(argv[i], "complete=test")) {
      nb_test = 1;
      continue;
    }
    if (!strncmp(argv[i], "expect=", 7)) {
      expect = argv[i] + 7;
      if (!strcmp(expect, "error")) MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
      continue;
    }
    CHECK(nsteps < MAXSTEPS, "too many steps");
    unsigned before = 0;
    may = 0;
    if (!strncmp(argv[i], "before:", 7)) before = parse_ranks(argv[i] + 7);
    else if (!strncmp(argv[i], "during:", 7)) may = parse_ranks(argv[i] + 7);
    else CHECK(!strcmp(argv[i], "none"), "bad step '%s'", argv[i]);
    if ((before >> rank) & 1) raise(SIGKILL);
    dead |= before;
    digest[nsteps++] = step();
    dead |= may;
  }
  /* every survivor saw the same outcome of every step */
  long long *digests = malloc(sizeof(long long) * MAXSTEPS * (size_t)size);
  for (int i = 0; i < MAXSTEPS * size; ++i) digests[i] = UNTOUCHED;
  may = 0;
  CHECK(MPI_Allgather(digest, MAXSTEPS, MPI_LONG_LONG, digests, MAXSTEPS, MPI_LONG_LONG, MPI_COMM_WORLD) ==
            MPI_SUCCESS, "final Allgather");
  /* (gather, reduce: only the root has an outcome; scan, scatter: each rank has its own) */
  static const char *const per_rank[] = {"gather", "reduce", "scatter", "scan", "gatherv", "scatterv", "exscan"};
  int uniform = 1;
  for (size_t k = 0; k < sizeof per_rank / sizeof per_rank[0]; ++k)
    if (!strcmp(call, per_rank[k])) uniform = 0;
  for (int r = 0; r < size; ++r) {
    if ((dead >> r) & 1) {
      CHECK(digests[r * MAXSTEPS] == UNTOUCHED, "dead rank %d's slot was written", r);
      continue;
    }
    if ((!strcmp(call, "split") || !strcmp(call, "create")) && r % 2 != rank % 2)
      continue; /* split, create: the same outcome per color */
    for (int s = 0; s < nsteps && uniform; ++s)
      CHECK(digests[r * MAXSTEPS + s] == digest[s], "step %d: rank %d saw %lld, I saw %lld", s + 1, r,
            digests[r * MAXSTEPS + s], digest[s]);
  }
  free(digests);
  TEST_PASS("MPI_%s%s%s: %d steps, survivors 0x%x, %ld failures known", nb && !persistent ? "I" : "", call,
            persistent ? "_init" : "", nsteps, ~dead & all_ranks(),
            (long)cohort_failed_count());
  MPI_Finalize();
  return 0;
}
