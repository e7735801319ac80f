/* Topologies made from a communicator that has already lost ranks: the topology is the
 * one the program asked for, as if made just before the deaths, each dead rank a hole (wrap/topo/process_topology.cpp).
 *
 *   topology_holes CONSTRUCTOR V[+W]
 *     ranks V (and W) die, the survivors learn it in an MPI_Barrier on MPI_COMM_WORLD, then call
 *     CONSTRUCTOR on MPI_COMM_WORLD under its default error handler (MPI_ERRORS_ARE_FATAL: an error would end
 *     the job) with reorder = 1 (cohort ignores it, MPI 4.0 8.5.1 allows this). Every survivor then checks:
 *     - the size, its rank and the group are those of the topology the program asked for (MPI 4.0 8.5.1,
 *       8.5.3, 8.5.4, 8.5.7; MPI_Cart_map and MPI_Graph_map, 8.5.8, place every rank where the constructor does);
 *     - the queries answer for every rank, the dead ones included (8.5.5: MPI_Topo_test, MPI_Cartdim_get,
 *       MPI_Cart_get, MPI_Cart_rank, MPI_Cart_coords, MPI_Graphdims_get, MPI_Graph_get,
 *       MPI_Graph_neighbors(_count), MPI_Dist_graph_neighbors(_count)); MPI_Cart_shift (8.5.6) names a
 *       dead neighbour;
 *     - a halo exchange (MPI_Sendrecv with each neighbour, COHORT_ON_DEAD_PEER=skip) and the neighbourhood
 *       collectives (8.6: MPI_Neighbor_allgather, MPI_Neighbor_alltoall, MPI_Ineighbor_allgather, 8.7) give each live
 *       neighbour's value in its slot and leave a dead neighbour's slot untouched; a status names the
 *       program's rank of the sender;
 *     - an MPI_Allreduce on the new communicator sums the survivors' ranks.
 *   CONSTRUCTOR: cart (MPI_Cart_create, MPI_Dims_create's 2-dimensional grid, periodic in dimension 0),
 *   sub (MPI_Cart_sub of such a grid made after the deaths: its rows), graph (MPI_Graph_create of a ring),
 *   dist_graph (MPI_Dist_graph_create, each rank naming its edges to its two ring neighbours),
 *   adjacent (MPI_Dist_graph_create_adjacent of a ring, weighted). */
#include <mpi.h>
#include <signal.h>
#include <string.h>

#include "check.h"

#define UNTOUCHED (-7)
#define MAXN 32

static int rank, size;
static unsigned victims;

static int dead(int r) { return r >= 0 && r != MPI_PROC_NULL && ((victims >> r) & 1); }

static int live_sum(int n) {
  int s = 0;
  for (int r = 0; r < n; ++r)
    if (!dead(r)) s += r;
  return s;
}

/* What a rank sends to all its neighbours (allgather) and to its k-th one (alltoall). */
static int value_of(int r) { return 1000 + r; }
static int block_of(int r, int k) { return 100000 + r * 100 + k; }

/* The halo exchange, the neighbourhood collectives and an MPI_Allreduce on comm (size n, my rank me).
 * Halo step k: send to hout[k], receive from hin[k] (nh steps; every rank's step k pairs with its neighbour's).
 * The neighbourhood collectives' in-neighbours are in[0..nin), out-degree nout; in_slot_of[j] is the index of
 * me among in[j]'s out-neighbours (its block in MPI_Neighbor_alltoall), -1 where not known. */
static void exchange(MPI_Comm comm, int n, int me, int nh, const int *hin, const int *hout, int nin, const int *in,
                     int nout, const int *in_slot_of, const char *what) {
  for (int k = 0; k < nh; ++k) {
    int got = UNTOUCHED, mine = value_of(me);
    MPI_Status st;
    st.MPI_SOURCE = -99;
    CHECK(MPI_Sendrecv(&mine, 1, MPI_INT, hout[k], 11 + k, &got, 1, MPI_INT, hin[k], 11 + k, comm, &st) ==
              MPI_SUCCESS, "%s: MPI_Sendrecv %d", what, k);
    int want = hin[k] == MPI_PROC_NULL || dead(hin[k]) ? UNTOUCHED : value_of(hin[k]);
    CHECK(got == want, "%s: halo %d from %d: %d, expected %d", what, k, hin[k], got, want);
    if (hin[k] != MPI_PROC_NULL && !dead(hin[k]))
      CHECK(st.MPI_SOURCE == hin[k], "%s: halo %d: status names %d, not %d", what, k, st.MPI_SOURCE, hin[k]);
  }
  /* a wildcard receive names the sender in the program's numbering (8.5.1: ranks as in the topology) */
  {
    int token = value_of(me), got = UNTOUCHED, partner = -1;
    for (int r = 0; r < n; ++r) /* the next live rank after me, ring order */
      if (!dead((me + 1 + r) % n) && (me + 1 + r) % n != me) {
        partner = (me + 1 + r) % n;
        break;
      }
    int from = -1;
    for (int r = 0; r < n; ++r)
      if (!dead((me - 1 - r + 2 * n) % n) && (me - 1 - r + 2 * n) % n != me) {
        from = (me - 1 - r + 2 * n) % n;
        break;
      }
    if (partner >= 0) {
      MPI_Request rq;
      MPI_Status st;
      MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 99, comm, &rq);
      MPI_Send(&token, 1, MPI_INT, partner, 99, comm);
      CHECK(MPI_Wait(&rq, &st) == MPI_SUCCESS, "%s: MPI_Wait", what);
      CHECK(st.MPI_SOURCE == from && got == value_of(from), "%s: wildcard receive: source %d value %d, expected %d",
            what, st.MPI_SOURCE, got, from);
    }
  }
  int buf[MAXN], blocks[MAXN];
  for (int j = 0; j < MAXN; ++j) buf[j] = UNTOUCHED;
  int mine = value_of(me);
  CHECK(MPI_Neighbor_allgather(&mine, 1, MPI_INT, buf, 1, MPI_INT, comm) == MPI_SUCCESS, "%s: allgather", what);
  for (int j = 0; j < nin; ++j) {
    int want = in[j] == MPI_PROC_NULL || dead(in[j]) ? UNTOUCHED : value_of(in[j]);
    CHECK(buf[j] == want, "%s: neighbour allgather slot %d (rank %d): %d, expected %d", what, j, in[j], buf[j], want);
  }
  for (int j = 0; j < MAXN; ++j) buf[j] = UNTOUCHED;
  for (int k = 0; k < nout; ++k) blocks[k] = block_of(me, k);
  CHECK(MPI_Neighbor_alltoall(blocks, 1, MPI_INT, buf, 1, MPI_INT, comm) == MPI_SUCCESS, "%s: alltoall", what);
  for (int j = 0; j < nin; ++j) {
    if (in_slot_of[j] < 0) continue;
    int want = in[j] == MPI_PROC_NULL || dead(in[j]) ? UNTOUCHED : block_of(in[j], in_slot_of[j]);
    CHECK(buf[j] == want, "%s: neighbour alltoall slot %d (rank %d): %d, expected %d", what, j, in[j], buf[j], want);
  }
  for (int j = 0; j < MAXN; ++j) buf[j] = UNTOUCHED;
  MPI_Request rq;
  CHECK(MPI_Ineighbor_allgather(&mine, 1, MPI_INT, buf, 1, MPI_INT, comm, &rq) == MPI_SUCCESS, "%s: iallgather", what);
  CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE) == MPI_SUCCESS, "%s: wait iallgather", what);
  for (int j = 0; j < nin; ++j) {
    int want = in[j] == MPI_PROC_NULL || dead(in[j]) ? UNTOUCHED : value_of(in[j]);
    CHECK(buf[j] == want, "%s: ineighbour allgather slot %d (rank %d): %d, expected %d", what, j, in[j], buf[j], want);
  }
  int sum = -1;
  CHECK(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, comm) == MPI_SUCCESS, "%s: allreduce", what);
  CHECK(sum == live_sum(n), "%s: allreduce %d, expected %d", what, sum, live_sum(n));
}

/* Size, rank and group as the program asked for (first_world: MPI_COMM_WORLD rank of comm's rank 0, ranks
 * consecutive in MPI_COMM_WORLD), dead ranks included. */
static void check_size_rank_from(MPI_Comm comm, int want_n, int want_me, int first_world, const char *what) {
  int n = -1, me = -1, gn = -1;
  MPI_Comm_size(comm, &n);
  MPI_Comm_rank(comm, &me);
  CHECK(n == want_n && me == want_me, "%s: size %d rank %d, expected %d and %d", what, n, me, want_n, want_me);
  MPI_Group g, wg;
  MPI_Comm_group(comm, &g);
  MPI_Comm_group(MPI_COMM_WORLD, &wg);
  MPI_Group_size(g, &gn);
  int ranks[MAXN], world[MAXN];
  for (int r = 0; r < want_n; ++r) ranks[r] = r;
  MPI_Group_translate_ranks(g, want_n, ranks, wg, world);
  for (int r = 0; r < want_n; ++r)
    CHECK(world[r] == first_world + r, "%s: group rank %d is world rank %d", what, r, world[r]);
  CHECK(gn == want_n, "%s: group of %d", what, gn);
  MPI_Group_free(&g);
  MPI_Group_free(&wg);
}
static void check_size_rank(MPI_Comm comm, int want_n, int want_me, const char *what) {
  check_size_rank_from(comm, want_n, want_me, 0, what);
}

/* A 2-dimensional grid over the n = size ranks, periodic in dimension 0 (8.5.1), or its rows (8.5.7). */
static void cart(int sub) {
  int dims[2] = {0, 0}, periods[2] = {1, 0};
  CHECK(MPI_Dims_create(size, 2, dims) == MPI_SUCCESS, "MPI_Dims_create");
  MPI_Comm grid;
  int mapped = -1;
  CHECK(MPI_Cart_map(MPI_COMM_WORLD, 2, dims, periods, &mapped) == MPI_SUCCESS && mapped == rank, /* 8.5.8 */
        "MPI_Cart_map: %d", mapped);
  CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &grid) == MPI_SUCCESS, "MPI_Cart_create");
  check_size_rank(grid, size, rank, "grid");
  int status = -1, nd = -1, d[2], p[2], c[2];
  MPI_Topo_test(grid, &status);
  MPI_Cartdim_get(grid, &nd);
  CHECK(status == MPI_CART && nd == 2, "topo_test %d, %d dims", status, nd);
  MPI_Cart_get(grid, 2, d, p, c);
  CHECK(d[0] == dims[0] && d[1] == dims[1] && p[0] == 1 && p[1] == 0 && c[0] == rank / dims[1] &&
            c[1] == rank % dims[1], "MPI_Cart_get: %dx%d (%d,%d) at (%d,%d)", d[0], d[1], p[0], p[1], c[0], c[1]);
  for (int r = 0; r < size; ++r) { /* row-major, dead ranks included */
    int rc[2], back = -1;
    MPI_Cart_coords(grid, r, 2, rc);
    MPI_Cart_rank(grid, rc, &back);
    CHECK(rc[0] == r / dims[1] && rc[1] == r % dims[1] && back == r, "coords of %d: (%d,%d), back %d", r, rc[0], rc[1],
          back);
  }
  if (!sub) {
    int in[4], in_slot[4];
    for (int dim = 0; dim < 2; ++dim) {
      int s, t;
      MPI_Cart_shift(grid, dim, 1, &s, &t);
      int row = rank / dims[1], col = rank % dims[1];
      int ws = dim == 0 ? ((row - 1 + dims[0]) % dims[0]) * dims[1] + col : (col > 0 ? rank - 1 : MPI_PROC_NULL);
      int wt = dim == 0 ? ((row + 1) % dims[0]) * dims[1] + col : (col < dims[1] - 1 ? rank + 1 : MPI_PROC_NULL);
      CHECK(s == ws && t == wt, "shift %d: %d %d, expected %d %d (a dead neighbour's rank too)", dim, s, t, ws, wt);
      in[2 * dim] = s;
      in[2 * dim + 1] = t;
      /* 8.6: my block from my -1 neighbour is its +1 block, and the other way round */
      in_slot[2 * dim] = 2 * dim + 1;
      in_slot[2 * dim + 1] = 2 * dim;
    }
    /* halo: send to the +1 neighbour, receive from the -1 one; then the other way */
    int out[4] = {in[1], in[0], in[3], in[2]};
    exchange(grid, size, rank, 4, in, out, 4, in, 4, in_slot, "cart");
  } else {
    int remain[2] = {0, 1};
    MPI_Comm row;
    CHECK(MPI_Cart_sub(grid, remain, &row) == MPI_SUCCESS, "MPI_Cart_sub");
    const int r0 = (rank / dims[1]) * dims[1]; /* world rank of my row's rank 0 */
    check_size_rank_from(row, dims[1], rank % dims[1], r0, "row");
    int status2 = -1, nd2 = -1, d2[1], p2[1], c2[1];
    MPI_Topo_test(row, &status2);
    MPI_Cartdim_get(row, &nd2);
    MPI_Cart_get(row, 1, d2, p2, c2);
    CHECK(status2 == MPI_CART && nd2 == 1 && d2[0] == dims[1] && p2[0] == 0 && c2[0] == rank % dims[1],
          "row: topo %d dims %d: %d %d %d", status2, nd2, d2[0], p2[0], c2[0]);
    unsigned all = victims;
    victims = (all >> r0) & ((1u << dims[1]) - 1); /* the row's holes, in its numbering */
    int me = rank % dims[1], s, t;
    MPI_Cart_shift(row, 0, 1, &s, &t);
    CHECK(s == (me > 0 ? me - 1 : MPI_PROC_NULL) && t == (me < dims[1] - 1 ? me + 1 : MPI_PROC_NULL), "row shift %d %d",
          s, t);
    int in[2] = {s, t}, out[2] = {t, s}, in_slot[2] = {1, 0};
    exchange(row, dims[1], me, 2, in, out, 2, in, 2, in_slot, "row");
    victims = all;
    MPI_Comm_free(&row);
  }
  MPI_Comm_free(&grid);
}

/* A ring: MPI_Graph_create (8.5.3, undirected: both ring neighbours), MPI_Dist_graph_create (8.5.4, each rank gives
 * its own out-edges) or MPI_Dist_graph_create_adjacent (weighted). */
static void ring(const char *how) {
  const int left = (rank - 1 + size) % size, right = (rank + 1) % size;
  MPI_Comm g;
  int nb[2] = {left, right}, w[2] = {3, 4}, nin = 2;
  if (!strcmp(how, "graph")) {
    int index[MAXN], edges[2 * MAXN];
    for (int r = 0; r < size; ++r) {
      index[r] = 2 * (r + 1);
      edges[2 * r] = (r - 1 + size) % size;
      edges[2 * r + 1] = (r + 1) % size;
    }
    int mapped = -1;
    CHECK(MPI_Graph_map(MPI_COMM_WORLD, size, index, edges, &mapped) == MPI_SUCCESS && mapped == rank, /* 8.5.8 */
          "MPI_Graph_map: %d", mapped);
    CHECK(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 1, &g) == MPI_SUCCESS, "MPI_Graph_create");
    int status = -1, nn = -1, ne = -1, cnt = -1, gi[MAXN], ge[2 * MAXN], got[2];
    MPI_Topo_test(g, &status);
    MPI_Graphdims_get(g, &nn, &ne);
    CHECK(status == MPI_GRAPH && nn == size && ne == 2 * size, "graph: topo %d, %d nodes %d edges", status, nn, ne);
    MPI_Graph_get(g, MAXN, 2 * MAXN, gi, ge);
    CHECK(!memcmp(gi, index, sizeof(int) * (size_t)size) && !memcmp(ge, edges, sizeof(int) * 2 * (size_t)size),
          "MPI_Graph_get differs");
    for (int r = 0; r < size; ++r) { /* dead nodes included */
      MPI_Graph_neighbors_count(g, r, &cnt);
      MPI_Graph_neighbors(g, r, 2, got);
      CHECK(cnt == 2 && got[0] == (r - 1 + size) % size && got[1] == (r + 1) % size, "neighbours of %d: %d: %d %d", r,
            cnt, got[0], got[1]);
    }
  } else {
    if (!strcmp(how, "dist_graph")) {
      int degree = 2;
      CHECK(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, &degree, nb, w, MPI_INFO_NULL, 1, &g) == MPI_SUCCESS,
            "MPI_Dist_graph_create");
    } else {
      CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, nb, w, 2, nb, w, MPI_INFO_NULL, 1, &g) == MPI_SUCCESS,
            "MPI_Dist_graph_create_adjacent");
    }
    int status = -1, indeg = -1, outdeg = -1, weighted = -1, src[MAXN], sw[MAXN], dst[MAXN], dw[MAXN];
    MPI_Topo_test(g, &status);
    MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &weighted);
    /* MPI_Dist_graph_create: an edge only a dead rank named is not known to anyone (cohort's rule: a dead rank
     * names no edge); my in-edges come from my live ring neighbours, in the order of the ranks that named them */
    int want_in = 2;
    if (!strcmp(how, "dist_graph")) want_in = !dead(left) + !dead(right);
    CHECK(status == MPI_DIST_GRAPH && indeg == want_in && outdeg == 2 && weighted,
          "%s: topo %d in %d out %d weighted %d", how, status, indeg, outdeg, weighted);
    MPI_Dist_graph_neighbors(g, MAXN, src, sw, MAXN, dst, dw);
    CHECK(dst[0] == left && dst[1] == right && dw[0] == 3 && dw[1] == 4, "%s: out-neighbours %d %d (%d %d)", how,
          dst[0], dst[1], dw[0], dw[1]);
    if (!strcmp(how, "adjacent")) {
      CHECK(src[0] == left && src[1] == right && sw[0] == 3 && sw[1] == 4, "adjacent: in-neighbours or weights differ");
    } else {
      int k = 0, lo = left < right ? left : right, hi = left < right ? right : left;
      if (!dead(lo)) {
        CHECK(src[k] == lo && sw[k] == (lo == left ? 4 : 3), "dist_graph: in-neighbour %d: %d (%d)", k, src[k], sw[k]);
        ++k;
      }
      if (!dead(hi))
        CHECK(src[k] == hi && sw[k] == (hi == left ? 4 : 3), "dist_graph: in-neighbour %d: %d (%d)", k, src[k], sw[k]);
    }
    for (int j = 0; j < indeg; ++j) nb[j] = src[j];
    nin = indeg;
  }
  check_size_rank(g, size, rank, how);
  /* in a ring of >2 ranks, my block from my left neighbour is its block for its right one, and so on */
  int in_slot[2] = {-1, -1};
  if (size > 2 && strcmp(how, "dist_graph")) {
    in_slot[0] = 1;
    in_slot[1] = 0;
  }
  int hin[2] = {left, right}, hout[2] = {right, left};
  exchange(g, size, rank, 2, hin, hout, nin, nb, 2, in_slot, how);
  MPI_Comm_free(&g);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(argc == 3 && size <= MAXN, "usage: topology_holes cart|sub|graph|dist_graph|adjacent V[+W]");
  victims = parse_ranks(argv[2]);
  if (dead(rank)) raise(SIGKILL);
  /* the survivors agree on the deaths: MPI_COMM_WORLD has lost ranks before the constructor is called */
  CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS, "barrier after the deaths");
  const char *how = argv[1];
  if (!strcmp(how, "cart") || !strcmp(how, "sub")) cart(!strcmp(how, "sub"));
  else ring(how);
  TEST_PASS("%s with holes %s", how, argv[2]);
  MPI_Finalize();
  return 0;
}
