/* Nonblocking collectives under failures, beyond the fault matrix (tests/mpi/wrap_faults.c):
 *   wrap_nbc KILL   (4 ranks or more; COHORT_ON_DEAD_PEER_RECV=skip)
 * Rounds, each checked on every survivor:
 *   1. fault-free: MPI_Iallreduce, MPI_Ibcast and MPI_Iallgather in flight on MPI_COMM_WORLD together with
 *      a ring of MPI_Irecv/MPI_Isend, all completed by one MPI_Waitall;
 *   2. rank KILL kills itself (SIGKILL) first, then round 1 again among the others (the environment may
 *      also kill a rank inside this round's MPI_Iallreduce: COHORT_INJECT_FAILURE=...,at=iallreduce.posted,hit=2);
 *   3. MPI_Test polling an MPI_Iallreduce, then MPI_Testall polling an MPI_Ibarrier and an MPI_Iallreduce;
 *   4. MPI_Request_free on an MPI_Ibarrier and an MPI_Iallreduce, then a blocking MPI_Allreduce.
 * Rank r contributes (j+1) << r to element j: a sum names the ranks that contributed. Its mask must contain
 * every rank alive through the round and no rank dead before it. */
#include <mpi.h>
#include <signal.h>
#include <string.h>

#include "check.h"

#define COUNT 3
#define UNTOUCHED (-7LL)
#define ROOT 3 /* Ibcast's root: never killed */

static int rank, size;
static unsigned dead = 0; /* ranks dead before the current round */

static long long contribution(int r, int j) { return (long long)(j + 1) << r; }
static long long block(int r, int j) { return r * 1000LL + j; }
static unsigned all_ranks(void) { return (1u << size) - 1; }

static void check_sum(const long long *v, const char *what, int round) {
  unsigned mask = (unsigned)v[0];
  for (int j = 0; j < COUNT; ++j)
    CHECK(v[j] == (j + 1) * (long long)mask, "round %d %s: element %d is %lld", round, what, j, v[j]);
  unsigned alive = all_ranks() & ~dead;
  CHECK((mask & ~alive) == 0, "round %d %s: contributors 0x%x include ranks dead before (alive 0x%x)", round, what,
        mask, alive);
  CHECK((mask >> rank) & 1, "round %d %s: my contribution is missing (0x%x)", round, what, mask);
}

/* The next (step +1) or previous (-1) rank not known dead before the round. */
static int neighbour(int step) {
  for (int k = 1; k < size; ++k) {
    int r = (rank + step * k + size) % size;
    if (!((dead >> r) & 1)) return r;
  }
  return rank;
}

/* Three collectives and a ring exchange in flight, one MPI_Waitall. Returns the allreduce's mask. */
static unsigned mixed_round(int round) {
  long long in[COUNT], sum[COUNT], bc[COUNT], mine[COUNT], all[32 * COUNT], got = UNTOUCHED, sent = rank * 10 + round;
  for (int j = 0; j < COUNT; ++j) in[j] = contribution(rank, j), sum[j] = UNTOUCHED, mine[j] = block(rank, j);
  for (int j = 0; j < COUNT; ++j) bc[j] = rank == ROOT ? block(ROOT, j) : UNTOUCHED;
  for (int i = 0; i < size * COUNT; ++i) all[i] = UNTOUCHED;
  int next = neighbour(1), prev = neighbour(-1);
  MPI_Request r[5];
  MPI_Status st[5];
  CHECK(MPI_Iallreduce(in, sum, COUNT, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD, &r[0]) == MPI_SUCCESS, "MPI_Iallreduce");
  CHECK(MPI_Irecv(&got, 1, MPI_LONG_LONG, prev, round, MPI_COMM_WORLD, &r[1]) == MPI_SUCCESS, "MPI_Irecv");
  CHECK(MPI_Ibcast(bc, COUNT, MPI_LONG_LONG, ROOT, MPI_COMM_WORLD, &r[2]) == MPI_SUCCESS, "MPI_Ibcast");
  CHECK(MPI_Isend(&sent, 1, MPI_LONG_LONG, next, round, MPI_COMM_WORLD, &r[3]) == MPI_SUCCESS, "MPI_Isend");
  CHECK(MPI_Iallgather(mine, COUNT, MPI_LONG_LONG, all, COUNT, MPI_LONG_LONG, MPI_COMM_WORLD, &r[4]) == MPI_SUCCESS,
        "MPI_Iallgather");
  int rc = MPI_Waitall(5, r, st);
  CHECK(rc == MPI_SUCCESS, "round %d: MPI_Waitall returned %d", round, rc);
  for (int i = 0; i < 5; ++i) CHECK(r[i] == MPI_REQUEST_NULL, "round %d: request %d still active", round, i);
  check_sum(sum, "MPI_Iallreduce", round);
  for (int j = 0; j < COUNT; ++j)
    CHECK(bc[j] == block(ROOT, j), "round %d MPI_Ibcast: element %d is %lld", round, j, bc[j]);
  unsigned present = 0;
  for (int q = 0; q < size; ++q) {
    int here = all[q * COUNT] != UNTOUCHED;
    for (int j = 0; j < COUNT; ++j)
      CHECK(all[q * COUNT + j] == (here ? block(q, j) : UNTOUCHED),
            "round %d MPI_Iallgather: slot %d element %d is %lld", round, q, j, all[q * COUNT + j]);
    present |= (unsigned)here << q;
  }
  CHECK((present & dead) == 0 && (present >> rank) & 1, "round %d MPI_Iallgather: slots 0x%x (dead before 0x%x)", round,
        present, dead);
  /* the ring: prev's value, or (prev died in this round, policy skip) nothing from MPI_PROC_NULL */
  if (st[1].MPI_SOURCE == MPI_PROC_NULL)
    CHECK(got == UNTOUCHED && round == 2, "round %d: receive from %d skipped (wrote %lld)", round, prev, got);
  else
    CHECK(got == prev * 10 + round && st[1].MPI_SOURCE == prev, "round %d: received %lld from %d", round, got,
          st[1].MPI_SOURCE);
  return (unsigned)sum[0];
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(argc == 2 && size >= 4 && size <= 31, "usage: wrap_nbc KILL (4 to 31 ranks)");
  int kill = atoi(argv[1]);
  CHECK(kill != ROOT && kill > 0 && kill < size, "KILL must not be 0 or the root %d", ROOT);

  unsigned m1 = mixed_round(1);
  CHECK(m1 == all_ranks(), "round 1 (fault-free): contributors 0x%x", m1);

  if (rank == kill) raise(SIGKILL);
  dead |= 1u << kill;
  unsigned m2 = mixed_round(2);
  dead |= all_ranks() & ~m2; /* a rank killed inside round 2 did not contribute, or did: either way it may be gone */

  /* 3. MPI_Test and MPI_Testall polling loops */
  long long in[COUNT], sum[COUNT];
  for (int j = 0; j < COUNT; ++j) in[j] = contribution(rank, j), sum[j] = UNTOUCHED;
  MPI_Request r[2];
  CHECK(MPI_Iallreduce(in, sum, COUNT, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD, &r[0]) == MPI_SUCCESS, "MPI_Iallreduce");
  int flag = 0, tests = 0;
  while (!flag) {
    CHECK(MPI_Test(&r[0], &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS, "MPI_Test");
    ++tests;
  }
  CHECK(r[0] == MPI_REQUEST_NULL, "MPI_Test left the request active");
  check_sum(sum, "MPI_Iallreduce (MPI_Test loop)", 3);
  unsigned m3 = (unsigned)sum[0];
  for (int j = 0; j < COUNT; ++j) sum[j] = UNTOUCHED;
  CHECK(MPI_Ibarrier(MPI_COMM_WORLD, &r[0]) == MPI_SUCCESS, "MPI_Ibarrier");
  CHECK(MPI_Iallreduce(in, sum, COUNT, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD, &r[1]) == MPI_SUCCESS, "MPI_Iallreduce");
  MPI_Status sts[2];
  for (flag = 0; !flag;) CHECK(MPI_Testall(2, r, &flag, sts) == MPI_SUCCESS, "MPI_Testall");
  check_sum(sum, "MPI_Iallreduce (MPI_Testall loop)", 3);
  CHECK((unsigned)sum[0] == m3, "MPI_Testall loop: contributors 0x%x, MPI_Test loop 0x%x", (unsigned)sum[0], m3);

  /* 4. MPI_Request_free after the failures: the operations still complete everywhere */
  long long freed[COUNT];
  CHECK(MPI_Ibarrier(MPI_COMM_WORLD, &r[0]) == MPI_SUCCESS, "MPI_Ibarrier");
  CHECK(MPI_Request_free(&r[0]) == MPI_SUCCESS && r[0] == MPI_REQUEST_NULL, "MPI_Request_free (MPI_Ibarrier)");
  CHECK(MPI_Iallreduce(in, freed, COUNT, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD, &r[1]) == MPI_SUCCESS,
        "MPI_Iallreduce");
  CHECK(MPI_Request_free(&r[1]) == MPI_SUCCESS && r[1] == MPI_REQUEST_NULL, "MPI_Request_free (MPI_Iallreduce)");
  for (int j = 0; j < COUNT; ++j) sum[j] = UNTOUCHED;
  CHECK(MPI_Allreduce(in, sum, COUNT, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS, "MPI_Allreduce");
  check_sum(sum, "MPI_Allreduce after two freed requests", 4);
  CHECK((unsigned)sum[0] == m3, "MPI_Allreduce: contributors 0x%x, before 0x%x", (unsigned)sum[0], m3);
  /* the freed MPI_Iallreduce completed before the blocking call (collectives on a communicator in order) */
  check_sum(freed, "freed MPI_Iallreduce", 4);

  /* every survivor saw the same contributors */
  unsigned seen[64] = {0};
  unsigned mine[2] = {m2, m3};
  CHECK(MPI_Allgather(mine, 2, MPI_UNSIGNED, seen, 2, MPI_UNSIGNED, MPI_COMM_WORLD) == MPI_SUCCESS, "MPI_Allgather");
  for (int q = 0; q < size; ++q)
    if ((m3 >> q) & 1)
      CHECK(seen[2 * q] == m2 && seen[2 * q + 1] == m3, "rank %d saw 0x%x/0x%x, I saw 0x%x/0x%x", q, seen[2 * q],
            seen[2 * q + 1], m2, m3);
  TEST_PASS("nonblocking collectives: round 2 contributors 0x%x, then 0x%x; %d MPI_Test calls", m2, m3, tests);
  MPI_Finalize();
  return 0;
}
