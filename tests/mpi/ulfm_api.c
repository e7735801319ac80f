/* ULFM-style programs, written from the ULFM specification (Open MPI 5's MPIX_* man pages; Bland et al.,
 * IJHPCA 2013), that run natively on a ULFM MPI (built with -DULFM_NATIVE, no cohort) and through cohort's
 * ULFM API on MPICH and Open MPI 4.1. Every communicator uses MPI_ERRORS_RETURN. A victim kills itself
 * with SIGKILL; every survivor checks what it computed and prints PASS.
 *   ulfm_api loop V K        the classic loop: 8 steps of an allreduce; world rank V dies at step K; a
 *                            step that failed anywhere (agreed) is retried after revoke + shrink.
 *                            Checks: every step's sum over the survivors of that step, >= 1 shrink,
 *                            final size n-1.
 *   ulfm_api repeated V1 V2  the same loop, rank V1 dies at step 2 and rank V2 at step 5: two shrinks.
 *   ulfm_api agree V         rank V dies at once; agree returns MPIX_ERR_PROC_FAILED until the failure is
 *                            acknowledged, then the AND of the survivors' flags (also with iagree).
 *   ulfm_api revoke          rank 1 revokes MPI_COMM_WORLD while rank 0 waits in a receive that no one
 *                            matches, rank 2 in an MPI_Waitall of two such receives and the others in a
 *                            barrier: all return MPIX_ERR_REVOKED (Waitall: in a status); shrink
 *                            gives a working communicator of all ranks.
 *   ulfm_api anysource V     rank V dies; rank 0's MPI_ANY_SOURCE MPI_Irecv + MPI_Wait returns
 *                            MPIX_ERR_PROC_FAILED_PENDING, the request stays active; after
 *                            MPIX_Comm_failure_ack it receives rank 1's message.
 * With cohort only:
 *   ulfm_api transparent V K the loop under COHORT_ULFM_API=off: no call fails, nothing is shrunk, and each
 *                            step's sum is over the ranks alive (cohort's transparent shrinking).
 *   ulfm_api_per_communicator loop V K  (built with -DCOHORT_ULFM_API_NO_SELECT): the loop's communicator,
 *                            on which the program calls MPIX_*, is in ULFM mode, MPI_COMM_WORLD is not: an
 *                            allreduce on it after the failure succeeds over the survivors.
 * Launched under a hard timeout (TIMEOUT in tests/mpi/CMakeLists.txt). */
#include <mpi.h>
#ifdef ULFM_NATIVE
#include <mpi-ext.h>
/* NOTE: the marker that makes scripts/cohort-run launch Open MPI 5 with --with-ft ulfm. */
__attribute__((used)) static const char kBackendTag[] = "cohort-backend=ulfm";
#else
#ifdef ULFM_PER_COMMUNICATOR
#define COHORT_ULFM_API_NO_SELECT 1 /* ULFM mode only where the program calls MPIX_* */
#endif
#include <cohort/mpi-ext.h>
#endif
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "ulfm_finalize.h"

static int error_class(int rc) {
  int cls = -1;
  if (rc == MPI_SUCCESS) return MPI_SUCCESS;
  MPI_Error_class(rc, &cls);
  return cls;
}

static void die(void) {
  fflush(stdout);
  raise(SIGKILL);
}

/* The classic loop: victims[i] dies at step at[i]. */
static int world_sum_alive(const int *victims, int nvictims, int world_size) {
  int expect = 0;
  for (int r = 0; r < world_size; ++r) {
    int dead = 0;
    for (int i = 0; i < nvictims; ++i) dead |= victims[i] == r;
    if (!dead) expect += r;
  }
  return expect;
}

/* The loops' communicator: a duplicate of MPI_COMM_WORLD with MPI_ERRORS_RETURN. */
static MPI_Comm work_comm(int *world_rank, int *world_size) {
  MPI_Comm comm;
  MPI_Comm_rank(MPI_COMM_WORLD, world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, world_size);
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  return comm;
}

/* COHORT_ULFM_API=off: the same loop sees no failure at all. */
static int transparent(int victim, int at) {
  int world_rank, world_size;
  MPI_Comm comm = work_comm(&world_rank, &world_size);
  int sum = -1;
  for (int step = 0; step < 8; ++step) {
    if (world_rank == victim && step == at) die();
    int rc = MPI_Allreduce(&world_rank, &sum, 1, MPI_INT, MPI_SUM, comm);
    CHECK(rc == MPI_SUCCESS, "step %d: MPI_Allreduce returned %d under COHORT_ULFM_API=off", step, rc);
    int ok = 1;
    rc = MPIX_Comm_agree(comm, &ok);  /* acknowledged or not, agree itself still reports a dead member */
    CHECK(rc == MPI_SUCCESS || error_class(rc) == MPIX_ERR_PROC_FAILED, "step %d: agree returned %d", step, rc);
    if (error_class(rc) == MPIX_ERR_PROC_FAILED) MPIX_Comm_failure_ack(comm);
  }
  int size;
  MPI_Comm_size(comm, &size);
  CHECK(size == world_size && sum == world_sum_alive(&victim, 1, world_size), "size %d, last sum %d", size, sum);
  TEST_PASS("transparent: 8 steps without an error, last sum %d", sum);
  MPI_Comm_free(&comm);
  return 0;
}

static int loop(int nvictims, const int *victims, const int *at) {
  enum { kSteps = 8 };
  int world_rank, world_size;
  MPI_Comm comm = work_comm(&world_rank, &world_size);
  int shrinks = 0, errors = 0;
  for (int step = 0; step < kSteps;) {
    for (int i = 0; i < nvictims; ++i) {
      if (world_rank == victims[i] && step == at[i]) die();
    }
    int sum = -1;
    int rc = MPI_Allreduce(&world_rank, &sum, 1, MPI_INT, MPI_SUM, comm);
    int cls = error_class(rc);
    CHECK(cls == MPI_SUCCESS || cls == MPIX_ERR_PROC_FAILED || cls == MPIX_ERR_REVOKED,
          "step %d: MPI_Allreduce returned class %d", step, cls);
    if (cls != MPI_SUCCESS) ++errors;
    /* NOTE: the flag of an agreement is uniform even when it reports an unacknowledged failure. */
    int ok = cls == MPI_SUCCESS;
    rc = MPIX_Comm_agree(comm, &ok);
    cls = error_class(rc);
    CHECK(cls == MPI_SUCCESS || cls == MPIX_ERR_PROC_FAILED, "step %d: MPIX_Comm_agree returned class %d", step, cls);
    if (!ok) {
      MPIX_Comm_revoke(comm);
      MPI_Comm next;
      rc = MPIX_Comm_shrink(comm, &next);
      CHECK(rc == MPI_SUCCESS, "step %d: MPIX_Comm_shrink returned %d", step, rc);
      MPI_Comm_free(&comm);
      comm = next;
      ++shrinks;
      continue;
    }
    /* The survivors of this step: the members of comm (all alive, or the agreement would have failed). */
    int size, expect = 0;
    MPI_Comm_size(comm, &size);
    MPI_Group g, wg;
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    for (int r = 0; r < size; ++r) {
      int w;
      MPI_Group_translate_ranks(g, 1, &r, wg, &w);
      expect += w;
    }
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    CHECK(sum == expect, "step %d: sum %d over %d ranks, expected %d", step, sum, size, expect);
    ++step;
  }
  int size;
  MPI_Comm_size(comm, &size);
  CHECK(size == world_size - nvictims, "final size %d, expected %d", size, world_size - nvictims);
  CHECK(shrinks >= nvictims, "%d shrinks for %d failures", shrinks, nvictims);
#ifdef ULFM_PER_COMMUNICATOR
  int wsum = -1;
  int wrc = MPI_Allreduce(&world_rank, &wsum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK(wrc == MPI_SUCCESS && wsum == world_sum_alive(victims, nvictims, world_size),
        "MPI_COMM_WORLD (not in ULFM mode): rc %d, sum %d", wrc, wsum);
#endif
  TEST_PASS("%d steps, %d shrinks, %d failed operations, final size %d", kSteps, shrinks, errors, size);
  MPI_Comm_free(&comm);
  return 0;
}

static int agree_test(int victim) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == victim) die();
  int all = 0xff, expect = 0xff;
  for (int r = 0; r < size; ++r) {
    if (r != victim) expect &= ~(1 << r);
  }
  /* 1: the victim never joins; the agreement completes without it and reports its failure. */
  int flag = all & ~(1 << rank);
  int rc = MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
  CHECK(error_class(rc) == MPIX_ERR_PROC_FAILED, "first agree returned class %d, expected MPIX_ERR_PROC_FAILED",
        error_class(rc));
  /* 2: acknowledged: success and the AND of the survivors' flags. The agreement may report the failure
   * before this process's own list holds it (native Open MPI 5: another participant knew it first, and the
   * acknowledgement then covered nobody), so acknowledge until the victim is among the acknowledged, as a
   * ULFM program retries (up to 10 s, progressing MPI meanwhile). */
  MPI_Group acked, wg;
  int nacked = -1, first = -1, zero = 0;
  for (int tries = 0; tries < 1000; ++tries) {
    MPIX_Comm_failure_ack(MPI_COMM_WORLD);
    MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &acked);
    MPI_Group_size(acked, &nacked);
    if (nacked > 0 || tries == 999) break;
    MPI_Group_free(&acked);
    int pending = 0; /* progress MPI, where the failure notice is handled */
    MPI_Iprobe(rank, 999, MPI_COMM_WORLD, &pending, MPI_STATUS_IGNORE);
    sleep_ms(10);
  }
  MPI_Comm_group(MPI_COMM_WORLD, &wg);
  if (nacked > 0) MPI_Group_translate_ranks(acked, 1, &zero, wg, &first);
  CHECK(nacked == 1 && first == victim, "acked group: %d ranks, first %d (expected 1, %d)", nacked, first, victim);
  MPI_Group_free(&acked);
  MPI_Group_free(&wg);
  flag = all & ~(1 << rank);
  rc = MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
  CHECK(rc == MPI_SUCCESS, "agree after the acknowledgement returned class %d", error_class(rc));
  CHECK(flag == expect, "agreed flag %#x, expected %#x", (unsigned)flag, (unsigned)expect);
  /* 3: the same with MPIX_Comm_iagree. */
  flag = rank == 0 ? 0x3 : 0x7;
  MPI_Request req;
  rc = MPIX_Comm_iagree(MPI_COMM_WORLD, &flag, &req);
  CHECK(rc == MPI_SUCCESS, "MPIX_Comm_iagree returned class %d", error_class(rc));
  rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
  CHECK(rc == MPI_SUCCESS && flag == (victim == 0 ? 0x7 : 0x3), "iagree: rc %d, flag %#x", rc, (unsigned)flag);
  TEST_PASS("agree: MPIX_ERR_PROC_FAILED before the acknowledgement, then %#x; iagree %#x", (unsigned)expect,
            (unsigned)flag);
  return 0;
}

static int revoke_test(void) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int rc, x = 0;
  if (rank == 0) {
    rc = MPI_Recv(&x, 1, MPI_INT, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);  /* never sent */
  } else if (rank == 1) {
    usleep(300 * 1000);  /* NOTE: lets rank 0 and the others block first (not needed for the outcome) */
    rc = MPIX_Comm_revoke(MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS, "MPIX_Comm_revoke returned %d", rc);
    rc = MPI_Barrier(MPI_COMM_WORLD);
  } else if (rank == 2) {
    MPI_Request reqs[2];
    MPI_Status st[2];
    int y = 0;
    MPI_Irecv(&x, 1, MPI_INT, 3, 98, MPI_COMM_WORLD, &reqs[0]);  /* never sent */
    MPI_Irecv(&y, 1, MPI_INT, 0, 97, MPI_COMM_WORLD, &reqs[1]);  /* never sent */
    rc = MPI_Waitall(2, reqs, st);
    if (rc == MPI_ERR_IN_STATUS) rc = st[0].MPI_ERROR != MPI_SUCCESS ? st[0].MPI_ERROR : st[1].MPI_ERROR;
  } else {
    rc = MPI_Barrier(MPI_COMM_WORLD);  /* ranks 0, 1 and 2 never join */
  }
  CHECK(error_class(rc) == MPIX_ERR_REVOKED, "operation on the revoked MPI_COMM_WORLD returned class %d",
        error_class(rc));
  int flag = 0;
  MPIX_Comm_is_revoked(MPI_COMM_WORLD, &flag);
  CHECK(flag == 1, "MPIX_Comm_is_revoked gave %d", flag);
  rc = MPI_Send(&x, 1, MPI_INT, rank, 5, MPI_COMM_WORLD);
  CHECK(error_class(rc) == MPIX_ERR_REVOKED, "MPI_Send on the revoked communicator returned class %d",
        error_class(rc));
  MPI_Comm next;
  rc = MPIX_Comm_shrink(MPI_COMM_WORLD, &next);
  CHECK(rc == MPI_SUCCESS, "MPIX_Comm_shrink returned %d", rc);
  int size, sum = 0, one = 1;
  MPI_Comm_size(next, &size);
  MPIX_Comm_is_revoked(next, &flag);
  CHECK(flag == 0, "the shrunk communicator is revoked");
  rc = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, next);
  int world;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  CHECK(rc == MPI_SUCCESS && size == world && sum == world, "after shrink: rc %d, size %d, sum %d", rc, size, sum);
  MPI_Comm_free(&next);
  TEST_PASS("revoked operation interrupted; shrink over %d ranks works", size);
  return 0;
}

static int anysource(int victim) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  CHECK(victim > 1, "anysource: the victim must not be rank 0 or 1");
  if (rank == victim) die();
  if (rank == 0) {
    int x = -1, go = 1;
    MPI_Request req;
    MPI_Status st;
    MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &req);
    int rc = MPI_Wait(&req, &st);
    CHECK(error_class(rc) == MPIX_ERR_PROC_FAILED_PENDING, "MPI_Wait returned class %d, expected _PENDING",
          error_class(rc));
    CHECK(req != MPI_REQUEST_NULL, "the pending request was freed");
    MPIX_Comm_failure_ack(MPI_COMM_WORLD);
    MPI_Send(&go, 1, MPI_INT, 1, 8, MPI_COMM_WORLD);
    rc = MPI_Wait(&req, &st);
    CHECK(rc == MPI_SUCCESS && x == 4242 && st.MPI_SOURCE == 1, "after the acknowledgement: rc %d, x %d, source %d",
          rc, x, st.MPI_SOURCE);
    /* The acknowledged failure does not interrupt a new one either. */
    rc = MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &st);
    CHECK(rc == MPI_SUCCESS && x == 4343 && st.MPI_SOURCE == 1, "second receive: rc %d, x %d", rc, x);
    TEST_PASS("MPI_ANY_SOURCE: _PENDING, then received from rank %d after MPIX_Comm_failure_ack", st.MPI_SOURCE);
  } else if (rank == 1) {
    int go = 0, x = 4242;
    int rc = MPI_Recv(&go, 1, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS && go == 1, "go message: rc %d", rc);
    MPI_Send(&x, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    x = 4343;
    MPI_Send(&x, 1, MPI_INT, 0, 9, MPI_COMM_WORLD);
    TEST_PASS("sent to rank 0 after its acknowledgement");
  } else {
    TEST_PASS("bystander");
  }
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK(argc >= 2, "usage: ulfm_api loop V K | repeated V1 V2 | agree V | revoke | anysource V");
  const char *mode = argv[1];
  if (strcmp(mode, "loop") == 0 && argc == 4) {
    int v = atoi(argv[2]), k = atoi(argv[3]);
    loop(1, &v, &k);
  } else if (strcmp(mode, "repeated") == 0 && argc == 4) {
    int v[2] = {atoi(argv[2]), atoi(argv[3])}, k[2] = {2, 5};
    loop(2, v, k);
  } else if (strcmp(mode, "agree") == 0 && argc == 3) {
    agree_test(atoi(argv[2]));
  } else if (strcmp(mode, "revoke") == 0) {
    revoke_test();
  } else if (strcmp(mode, "transparent") == 0 && argc == 4) {
    transparent(atoi(argv[2]), atoi(argv[3]));
  } else if (strcmp(mode, "anysource") == 0 && argc == 3) {
    anysource(atoi(argv[2]));
  } else {
    CHECK(0, "unknown mode %s", mode);
  }
  ulfm_test_finalize();
  return 0;
}
