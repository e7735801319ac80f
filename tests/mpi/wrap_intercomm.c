/* Intercommunicators: MPI_Intercomm_create between the even and the odd world ranks (local
 * leader: each side's first rank; peer communicator MPI_COMM_WORLD), the queries, point-to-point, the
 * collectives Barrier, Bcast, Allreduce, Reduce, Gather, Scatter, Allgather, Alltoall (MPI_ROOT /
 * MPI_PROC_NULL root conventions, both directions), their v and w variants and the reduce-scatters,
 * MPI_Intercomm_merge and MPI_Comm_free.
 *
 *   wrap_intercomm equiv         fault-free: every result equals raw MPI's on an intercommunicator made
 *                                with PMPI_Intercomm_create, and the value computed here
 *   wrap_intercomm created V     ranks V killed before MPI_Intercomm_create: it is made over the
 *                                survivors (sizes, groups), every collective over them
 *   wrap_intercomm create_during V   as `created`, but V dies inside MPI_Intercomm_create (inject hook
 *                                intercomm_create.posted)
 *   wrap_intercomm before V      ranks V killed right after MPI_Intercomm_create: sizes and ranks never
 *                                change, every collective gives exactly the survivors' values, dead
 *                                ranks' blocks untouched, point-to-point with a dead peer skipped
 *                                (COHORT_ON_DEAD_PEER=skip), the merge is over the survivors, and
 *                                MPI_Comm_disconnect returns
 *   wrap_intercomm during V      rank V dies inside the intercommunicator MPI_Allreduce (inject hook
 *                                allgather.posted): that call counts V or not, the same everywhere; every
 *                                later one as for `before`
 *   ... nb                       the same with the nonblocking twins of the collectives, all in flight at
 *                                once and completed by one MPI_Waitall (equiv: against raw MPI's blocking
 *                                ones)
 *   V: ranks written "1+2". The checks compute what every survivor must hold from the set of live ranks. */
#include <mpi.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define MAXR 16
static int wrank, wsize, side;
static unsigned dead; /* ranks dead (or to be killed) at the calls */

static int live(int w) { return !(dead & (1u << w)); }

/* The world ranks of comm's local (remote = 0) or remote group. */
static int group_world(MPI_Comm ic, int remote, int *out) {
  MPI_Group g, world;
  int n;
  if (remote)
    MPI_Comm_remote_group(ic, &g);
  else
    MPI_Comm_group(ic, &g);
  PMPI_Comm_group(MPI_COMM_WORLD, &world);
  PMPI_Group_size(g, &n);
  int idx[MAXR];
  for (int i = 0; i < n; ++i) idx[i] = i;
  PMPI_Group_translate_ranks(g, n, idx, world, out);
  PMPI_Group_free(&g);
  PMPI_Group_free(&world);
  return n;
}

/* What one run of the battery gives (compared with raw MPI's in `equiv`). */
struct results {
  int bcast0[4], bcast1[4], allreduce[2], reduce[2], gather[MAXR], scatter, allgather[MAXR], alltoall[MAXR],
      p2p, merged_rank, merged_size, merged_sum;
  /* the v and w variants (2 ints per remote rank: counts vary, displacements reversed or spread) and the
   * reduce-scatters (recvcount = the remote group's size, so both groups reduce vectors of nl * nr) */
  int gatherv[2 * MAXR], scatterv[2], allgatherv[2 * MAXR], alltoallv[2 * MAXR], alltoallw[2 * MAXR],
      rsb[MAXR], rs[MAXR];
};

/* The v-variants' arguments, the same for the blocking and the nonblocking battery. */
struct vargs {
  int gv_send[2], gv_counts[MAXR], gv_displs[MAXR];
  int sv_send[2 * MAXR], sv_counts[MAXR], sv_displs[MAXR], sv_count;
  int agv_send[2], agv_count, agv_counts[MAXR], agv_displs[MAXR];
  int a2av_send[2 * MAXR], a2aw_send[2 * MAXR], a2a_scounts[MAXR], a2a_sdispls[MAXR], a2a_rcounts[MAXR],
      a2a_rdispls[MAXR], a2aw_sbytes[MAXR], a2aw_rbytes[MAXR];
  MPI_Datatype ints[MAXR];
  int rs_send[MAXR * MAXR], rs_counts[MAXR];
};
static void vargs_make(struct vargs *v, int me, int nl, int nr) {
  v->gv_send[0] = wrank * 100 + 1, v->gv_send[1] = wrank * 100 + 2;
  for (int j = 0; j < nr; ++j) v->gv_counts[j] = 2, v->gv_displs[j] = 2 * (nr - 1 - j);
  for (int j = 0; j < nr; ++j) {
    v->sv_counts[j] = 1 + j % 2, v->sv_displs[j] = 2 * j;
    v->sv_send[2 * j] = 700 + j * 10, v->sv_send[2 * j + 1] = 701 + j * 10;
  }
  v->sv_count = 1 + me % 2;
  v->agv_count = 1 + me % 2, v->agv_send[0] = wrank * 7, v->agv_send[1] = wrank * 7 + 1;
  for (int j = 0; j < nr; ++j) v->agv_counts[j] = 1 + j % 2, v->agv_displs[j] = 2 * j;
  for (int j = 0; j < nr; ++j) {
    int c = 1 + (me + j) % 2;
    v->a2a_scounts[j] = v->a2a_rcounts[j] = c;
    v->a2a_sdispls[j] = v->a2a_rdispls[j] = 2 * j;
    v->a2aw_sbytes[j] = v->a2aw_rbytes[j] = 2 * j * (int)sizeof(int);
    v->ints[j] = MPI_INT;
    for (int k = 0; k < 2; ++k) {
      v->a2av_send[2 * j + k] = wrank * 1000 + j * 10 + k;
      v->a2aw_send[2 * j + k] = wrank * 1000 + j * 10 + k + 5;
    }
  }
  for (int i = 0; i < nl * nr; ++i) v->rs_send[i] = wrank + i;
  for (int i = 0; i < nl; ++i) v->rs_counts[i] = nr;
}

#define CALL(raw, name, ...) ((raw) ? P##name(__VA_ARGS__) : name(__VA_ARGS__))

static int nb; /* the nonblocking twins: all started, then one MPI_Waitall */

/* The battery's collectives as their nonblocking twins, all in flight at once (rooted ones included:
 * cohort runs each as two operations of the union), completed by one MPI_Waitall. */
static void collectives_nb(MPI_Comm ic, int raw, struct results *r, int me, int nl, int nr) {
  static int mine[2], g, sc[MAXR], ag, a2a[MAXR];
  static struct vargs v;
  vargs_make(&v, me, nl, nr);
  MPI_Request q[16];
  MPI_Status st[16];
  CHECK(CALL(raw, MPI_Ibarrier, ic, &q[0]) == MPI_SUCCESS, "ibarrier");
  int root0 = side == 0 ? (me == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  if (root0 == MPI_ROOT)
    for (int k = 0; k < 4; ++k) r->bcast0[k] = wrank * 10 + k;
  CHECK(CALL(raw, MPI_Ibcast, r->bcast0, 4, MPI_INT, root0, ic, &q[1]) == MPI_SUCCESS, "ibcast 0");
  int root1 = side == 1 ? (me == nl - 1 ? MPI_ROOT : MPI_PROC_NULL) : nr - 1;
  if (root1 == MPI_ROOT)
    for (int k = 0; k < 4; ++k) r->bcast1[k] = wrank * 10 + k;
  CHECK(CALL(raw, MPI_Ibcast, r->bcast1, 4, MPI_INT, root1, ic, &q[2]) == MPI_SUCCESS, "ibcast 1");
  mine[0] = wrank + 1, mine[1] = 1;
  CHECK(CALL(raw, MPI_Iallreduce, mine, r->allreduce, 2, MPI_INT, MPI_SUM, ic, &q[3]) == MPI_SUCCESS, "iallreduce");
  CHECK(CALL(raw, MPI_Ireduce, mine, r->reduce, 2, MPI_INT, MPI_SUM, root1, ic, &q[4]) == MPI_SUCCESS, "ireduce");
  g = wrank * 100;
  CHECK(CALL(raw, MPI_Igather, &g, 1, MPI_INT, r->gather, 1, MPI_INT, root0, ic, &q[5]) == MPI_SUCCESS, "igather");
  for (int j = 0; j < MAXR; ++j) sc[j] = 500 + j;
  CHECK(CALL(raw, MPI_Iscatter, sc, 1, MPI_INT, &r->scatter, 1, MPI_INT, root1, ic, &q[6]) == MPI_SUCCESS,
        "iscatter");
  ag = wrank * 7;
  CHECK(CALL(raw, MPI_Iallgather, &ag, 1, MPI_INT, r->allgather, 1, MPI_INT, ic, &q[7]) == MPI_SUCCESS,
        "iallgather");
  for (int j = 0; j < nr; ++j) a2a[j] = wrank * 1000 + j;
  CHECK(CALL(raw, MPI_Ialltoall, a2a, 1, MPI_INT, r->alltoall, 1, MPI_INT, ic, &q[8]) == MPI_SUCCESS, "ialltoall");
  CHECK(CALL(raw, MPI_Igatherv, v.gv_send, 2, MPI_INT, r->gatherv, v.gv_counts, v.gv_displs, MPI_INT, root0, ic,
             &q[9]) == MPI_SUCCESS, "igatherv");
  CHECK(CALL(raw, MPI_Iscatterv, v.sv_send, v.sv_counts, v.sv_displs, MPI_INT, r->scatterv, v.sv_count, MPI_INT, root1,
             ic, &q[10]) == MPI_SUCCESS, "iscatterv");
  CHECK(CALL(raw, MPI_Iallgatherv, v.agv_send, v.agv_count, MPI_INT, r->allgatherv, v.agv_counts, v.agv_displs,
             MPI_INT, ic, &q[11]) == MPI_SUCCESS, "iallgatherv");
  CHECK(CALL(raw, MPI_Ialltoallv, v.a2av_send, v.a2a_scounts, v.a2a_sdispls, MPI_INT, r->alltoallv, v.a2a_rcounts,
             v.a2a_rdispls, MPI_INT, ic, &q[12]) == MPI_SUCCESS, "ialltoallv");
  CHECK(CALL(raw, MPI_Ialltoallw, v.a2aw_send, v.a2a_scounts, v.a2aw_sbytes, v.ints, r->alltoallw, v.a2a_rcounts,
             v.a2aw_rbytes, v.ints, ic, &q[13]) == MPI_SUCCESS, "ialltoallw");
  CHECK(CALL(raw, MPI_Ireduce_scatter_block, v.rs_send, r->rsb, nr, MPI_INT, MPI_SUM, ic, &q[14]) == MPI_SUCCESS,
        "ireduce_scatter_block");
  CHECK(CALL(raw, MPI_Ireduce_scatter, v.rs_send, r->rs, v.rs_counts, MPI_INT, MPI_MAX, ic, &q[15]) == MPI_SUCCESS,
        "ireduce_scatter");
  CHECK(CALL(raw, MPI_Waitall, 16, q, st) == MPI_SUCCESS, "waitall");
  for (int k = 0; k < 16; ++k) CHECK(q[k] == MPI_REQUEST_NULL, "request %d not freed by the wait", k);
}

static void battery(MPI_Comm ic, int raw, struct results *r) {
  int nl, nr, me, lw[MAXR], rw[MAXR];
  memset(r, 0xff, sizeof *r); /* -1 everywhere: untouched slots stay -1 */
  CALL(raw, MPI_Comm_size, ic, &nl);
  CALL(raw, MPI_Comm_rank, ic, &me);
  group_world(ic, 0, lw);
  nr = group_world(ic, 1, rw);
  CHECK(CALL(raw, MPI_Barrier, ic) == MPI_SUCCESS, "barrier");
  if (nb) {
    collectives_nb(ic, raw, r, me, nl, nr);
    goto point_to_point;
  }
  MPI_Request ib = MPI_REQUEST_NULL;
  CHECK(CALL(raw, MPI_Ibarrier, ic, &ib) == MPI_SUCCESS, "ibarrier");
  CHECK(CALL(raw, MPI_Wait, &ib, MPI_STATUS_IGNORE) == MPI_SUCCESS && ib == MPI_REQUEST_NULL, "ibarrier's wait");
  /* Bcast from side 0's first rank, then from side 1's last rank */
  int root0 = side == 0 ? (me == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  if (root0 == MPI_ROOT)
    for (int k = 0; k < 4; ++k) r->bcast0[k] = wrank * 10 + k;
  CHECK(CALL(raw, MPI_Bcast, r->bcast0, 4, MPI_INT, root0, ic) == MPI_SUCCESS, "bcast 0");
  int root1 = side == 1 ? (me == nl - 1 ? MPI_ROOT : MPI_PROC_NULL) : nr - 1;
  if (root1 == MPI_ROOT)
    for (int k = 0; k < 4; ++k) r->bcast1[k] = wrank * 10 + k;
  CHECK(CALL(raw, MPI_Bcast, r->bcast1, 4, MPI_INT, root1, ic) == MPI_SUCCESS, "bcast 1");
  int mine[2] = {wrank + 1, 1};
  CHECK(CALL(raw, MPI_Allreduce, mine, r->allreduce, 2, MPI_INT, MPI_SUM, ic) == MPI_SUCCESS, "allreduce");
  /* Reduce to side 1's last rank */
  CHECK(CALL(raw, MPI_Reduce, mine, r->reduce, 2, MPI_INT, MPI_SUM, root1, ic) == MPI_SUCCESS, "reduce");
  /* Gather at side 0's first rank */
  int g = wrank * 100;
  CHECK(CALL(raw, MPI_Gather, &g, 1, MPI_INT, r->gather, 1, MPI_INT, root0, ic) == MPI_SUCCESS, "gather");
  /* Scatter from side 1's last rank */
  int sc[MAXR];
  for (int j = 0; j < MAXR; ++j) sc[j] = 500 + j;
  CHECK(CALL(raw, MPI_Scatter, sc, 1, MPI_INT, &r->scatter, 1, MPI_INT, root1, ic) == MPI_SUCCESS, "scatter");
  int ag = wrank * 7;
  CHECK(CALL(raw, MPI_Allgather, &ag, 1, MPI_INT, r->allgather, 1, MPI_INT, ic) == MPI_SUCCESS, "allgather");
  int a2a[MAXR];
  for (int j = 0; j < nr; ++j) a2a[j] = wrank * 1000 + j;
  CHECK(CALL(raw, MPI_Alltoall, a2a, 1, MPI_INT, r->alltoall, 1, MPI_INT, ic) == MPI_SUCCESS, "alltoall");
  {
    static struct vargs v;
    vargs_make(&v, me, nl, nr);
    CHECK(CALL(raw, MPI_Gatherv, v.gv_send, 2, MPI_INT, r->gatherv, v.gv_counts, v.gv_displs, MPI_INT, root0, ic) ==
              MPI_SUCCESS, "gatherv");
    CHECK(CALL(raw, MPI_Scatterv, v.sv_send, v.sv_counts, v.sv_displs, MPI_INT, r->scatterv, v.sv_count, MPI_INT, root1,
               ic) == MPI_SUCCESS, "scatterv");
    CHECK(CALL(raw, MPI_Allgatherv, v.agv_send, v.agv_count, MPI_INT, r->allgatherv, v.agv_counts, v.agv_displs,
               MPI_INT, ic) == MPI_SUCCESS, "allgatherv");
    CHECK(CALL(raw, MPI_Alltoallv, v.a2av_send, v.a2a_scounts, v.a2a_sdispls, MPI_INT, r->alltoallv, v.a2a_rcounts,
               v.a2a_rdispls, MPI_INT, ic) == MPI_SUCCESS, "alltoallv");
    CHECK(CALL(raw, MPI_Alltoallw, v.a2aw_send, v.a2a_scounts, v.a2aw_sbytes, v.ints, r->alltoallw, v.a2a_rcounts,
               v.a2aw_rbytes, v.ints, ic) == MPI_SUCCESS, "alltoallw");
    CHECK(CALL(raw, MPI_Reduce_scatter_block, v.rs_send, r->rsb, nr, MPI_INT, MPI_SUM, ic) == MPI_SUCCESS,
          "reduce_scatter_block");
    CHECK(CALL(raw, MPI_Reduce_scatter, v.rs_send, r->rs, v.rs_counts, MPI_INT, MPI_MAX, ic) == MPI_SUCCESS,
          "reduce_scatter");
  }
point_to_point:
  /* point-to-point with remote rank me (ranks are remote ranks) */
  if (me < nr)
    CHECK(CALL(raw, MPI_Sendrecv, &wrank, 1, MPI_INT, me, 3, &r->p2p, 1, MPI_INT, me, 3, ic, MPI_STATUS_IGNORE) ==
              MPI_SUCCESS, "sendrecv");
  MPI_Comm merged;
  CHECK(CALL(raw, MPI_Intercomm_merge, ic, side, &merged) == MPI_SUCCESS, "merge");
  CALL(raw, MPI_Comm_rank, merged, &r->merged_rank);
  CALL(raw, MPI_Comm_size, merged, &r->merged_size);
  int one = 1;
  CHECK(CALL(raw, MPI_Allreduce, &one, &r->merged_sum, 1, MPI_INT, MPI_SUM, merged) == MPI_SUCCESS, "merged");
  CALL(raw, MPI_Comm_free, &merged);
}

/* Checks the battery's results against the live set. `fuzzy`: the Allreduce ran while a rank died
 * (it may count that rank or not). */
static void check(MPI_Comm ic, const struct results *r, unsigned dead_at_create, int fuzzy) {
  int nl, nr, me, inter, rnr, lw[MAXR], rw[MAXR];
  MPI_Comm_size(ic, &nl);
  MPI_Comm_rank(ic, &me);
  MPI_Comm_test_inter(ic, &inter);
  MPI_Comm_remote_size(ic, &rnr);
  group_world(ic, 0, lw);
  nr = group_world(ic, 1, rw);
  CHECK(inter == 1 && rnr == nr, "test_inter %d remote_size %d/%d", inter, rnr, nr);
  /* the groups: the members of each side alive at the creation, in world order */
  int el = 0, er = 0;
  for (int w = 0; w < wsize; ++w) {
    if (dead_at_create & (1u << w)) continue;
    if (w % 2 == side) {
      CHECK(el < nl && lw[el] == w, "local rank %d is world %d, expected %d", el, lw[el], w);
      ++el;
    } else {
      CHECK(er < nr && rw[er] == w, "remote rank %d is world %d, expected %d", er, rw[er], w);
      ++er;
    }
  }
  CHECK(el == nl && er == nr, "sizes %d/%d, expected %d/%d", nl, nr, el, er);
  CHECK(lw[me] == wrank, "my rank %d is world %d", me, lw[me]);
  int first0 = side == 0 ? lw[0] : rw[0], last1 = side == 1 ? lw[nl - 1] : rw[nr - 1];
  for (int k = 0; k < 4; ++k) {
    int want0 = side == 1 || me == 0 ? first0 * 10 + k : -1; /* MPI_PROC_NULL ranks: untouched */
    if (!live(first0) && side == 1) want0 = -1;
    CHECK(r->bcast0[k] == want0, "bcast0[%d] = %d, expected %d", k, r->bcast0[k], want0);
    int want1 = side == 0 || me == nl - 1 ? last1 * 10 + k : -1;
    if (!live(last1) && side == 0) want1 = -1;
    CHECK(r->bcast1[k] == want1, "bcast1[%d] = %d, expected %d", k, r->bcast1[k], want1);
  }
  int sum = 0, cnt = 0;
  for (int j = 0; j < nr; ++j)
    if (live(rw[j])) sum += rw[j] + 1, ++cnt;
  if (fuzzy && r->allreduce[1] == cnt + 1) {
    CHECK(r->allreduce[0] > sum, "allreduce with the dying rank: %d (live %d)", r->allreduce[0], sum);
  } else {
    CHECK(r->allreduce[0] == sum && r->allreduce[1] == cnt, "allreduce %d %d, expected %d %d", r->allreduce[0],
          r->allreduce[1], sum, cnt);
  }
  if (side == 1 && me == nl - 1) { /* root of the Reduce: side 0's live ranks */
    CHECK(r->reduce[0] == sum && r->reduce[1] == cnt, "reduce %d %d, expected %d %d", r->reduce[0], r->reduce[1],
          sum, cnt);
  } else {
    CHECK(r->reduce[0] == -1 && r->reduce[1] == -1, "reduce output touched off the root");
  }
  for (int j = 0; j < MAXR; ++j) {
    int want = side == 0 && me == 0 && j < nr && live(rw[j]) ? rw[j] * 100 : -1;
    CHECK(r->gather[j] == want, "gather[%d] = %d, expected %d", j, r->gather[j], want);
    want = j < nr && live(rw[j]) ? rw[j] * 7 : -1;
    CHECK(r->allgather[j] == want, "allgather[%d] = %d, expected %d", j, r->allgather[j], want);
    want = j < nr && live(rw[j]) ? rw[j] * 1000 + me : -1;
    CHECK(r->alltoall[j] == want, "alltoall[%d] = %d, expected %d", j, r->alltoall[j], want);
  }
  int want = side == 0 && live(last1) ? 500 + me : -1;
  CHECK(r->scatter == want, "scatter %d, expected %d", r->scatter, want);
  /* the v and w variants: remote rank j's block (counts 1 + j % 2, or 1 + (me + j) % 2 for the alltoalls) */
  for (int j = 0; j < MAXR; ++j)
    for (int k = 0; k < 2; ++k) {
      int at = 2 * j + k, rj = j < nr && live(rw[j]);
      int g = nr - 1 - j; /* gatherv: remote rank j's block at 2 * (nr - 1 - j) */
      want = side == 0 && me == 0 && j < nr && live(rw[j]) ? rw[j] * 100 + 1 + k : -1;
      if (j < nr) CHECK(r->gatherv[2 * g + k] == want, "gatherv[%d] = %d, expected %d", 2 * g + k, r->gatherv[2 * g + k], want);
      want = rj && k < 1 + j % 2 ? rw[j] * 7 + k : -1;
      CHECK(r->allgatherv[at] == want, "allgatherv[%d] = %d, expected %d", at, r->allgatherv[at], want);
      want = rj && k < 1 + (me + j) % 2 ? rw[j] * 1000 + me * 10 + k : -1;
      CHECK(r->alltoallv[at] == want, "alltoallv[%d] = %d, expected %d", at, r->alltoallv[at], want);
      want = want == -1 ? -1 : want + 5;
      CHECK(r->alltoallw[at] == want, "alltoallw[%d] = %d, expected %d", at, r->alltoallw[at], want);
    }
  for (int j = 2 * nr; j < 2 * MAXR; ++j) CHECK(r->gatherv[j] == -1, "gatherv[%d] touched", j);
  for (int k = 0; k < 2; ++k) {
    want = side == 0 && live(last1) && k < 1 + me % 2 ? 700 + me * 10 + k : -1;
    CHECK(r->scatterv[k] == want, "scatterv[%d] = %d, expected %d", k, r->scatterv[k], want);
  }
  /* the reduce-scatters: slice me (nr elements) of the remote group's live vectors, summed / their maximum */
  for (int i = 0; i < MAXR; ++i) {
    int sum_i = 0, max_i = -1, any = 0;
    for (int j = 0; j < nr; ++j)
      if (live(rw[j])) {
        int x = rw[j] + me * nr + i;
        sum_i += x, max_i = x > max_i ? x : max_i, any = 1;
      }
    int want_s = i < nr && any ? sum_i : -1, want_m = i < nr && any ? max_i : -1;
    CHECK(r->rsb[i] == want_s, "reduce_scatter_block[%d] = %d, expected %d", i, r->rsb[i], want_s);
    CHECK(r->rs[i] == want_m, "reduce_scatter[%d] = %d, expected %d", i, r->rs[i], want_m);
  }
  want = me < nr && live(rw[me]) ? rw[me] : -1;
  CHECK(r->p2p == want, "sendrecv got %d, expected %d", r->p2p, want);
  /* merged: side 0's survivors, then side 1's */
  int pos = 0, n = 0, mine = -1;
  for (int s = 0; s < 2; ++s)
    for (int w = s; w < wsize; w += 2)
      if (live(w)) {
        if (w == wrank) mine = pos;
        ++pos, ++n;
      }
  CHECK(r->merged_rank == mine && r->merged_size == n && r->merged_sum == n, "merged rank %d size %d sum %d, expected %d %d",
        r->merged_rank, r->merged_size, r->merged_sum, mine, n);
}

static MPI_Comm make(int raw) {
  MPI_Comm local, ic;
  CHECK(CALL(raw, MPI_Comm_split, MPI_COMM_WORLD, side, wrank, &local) == MPI_SUCCESS, "split");
  int remote_leader = 1 - side; /* the other side's lowest live world rank */
  while (!live(remote_leader)) remote_leader += 2;
  int leader = 0; /* of the split: already over the survivors */
  CHECK(CALL(raw, MPI_Intercomm_create, local, leader, MPI_COMM_WORLD, remote_leader, 7, &ic) == MPI_SUCCESS,
        "intercomm_create");
  CHECK(ic != MPI_COMM_NULL, "no intercommunicator");
  CALL(raw, MPI_Comm_free, &local);
  return ic;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm_size(MPI_COMM_WORLD, &wsize);
  side = wrank % 2;
  if (argc > 1 && !strcmp(argv[argc - 1], "nb")) nb = 1, --argc;
  const char *mode = argc > 1 ? argv[1] : "equiv";
  unsigned victims = argc > 2 ? parse_ranks(argv[2]) : 0;
  struct results ours, raw;
  if (!strcmp(mode, "equiv")) {
    MPI_Comm ic = make(0), ric = make(1);
    battery(ic, 0, &ours);
    /* against raw MPI's blocking collectives: MPICH 4.0.2's own nonblocking ones on an intercommunicator
     * deliver nothing of a second MPI_Ibcast in flight (another root) to some ranks */
    int want_nb = nb;
    nb = 0;
    battery(ric, 1, &raw);
    nb = want_nb;
    const int *o = (const int *)&ours, *w = (const int *)&raw;
    for (size_t i = 0; i < sizeof ours / sizeof(int); ++i)
      CHECK(o[i] == w[i], "results differ from raw MPI's: int %zu of struct results is %d, raw MPI gives %d", i,
            o[i], w[i]);
    check(ic, &ours, 0, 0);
    MPI_Comm_free(&ic);
    PMPI_Comm_free(&ric);
  } else if (!strcmp(mode, "created") || !strcmp(mode, "create_during")) {
    dead = victims;
    if (!strcmp(mode, "created") && (victims & (1u << wrank))) raise(SIGKILL);
    MPI_Comm ic = make(0);
    battery(ic, 0, &ours);
    check(ic, &ours, victims, 0);
    MPI_Comm_free(&ic);
  } else if (!strcmp(mode, "before") || !strcmp(mode, "during")) {
    MPI_Comm ic = make(0);
    dead = victims;
    if (!strcmp(mode, "before") && (victims & (1u << wrank))) raise(SIGKILL);
    battery(ic, 0, &ours);
    CHECK(!(victims & (1u << wrank)), "a victim is still alive");
    check(ic, &ours, 0, !strcmp(mode, "during"));
    CHECK(MPI_Comm_disconnect(&ic) == MPI_SUCCESS && ic == MPI_COMM_NULL, "disconnect");
  } else {
    CHECK(0, "unknown mode %s", mode);
  }
  TEST_PASS("%s", mode);
  MPI_Finalize();
  return 0;
}
