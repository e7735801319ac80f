/* Cartesian communicators: MPI_Cart_create, MPI_Cart_sub and the queries.
 *
 *   wrap_cart equiv        fault-free: for 1-, 2- and 3-dimensional grids, periodic or not, every query
 *                          (coords of every rank, rank of every point and of wrapped points, every shift
 *                          by -2..2, get, dim, topo_test) answers as on raw MPI's MPI_Cart_create
 *                          (reorder 0) and MPI_Cart_sub gives raw MPI's sub-grids
 *   wrap_cart degraded V   (4 ranks) a 2x2 grid made, then rank V killed: the queries are unchanged, a
 *                          shift towards V gives V, a halo exchange with V skips it
 *                          (COHORT_ON_DEAD_PEER=skip), MPI_Cart_sub gives both rows of 2, the row that lost
 *                          V with V's place a hole, and MPI_Cart_create over the degraded world the same 2x2
 *                          grid with the same holes (MPI 4.0 8.5.1, 8.5.7; wrap/topo/process_topology.cpp)
 *   wrap_cart degraded 1+2 the same with two ranks killed (one per row)
 *   wrap_cart sub_during   (4 ranks) MPI_Cart_sub into rows while rank 1 dies in it (inject hook
 *                          cart_sub.posted): every row is made, of 2 ranks (rank 1 a hole of rank 0's)
 *   wrap_cart during       (4 ranks) MPI_Cart_create of a 2x2 grid while a rank dies in it
 *                          (COHORT_INJECT_FAILURE=...,at=cart_create.posted): every survivor gets the whole
 *                          2x2 grid (the dead rank a hole) */
#include <mpi.h>
#include <signal.h>
#include <string.h>

#include <cohort/cohort.h>

#include "check.h"

static int rank, size;

static void same_grid(MPI_Comm ours, MPI_Comm raw, const char *what) {
  int nd, rnd, status, rstatus;
  MPI_Topo_test(ours, &status);
  PMPI_Topo_test(raw, &rstatus);
  CHECK(status == MPI_CART && rstatus == MPI_CART, "%s: topo_test %d, raw %d", what, status, rstatus);
  MPI_Cartdim_get(ours, &nd);
  PMPI_Cartdim_get(raw, &rnd);
  CHECK(nd == rnd, "%s: %d dims, raw %d", what, nd, rnd);
  int d[8], p[8], c[8], rd[8], rp[8], rc[8];
  MPI_Cart_get(ours, 8, d, p, c);
  PMPI_Cart_get(raw, 8, rd, rp, rc);
  CHECK(!memcmp(d, rd, sizeof(int) * (size_t)nd) && !memcmp(p, rp, sizeof(int) * (size_t)nd) &&
            !memcmp(c, rc, sizeof(int) * (size_t)nd), "%s: MPI_Cart_get differs", what);
  int n;
  PMPI_Comm_size(raw, &n);
  for (int r = 0; r < n; ++r) {
    MPI_Cart_coords(ours, r, 8, c);
    PMPI_Cart_coords(raw, r, 8, rc);
    CHECK(!memcmp(c, rc, sizeof(int) * (size_t)nd), "%s: coords of rank %d differ", what, r);
    int back = -1;
    MPI_Cart_rank(ours, c, &back);
    CHECK(back == r, "%s: rank of rank %d's coords is %d", what, r, back);
    /* wrapped coordinates on periodic dimensions */
    for (int i = 0; i < nd; ++i)
      if (p[i]) c[i] += d[i];
    int wr = -1, rwr = -2;
    MPI_Cart_rank(ours, c, &wr);
    PMPI_Cart_rank(raw, c, &rwr);
    CHECK(wr == rwr, "%s: rank of wrapped coords %d, raw %d", what, wr, rwr);
  }
  for (int dir = 0; dir < nd; ++dir)
    for (int disp = -2; disp <= 2; ++disp) {
      int s, t, rs, rt;
      MPI_Cart_shift(ours, dir, disp, &s, &t);
      PMPI_Cart_shift(raw, dir, disp, &rs, &rt);
      CHECK(s == rs && t == rt, "%s: shift(%d, %d) = %d %d, raw %d %d", what, dir, disp, s, t, rs, rt);
    }
  int me, rme;
  MPI_Comm_rank(ours, &me);
  PMPI_Comm_rank(raw, &rme);
  CHECK(me == rme, "%s: rank %d, raw %d", what, me, rme);
}

static void equiv(void) {
  static const struct {
    int nd, dims[3], periods[3];
  } grids[] = {{1, {0}, {1}}, {2, {0, 0}, {0, 1}}, {2, {0, 0}, {1, 0}}, {3, {0, 0, 0}, {1, 0, 1}}};
  for (size_t k = 0; k < sizeof grids / sizeof grids[0]; ++k) {
    int dims[3] = {0, 0, 0};
    MPI_Dims_create(size, grids[k].nd, dims);
    char what[64];
    snprintf(what, sizeof what, "grid %zu", k);
    MPI_Comm ours, raw;
    CHECK(MPI_Cart_create(MPI_COMM_WORLD, grids[k].nd, dims, grids[k].periods, 1, &ours) == MPI_SUCCESS,
          "MPI_Cart_create");
    PMPI_Cart_create(MPI_COMM_WORLD, grids[k].nd, dims, grids[k].periods, 0, &raw);
    same_grid(ours, raw, what);
    /* every way of keeping dimensions */
    for (int mask = 0; mask < (1 << grids[k].nd); ++mask) {
      int remain[3];
      for (int i = 0; i < grids[k].nd; ++i) remain[i] = (mask >> i) & 1;
      MPI_Comm sub, rsub;
      CHECK(MPI_Cart_sub(ours, remain, &sub) == MPI_SUCCESS, "MPI_Cart_sub");
      if (mask == 0) {
        /* no dimension kept: a 0-dimensional grid of one rank each (as the standard says; MPICH 4.0's own
         * gives MPI_COMM_NULL at all but one rank, so it is no reference here) */
        int n = -1, nd = -1, st = -1;
        MPI_Comm_size(sub, &n), MPI_Cartdim_get(sub, &nd), MPI_Topo_test(sub, &st);
        CHECK(n == 1 && nd == 0 && st == MPI_CART, "%s: no dimension kept: size %d, %d dims, topo %d", what, n, nd, st);
        CHECK(MPI_Comm_free(&sub) == MPI_SUCCESS, "MPI_Comm_free");
        continue;
      }
      PMPI_Cart_sub(raw, remain, &rsub);
      int cmp = -1;
      PMPI_Comm_compare(sub, rsub, &cmp);
      CHECK(cmp == MPI_CONGRUENT, "%s: sub-grid %d is not raw MPI's (%d)", what, mask, cmp);
      same_grid(sub, rsub, what);
      int sum = 0, one = 1;
      CHECK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, sub) == MPI_SUCCESS, "Allreduce on the sub-grid");
      CHECK(MPI_Comm_free(&sub) == MPI_SUCCESS, "MPI_Comm_free");
      PMPI_Comm_free(&rsub);
    }
    CHECK(MPI_Comm_free(&ours) == MPI_SUCCESS, "MPI_Comm_free");
    PMPI_Comm_free(&raw);
  }
  /* a grid smaller than the communicator: the ranks beyond it get MPI_COMM_NULL */
  int dims[1] = {size - 1}, periods[1] = {0};
  MPI_Comm small;
  CHECK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &small) == MPI_SUCCESS, "MPI_Cart_create (smaller)");
  CHECK((small == MPI_COMM_NULL) == (rank == size - 1), "smaller grid: null at rank %d", rank);
  if (small != MPI_COMM_NULL) MPI_Comm_free(&small);
  /* communicators without a grid answer as MPI does */
  int status = -1;
  MPI_Topo_test(MPI_COMM_WORLD, &status);
  CHECK(status == MPI_UNDEFINED, "topo_test of world: %d", status);
}

static int dead_rank(unsigned victims, int r) { return r != MPI_PROC_NULL && ((victims >> r) & 1); }

static void degraded(unsigned victims) { /* bit r: rank r is killed */
  int dims[2] = {2, 2}, periods[2] = {0, 0};
  MPI_Comm grid;
  CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid) == MPI_SUCCESS, "MPI_Cart_create");
  MPI_Comm_set_errhandler(grid, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (dead_rank(victims, rank)) raise(SIGKILL);
  CHECK(MPI_Barrier(grid) == MPI_SUCCESS, "barrier after the death");
  int n, me, c[2];
  MPI_Comm_size(grid, &n);
  MPI_Comm_rank(grid, &me);
  CHECK(n == 4 && me == rank, "size %d rank %d", n, me);
  for (int victim = 0; victim < 4; ++victim) {
    if (!dead_rank(victims, victim)) continue;
    MPI_Cart_coords(grid, victim, 2, c);
    CHECK(c[0] == victim / 2 && c[1] == victim % 2, "coords of the dead rank: %d %d", c[0], c[1]);
  }
  /* halo exchange along both dimensions; towards the dead rank the shift names it, the exchange skips it */
  for (int dir = 0; dir < 2; ++dir) {
    int src, dst;
    MPI_Cart_shift(grid, dir, 1, &src, &dst);
    int other = dir == 0 ? rank ^ 2 : rank ^ 1;
    CHECK((src == MPI_PROC_NULL || src == other) && (dst == MPI_PROC_NULL || dst == other), "shift %d: %d %d", dir,
          src, dst);
    for (int way = 0; way < 2; ++way) {
      int to = way ? src : dst, from = way ? dst : src;
      long long out = rank * 10 + dir, in = -7;
      CHECK(MPI_Sendrecv(&out, 1, MPI_LONG_LONG, to, 5, &in, 1, MPI_LONG_LONG, from, 5, grid, MPI_STATUS_IGNORE) ==
                MPI_SUCCESS, "halo exchange");
      long long want = from == MPI_PROC_NULL || dead_rank(victims, from) ? -7 : from * 10 + dir;
      CHECK(in == want, "halo from %d: %lld, expected %lld", from, in, want);
    }
  }
  /* rows: both are made with 2 ranks, a dead rank a hole of its row (8.5.7) */
  int remain[2] = {0, 1};
  MPI_Comm row = MPI_COMM_NULL;
  int rc = MPI_Cart_sub(grid, remain, &row);
  CHECK(rc == MPI_SUCCESS && row != MPI_COMM_NULL, "row: %d", rc);
  int d[1], p[1], rc1[1], rn = 0, rme = -1;
  MPI_Cart_get(row, 1, d, p, rc1);
  MPI_Comm_size(row, &rn);
  MPI_Comm_rank(row, &rme);
  CHECK(d[0] == 2 && rc1[0] == rank % 2 && rn == 2 && rme == rank % 2, "row grid %d, coord %d, size %d rank %d", d[0],
        rc1[0], rn, rme);
  MPI_Comm_free(&row);
  /* a new grid over the degraded world: the same grid, the dead ranks holes (8.5.1) */
  MPI_Comm again = MPI_COMM_NULL;
  rc = MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &again);
  CHECK(rc == MPI_SUCCESS && again != MPI_COMM_NULL, "MPI_Cart_create over a degraded world: %d", rc);
  MPI_Comm_size(again, &n);
  MPI_Comm_rank(again, &me);
  CHECK(n == 4 && me == rank, "grid over a degraded world: size %d rank %d", n, me);
  MPI_Comm_free(&again);
  MPI_Comm_free(&grid);
}

/* MPI_Cart_sub into rows of a 2x2 grid while rank 1 dies in it (inject hook cart_sub.posted): both rows are
 * made with 2 ranks (rank 1 a hole of rank 0's row). */
static void sub_during(void) {
  int dims[2] = {2, 2}, periods[2] = {0, 0}, remain[2] = {0, 1};
  MPI_Comm grid, row = MPI_COMM_NULL;
  CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid) == MPI_SUCCESS, "MPI_Cart_create");
  MPI_Comm_set_errhandler(grid, MPI_ERRORS_RETURN);
  int rc = MPI_Cart_sub(grid, remain, &row);
  CHECK(rank != 1, "the victim is still alive");
  CHECK(rc == MPI_SUCCESS && row != MPI_COMM_NULL, "row: %d", rc);
  int n = 0, me = -1;
  MPI_Comm_size(row, &n);
  MPI_Comm_rank(row, &me);
  CHECK(n == 2 && me == rank % 2, "row of %d, rank %d", n, me);
  if (row != MPI_COMM_NULL) MPI_Comm_free(&row);
  CHECK(MPI_Barrier(grid) == MPI_SUCCESS, "barrier after");
  MPI_Comm_free(&grid);
}

static void during(void) {
  int dims[2] = {2, 2}, periods[2] = {1, 1};
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm grid = MPI_COMM_NULL;
  int rc = MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
  CHECK(rc == MPI_SUCCESS && grid != MPI_COMM_NULL, "MPI_Cart_create: %d", rc);
  int n = 0, me = -1;
  MPI_Comm_size(grid, &n);
  MPI_Comm_rank(grid, &me);
  CHECK(n == 4 && me == rank, "grid: size %d rank %d", n, me);
  check_same_outcome(rc == MPI_SUCCESS, "MPI_Cart_create");
  if (grid != MPI_COMM_NULL) MPI_Comm_free(&grid);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(argc >= 2 && size <= 64, "usage: wrap_cart equiv | degraded V | during");
  if (!strcmp(argv[1], "equiv")) {
    equiv();
  } else if (!strcmp(argv[1], "sub_during")) {
    CHECK(size == 4, "sub_during needs 4 ranks");
    sub_during();
  } else if (!strcmp(argv[1], "during")) {
    CHECK(size == 4, "during needs 4 ranks");
    during();
  } else {
    CHECK(!strcmp(argv[1], "degraded") && argc == 3 && size == 4, "usage: wrap_cart degraded V (4 ranks)");
    degraded(parse_ranks(argv[2]));
  }
  TEST_PASS("wrap_cart %s", argv[1]);
  MPI_Finalize();
  return 0;
}
