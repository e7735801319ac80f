/* Cartesian communicators (issue 11): MPI_Cart_create, MPI_Cart_sub and the queries.
 *
 *   wrap_cart equiv        fault-free: for 1-, 2- and 3-dimensional grids, periodic or not, every query
 *                          (coords of every rank, rank of every point and of wrapped points, every shift
 *                          by -2..2, get, dim, topo_test) answers as on raw MPI's MPI_Cart_create
 *                          (reorder 0) and MPI_Cart_sub gives raw MPI's sub-grids
 *   wrap_cart degraded V   (4 ranks) a 2x2 grid made, then rank V killed: the queries are unchanged, a
 *                          shift towards V gives V, a halo exchange with V skips it
 *                          (COHORT_ON_DEAD_PEER=skip), MPI_Cart_sub gives the intact row and MPI_ERR_DIMS
 *                          on the row that lost V, MPI_Cart_create over the degraded world MPI_ERR_DIMS
 *   wrap_cart degraded 1+2 the same with two ranks killed (one per row: both rows fail MPI_Cart_sub)
 *   wrap_cart sub_during   (4 ranks) MPI_Cart_sub into rows while rank 1 dies in it (inject hook
 *                          cart_sub.posted): the intact row is whole, rank 0 gets its row or MPI_ERR_DIMS
 *   wrap_cart during       (4 ranks) MPI_Cart_create of a 2x2 grid while a rank dies in it
 *                          (COHORT_INJECT_FAILURE=...,at=cart_create.posted): every survivor gets the same
 *                          outcome, MPI_ERR_DIMS (the grid lost a point) or the whole grid */
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
  /* rows: the row that lost the victim fails with MPI_ERR_DIMS, the other works */
  int remain[2] = {0, 1};
  MPI_Comm row = MPI_COMM_NULL;
  int rc = MPI_Cart_sub(grid, remain, &row);
  int cls = -1;
  MPI_Error_class(rc, &cls);
  if (dead_rank(victims, rank / 2 * 2) || dead_rank(victims, rank / 2 * 2 + 1)) {
    CHECK(cls == MPI_ERR_DIMS && row == MPI_COMM_NULL, "row with the dead rank: code %d (class %d)", rc, cls);
  } else {
    CHECK(rc == MPI_SUCCESS && row != MPI_COMM_NULL, "intact row: %d", rc);
    int d[1], p[1], rc1[1];
    MPI_Cart_get(row, 1, d, p, rc1);
    CHECK(d[0] == 2 && rc1[0] == rank % 2, "row grid %d, coord %d", d[0], rc1[0]);
    MPI_Comm_free(&row);
  }
  /* a new grid over the degraded world cannot be filled */
  MPI_Comm again = MPI_COMM_NULL;
  rc = MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &again);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_DIMS && again == MPI_COMM_NULL, "MPI_Cart_create over a degraded world: %d", rc);
  MPI_Comm_free(&grid);
}

/* MPI_Cart_sub into rows of a 2x2 grid while rank 1 dies in it (inject hook cart_sub.posted): the other
 * row is made whole; rank 0 gets its row (if the split completed before the death) or MPI_ERR_DIMS. */
static void sub_during(void) {
  int dims[2] = {2, 2}, periods[2] = {0, 0}, remain[2] = {0, 1};
  MPI_Comm grid, row = MPI_COMM_NULL;
  CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid) == MPI_SUCCESS, "MPI_Cart_create");
  MPI_Comm_set_errhandler(grid, MPI_ERRORS_RETURN);
  int rc = MPI_Cart_sub(grid, remain, &row), cls = -1;
  CHECK(rank != 1, "the victim is still alive");
  MPI_Error_class(rc, &cls);
  if (rank / 2 == 1) {
    CHECK(rc == MPI_SUCCESS && row != MPI_COMM_NULL, "intact row: %d", rc);
    int n = 0;
    MPI_Comm_size(row, &n);
    CHECK(n == 2, "intact row of %d", n);
  } else {
    CHECK(rc == MPI_SUCCESS ? row != MPI_COMM_NULL : cls == MPI_ERR_DIMS && row == MPI_COMM_NULL,
          "row with the dying rank: %d (class %d)", rc, cls);
  }
  if (row != MPI_COMM_NULL) MPI_Comm_free(&row);
  CHECK(MPI_Barrier(grid) == MPI_SUCCESS, "barrier after");
  MPI_Comm_free(&grid);
}

static void during(void) {
  int dims[2] = {2, 2}, periods[2] = {1, 1};
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm grid = MPI_COMM_NULL;
  int rc = MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
  int cls = -1;
  MPI_Error_class(rc, &cls);
  CHECK(rc == MPI_SUCCESS ? grid != MPI_COMM_NULL : cls == MPI_ERR_DIMS && grid == MPI_COMM_NULL,
        "MPI_Cart_create: %d (class %d)", rc, cls);
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
