/* replica_colls: the blocking collectives beyond Barrier/Bcast/Reduce/Allreduce/Gather/Allgather, and
 * Cartesian topologies, for the replication tests (tests/mpi/replica_coll_tests.cmake). Each round:
 * MPI_Gatherv, MPI_Scatter, MPI_Scatterv (root moving round by round), MPI_Allgatherv, MPI_Alltoall and
 * MPI_Alltoallv (also with MPI_IN_PLACE), MPI_Reduce_scatter and MPI_Reduce_scatter_block (MPI_SUM of
 * ints), MPI_Scan and MPI_Exscan (MPI_SUM, and a non-commutative operation of the program's, which shows
 * the rank order), then a 1-D periodic grid (MPI_Cart_create, MPI_Cart_shift, MPI_Cart_coords,
 * MPI_Cart_rank, MPI_Cart_get, MPI_Cartdim_get, MPI_Topo_test, MPI_Cart_sub) with a halo exchange
 * (MPI_Sendrecv) on it. Every rank checks each result against the values MPI 4.0 defines (6.5-6.11,
 * 8.5); rank 0 prints a checksum every 10 rounds and `cohort-test: rank 0 PASS` when every rank's checks
 * passed. The output is the same for any number of replicas and any replica deaths that leave each
 * logical rank a replica.
 *   replica_colls [rounds]   (default 40) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replica_program.h"

#define MAXN 16

static int ok = 1;
static unsigned long long sum = 0;
static void check(int cond, const char *what, int round) {
  if (!cond && ok) {
    fprintf(stderr, "check failed: %s (round %d)\n", what, round);
    ok = 0;
  }
}

static int val(int rank, int round, int i) { return rank * 1000 + round * 10 + i; }

/* A non-commutative operation on pairs (a, b): affine maps x -> a x + b composed, in then inout. */
static void compose(void *in, void *inout, int *len, MPI_Datatype *type) {
  (void)type;
  long long *x = in, *y = inout;
  for (int i = 0; i < *len; ++i) {
    long long a = x[2 * i], b = x[2 * i + 1], c = y[2 * i], d = y[2 * i + 1];
    y[2 * i] = (c * a) % 1000003;
    y[2 * i + 1] = (c * b + d) % 1000003;
  }
}

int main(int argc, char **argv) {
  int rank, n;
  int rounds = replica_program_start(&argc, &argv, &rank, &n, 40);
  if (n > MAXN) {
    if (rank == 0) fprintf(stderr, "replica_colls: at most %d ranks\n", MAXN);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Datatype pair;
  MPI_Type_contiguous(2, MPI_LONG_LONG, &pair);
  MPI_Type_commit(&pair);
  MPI_Op op;
  MPI_Op_create(compose, 0, &op);
  for (int round = 0; round < rounds; ++round) {
    const int root = round % n;
    int counts[MAXN], displs[MAXN], total = 0;
    for (int i = 0; i < n; ++i) {
      counts[i] = 1 + (i + round) % 3;
      displs[i] = total;
      total += counts[i];
    }
    int send[3 * MAXN], recv[3 * MAXN * MAXN];
    /* Gatherv: rank i contributes counts[i] values */
    for (int k = 0; k < counts[rank]; ++k) send[k] = val(rank, round, k);
    MPI_Gatherv(send, counts[rank], MPI_INT, recv, counts, displs, MPI_INT, root, MPI_COMM_WORLD);
    if (rank == root)
      for (int i = 0; i < n; ++i)
        for (int k = 0; k < counts[i]; ++k) {
          check(recv[displs[i] + k] == val(i, round, k), "MPI_Gatherv", round);
          sum += (unsigned long long)recv[displs[i] + k];
        }
    /* Scatter: block i (2 values) to rank i */
    for (int i = 0; i < 2 * n; ++i) send[i] = val(root, round, i);
    int got[3];
    MPI_Scatter(send, 2, MPI_INT, got, 2, MPI_INT, root, MPI_COMM_WORLD);
    check(got[0] == val(root, round, 2 * rank) && got[1] == val(root, round, 2 * rank + 1), "MPI_Scatter", round);
    sum += (unsigned long long)got[1];
    /* Scatterv */
    for (int i = 0; i < total; ++i) send[i] = val(root, round, 100 + i);
    MPI_Scatterv(send, counts, displs, MPI_INT, got, counts[rank], MPI_INT, root, MPI_COMM_WORLD);
    for (int k = 0; k < counts[rank]; ++k) check(got[k] == val(root, round, 100 + displs[rank] + k), "MPI_Scatterv", round);
    /* Allgatherv, and in place */
    for (int k = 0; k < counts[rank]; ++k) send[k] = val(rank, round, 200 + k);
    MPI_Allgatherv(send, counts[rank], MPI_INT, recv, counts, displs, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < counts[i]; ++k) check(recv[displs[i] + k] == val(i, round, 200 + k), "MPI_Allgatherv", round);
    memset(recv, 0, sizeof recv);
    for (int k = 0; k < counts[rank]; ++k) recv[displs[rank] + k] = val(rank, round, 300 + k);
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, counts, displs, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < counts[i]; ++k)
        check(recv[displs[i] + k] == val(i, round, 300 + k), "MPI_Allgatherv in place", round);
    /* Alltoall: block j of rank i is val(i, round, j); in place too */
    for (int j = 0; j < n; ++j) send[j] = val(rank, round, 400 + j);
    MPI_Alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < n; ++i) check(recv[i] == val(i, round, 400 + rank), "MPI_Alltoall", round);
    for (int j = 0; j < n; ++j) recv[j] = val(rank, round, 500 + j);
    MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < n; ++i) {
      check(recv[i] == val(i, round, 500 + rank), "MPI_Alltoall in place", round);
      sum += (unsigned long long)recv[i];
    }
    /* Alltoallv: rank i sends counts[j] values to rank j, and receives counts[rank] from each */
    int sc[MAXN], sd[MAXN], rc[MAXN], rd[MAXN], at = 0;
    for (int j = 0; j < n; ++j) {
      sc[j] = counts[j];
      sd[j] = displs[j];
      rc[j] = counts[rank];
      rd[j] = at;
      at += rc[j];
    }
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < sc[j]; ++k) send[sd[j] + k] = val(rank, round, 600 + 10 * j + k);
    MPI_Alltoallv(send, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < rc[i]; ++k) check(recv[rd[i] + k] == val(i, round, 600 + 10 * rank + k), "MPI_Alltoallv", round);
    /* Reduce_scatter and Reduce_scatter_block: the sum over ranks of val(r, round, i) */
    for (int i = 0; i < total; ++i) send[i] = val(rank, round, i);
    MPI_Reduce_scatter(send, got, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int k = 0; k < counts[rank]; ++k) {
      int want = 0;
      for (int r = 0; r < n; ++r) want += val(r, round, displs[rank] + k);
      check(got[k] == want, "MPI_Reduce_scatter", round);
    }
    for (int i = 0; i < 2 * n; ++i) recv[i] = val(rank, round, i);
    MPI_Reduce_scatter_block(MPI_IN_PLACE, recv, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int k = 0; k < 2; ++k) {
      int want = 0;
      for (int r = 0; r < n; ++r) want += val(r, round, 2 * rank + k);
      check(recv[k] == want, "MPI_Reduce_scatter_block in place", round);
    }
    /* Scan and Exscan: prefix sums, and the composition of rank order's affine maps */
    int mine = val(rank, round, 7), incl = 0, excl = -1, want_incl = 0;
    MPI_Scan(&mine, &incl, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Exscan(&mine, &excl, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int r = 0; r <= rank; ++r) want_incl += val(r, round, 7);
    check(incl == want_incl, "MPI_Scan", round);
    if (rank > 0) check(excl == want_incl - mine, "MPI_Exscan", round); /* (rank 0's: undefined) */
    long long map[2] = {2 + rank + round % 5, rank * 3 + 1}, prefix[2];
    MPI_Scan(map, prefix, 1, pair, op, MPI_COMM_WORLD);
    long long wa = 1, wb = 0; /* maps of ranks 0..rank composed, in then inout: (a1,b1)op(a2,b2) = (a2 a1, a2 b1 + b2) */
    for (int r = 0; r <= rank; ++r) {
      long long a = 2 + r + round % 5, b = r * 3 + 1;
      wb = (a * wb + b) % 1000003;
      wa = (a * wa) % 1000003;
    }
    check(prefix[0] == wa && prefix[1] == wb, "MPI_Scan with a non-commutative operation", round);
    sum += (unsigned long long)prefix[1];
    /* a periodic ring as a 1-D grid, and its halo exchange */
    int dims[1] = {n}, periods[1] = {1}, coords[1], left, right, status;
    MPI_Comm ring, line;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
    MPI_Topo_test(ring, &status);
    check(status == MPI_CART, "MPI_Topo_test", round);
    int nd = 0, me = -1, dd[1], pp[1], cc[1];
    MPI_Cartdim_get(ring, &nd);
    MPI_Comm_rank(ring, &me);
    MPI_Cart_coords(ring, me, 1, coords);
    MPI_Cart_get(ring, 1, dd, pp, cc);
    int back = -1;
    MPI_Cart_rank(ring, coords, &back);
    check(nd == 1 && me == rank && coords[0] == rank && dd[0] == n && pp[0] == 1 && cc[0] == rank && back == rank,
          "MPI_Cart_* queries", round);
    MPI_Cart_shift(ring, 0, 1, &left, &right);
    check(left == (rank + n - 1) % n && right == (rank + 1) % n, "MPI_Cart_shift", round);
    int halo = -1, out = val(rank, round, 9);
    MPI_Sendrecv(&out, 1, MPI_INT, right, 5, &halo, 1, MPI_INT, left, 5, ring, MPI_STATUS_IGNORE);
    check(halo == val(left, round, 9), "halo exchange on the grid", round);
    sum += (unsigned long long)halo;
    int remain[1] = {0};
    MPI_Cart_sub(ring, remain, &line);
    int lsize = 0;
    MPI_Comm_size(line, &lsize);
    check(lsize == 1, "MPI_Cart_sub to 0 dimensions", round);
    MPI_Comm_free(&line);
    MPI_Comm_free(&ring);
    if (rank == 0 && round % 10 == 9) printf("round %d: checksum %llu\n", round + 1, sum);
  }
  MPI_Op_free(&op);
  MPI_Type_free(&pair);
  return replica_program_finish(ok);
}
