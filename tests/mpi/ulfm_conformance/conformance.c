/* ULFM conformance suite: one subtest per normative statement of the User Level Failure
 * Mitigation chapter that cohort implements, written from the specification, not from cohort's code.
 *
 * Sources of the statements (cited per subtest below as "ULFM <section>"):
 *   - the ULFM chapter proposed to the MPI Forum ("Process Fault Tolerance", chapter 17 of the 2017 draft
 *     that Open MPI 5's docs/features/ulfm.rst links to): 17.2.1 Startup and Finalize, 17.2.2 Point-to-Point
 *     and Collective Communication, 17.3.1 Communicator Functions (revoke, shrink, agree, failure_ack,
 *     failure_get_acked);
 *   - the later names of the same chapter (MPI Forum FT slice 1, mpi-issues #581: MPI_COMM_ACK_FAILED,
 *     MPI_COMM_GET_FAILED, the MPI_ERR_* classes without X), as Open MPI 5's MPIX_Comm_* man pages give them.
 *
 * Usage: ulfm_conformance SUBTEST [ARGS...]  (4 ranks; listed in tests/mpi/ulfm_conformance/tests.cmake and
 * docs/ulfm-conformance.md). Every rank that checked what it must prints `cohort-test: rank R PASS ...`; a
 * wrong result prints one FAIL line and exits 1. A victim kills itself with SIGKILL. Built twice: with cohort
 * (MPICH 4.0.2, Open MPI 4.1.4), and with -DULFM_NATIVE against Open MPI 5's own ULFM (no cohort), where a
 * failing subtest documents a difference of the native implementation.
 *
 * Timing words: "before" = the victim dies right after the setup barrier and the survivors wait DELAY ms
 * (past detection) before the operation; "during" = the survivors enter the operation at once and the
 * victim dies DELAY ms later, while they wait in it. */
#include <mpi.h>
#ifdef ULFM_NATIVE
#include <mpi-ext.h>
/* NOTE: the marker that makes scripts/cohort-run launch Open MPI 5 with --with-ft ulfm. */
__attribute__((used)) static const char kBackendTag[] = "cohort-backend=ulfm";
#else
#include <cohort/mpi-ext.h>
#endif
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../ulfm_finalize.h"

/* ------------------------------------------------------------------------------------------------------
 * Reporting. The world rank is cached: the finalize subtests report after MPI_Finalize. */
static int g_rank = -1, g_size = 0;

static void say(const char *head, const char *fmt, va_list ap) {
  char detail[1024], line[1200];
  vsnprintf(detail, sizeof detail, fmt, ap);
  int n = snprintf(line, sizeof line, "cohort-test: rank %d %s%s\n", g_rank, head, detail);
  if (n > (int)sizeof line - 1) n = (int)sizeof line - 1;
  fflush(stdout);
  if (write(1, line, (size_t)n) < 0) {
  }
}
static void pass(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  say("PASS ", fmt, ap);
  va_end(ap);
}
static void fail_at(int line, const char *fmt, ...) {
  char head[64];
  snprintf(head, sizeof head, "FAIL conformance.c:%d: ", line);
  va_list ap;
  va_start(ap, fmt);
  say(head, fmt, ap);
  va_end(ap);
  exit(1);
}
#define EXPECT(cond, ...) \
  do {                    \
    if (!(cond)) fail_at(__LINE__, __VA_ARGS__); \
  } while (0)

static void sleep_ms(long ms) { /* whatever signals arrive (MPICH's hydra sends SIGUSR1 on a death) */
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) == -1) {
  }
}
static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}
/* CONFORMANCE_TRACE=1: each rank writes its steps to stderr (to find where a run hangs). */
static int g_trace = -1;
static void trace(const char *fmt, ...) {
  if (g_trace < 0) g_trace = getenv("CONFORMANCE_TRACE") != NULL;
  if (!g_trace) return;
  char buf[512];
  int n = snprintf(buf, sizeof buf, "trace[rank %d %.3f] ", g_rank, now_s());
  va_list ap;
  va_start(ap, fmt);
  n += vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
  va_end(ap);
  if (n > (int)sizeof buf - 2) n = (int)sizeof buf - 2;
  buf[n++] = '\n';
  if (write(2, buf, (size_t)n) < 0) {
  }
}
static void die(void) {
  fflush(stdout);
  raise(SIGKILL);
}

/* ------------------------------------------------------------------------------------------------------
 * Error classes. The statements are about classes; the codes are compared only in error_code. */
static int cls_of(int rc) {
  int cls = rc;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  return cls;
}
static const char *cls_name(int cls) {
  static char other[32];
  if (cls == MPI_SUCCESS) return "MPI_SUCCESS";
  if (cls == MPIX_ERR_PROC_FAILED) return "MPIX_ERR_PROC_FAILED";
  if (cls == MPIX_ERR_PROC_FAILED_PENDING) return "MPIX_ERR_PROC_FAILED_PENDING";
  if (cls == MPIX_ERR_REVOKED) return "MPIX_ERR_REVOKED";
  if (cls == MPI_ERR_PENDING) return "MPI_ERR_PENDING";
  if (cls == MPI_ERR_IN_STATUS) return "MPI_ERR_IN_STATUS";
  snprintf(other, sizeof other, "class %d", cls);
  return other;
}
#define EXPECT_CLASS(rc, want, what) \
  EXPECT(cls_of(rc) == (want), "%s returned %s, expected %s", (what), cls_name(cls_of(rc)), cls_name(want))

/* A duplicate of MPI_COMM_WORLD with MPI_ERRORS_RETURN: revoking it leaves MPI_COMM_WORLD usable. */
static MPI_Comm work_comm(void) {
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  return c;
}

/* The world ranks of comm's members (local group), in comm's order. */
static int world_ranks_of(MPI_Comm comm, int *out) {
  MPI_Group g, wg;
  int n;
  MPI_Comm_group(comm, &g);
  MPI_Comm_group(MPI_COMM_WORLD, &wg);
  MPI_Group_size(g, &n);
  for (int r = 0; r < n; ++r) MPI_Group_translate_ranks(g, 1, &r, wg, &out[r]);
  MPI_Group_free(&g);
  MPI_Group_free(&wg);
  return n;
}
/* The world ranks of a group of comm's processes (e.g. the failed group). */
static int group_world_ranks(MPI_Group g, int *out) {
  MPI_Group wg;
  int n;
  MPI_Comm_group(MPI_COMM_WORLD, &wg);
  MPI_Group_size(g, &n);
  for (int r = 0; r < n; ++r) MPI_Group_translate_ranks(g, 1, &r, wg, &out[r]);
  MPI_Group_free(&wg);
  return n;
}
static unsigned mask_of(const int *ranks, int n) {
  unsigned m = 0;
  for (int i = 0; i < n; ++i) m |= 1u << ranks[i];
  return m;
}
/* "1+3" -> bit mask. */
static unsigned parse_mask(const char *s) {
  unsigned m = 0;
  while (*s) {
    m |= 1u << atoi(s);
    while (*s && *s != '+') ++s;
    if (*s == '+') ++s;
  }
  return m;
}
static int popcount(unsigned m) { return __builtin_popcount(m); }

/* Progresses MPI for up to ms, until MPIX_Comm_is_revoked(comm) holds; returns the flag. */
static int wait_revoked(MPI_Comm comm, long ms) {
  int flag = 0;
  for (long t = 0; t <= ms; t += 10) {
    MPIX_Comm_is_revoked(comm, &flag);
    if (flag) break;
    int pending = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, 32000, comm, &pending, MPI_STATUS_IGNORE);
    sleep_ms(10);
  }
  return flag;
}

/* ------------------------------------------------------------------------------------------------------
 * Operation kinds. op() runs one operation of a kind on comm and returns the error code the program sees:
 * for a nonblocking or persistent operation, the start call's error if it failed, else the completion's. */
enum kind {
  K_RECV, K_SEND, K_SENDRECV, K_IRECV, K_ISEND, K_WAITALL, K_PROBE, K_PRECV, K_PSEND,
  K_BARRIER, K_ALLREDUCE, K_BCAST, K_IBARRIER, K_IALLREDUCE, K_IBCAST, K_PBARRIER, K_DUP, K_ALLTOALLV, K_IGATHERV,
  K_WAITANY, K_TESTLOOP, K_NKINDS
};
static const char *const kKindNames[K_NKINDS] = {
  "recv", "send", "sendrecv", "irecv", "isend", "waitall", "probe", "precv", "psend",
  "barrier", "allreduce", "bcast", "ibarrier", "iallreduce", "ibcast", "pbarrier", "dup", "alltoallv", "igatherv", "waitany",
  "testloop"};
static int kind_of(const char *name) {
  for (int k = 0; k < K_NKINDS; ++k)
    if (!strcmp(name, kKindNames[k])) return k;
  fail_at(__LINE__, "unknown operation kind '%s'", name);
  return -1;
}
static int is_p2p(int k) { return k <= K_PSEND || k == K_WAITANY || k == K_TESTLOOP; }

/* 4 MiB: no MPI here completes a send of this size before the receiver matches it. */
enum { kBigCount = 1 << 20 };
static int *g_big_send, *g_big_recv;

static int complete(int rc, MPI_Request *req) {
  if (rc != MPI_SUCCESS) return rc;
  MPI_Status st;
  rc = MPI_Wait(req, &st);
  return rc;
}
static int free_persistent(int rc, MPI_Request *req) {
  if (*req != MPI_REQUEST_NULL) MPI_Request_free(req);
  return rc;
}

/* peer: the partner of a point-to-point kind (a rank of comm, or of its remote group); root: the root of a
 * rooted collective; tag: a tag no one else uses unless the caller arranged a match. */
static int op(int k, MPI_Comm comm, int peer, int root, int tag) {
  trace("op %s peer %d root %d tag %d", kKindNames[k], peer, root, tag);
  MPI_Request req = MPI_REQUEST_NULL;
  int x = g_rank, y = -1, rc;
  switch (k) {
    case K_RECV:
      return MPI_Recv(g_big_recv, kBigCount, MPI_INT, peer, tag, comm, MPI_STATUS_IGNORE);
    case K_SEND:
      return MPI_Send(g_big_send, kBigCount, MPI_INT, peer, tag, comm);
    case K_SENDRECV:
      return MPI_Sendrecv(&x, 1, MPI_INT, peer, tag + 1, g_big_recv, kBigCount, MPI_INT, peer, tag, comm,
                          MPI_STATUS_IGNORE);
    case K_IRECV:
      return complete(MPI_Irecv(g_big_recv, kBigCount, MPI_INT, peer, tag, comm, &req), &req);
    case K_ISEND:
      return complete(MPI_Isend(g_big_send, kBigCount, MPI_INT, peer, tag, comm, &req), &req);
    case K_WAITALL: {
      /* one receive that involves peer, one that completes at once (MPI_PROC_NULL) */
      MPI_Request r2[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
      MPI_Status st[2];
      rc = MPI_Irecv(g_big_recv, kBigCount, MPI_INT, peer, tag, comm, &r2[0]);
      if (rc != MPI_SUCCESS) return rc;
      rc = MPI_Irecv(&y, 1, MPI_INT, MPI_PROC_NULL, tag, comm, &r2[1]);
      if (rc != MPI_SUCCESS) return rc;
      rc = MPI_Waitall(2, r2, st);
      if (rc == MPI_ERR_IN_STATUS) {
        EXPECT(cls_of(st[1].MPI_ERROR) == MPI_SUCCESS || cls_of(st[1].MPI_ERROR) == MPI_ERR_PENDING,
               "MPI_Waitall: the MPI_PROC_NULL receive's status holds %s", cls_name(cls_of(st[1].MPI_ERROR)));
        rc = st[0].MPI_ERROR;
      }
      return rc;
    }
    case K_PROBE:
      return MPI_Probe(peer, tag, comm, MPI_STATUS_IGNORE);
    case K_PRECV:
      rc = MPI_Recv_init(g_big_recv, kBigCount, MPI_INT, peer, tag, comm, &req);
      if (rc == MPI_SUCCESS) rc = complete(MPI_Start(&req), &req);
      return free_persistent(rc, &req);
    case K_PSEND:
      rc = MPI_Send_init(g_big_send, kBigCount, MPI_INT, peer, tag, comm, &req);
      if (rc == MPI_SUCCESS) rc = complete(MPI_Start(&req), &req);
      return free_persistent(rc, &req);
    case K_BARRIER:
      return MPI_Barrier(comm);
    case K_ALLREDUCE:
      return MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm);
    case K_BCAST:
      return MPI_Bcast(&x, 1, MPI_INT, root, comm);
    case K_IBARRIER:
      return complete(MPI_Ibarrier(comm, &req), &req);
    case K_IALLREDUCE:
      return complete(MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm, &req), &req);
    case K_IBCAST:
      return complete(MPI_Ibcast(&x, 1, MPI_INT, root, comm, &req), &req);
    case K_PBARRIER:
#if MPI_VERSION >= 4
      rc = MPI_Barrier_init(comm, MPI_INFO_NULL, &req);
      if (rc == MPI_SUCCESS) rc = complete(MPI_Start(&req), &req);
      return free_persistent(rc, &req);
#else
      fail_at(__LINE__, "MPI_Barrier_init: this MPI is older than MPI 4.0");
      return -1;
#endif
    case K_WAITANY: {
      int idx = -1;
      rc = MPI_Irecv(g_big_recv, kBigCount, MPI_INT, peer, tag, comm, &req);
      if (rc != MPI_SUCCESS) return rc;
      return MPI_Waitany(1, &req, &idx, MPI_STATUS_IGNORE);
    }
    case K_TESTLOOP: {
      /* MPI_Test polled until the request completes or the call fails */
      int flag = 0;
      rc = MPI_Irecv(g_big_recv, kBigCount, MPI_INT, peer, tag, comm, &req);
      while (rc == MPI_SUCCESS && !flag) rc = MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
      return rc;
    }
    case K_ALLTOALLV:
    case K_IGATHERV: {
      /* one int per peer (the remote group's ranks on an intercommunicator) */
      static int counts[64], displs[64], out[64];
      int inter = 0, n = 0, me = 0;
      MPI_Comm_test_inter(comm, &inter);
      if (inter) MPI_Comm_remote_size(comm, &n);
      else MPI_Comm_size(comm, &n);
      MPI_Comm_rank(comm, &me);
      for (int j = 0; j < n && j < 64; ++j) counts[j] = 1, displs[j] = j;
      if (k == K_ALLTOALLV)
        return MPI_Alltoallv(counts, counts, displs, MPI_INT, out, counts, displs, MPI_INT, comm);
      int at_root = inter ? root == MPI_ROOT : me == root;
      return complete(MPI_Igatherv(&x, 1, MPI_INT, at_root ? out : NULL, counts, displs, MPI_INT, root, comm, &req),
                      &req);
    }
    case K_DUP: {
      MPI_Comm d = MPI_COMM_NULL;
      rc = MPI_Comm_dup(comm, &d);
      if (rc == MPI_SUCCESS && d != MPI_COMM_NULL) MPI_Comm_free(&d);
      return rc;
    }
  }
  return -1;
}

/* ------------------------------------------------------------------------------------------------------
 * failure_notification KIND before|during DELAY
 * ULFM 17.2.2: an operation that cannot complete because a process it involves has failed must not block;
 * it raises MPIX_ERR_PROC_FAILED (collectives included, nonblocking and persistent ones at completion),
 * whether the process died before the call or while the caller waited in it. Operations between survivors
 * that do not involve the dead process complete normally.
 * Victim: world rank 3. Point-to-point kinds: rank 0 talks to the victim; ranks 1 and 2 exchange messages
 * with each other meanwhile. Collective kinds (root = the victim): ranks 0, 1, 2 call them. */
/* The start of the subtests with a victim (the last rank): a duplicate of MPI_COMM_WORLD (work_comm) and a
 * barrier on it; then the victim dies at once or, `during`, after DELAY ms (while the survivors wait in the
 * operation they go on to). Returns the duplicate at the survivors. */
static MPI_Comm with_victim(int during, long delay) {
  MPI_Comm comm = work_comm();
  MPI_Barrier(comm);
  if (g_rank == g_size - 1) {
    if (during) sleep_ms(delay);
    die();
  }
  return comm;
}

static void failure_notification(int k, int during, long delay) {
  const int victim = g_size - 1;
  MPI_Comm comm = with_victim(during, delay);
  if (!during) sleep_ms(delay);
  if (is_p2p(k)) {
    if (g_rank == 0) {
      int rc = op(k, comm, victim, victim, 7);
      EXPECT_CLASS(rc, MPIX_ERR_PROC_FAILED, kKindNames[k]);
    } else if (g_rank == 1 || g_rank == 2) {
      int other = 3 - g_rank, x = g_rank, y = -1;
      int rc = MPI_Sendrecv(&x, 1, MPI_INT, other, 9, &y, 1, MPI_INT, other, 9, comm, MPI_STATUS_IGNORE);
      EXPECT(rc == MPI_SUCCESS && y == other, "survivor exchange: rc %s, got %d", cls_name(cls_of(rc)), y);
    }
  } else {
    int rc = op(k, comm, victim, victim, 7);
    EXPECT_CLASS(rc, MPIX_ERR_PROC_FAILED, kKindNames[k]);
  }
  pass("%s with a peer dead %s it: MPIX_ERR_PROC_FAILED", kKindNames[k], during ? "during" : "before");
  MPI_Comm_free(&comm);
}

/* ------------------------------------------------------------------------------------------------------
 * any_source_pending before|during DELAY ack|ack_failed
 * ULFM 17.2.2: a nonblocking MPI_ANY_SOURCE receive that a dead process could have matched raises
 * MPIX_ERR_PROC_FAILED_PENDING at its completion call and stays active; once the failure is acknowledged
 * (17.3.1 MPI_COMM_FAILURE_ACK, or MPIX_Comm_ack_failed) it matches a later message and no new wildcard
 * receive raises an error for that failure. Victim: rank 3; rank 1 sends after rank 0's go-ahead. */
static void any_source_pending(int during, long delay, int use_ack_failed) {
  MPI_Comm comm = with_victim(during, delay);
  if (g_rank == 0) {
    int x = -1, go = 1;
    MPI_Request req;
    MPI_Status st;
    if (!during) sleep_ms(delay);
    MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 7, comm, &req);
    int rc = MPI_Wait(&req, &st);
    EXPECT_CLASS(rc, MPIX_ERR_PROC_FAILED_PENDING, "MPI_Wait on the MPI_ANY_SOURCE receive");
    EXPECT(req != MPI_REQUEST_NULL, "the _PENDING request was completed or freed; it must stay active");
    if (use_ack_failed) {
      int acked = -1, size;
      MPI_Comm_size(comm, &size);
      rc = MPIX_Comm_ack_failed(comm, size, &acked);
      EXPECT(rc == MPI_SUCCESS && acked == 1, "MPIX_Comm_ack_failed: rc %s, %d acknowledged",
             cls_name(cls_of(rc)), acked);
    } else {
      rc = MPIX_Comm_failure_ack(comm);
      EXPECT(rc == MPI_SUCCESS, "MPIX_Comm_failure_ack returned %s", cls_name(cls_of(rc)));
    }
    MPI_Send(&go, 1, MPI_INT, 1, 8, comm);
    rc = MPI_Wait(&req, &st);
    EXPECT(rc == MPI_SUCCESS && x == 4242 && st.MPI_SOURCE == 1,
           "the pending receive after the acknowledgement: rc %s, x %d, source %d", cls_name(cls_of(rc)), x,
           st.MPI_SOURCE);
    rc = MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 9, comm, &st);
    EXPECT(rc == MPI_SUCCESS && x == 4343, "a new MPI_ANY_SOURCE receive: rc %s, x %d", cls_name(cls_of(rc)), x);
    pass("MPI_ANY_SOURCE: _PENDING, request active; matched after %s", use_ack_failed ? "ack_failed" : "failure_ack");
  } else if (g_rank == 1) {
    int go = 0, x = 4242;
    int rc = MPI_Recv(&go, 1, MPI_INT, 0, 8, comm, MPI_STATUS_IGNORE);
    EXPECT(rc == MPI_SUCCESS && go == 1, "go-ahead: rc %s", cls_name(cls_of(rc)));
    MPI_Send(&x, 1, MPI_INT, 0, 7, comm);
    x = 4343;
    MPI_Send(&x, 1, MPI_INT, 0, 9, comm);
    pass("sent after rank 0's acknowledgement");
  } else {
    pass("bystander");
  }
  MPI_Comm_free(&comm);
}

/* any_source_blocking DELAY
 * ULFM 17.2.2: a blocking MPI_ANY_SOURCE receive that a dead process could have matched cannot stay pending:
 * it raises MPIX_ERR_PROC_FAILED; after MPIX_Comm_failure_ack a blocking wildcard receive matches again. */
static void any_source_blocking(long delay) {
  const int victim = g_size - 1;
  MPI_Comm comm = work_comm();
  MPI_Barrier(comm);
  if (g_rank == victim) die();
  sleep_ms(delay);
  if (g_rank == 0) {
    int x = -1, go = 1;
    MPI_Status st;
    int rc = MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 7, comm, &st);
    EXPECT_CLASS(rc, MPIX_ERR_PROC_FAILED, "blocking MPI_Recv(MPI_ANY_SOURCE)");
    MPIX_Comm_failure_ack(comm);
    MPI_Send(&go, 1, MPI_INT, 1, 8, comm);
    rc = MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 7, comm, &st);
    EXPECT(rc == MPI_SUCCESS && x == 4242 && st.MPI_SOURCE == 1, "after failure_ack: rc %s, x %d",
           cls_name(cls_of(rc)), x);
    pass("blocking MPI_ANY_SOURCE: MPIX_ERR_PROC_FAILED, then matched after failure_ack");
  } else if (g_rank == 1) {
    int go = 0, x = 4242;
    int rc = MPI_Recv(&go, 1, MPI_INT, 0, 8, comm, MPI_STATUS_IGNORE);
    EXPECT(rc == MPI_SUCCESS, "go-ahead: rc %s", cls_name(cls_of(rc)));
    MPI_Send(&x, 1, MPI_INT, 0, 7, comm);
    pass("sent after rank 0's acknowledgement");
  } else {
    pass("bystander");
  }
  MPI_Comm_free(&comm);
}

/* ------------------------------------------------------------------------------------------------------
 * Revocation (ULFM 17.3.1 MPI_COMM_REVOKE; Open MPI 5 MPIX_Comm_revoke(3), MPIX_Comm_is_revoked(3)).
 *
 * comm_revoke KIND [VICTIM DELAY]
 * Revoke is not collective: one process calls it and every pending non-local operation on the communicator,
 * at every member, completes with MPIX_ERR_REVOKED (despite failed members when VICTIM is given); once an
 * operation raised it the communicator is revoked locally (is_revoked); agree and shrink keep their normal
 * semantics on it, and the shrunk communicator is not revoked.
 * Rank 1 revokes after 300 ms while every other survivor is blocked in KIND (a receive that no one matches,
 * a 4 MiB send that no one receives, or a collective the revoker does not join); then the revoker calls
 * KIND too; then is_revoked, agree, shrink and an allreduce on the result. */

/* The root argument of a rooted collective on make_inter's intercommunicator, rooted at rank 0 of group
 * {0,1} (MPI 4.0 6.2.2): MPI_ROOT there, MPI_PROC_NULL at its other members, 0 in the remote group. */
static int inter_root(void) { return g_rank < g_size / 2 ? (g_rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0; }

/* Creates the intercommunicator of groups {0,1} and {2,3} (MPI_ERRORS_RETURN); *local gets the group's. */
static MPI_Comm make_inter(MPI_Comm *local, int tag) {
  int low = g_rank < g_size / 2;
  MPI_Comm inter;
  MPI_Comm_split(MPI_COMM_WORLD, !low, g_rank, local);
  int rc = MPI_Intercomm_create(*local, 0, MPI_COMM_WORLD, low ? g_size / 2 : 0, tag, &inter);
  EXPECT(rc == MPI_SUCCESS, "MPI_Intercomm_create: %s", cls_name(cls_of(rc)));
  MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
  return inter;
}

/* revoked_op KIND [inter]
 * ULFM 17.3.1 MPI_COMM_REVOKE (Open MPI 5 MPIX_Comm_is_revoked(3), effect of a revocation): once a
 * communicator is revoked at a process, every later non-local operation on it is local and completes at
 * once with MPIX_ERR_REVOKED. Rank 1 revokes; every rank waits until is_revoked holds (up to 10 s, which also
 * checks the propagation), then runs KIND, which must raise MPIX_ERR_REVOKED within 2 s. With `inter`, on
 * the intercommunicator of groups {0,1} and {2,3} (the revocation crosses to the remote group). */
static void revoked_op(int k, int inter) {
  MPI_Comm local = MPI_COMM_NULL, comm = inter ? make_inter(&local, 57) : work_comm();
  int me;
  MPI_Comm_rank(comm, &me);
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank == 1) {
    int rc = MPIX_Comm_revoke(comm);
    EXPECT(rc == MPI_SUCCESS, "MPIX_Comm_revoke returned %s", cls_name(cls_of(rc)));
  }
  EXPECT(wait_revoked(comm, 10000), "MPIX_Comm_is_revoked still false 10 s after rank 1 revoked");
  int size;
  if (inter) MPI_Comm_remote_size(comm, &size);
  else MPI_Comm_size(comm, &size);
  /* point-to-point: the next rank (intercommunicator: the remote rank of the same number); root: rank 1 */
  int peer = inter ? me : (me + 1) % size;
  double t0 = now_s();
  int rc = op(k, comm, peer, inter ? inter_root() : 1, 200);
  double dt = now_s() - t0;
  trace("revoked %s -> %s", kKindNames[k], cls_name(cls_of(rc)));
  EXPECT(cls_of(rc) == MPIX_ERR_REVOKED && dt < 2.0, "%s on the revoked %scommunicator returned %s after %.2f s, "
         "expected MPIX_ERR_REVOKED at once", kKindNames[k], inter ? "inter" : "", cls_name(cls_of(rc)), dt);
  pass("%s on the revoked %scommunicator: MPIX_ERR_REVOKED in %.3f s", kKindNames[k], inter ? "inter" : "", dt);
  MPI_Comm_free(&comm);
  if (local != MPI_COMM_NULL) MPI_Comm_free(&local);
}

static void comm_revoke(int k, int victim, long delay) {
  const int revoker = 1;
  MPI_Comm comm = work_comm();
  MPI_Barrier(comm);
  if (g_rank == victim) die();
  if (victim >= 0) sleep_ms(delay);
  /* the ring of survivors: the next and previous live world rank */
  int next = g_rank, prev = g_rank;
  do next = (next + 1) % g_size; while (next == victim);
  do prev = (prev + g_size - 1) % g_size; while (prev == victim);
  int flag = -1, rc;
  MPIX_Comm_is_revoked(comm, &flag);
  EXPECT(flag == 0, "MPIX_Comm_is_revoked gave %d before any revocation", flag);

  /* phase 1: blocked in k when the revocation arrives */
  double t0 = now_s();
  if (g_rank == revoker) {
    sleep_ms(300);
    rc = MPIX_Comm_revoke(comm);
    EXPECT(rc == MPI_SUCCESS, "MPIX_Comm_revoke returned %s", cls_name(cls_of(rc)));
    MPIX_Comm_is_revoked(comm, &flag);
    EXPECT(flag == 1, "MPIX_Comm_is_revoked gave %d at the revoker", flag);
  }
  /* receives name the previous rank, sends the next one, with a tag no one matches */
  int peer = (k == K_SEND || k == K_ISEND || k == K_PSEND) ? next : prev;
  rc = op(k, comm, peer, revoker, 100);
  double dt = now_s() - t0;
  int c = cls_of(rc);
  trace("phase 1: %s -> %s", kKindNames[k], cls_name(c));
  if (victim >= 0 && !is_p2p(k)) {
    /* a collective with a dead member may report the failure first */
    EXPECT(c == MPIX_ERR_REVOKED || c == MPIX_ERR_PROC_FAILED, "%s interrupted: %s", kKindNames[k], cls_name(c));
  } else {
    EXPECT_CLASS(rc, MPIX_ERR_REVOKED, kKindNames[k]);
  }
  EXPECT(dt < 10.0, "%s returned %.1f s after it was called (the revoke came at 0.3 s)", kKindNames[k], dt);
  if (c == MPIX_ERR_REVOKED) {
    MPIX_Comm_is_revoked(comm, &flag);
    EXPECT(flag == 1, "an operation raised MPIX_ERR_REVOKED but MPIX_Comm_is_revoked gives %d", flag);
  } else {
    EXPECT(wait_revoked(comm, 10000), "the revocation did not reach this rank within 10 s");
  }

  /* then: agree, shrink */
  int bits = 0xff & ~(1 << g_rank), expect = 0xff;
  for (int r = 0; r < g_size; ++r)
    if (r != victim) expect &= ~(1 << r);
  if (victim >= 0) MPIX_Comm_failure_ack(comm); /* the flag's error is agree's own subtest */
  rc = MPIX_Comm_agree(comm, &bits);
  EXPECT(cls_of(rc) != MPIX_ERR_REVOKED, "MPIX_Comm_agree on the revoked communicator raised MPIX_ERR_REVOKED");
  EXPECT(bits == expect, "agree on the revoked communicator: flag %#x, expected %#x", (unsigned)bits,
         (unsigned)expect);
  MPI_Comm shrunk;
  rc = MPIX_Comm_shrink(comm, &shrunk);
  EXPECT(rc == MPI_SUCCESS, "MPIX_Comm_shrink on the revoked communicator returned %s", cls_name(cls_of(rc)));
  MPIX_Comm_is_revoked(shrunk, &flag);
  EXPECT(flag == 0, "the shrunk communicator is revoked");
  int size, sum = -1, expect_sum = 0;
  MPI_Comm_size(shrunk, &size);
  for (int r = 0; r < g_size; ++r)
    if (r != victim) expect_sum += r;
  rc = MPI_Allreduce(&g_rank, &sum, 1, MPI_INT, MPI_SUM, shrunk);
  EXPECT(rc == MPI_SUCCESS && size == g_size - (victim >= 0) && sum == expect_sum,
         "allreduce on the shrunk communicator: rc %s, size %d, sum %d (expected %d)", cls_name(cls_of(rc)), size,
         sum, expect_sum);
  pass("%s interrupted by the revocation (%.2f s); agree and shrink work on the revoked communicator",
       kKindNames[k], dt);
  MPI_Comm_free(&shrunk);
  MPI_Comm_free(&comm);
}

/* inter_revoke KIND
 * ULFM 17.3.1 MPI_COMM_REVOKE: on an intercommunicator the revocation reaches both groups: pending
 * operations raise MPIX_ERR_REVOKED promptly on both sides; agree's flag is the AND of the remote group's
 * contributions; shrink gives an intercommunicator of the survivors.
 * Groups {0,1} and {2,3}; rank 1 revokes after 300 ms while the others are blocked in KIND. */
static void inter_revoke(int k) {
  const int revoker = 1;
  int low = g_rank < g_size / 2, rc;
  MPI_Comm local, inter = make_inter(&local, 55);
  int lrank;
  MPI_Comm_rank(inter, &lrank);
  MPI_Barrier(MPI_COMM_WORLD);
  /* the partner: the remote rank of the same local rank */
  double t0 = now_s();
  if (g_rank == revoker) {
    sleep_ms(300);
    rc = MPIX_Comm_revoke(inter);
    EXPECT(rc == MPI_SUCCESS, "MPIX_Comm_revoke on an intercommunicator returned %s", cls_name(cls_of(rc)));
  }
  rc = op(k, inter, lrank, inter_root(), 100);
  double dt = now_s() - t0;
  trace("phase 1: %s -> %s", kKindNames[k], cls_name(cls_of(rc)));
  char what[64];
  snprintf(what, sizeof what, "%s on the intercommunicator", kKindNames[k]);
  EXPECT_CLASS(rc, MPIX_ERR_REVOKED, what);
  EXPECT(dt < 10.0, "%s returned %.1f s after it was called (the revoke came at 0.3 s)", what, dt);
  int flag = 0;
  MPIX_Comm_is_revoked(inter, &flag);
  EXPECT(flag == 1, "an operation raised MPIX_ERR_REVOKED but MPIX_Comm_is_revoked gives %d", flag);
  /* agree: the AND of the remote group's flags */
  int bits = 0xff & ~(1 << g_rank);
  int expect = low ? (0xff & ~0xc) : (0xff & ~0x3);
  rc = MPIX_Comm_agree(inter, &bits);
  EXPECT(rc == MPI_SUCCESS && bits == expect, "agree on the revoked intercommunicator: rc %s, flag %#x (expected %#x)",
         cls_name(cls_of(rc)), (unsigned)bits, (unsigned)expect);
  MPI_Comm shrunk;
  rc = MPIX_Comm_shrink(inter, &shrunk);
  EXPECT(rc == MPI_SUCCESS, "MPIX_Comm_shrink on the revoked intercommunicator returned %s", cls_name(cls_of(rc)));
  int is_inter = 0, rsize = 0, sum = -1;
  MPI_Comm_test_inter(shrunk, &is_inter);
  MPI_Comm_remote_size(shrunk, &rsize);
  EXPECT(is_inter && rsize == g_size / 2, "the shrunk intercommunicator: inter %d, remote size %d", is_inter, rsize);
  rc = MPI_Allreduce(&g_rank, &sum, 1, MPI_INT, MPI_SUM, shrunk);
  int expect_sum = low ? 2 + 3 : 0 + 1;
  EXPECT(rc == MPI_SUCCESS && sum == expect_sum, "allreduce on the shrunk intercommunicator: rc %s, sum %d (expected %d)",
         cls_name(cls_of(rc)), sum, expect_sum);
  pass("intercommunicator: %s interrupted (%.2f s) on both sides; agree and shrink work", kKindNames[k], dt);
  MPI_Comm_free(&shrunk);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
}

/* ------------------------------------------------------------------------------------------------------
 * Agreement (ULFM 17.3.1 MPI_COMM_AGREE / MPI_COMM_IAGREE; Open MPI 5 MPIX_Comm_agree(3)).
 *
 * Checks that every survivor holds the same x: AND(x) == x and AND(~x) == ~x at every survivor. */
static int agreed_same(MPI_Comm comm, int x) {
  int a = x, b = ~x;
  int rc1 = MPIX_Comm_agree(comm, &a), rc2 = MPIX_Comm_agree(comm, &b);
  EXPECT(rc1 == MPI_SUCCESS && rc2 == MPI_SUCCESS, "uniformity check: agree returned %s / %s",
         cls_name(cls_of(rc1)), cls_name(cls_of(rc2)));
  return a == x && b == ~x;
}

/* agree_uniform
 * ULFM 17.3.1: without failures the agreement sets flag, at every process, to the bitwise AND of all the
 * contributed flags; the nonblocking variant does the same at completion. */
static void agree_uniform(void) {
  MPI_Comm comm = work_comm();
  int flag = 0xff & ~(1 << g_rank), expect = 0xff & ~((1 << g_size) - 1);
  int rc = MPIX_Comm_agree(comm, &flag);
  EXPECT(rc == MPI_SUCCESS && flag == expect, "agree: rc %s, flag %#x (expected %#x)", cls_name(cls_of(rc)),
         (unsigned)flag, (unsigned)expect);
  MPI_Request req;
  flag = g_rank == 2 ? 0x5 : 0x7;
  rc = MPIX_Comm_iagree(comm, &flag, &req);
  EXPECT(rc == MPI_SUCCESS, "MPIX_Comm_iagree returned %s", cls_name(cls_of(rc)));
  rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
  EXPECT(rc == MPI_SUCCESS && flag == 0x5, "iagree: rc %s, flag %#x (expected 0x5)", cls_name(cls_of(rc)), (unsigned)flag);
  pass("agree %#x, iagree 0x5 at every rank", (unsigned)expect);
  MPI_Comm_free(&comm);
}

/* agree_dead before|during DELAY agree|iagree
 * ULFM 17.3.1: when a process died before contributing, flag is the AND of the others' contributions and
 * the agreement raises MPIX_ERR_PROC_FAILED, at every survivor alike; a following failure_ack then covers
 * every process that did not contribute (get_acked holds it at once), and the next agreement succeeds. */
static void agree_dead(int during, long delay, int nonblocking) {
  const int victim = g_size - 1;
  MPI_Comm comm = with_victim(during, delay);
  if (!during) sleep_ms(delay);
  int flag = 0xff & ~(1 << g_rank), expect = 0xff;
  for (int r = 0; r < g_size; ++r)
    if (r != victim) expect &= ~(1 << r);
  int rc;
  if (nonblocking) {
    MPI_Request req;
    rc = MPIX_Comm_iagree(comm, &flag, &req);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
  } else {
    rc = MPIX_Comm_agree(comm, &flag);
  }
  int first_cls = cls_of(rc), first_flag = flag;
  EXPECT_CLASS(rc, MPIX_ERR_PROC_FAILED, nonblocking ? "iagree with an unacknowledged dead participant"
                                                     : "agree with an unacknowledged dead participant");
  EXPECT(flag == expect, "the flag with a dead participant: %#x, expected the survivors' AND %#x", (unsigned)flag,
         (unsigned)expect);
  rc = MPIX_Comm_failure_ack(comm);
  EXPECT(rc == MPI_SUCCESS, "MPIX_Comm_failure_ack returned %s", cls_name(cls_of(rc)));
  MPI_Group acked;
  int ranks[64], n;
  MPIX_Comm_failure_get_acked(comm, &acked);
  n = group_world_ranks(acked, ranks);
  MPI_Group_free(&acked);
  EXPECT(n == 1 && ranks[0] == victim, "after the failed agree and failure_ack, get_acked holds %d ranks (first %d), "
         "expected exactly the non-contributor %d", n, n > 0 ? ranks[0] : -1, victim);
  flag = 0xff & ~(1 << g_rank);
  rc = MPIX_Comm_agree(comm, &flag);
  EXPECT(rc == MPI_SUCCESS && flag == expect, "agree after the acknowledgement: rc %s, flag %#x",
         cls_name(cls_of(rc)), (unsigned)flag);
  EXPECT(agreed_same(comm, (first_cls << 8) | first_flag), "the survivors saw different outcomes of the first agree");
  pass("%s: MPIX_ERR_PROC_FAILED with the survivors' AND %#x at every survivor; success after failure_ack",
       nonblocking ? "iagree" : "agree", (unsigned)expect);
  MPI_Comm_free(&comm);
}

/* agree_partial_ack DELAY
 * ULFM 17.3.1 (Open MPI 5 MPIX_Comm_agree(3), acknowledged failures): a dead non-contributor is excused only
 * if every survivor acknowledged it before the call; if one did not, every survivor raises
 * MPIX_ERR_PROC_FAILED (a uniform property). Ranks 0 and 1 acknowledge, rank 2 does not. */
static void agree_partial_ack(long delay) {
  const int victim = g_size - 1;
  MPI_Comm comm = work_comm();
  MPI_Barrier(comm);
  if (g_rank == victim) die();
  sleep_ms(delay);
  if (g_rank != 2) {
    /* acknowledge once the failure is known here (get_failed may lag the death: poll, progressing MPI) */
    int acked = 0;
    for (int t = 0; t < 1000 && acked < 1; ++t) {
      MPIX_Comm_failure_ack(comm);
      MPI_Group g;
      MPIX_Comm_failure_get_acked(comm, &g);
      MPI_Group_size(g, &acked);
      MPI_Group_free(&g);
      if (acked < 1) {
        int pending;
        MPI_Iprobe(MPI_ANY_SOURCE, 32000, comm, &pending, MPI_STATUS_IGNORE);
        sleep_ms(10);
      }
    }
    EXPECT(acked == 1, "the failure of rank %d was never acknowledged here (get_acked size %d)", victim, acked);
  }
  int flag = 1;
  int rc = MPIX_Comm_agree(comm, &flag);
  EXPECT_CLASS(rc, MPIX_ERR_PROC_FAILED, "agree where rank 2 has not acknowledged the failure");
  MPIX_Comm_failure_ack(comm);
  flag = 1;
  rc = MPIX_Comm_agree(comm, &flag);
  EXPECT(rc == MPI_SUCCESS && flag == 1, "agree once all acknowledged: rc %s, flag %d", cls_name(cls_of(rc)), flag);
  pass("agree raised MPIX_ERR_PROC_FAILED at every survivor while one had not acknowledged");
  MPI_Comm_free(&comm);
}

/* inter_agree
 * ULFM 17.3.1: on an intercommunicator, flag is the AND of the remote group's contributions. */
static void inter_agree(void) {
  int low = g_rank < g_size / 2;
  MPI_Comm local, inter = make_inter(&local, 56);
  int flag = 0xff & ~(1 << g_rank), expect = low ? (0xff & ~0xc) : (0xff & ~0x3);
  int rc = MPIX_Comm_agree(inter, &flag);
  EXPECT(rc == MPI_SUCCESS && flag == expect, "agree on an intercommunicator: rc %s, flag %#x (expected %#x)",
         cls_name(cls_of(rc)), (unsigned)flag, (unsigned)expect);
  pass("intercommunicator agree: %#x, the remote group's AND", (unsigned)flag);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
}

/* ------------------------------------------------------------------------------------------------------
 * Shrink (ULFM 17.3.1 MPI_COMM_SHRINK; Open MPI 5 MPIX_Comm_shrink(3)).
 *
 * comm_shrink VICTIMS|none DELAY
 * The new communicator holds every process that returns from shrink and none whose failure an operation on
 * the old one reported before the shrink, in the old rank order (a split with one color, key = old rank);
 * shrink raises neither MPIX_ERR_REVOKED nor MPIX_ERR_PROC_FAILED, also on a revoked communicator; a
 * reduction on the result is the sum of every live process's contribution. The survivors first see the
 * failures (an allreduce raises), rank 0 revokes, then all shrink. */
static void comm_shrink(unsigned victims, long delay) {
  MPI_Comm comm = work_comm();
  MPI_Barrier(comm);
  if ((victims >> g_rank) & 1) die();
  int x = g_rank, y = -1, rc;
  if (victims) {
    sleep_ms(delay);
    rc = MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm);
    /* (another survivor's revocation may overtake the failure) */
    EXPECT(cls_of(rc) == MPIX_ERR_PROC_FAILED || cls_of(rc) == MPIX_ERR_REVOKED, "allreduce with dead members: %s",
           cls_name(cls_of(rc)));
    if (g_rank == 0 || g_rank == 2) MPIX_Comm_revoke(comm);
  }
  MPI_Comm shrunk = MPI_COMM_NULL;
  rc = MPIX_Comm_shrink(comm, &shrunk);
  EXPECT(rc == MPI_SUCCESS, "MPIX_Comm_shrink returned %s", cls_name(cls_of(rc)));
  int members[64], n = world_ranks_of(shrunk, members), me = -1, expect_sum = 0, j = 0;
  MPI_Comm_rank(shrunk, &me);
  for (int r = 0; r < g_size; ++r) {
    if ((victims >> r) & 1) continue;
    expect_sum += r;
    EXPECT(j < n && members[j] == r, "member %d of the shrunk communicator is world rank %d, expected %d", j,
           j < n ? members[j] : -1, r);
    if (r == g_rank) EXPECT(me == j, "my rank in the shrunk communicator is %d, expected %d", me, j);
    ++j;
  }
  EXPECT(n == g_size - popcount(victims), "the shrunk communicator has %d members, expected %d", n,
         g_size - popcount(victims));
  int sum = -1;
  rc = MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, shrunk);
  EXPECT(rc == MPI_SUCCESS && sum == expect_sum, "allreduce on the shrunk communicator: rc %s, sum %d (expected %d)",
         cls_name(cls_of(rc)), sum, expect_sum);
  pass("shrunk to %d members in the old order; allreduce %d", n, sum);
  MPI_Comm_free(&shrunk);
  MPI_Comm_free(&comm);
}

/* ------------------------------------------------------------------------------------------------------
 * Acknowledgement (ULFM 17.3.1 MPI_COMM_FAILURE_ACK / MPI_COMM_FAILURE_GET_ACKED; FT slice 1
 * MPI_COMM_ACK_FAILED / MPI_COMM_GET_FAILED, Open MPI 5 MPIX_Comm_ack_failed(3), MPIX_Comm_get_failed(3)).
 *
 * failure_ack DELAY
 * failure_get_acked is local and returns the group of the failed processes acknowledged by failure_ack:
 * empty before any acknowledgement, then the failure this process was notified of. Rank 3 dies; rank 0
 * learns it from a receive. */
static void failure_ack(long delay) {
  const int victim = g_size - 1;
  MPI_Comm comm = work_comm();
  MPI_Group g;
  int n = -1, ranks[64];
  MPIX_Comm_failure_get_acked(comm, &g);
  MPI_Group_size(g, &n);
  MPI_Group_free(&g);
  EXPECT(n == 0, "get_acked before any failure holds %d processes", n);
  MPI_Barrier(comm);
  if (g_rank == victim) die();
  sleep_ms(delay);
  if (g_rank == 0) {
    int x;
    int rc = MPI_Recv(&x, 1, MPI_INT, victim, 7, comm, MPI_STATUS_IGNORE);
    EXPECT_CLASS(rc, MPIX_ERR_PROC_FAILED, "receive from the dead rank");
    MPIX_Comm_failure_get_acked(comm, &g);
    MPI_Group_size(g, &n);
    MPI_Group_free(&g);
    EXPECT(n == 0, "get_acked before failure_ack holds %d processes; only acknowledged ones belong there", n);
    int rc2 = MPIX_Comm_failure_ack(comm);
    EXPECT(rc2 == MPI_SUCCESS, "MPIX_Comm_failure_ack returned %s", cls_name(cls_of(rc2)));
    MPIX_Comm_failure_get_acked(comm, &g);
    n = group_world_ranks(g, ranks);
    MPI_Group_free(&g);
    EXPECT(n == 1 && ranks[0] == victim, "get_acked after failure_ack: %d processes, first %d (expected %d)", n,
           n > 0 ? ranks[0] : -1, victim);
    pass("get_acked: empty, still empty before the acknowledgement, then {%d}", victim);
  } else {
    pass("bystander");
  }
  MPI_Comm_free(&comm);
}

/* ack_failed DELAY
 * get_failed is local and returns the failed processes known here, in a stable order (an earlier group is
 * a prefix of a later one); ack_failed(num_to_ack) acknowledges the first num_to_ack of them and returns
 * the number acknowledged so far (which can exceed num_to_ack). Rank 3 dies, then rank 2 after rank 0
 * acknowledged the first failure. */
static void ack_failed(long delay) {
  MPI_Comm comm = work_comm();
  MPI_Group g;
  int n = -1, acked = -1, ranks[64], size;
  MPI_Comm_size(comm, &size);
  MPIX_Comm_get_failed(comm, &g);
  MPI_Group_size(g, &n);
  MPI_Group_free(&g);
  int rc = MPIX_Comm_ack_failed(comm, size, &acked);
  EXPECT(n == 0 && rc == MPI_SUCCESS && acked == 0, "before any failure: get_failed %d, ack_failed rc %s acked %d", n,
         cls_name(cls_of(rc)), acked);
  MPI_Barrier(comm);
  if (g_rank == 3) die();
  if (g_rank == 0) {
    sleep_ms(delay);
    int x;
    rc = MPI_Recv(&x, 1, MPI_INT, 3, 7, comm, MPI_STATUS_IGNORE);
    EXPECT_CLASS(rc, MPIX_ERR_PROC_FAILED, "receive from dead rank 3");
    MPIX_Comm_get_failed(comm, &g);
    n = group_world_ranks(g, ranks);
    MPI_Group_free(&g);
    EXPECT(n == 1 && ranks[0] == 3, "get_failed after the error: %d processes, first %d", n, n ? ranks[0] : -1);
    MPIX_Comm_ack_failed(comm, 0, &acked);
    EXPECT(acked == 0, "ack_failed(0) reports %d acknowledged", acked);
    MPIX_Comm_ack_failed(comm, size, &acked);
    EXPECT(acked == 1, "ack_failed(size) reports %d acknowledged, expected 1", acked);
    int go = 1;
    MPI_Send(&go, 1, MPI_INT, 2, 8, comm); /* rank 2 dies on receipt */
    sleep_ms(delay);
    rc = MPI_Recv(&x, 1, MPI_INT, 2, 7, comm, MPI_STATUS_IGNORE);
    EXPECT_CLASS(rc, MPIX_ERR_PROC_FAILED, "receive from dead rank 2");
    MPIX_Comm_get_failed(comm, &g);
    n = group_world_ranks(g, ranks);
    MPI_Group_free(&g);
    EXPECT(n == 2 && ranks[0] == 3 && ranks[1] == 2, "get_failed after the second failure: %d processes (%d, %d), "
           "expected 3 then 2", n, n > 0 ? ranks[0] : -1, n > 1 ? ranks[1] : -1);
    MPIX_Comm_ack_failed(comm, 1, &acked);
    EXPECT(acked == 1, "ack_failed(1) with one acknowledged and two failed reports %d, expected 1", acked);
    MPIX_Comm_ack_failed(comm, 0, &acked);
    EXPECT(acked == 1, "ack_failed(0) reports %d, expected the 1 acknowledged before", acked);
    MPIX_Comm_ack_failed(comm, 2, &acked);
    EXPECT(acked == 2, "ack_failed(2) reports %d, expected 2", acked);
    /* acknowledged: a wildcard receive is not interrupted by them */
    MPI_Send(&go, 1, MPI_INT, 1, 8, comm);
    rc = MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 9, comm, MPI_STATUS_IGNORE);
    EXPECT(rc == MPI_SUCCESS && x == 4242, "wildcard receive after ack_failed: rc %s, x %d", cls_name(cls_of(rc)), x);
    pass("get_failed {3} then {3,2}; ack_failed 0/1/1/1/2");
  } else if (g_rank == 2) {
    int go;
    MPI_Recv(&go, 1, MPI_INT, 0, 8, comm, MPI_STATUS_IGNORE);
    die();
  } else {
    int go = 0, x = 4242;
    rc = MPI_Recv(&go, 1, MPI_INT, 0, 8, comm, MPI_STATUS_IGNORE);
    EXPECT(rc == MPI_SUCCESS, "go-ahead: rc %s", cls_name(cls_of(rc)));
    MPI_Send(&x, 1, MPI_INT, 0, 9, comm);
    pass("sent after rank 0's acknowledgements");
  }
  MPI_Comm_free(&comm);
}

/* ------------------------------------------------------------------------------------------------------
 * Error handlers and finalize.
 *
 * finalize VICTIM|none DELAY
 * ULFM 17.2.1: MPI_Finalize completes at the surviving processes despite failures; it is not an operation
 * that reports them to MPI_COMM_WORLD's error handler. Every rank installs a handler that counts its
 * calls; the survivors see the failure (a receive raises), then finalize. */
static volatile int g_handler_calls;
static volatile int g_in_finalize;
static void counting_handler(MPI_Comm *comm, int *code, ...) {
  (void)comm;
  ++g_handler_calls;
  if (g_in_finalize) {
    char line[160];
    int n = snprintf(line, sizeof line, "cohort-test: rank %d FAIL MPI_Finalize called MPI_COMM_WORLD's error "
                     "handler (code %d)\n", g_rank, *code);
    if (write(1, line, (size_t)n) < 0) {
    }
    _exit(1);
  }
}
static void finalize_test(int victim, long delay) {
  MPI_Errhandler eh;
  MPI_Comm_create_errhandler(counting_handler, &eh);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank == victim) die();
  if (victim >= 0) {
    sleep_ms(delay);
    if (g_rank == 0) {
      int x;
      int rc = MPI_Recv(&x, 1, MPI_INT, victim, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      EXPECT_CLASS(rc, MPIX_ERR_PROC_FAILED, "receive from the dead rank");
      EXPECT(g_handler_calls == 1, "the handler was called %d times for the failed receive", g_handler_calls);
    }
  }
  g_in_finalize = 1;
  int rc = MPI_Finalize();
  g_in_finalize = 0;
  EXPECT(rc == MPI_SUCCESS, "MPI_Finalize returned %d", rc);
  pass("MPI_Finalize returned MPI_SUCCESS without calling the error handler%s", victim >= 0 ? " (a rank dead)" : "");
  exit(0);
}

/* errhandler_mixed
 * ULFM 17.2 (the error handler decides, per communicator and process, whether an error is returned): a
 * process that sets MPI_ERRORS_RETURN while the others keep MPI_ERRORS_ARE_FATAL changes nothing without a
 * failure: every collective on MPI_COMM_WORLD completes normally at every rank. Only rank 0 sets it. */
static void errhandler_mixed(void) {
  if (g_rank == 0) MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int sum = -1, x = g_rank, b = g_rank == 0 ? 77 : -1;
  for (int i = 0; i < 3; ++i) {
    trace("barrier %d", i);
    EXPECT(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS, "barrier %d", i);
  }
  trace("allreduce");
  int rc = MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  EXPECT(rc == MPI_SUCCESS && sum == g_size * (g_size - 1) / 2, "allreduce: rc %d, sum %d", rc, sum);
  rc = MPI_Bcast(&b, 1, MPI_INT, 0, MPI_COMM_WORLD);
  EXPECT(rc == MPI_SUCCESS && b == 77, "bcast: rc %d, value %d", rc, b);
  MPI_Comm d;
  rc = MPI_Comm_dup(MPI_COMM_WORLD, &d);
  EXPECT(rc == MPI_SUCCESS, "dup: rc %d", rc);
  EXPECT(MPI_Barrier(d) == MPI_SUCCESS, "barrier on the duplicate");
  MPI_Comm_free(&d);
  pass("MPI_ERRORS_RETURN on rank 0 only: barriers, allreduce, bcast, dup complete");
}

/* error_code DELAY
 * Issue 35 item 8 (beyond the chapter, which speaks of classes): the code returned equals the class
 * constant itself, so that `rc == MPIX_ERR_PROC_FAILED` holds, as it does in Open MPI 5. Rank 3 dies; rank 0
 * receives from it; all survivors then run a barrier; rank 1 revokes a second communicator and all run a
 * barrier on it. */
static void error_code(long delay) {
  const int victim = g_size - 1;
  MPI_Comm comm = work_comm(), other = work_comm(); /* the revocation goes to the other one */
  MPI_Barrier(comm);
  if (g_rank == victim) die();
  sleep_ms(delay);
  int x, rc;
  if (g_rank == 0) {
    rc = MPI_Recv(&x, 1, MPI_INT, victim, 7, comm, MPI_STATUS_IGNORE);
    EXPECT(rc == MPIX_ERR_PROC_FAILED, "receive from a dead rank: code %d (class %s); MPIX_ERR_PROC_FAILED is %d", rc,
           cls_name(cls_of(rc)), MPIX_ERR_PROC_FAILED);
  }
  rc = MPI_Barrier(comm);
  EXPECT(rc == MPIX_ERR_PROC_FAILED, "barrier with a dead member: code %d (class %s); MPIX_ERR_PROC_FAILED is %d", rc,
         cls_name(cls_of(rc)), MPIX_ERR_PROC_FAILED);
  if (g_rank == 1) MPIX_Comm_revoke(other);
  rc = MPI_Barrier(other);
  EXPECT(rc == MPIX_ERR_REVOKED || rc == MPIX_ERR_PROC_FAILED,
         "barrier on the revoked communicator: code %d (class %s); MPIX_ERR_REVOKED is %d", rc, cls_name(cls_of(rc)),
         MPIX_ERR_REVOKED);
  pass("codes equal the class constants");
  MPI_Comm_free(&other);
  MPI_Comm_free(&comm);
}

/* ft_attribute
 * Open MPI 5's ftmpi extension (the attribute the FT chapter proposes): MPI_COMM_WORLD carries the
 * predefined attribute MPIX_FT, true when the run tolerates process failures. */
static void ft_attribute(void) {
#ifdef MPIX_FT
  int *value = NULL, found = 0;
  int rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPIX_FT, &value, &found);
  EXPECT(rc == MPI_SUCCESS && found && value && *value, "MPIX_FT on MPI_COMM_WORLD: rc %d, found %d, value %d", rc,
         found, value ? *value : -1);
  pass("MPIX_FT is set on MPI_COMM_WORLD");
#else
  fail_at(__LINE__, "MPIX_FT is not defined by the headers (the attribute is not provided)");
#endif
}

/* mpi5_names
 * FT slice 1 (mpi-issues #581): the chapter's names without X: the classes MPI_ERR_PROC_FAILED,
 * MPI_ERR_PROC_FAILED_PENDING, MPI_ERR_REVOKED (equal to the MPIX_ ones) and the procedures MPI_Comm_revoke,
 * MPI_Comm_is_revoked, MPI_Comm_get_failed, MPI_Comm_ack_failed (and MPI_Comm_agree, MPI_Comm_shrink of the
 * later slices). Declared weak here, so that the test builds before the headers provide them and reports
 * each missing one. */
int MPI_Comm_revoke(MPI_Comm) __attribute__((weak));
int MPI_Comm_is_revoked(MPI_Comm, int *) __attribute__((weak));
int MPI_Comm_get_failed(MPI_Comm, MPI_Group *) __attribute__((weak));
int MPI_Comm_ack_failed(MPI_Comm, int, int *) __attribute__((weak));
int MPI_Comm_agree(MPI_Comm, int *) __attribute__((weak));
int MPI_Comm_shrink(MPI_Comm, MPI_Comm *) __attribute__((weak));
static void mpi5_names(void) {
  char missing[256] = "";
#if defined(MPI_ERR_PROC_FAILED) && defined(MPI_ERR_PROC_FAILED_PENDING) && defined(MPI_ERR_REVOKED)
  EXPECT(cls_of(MPI_ERR_PROC_FAILED) == MPIX_ERR_PROC_FAILED && cls_of(MPI_ERR_REVOKED) == MPIX_ERR_REVOKED &&
         cls_of(MPI_ERR_PROC_FAILED_PENDING) == MPIX_ERR_PROC_FAILED_PENDING,
         "the MPI_ERR_* classes differ from the MPIX_ERR_* ones");
#else
  strcat(missing, " MPI_ERR_PROC_FAILED/_PENDING/MPI_ERR_REVOKED");
#endif
  if (!MPI_Comm_revoke) strcat(missing, " MPI_Comm_revoke");
  if (!MPI_Comm_is_revoked) strcat(missing, " MPI_Comm_is_revoked");
  if (!MPI_Comm_get_failed) strcat(missing, " MPI_Comm_get_failed");
  if (!MPI_Comm_ack_failed) strcat(missing, " MPI_Comm_ack_failed");
  if (!MPI_Comm_agree) strcat(missing, " MPI_Comm_agree");
  if (!MPI_Comm_shrink) strcat(missing, " MPI_Comm_shrink");
  EXPECT(!missing[0], "not provided:%s", missing);
  MPI_Comm comm = work_comm(), shrunk;
  int flag = -1, acked = -1, size = -1;
  MPI_Group g;
  EXPECT(MPI_Comm_is_revoked(comm, &flag) == MPI_SUCCESS && flag == 0, "MPI_Comm_is_revoked: %d", flag);
  EXPECT(MPI_Comm_get_failed(comm, &g) == MPI_SUCCESS, "MPI_Comm_get_failed");
  MPI_Group_size(g, &size);
  MPI_Group_free(&g);
  EXPECT(size == 0 && MPI_Comm_ack_failed(comm, 4, &acked) == MPI_SUCCESS && acked == 0, "get_failed/ack_failed");
  flag = 1;
  EXPECT(MPI_Comm_agree(comm, &flag) == MPI_SUCCESS && flag == 1, "MPI_Comm_agree");
  if (g_rank == 0) MPI_Comm_revoke(comm);
  EXPECT(cls_of(MPI_Barrier(comm)) == MPIX_ERR_REVOKED, "barrier after MPI_Comm_revoke");
  EXPECT(MPI_Comm_shrink(comm, &shrunk) == MPI_SUCCESS, "MPI_Comm_shrink");
  MPI_Comm_size(shrunk, &size);
  EXPECT(size == g_size, "shrunk size %d", size);
  MPI_Comm_free(&shrunk);
  MPI_Comm_free(&comm);
  pass("MPI-5 names present and working");
}

/* ------------------------------------------------------------------------------------------------------
 * stress revoke|agree|shrink ROUNDS [VICTIM@ROUND ...]
 * Issue 35's stress variants of 17.3.1: each repair call in a loop, every round with a 4 MiB MPI_Isend and
 * MPI_Irecv pending around a ring of the current communicator, with and without deaths.
 *   revoke: round r's rank (r mod size) revokes after posting; every rank waits for both requests (success
 *           or an error, never a crash or a hang: issue item 3), then all shrink and go on;
 *   agree:  an agreement while the requests are pending, then the waits; a round that failed anywhere
 *           (agreed) revokes and shrinks;
 *   shrink: a shrink while the requests are pending, then the waits.
 * After each shrink, an allreduce on the new communicator must give the sum of its members' world ranks;
 * at the end its size is the number of survivors. */
static void stress(const char *mode, int rounds, int nvictims, const int *victim, const int *at) {
  MPI_Comm comm = work_comm();
  int shrinks = 0, interrupted = 0;
  for (int round = 0; round < rounds; ++round) {
    for (int i = 0; i < nvictims; ++i)
      if (victim[i] == g_rank && at[i] == round) die();
    int me, size;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &size);
    g_big_send[0] = g_rank;
    g_big_send[kBigCount - 1] = round;
    g_big_recv[0] = g_big_recv[kBigCount - 1] = -1;
    MPI_Request rq[2];
    int rc_s = MPI_Isend(g_big_send, kBigCount, MPI_INT, (me + 1) % size, round, comm, &rq[0]);
    int rc_r = MPI_Irecv(g_big_recv, kBigCount, MPI_INT, (me + size - 1) % size, round, comm, &rq[1]);
    int ok = 1, rc;
    int need_shrink = 0;
    if (!strcmp(mode, "revoke")) {
      if (me == round % size) MPIX_Comm_revoke(comm);
      need_shrink = 1;
    } else if (!strcmp(mode, "agree")) {
      int flag = 1;
      rc = MPIX_Comm_agree(comm, &flag);
      EXPECT(rc == MPI_SUCCESS || cls_of(rc) == MPIX_ERR_PROC_FAILED, "round %d: agree returned %s", round,
             cls_name(cls_of(rc)));
      if (rc != MPI_SUCCESS) MPIX_Comm_failure_ack(comm);
      if (rc != MPI_SUCCESS) ok = 0;
    } else if (!strcmp(mode, "shrink")) {
      MPI_Comm next;
      rc = MPIX_Comm_shrink(comm, &next);
      EXPECT(rc == MPI_SUCCESS, "round %d: shrink with pending requests returned %s", round, cls_name(cls_of(rc)));
      /* the requests stay on the old communicator; it is freed after them */
      MPI_Comm old = comm;
      comm = next;
      ++shrinks;
      int rcs = rc_s == MPI_SUCCESS ? MPI_Wait(&rq[0], MPI_STATUS_IGNORE) : rc_s;
      int rcr = rc_r == MPI_SUCCESS ? MPI_Wait(&rq[1], MPI_STATUS_IGNORE) : rc_r;
      if (rcs != MPI_SUCCESS || rcr != MPI_SUCCESS) ++interrupted;
      MPI_Comm_free(&old);
      goto check;
    } else {
      fail_at(__LINE__, "unknown stress mode %s", mode);
    }
    {
      int rcs = rc_s == MPI_SUCCESS ? MPI_Wait(&rq[0], MPI_STATUS_IGNORE) : rc_s;
      int rcr = rc_r == MPI_SUCCESS ? MPI_Wait(&rq[1], MPI_STATUS_IGNORE) : rc_r;
      int cs = cls_of(rcs), cr = cls_of(rcr);
      EXPECT((cs == MPI_SUCCESS || cs == MPIX_ERR_REVOKED || cs == MPIX_ERR_PROC_FAILED) &&
             (cr == MPI_SUCCESS || cr == MPIX_ERR_REVOKED || cr == MPIX_ERR_PROC_FAILED),
             "round %d: the pending send/receive completed with %s / %s", round, cls_name(cs), cls_name(cr));
      if (cr == MPI_SUCCESS) {
        EXPECT(g_big_recv[kBigCount - 1] == round, "round %d: received data of round %d", round,
               g_big_recv[kBigCount - 1]);
      }
      if (cs != MPI_SUCCESS || cr != MPI_SUCCESS) {
        ++interrupted;
        ok = 0;
      }
    }
    if (!need_shrink) {
      int flag = ok;
      rc = MPIX_Comm_agree(comm, &flag);
      if (rc != MPI_SUCCESS) {
        MPIX_Comm_failure_ack(comm);
        flag = 0;
      }
      need_shrink = !flag;
    }
    if (need_shrink) {
      MPIX_Comm_revoke(comm);
      MPI_Comm next;
      rc = MPIX_Comm_shrink(comm, &next);
      EXPECT(rc == MPI_SUCCESS, "round %d: shrink returned %s", round, cls_name(cls_of(rc)));
      MPI_Comm_free(&comm);
      comm = next;
      ++shrinks;
    }
  check:
    for (;;) { /* the new communicator works: its allreduce sums its members' world ranks */
      int members[64], n = world_ranks_of(comm, members), expect = 0, sum = -1;
      for (int i = 0; i < n; ++i) expect += members[i];
      rc = MPI_Allreduce(&g_rank, &sum, 1, MPI_INT, MPI_SUM, comm);
      int flag = rc == MPI_SUCCESS && sum == expect;
      EXPECT(rc == MPI_SUCCESS || cls_of(rc) == MPIX_ERR_PROC_FAILED || cls_of(rc) == MPIX_ERR_REVOKED,
             "round %d: allreduce on the new communicator returned %s", round, cls_name(cls_of(rc)));
      EXPECT(rc != MPI_SUCCESS || sum == expect, "round %d: allreduce %d over %d members, expected %d", round, sum, n,
             expect);
      int arc = MPIX_Comm_agree(comm, &flag);
      if (arc == MPI_SUCCESS && flag) break;
      /* a death the shrink did not yet exclude: repair again */
      MPIX_Comm_failure_ack(comm);
      MPIX_Comm_revoke(comm);
      MPI_Comm next;
      rc = MPIX_Comm_shrink(comm, &next);
      EXPECT(rc == MPI_SUCCESS, "round %d: repair shrink returned %s", round, cls_name(cls_of(rc)));
      MPI_Comm_free(&comm);
      comm = next;
      ++shrinks;
    }
  }
  int size;
  MPI_Comm_size(comm, &size);
  EXPECT(size == g_size - nvictims, "final size %d, expected %d", size, g_size - nvictims);
  pass("stress %s: %d rounds, %d shrinks, %d rounds with an interrupted request, final size %d", mode, rounds, shrinks,
       interrupted, size);
  MPI_Comm_free(&comm);
}

/* ------------------------------------------------------------------------------------------------------ */
static long arg_ms(int argc, char **argv, int i, long dflt) { return argc > i ? atol(argv[i]) : dflt; }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  EXPECT(argc >= 2, "usage: ulfm_conformance SUBTEST [ARGS...] (see the header of conformance.c)");
  EXPECT(g_size == 4, "run on 4 ranks (%d)", g_size);
  const char *t = argv[1];
  g_big_send = calloc(kBigCount, sizeof(int));
  g_big_recv = calloc(kBigCount, sizeof(int));
  /* the finalize and mixed-handler subtests set their own handlers */
  if (strcmp(t, "finalize") && strcmp(t, "errhandler_mixed")) MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (!strcmp(t, "failure_notification") && argc >= 4) {
    failure_notification(kind_of(argv[2]), !strcmp(argv[3], "during"), arg_ms(argc, argv, 4, 1000));
  } else if (!strcmp(t, "any_source_pending") && argc >= 3) {
    any_source_pending(!strcmp(argv[2], "during"), arg_ms(argc, argv, 3, 1000), argc > 4 && !strcmp(argv[4], "ack_failed"));
  } else if (!strcmp(t, "any_source_blocking")) {
    any_source_blocking(arg_ms(argc, argv, 2, 1000));
  } else if (!strcmp(t, "comm_revoke") && argc >= 3) {
    comm_revoke(kind_of(argv[2]), argc > 3 ? atoi(argv[3]) : -1, arg_ms(argc, argv, 4, 1000));
  } else if (!strcmp(t, "revoked_op") && argc >= 3) {
    revoked_op(kind_of(argv[2]), argc > 3 && !strcmp(argv[3], "inter"));
  } else if (!strcmp(t, "inter_revoke") && argc >= 3) {
    inter_revoke(kind_of(argv[2]));
  } else if (!strcmp(t, "agree_uniform")) {
    agree_uniform();
  } else if (!strcmp(t, "agree_dead") && argc >= 3) {
    agree_dead(!strcmp(argv[2], "during"), arg_ms(argc, argv, 3, 1000), argc > 4 && !strcmp(argv[4], "iagree"));
  } else if (!strcmp(t, "agree_partial_ack")) {
    agree_partial_ack(arg_ms(argc, argv, 2, 1000));
  } else if (!strcmp(t, "inter_agree")) {
    inter_agree();
  } else if (!strcmp(t, "comm_shrink") && argc >= 3) {
    comm_shrink(strcmp(argv[2], "none") ? parse_mask(argv[2]) : 0, arg_ms(argc, argv, 3, 1000));
  } else if (!strcmp(t, "failure_ack")) {
    failure_ack(arg_ms(argc, argv, 2, 1000));
  } else if (!strcmp(t, "ack_failed")) {
    ack_failed(arg_ms(argc, argv, 2, 1000));
  } else if (!strcmp(t, "finalize") && argc >= 3) {
    finalize_test(strcmp(argv[2], "none") ? atoi(argv[2]) : -1, arg_ms(argc, argv, 3, 1000));
  } else if (!strcmp(t, "errhandler_mixed")) {
    errhandler_mixed();
  } else if (!strcmp(t, "error_code")) {
    error_code(arg_ms(argc, argv, 2, 1000));
  } else if (!strcmp(t, "ft_attribute")) {
    ft_attribute();
  } else if (!strcmp(t, "mpi5_names")) {
    mpi5_names();
  } else if (!strcmp(t, "stress") && argc >= 4) {
    int victim[8], at[8], n = 0;
    for (int i = 4; i < argc && n < 8; ++i, ++n) {
      victim[n] = atoi(argv[i]);
      const char *a = strchr(argv[i], '@');
      EXPECT(a, "stress: victims are VICTIM@ROUND, not '%s'", argv[i]);
      at[n] = atoi(a + 1);
    }
    stress(argv[2], atoi(argv[3]), n, victim, at);
  } else {
    fail_at(__LINE__, "unknown subtest or missing arguments: %s", t);
  }
  ulfm_test_finalize();
  return 0;
}
