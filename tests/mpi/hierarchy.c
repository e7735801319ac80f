/* Legio's hierarchy (COHORT_HIERARCHY=K, wrap/coll/hierarchy.hpp): MPI_Allreduce and MPI_Barrier on
 * MPI_COMM_WORLD run local -> POV -> local; everything else stays flat.
 *
 *   hierarchy K equiv          fault-free: every result on MPI_COMM_WORLD (hierarchy) equals, byte for
 *                              byte, the same call on a duplicate (flat path): int sum, in-place double
 *                              sum of 1000 (integer values: exact in any order), MPI_MAX, MPI_MINLOC on
 *                              MPI_DOUBLE_INT (padding: packed), a non-commutative user operation (2x2
 *                              matrix product: rank order), barriers; no repair anywhere.
 *   hierarchy K kill V [during] rank V dies (SIGKILL before iteration 3, or `during`: by the inject hook
 *                              of the test's environment) among 8 iterations of allreduces and barriers.
 *                              Survivors assert every sum (iterations after the death: exactly the
 *                              survivors' contributions; the iteration it died in: with or without V, the
 *                              same on every survivor) and, from cohort_hierarchy_state, exactly which of
 *                              their communicators were repaired: a local one only in V's group, a POV
 *                              one only where V is a member (V's group's; every POV if V is a master),
 *                              and the re-elected master (lowest survivor of V's group).
 * Groups are blocks of K ranks; the masters (hubs) are the ranks r with r % K == 0. */
#include <cohort/cohort.h>
#include <mpi.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int rank, size, K;

static void matmul(void *in, void *inout, int *len, MPI_Datatype *type) {
  (void)type;
  long *a = in, *b = inout;
  for (int i = 0; i < *len; ++i, a += 4, b += 4) { /* b = a * b */
    long c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
                 a[2] * b[1] + a[3] * b[3]};
    memcpy(b, c, sizeof c);
  }
}

static void equiv(void) {
  MPI_Comm flat;
  MPI_Comm_dup(MPI_COMM_WORLD, &flat);
  MPI_Datatype mat;
  MPI_Type_contiguous(4, MPI_LONG, &mat);
  MPI_Type_commit(&mat);
  MPI_Op mul;
  MPI_Op_create(matmul, 0, &mul);
  for (int it = 0; it < 5; ++it) {
    MPI_Comm comms[2] = {MPI_COMM_WORLD, flat};
    int isum[2][3];
    static double d[2][1000];
    double dmax[2];
    struct {
      double v;
      int r;
    } loc[2], myloc = {(double)((rank * 7 + it) % size), rank};
    long m[2][4], mine[4] = {1, rank + it, 0, 1}; /* upper triangular: the product depends on order */
    for (int c = 0; c < 2; ++c) {
      int in[3] = {rank, rank * it, 1};
      CHECK(MPI_Allreduce(in, isum[c], 3, MPI_INT, MPI_SUM, comms[c]) == MPI_SUCCESS, "int sum");
      for (int i = 0; i < 1000; ++i) d[c][i] = (double)(rank * 1000 + i + it);
      CHECK(MPI_Allreduce(MPI_IN_PLACE, d[c], 1000, MPI_DOUBLE, MPI_SUM, comms[c]) == MPI_SUCCESS, "in place");
      double x = (double)((rank * 13 + it) % size);
      CHECK(MPI_Allreduce(&x, &dmax[c], 1, MPI_DOUBLE, MPI_MAX, comms[c]) == MPI_SUCCESS, "max");
      CHECK(MPI_Allreduce(&myloc, &loc[c], 1, MPI_DOUBLE_INT, MPI_MINLOC, comms[c]) == MPI_SUCCESS, "minloc");
      CHECK(MPI_Allreduce(mine, m[c], 1, mat, mul, comms[c]) == MPI_SUCCESS, "matmul");
      CHECK(MPI_Barrier(comms[c]) == MPI_SUCCESS, "barrier");
    }
    CHECK(memcmp(isum[0], isum[1], sizeof isum[0]) == 0, "iteration %d: int sums %d %d %d vs flat %d %d %d", it,
          isum[0][0], isum[0][1], isum[0][2], isum[1][0], isum[1][1], isum[1][2]);
    CHECK(isum[0][0] == size * (size - 1) / 2 && isum[0][2] == size, "iteration %d: sum %d", it, isum[0][0]);
    CHECK(memcmp(d[0], d[1], sizeof d[0]) == 0, "iteration %d: double sums differ from flat", it);
    CHECK(d[0][999] == 1000.0 * size * (size - 1) / 2 + (999.0 + it) * size, "iteration %d: d[999] %g", it, d[0][999]);
    CHECK(dmax[0] == dmax[1] && loc[0].v == loc[1].v && loc[0].r == loc[1].r, "iteration %d: max/minloc differ", it);
    CHECK(memcmp(m[0], m[1], sizeof m[0]) == 0, "iteration %d: matrix product %ld vs flat %ld (order)", it, m[0][1],
          m[1][1]);
  }
  int local = -1, pov = -1, group = -1, master = -1;
  CHECK(cohort_hierarchy_state(&local, &pov, &group, &master) == 1, "hierarchy off");
  CHECK(local == 0 && pov == 0, "repairs %d local, %d POV without a failure", local, pov);
  CHECK(group == rank / K && master == group * K, "group %d master %d", group, master);
  MPI_Op_free(&mul);
  MPI_Type_free(&mat);
  MPI_Comm_free(&flat);
  TEST_PASS("hierarchy equals flat: %d groups of %d", (size + K - 1) / K, K);
}

static void kill_one(int victim, int during) {
  const int vg = victim / K, vhub = victim % K == 0;
  long all = 0;
  for (int r = 0; r < size; ++r) all += r + 1;
  int died_at = -1;
  for (int it = 0; it < 8; ++it) {
    if (!during && it == 3 && rank == victim) raise(SIGKILL);
    long in = rank + 1, sum = 0;
    CHECK(MPI_Allreduce(&in, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS, "allreduce %d", it);
    CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS, "barrier %d", it);
    int known_dead = cohort_is_alive(victim) == 0;
    if (sum == all) {
      CHECK(died_at < 0, "iteration %d: rank %d's share is back after iteration %d", it, victim, died_at);
    } else {
      CHECK(sum == all - (victim + 1), "iteration %d: sum %ld, expected %ld or %ld", it, sum, all, all - victim - 1);
      if (died_at < 0) died_at = it;
    }
    if (!during) CHECK((it < 3) == (sum == all), "iteration %d: sum %ld (rank %d died before iteration 3)", it, sum, victim);
    /* Every survivor got the same sum: the max and min over the survivors agree. */
    long hi = 0, lo = 0;
    CHECK(MPI_Allreduce(&sum, &hi, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD) == MPI_SUCCESS, "max");
    CHECK(MPI_Allreduce(&sum, &lo, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD) == MPI_SUCCESS, "min");
    CHECK(hi == lo, "iteration %d: survivors disagree (%ld vs %ld)", it, lo, hi);
    (void)known_dead;
  }
  CHECK(died_at >= 0, "rank %d never left the sums", victim);
  int local = -1, pov = -1, group = -1, master = -1;
  CHECK(cohort_hierarchy_state(&local, &pov, &group, &master) == 1, "hierarchy off");
  const int hub = rank % K == 0;
  int want_local = group == vg, want_pov = 0;
  for (int g = 0; g * K < size; ++g) {
    int member = g == group || hub;
    int holds_victim = g == vg || vhub;
    want_pov += member && holds_victim;
  }
  int want_master = group * K;
  if (group == vg && victim == want_master) want_master = victim + 1;
  CHECK(local == want_local && pov == want_pov,
        "rank %d (group %d%s) after rank %d died: %d local, %d POV repairs; expected %d and %d", rank, group,
        hub ? ", master" : "", victim, local, pov, want_local, want_pov);
  CHECK(master == want_master, "master of group %d is %d, expected %d", group, master, want_master);
  TEST_PASS("rank %d died (iteration %d); repairs here: %d local, %d POV; master of group %d: %d", victim, died_at,
            local, pov, group, master);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(argc >= 3, "usage: hierarchy K equiv | hierarchy K kill V [during]");
  K = atoi(argv[1]);
  if (!strcmp(argv[2], "equiv")) {
    equiv();
  } else {
    CHECK(argc >= 4 && !strcmp(argv[2], "kill"), "unknown mode %s", argv[2]);
    kill_one(atoi(argv[3]), argc >= 5 && !strcmp(argv[4], "during"));
  }
  MPI_Finalize();
  return 0;
}
