/* The Sessions model (MPI 4.0 section 11.3) under cohort: a program that starts MPI with MPI_Session_init,
 * twice (11.3.1), finds the process sets mpi://WORLD and mpi://SELF (11.3.2) with the runtime queries
 * MPI_Session_get_num_psets, _nth_pset, _get_pset_info and _get_info (11.3.3), and builds its
 * communicators with MPI_Group_from_session_pset (7.3.2) and MPI_Comm_create_from_group and its string tag
 * (7.4.2), alone or beside MPI_Init (11.3: both models in one program), survives a dead rank: the survivors
 * finish their loops of MPI_Allreduce, MPI_Bcast and a point-to-point ring with the sums over the live
 * ranks, then MPI_Session_finalize (11.3.1) returns.
 *   session nofail          Sessions only (MPI_Initialized stays 0): two sessions, a communicator from
 *                           mpi://WORLD, two more with other string tags, one from mpi://SELF; no death
 *   session kill R          the same; rank R dies by SIGKILL at the start of iteration 3
 *   session init_killed R   the same; rank R is killed by COHORT_INJECT_FAILURE=rank=R,at=init.done, before
 *                           the communicator exists: it holds the live ranks only (renumbered)
 *   session mixed R         MPI_Init_thread first, then a session; the loops run on MPI_COMM_WORLD and on the
 *                           session's communicator; R dies as in kill (R = - : nobody); MPI_Session_finalize,
 *                           then MPI_Finalize
 *   session mixed_session_first R   MPI_Session_init first, then MPI_Init; MPI_Finalize, then
 *                           MPI_Session_finalize (the MPI library's finalize waits for the last of them)
 * Each rank that checked everything prints `cohort-test: rank R PASS` (R: its rank in mpi://WORLD). */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int g_rank = -1; /* rank in the process set mpi://WORLD */

static void line(const char *text) {
  char buf[1024];
  int n = snprintf(buf, sizeof buf, "cohort-test: rank %d %s\n", g_rank, text);
  fflush(stdout);
  if (write(1, buf, (size_t)n) < 0) {
  }
}

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      char d_[700], m_[900];                                                   \
      snprintf(d_, sizeof d_, __VA_ARGS__);                                    \
      snprintf(m_, sizeof m_, "FAIL %s:%d: %s: %s", __FILE__, __LINE__, #cond, d_); \
      line(m_);                                                                \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

enum { kIters = 8, kKillAt = 3 };

static int g_dead_from = kKillAt;
static int is_dead(int r, int victim, int it) { return victim >= 0 && r == victim && it >= g_dead_from; }

/* One communicator's loops: rank `victim` (-1: nobody) dies at the start of iteration `dead_from` (0: it is
 * dead already, in a communicator made while it was alive). */
static void loops(MPI_Comm comm, int victim, int dead_from, const char *what) {
  g_dead_from = dead_from;
  int rank, size;
  CHECK(MPI_Comm_rank(comm, &rank) == MPI_SUCCESS, "%s: MPI_Comm_rank", what);
  CHECK(MPI_Comm_size(comm, &size) == MPI_SUCCESS, "%s: MPI_Comm_size", what);
  for (int it = 0; it < kIters; ++it) {
    if (victim == rank && it == dead_from) raise(SIGKILL);
    long mine = rank + 1 + 100L * it, sum = -1, want = 0;
    for (int r = 0; r < size; ++r) want += is_dead(r, victim, it) ? 0 : r + 1 + 100L * it;
    CHECK(MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, comm) == MPI_SUCCESS, "%s: MPI_Allreduce", what);
    CHECK(sum == want, "%s: iteration %d: MPI_Allreduce gave %ld, the live ranks' sum is %ld", what, it, sum, want);
    double dm = rank, dmax = -1, dwant = -1;
    for (int r = 0; r < size; ++r) dwant = is_dead(r, victim, it) ? dwant : r;
    CHECK(MPI_Allreduce(&dm, &dmax, 1, MPI_DOUBLE, MPI_MAX, comm) == MPI_SUCCESS, "%s: MPI_Allreduce MAX", what);
    CHECK(dmax == dwant, "%s: iteration %d: MPI_MAX gave %g, the highest live rank is %g", what, it, dmax, dwant);
    long b = rank == 0 ? 7000 + it : -1;
    CHECK(MPI_Bcast(&b, 1, MPI_LONG, 0, comm) == MPI_SUCCESS, "%s: MPI_Bcast", what);
    CHECK(b == 7000 + it, "%s: iteration %d: MPI_Bcast gave %ld", what, it, b);
    /* A ring over the live ranks: each sends its rank to the next live one, receives from the previous. */
    int next = rank, prev = rank;
    do next = (next + 1) % size; while (is_dead(next, victim, it));
    do prev = (prev + size - 1) % size; while (is_dead(prev, victim, it));
    long out = 1000L * it + rank, in = -1;
    MPI_Request rq[2];
    CHECK(MPI_Irecv(&in, 1, MPI_LONG, prev, 5, comm, &rq[0]) == MPI_SUCCESS, "%s: MPI_Irecv", what);
    CHECK(MPI_Isend(&out, 1, MPI_LONG, next, 5, comm, &rq[1]) == MPI_SUCCESS, "%s: MPI_Isend", what);
    MPI_Status st[2];
    CHECK(MPI_Waitall(2, rq, st) == MPI_SUCCESS, "%s: MPI_Waitall", what);
    CHECK(in == 1000L * it + prev, "%s: iteration %d: received %ld from rank %d", what, it, in, prev);
    long got = -1;
    CHECK(MPI_Sendrecv(&out, 1, MPI_LONG, next, 6, &got, 1, MPI_LONG, prev, 6, comm, MPI_STATUS_IGNORE) == MPI_SUCCESS,
          "%s: MPI_Sendrecv", what);
    CHECK(got == 1000L * it + prev, "%s: iteration %d: MPI_Sendrecv received %ld", what, it, got);
  }
  CHECK(MPI_Barrier(comm) == MPI_SUCCESS, "%s: MPI_Barrier", what);
}

/* The process sets (sections 11.3.2, 11.3.3): mpi://WORLD and mpi://SELF are there; mpi_size of WORLD. */
static void check_psets(MPI_Session s, int world_size) {
  int n = 0, world = 0, self = 0;
  CHECK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n) == MPI_SUCCESS && n >= 2, "%d process sets", n);
  for (int i = 0; i < n; ++i) {
    char name[256];
    int len = (int)sizeof name;
    CHECK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name) == MPI_SUCCESS, "MPI_Session_get_nth_pset %d", i);
    world |= strcmp(name, "mpi://WORLD") == 0;
    self |= strcmp(name, "mpi://SELF") == 0;
  }
  CHECK(world && self, "mpi://WORLD %d, mpi://SELF %d among %d process sets", world, self, n);
  MPI_Info info;
  char v[32];
  int flag = 0;
  CHECK(MPI_Session_get_pset_info(s, "mpi://WORLD", &info) == MPI_SUCCESS, "MPI_Session_get_pset_info");
  CHECK(MPI_Info_get(info, "mpi_size", (int)sizeof v - 1, v, &flag) == MPI_SUCCESS && flag, "no mpi_size");
  CHECK(world_size < 0 || atoi(v) == world_size, "mpi://WORLD's mpi_size %s, not %d", v, world_size);
  MPI_Info_free(&info);
  CHECK(MPI_Session_get_info(s, &info) == MPI_SUCCESS && info != MPI_INFO_NULL, "MPI_Session_get_info");
  MPI_Info_free(&info);
}

static MPI_Comm from_pset(MPI_Session s, const char *pset, const char *tag) {
  MPI_Group g;
  MPI_Comm c = MPI_COMM_NULL;
  CHECK(MPI_Group_from_session_pset(s, pset, &g) == MPI_SUCCESS, "MPI_Group_from_session_pset %s", pset);
  CHECK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c) == MPI_SUCCESS,
        "MPI_Comm_create_from_group %s %s", pset, tag);
  MPI_Group_free(&g);
  return c;
}

static MPI_Session open_session(void) {
  MPI_Session s = MPI_SESSION_NULL;
  CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s) == MPI_SUCCESS, "MPI_Session_init");
  return s;
}

static int victim_arg(int argc, char **argv) { return argc > 2 && strcmp(argv[2], "-") != 0 ? atoi(argv[2]) : -1; }

static void sessions_only(const char *mode, int victim) {
  int init_killed = strcmp(mode, "init_killed") == 0;
  MPI_Session s = open_session();
  MPI_Session s2 = open_session(); /* a second session: cohort started at the first */
  int flag = -1;
  MPI_Initialized(&flag);
  CHECK(flag == 0, "MPI_Initialized gave %d under the Sessions model alone", flag);
  check_psets(s, -1);
  check_psets(s2, -1);
  MPI_Group wg;
  CHECK(MPI_Group_from_session_pset(s, "mpi://WORLD", &wg) == MPI_SUCCESS, "MPI_Group_from_session_pset");
  MPI_Group_rank(wg, &g_rank);
  MPI_Group_free(&wg);
  MPI_Comm world = from_pset(s, "mpi://WORLD", "org.cohort.test.world");
  int size;
  MPI_Comm_size(world, &size);
  if (init_killed) {
    /* The creation ran over the live ranks: the dead one is not a member (section 7.4.2 under cohort). */
    MPI_Info info;
    char v[32];
    int f = 0;
    MPI_Session_get_pset_info(s, "mpi://WORLD", &info);
    MPI_Info_get(info, "mpi_size", (int)sizeof v - 1, v, &f);
    MPI_Info_free(&info);
    CHECK(size == atoi(v) - 1, "size %d after rank %d died at init, mpi_size %s", size, victim, v);
    victim = -1;
  }
  /* String tags (section 7.4.2): two more communicators from the same group, each with its own tag, and
   * the first tag again once its creation has completed; one from the second session. */
  MPI_Comm other = from_pset(s, "mpi://WORLD", "org.cohort.test.other");
  MPI_Comm again = from_pset(s, "mpi://WORLD", "org.cohort.test.world");
  MPI_Comm in_s2 = from_pset(s2, "mpi://WORLD", "org.cohort.test.world");
  MPI_Comm self = from_pset(s, "mpi://SELF", "org.cohort.test.self");
  int one = 0;
  MPI_Comm_size(self, &one);
  CHECK(one == 1, "the communicator of mpi://SELF has size %d", one);
  loops(world, victim, kKillAt, "mpi://WORLD");
  loops(other, victim, 0, "second tag");
  loops(again, victim, 0, "first tag again");
  loops(in_s2, victim, 0, "second session");
  loops(self, -1, 0, "mpi://SELF");
  MPI_Comm_free(&self);
  MPI_Comm_free(&other);
  MPI_Comm_free(&again);
  MPI_Comm_free(&in_s2);
  MPI_Comm_free(&world);
  CHECK(MPI_Session_finalize(&s2) == MPI_SUCCESS, "MPI_Session_finalize of the second session");
  CHECK(MPI_Session_finalize(&s) == MPI_SUCCESS, "MPI_Session_finalize");
  CHECK(s == MPI_SESSION_NULL, "MPI_Session_finalize left the handle");
  line("PASS");
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "nofail";
  int victim = victim_arg(argc, argv);
  if (strcmp(mode, "mixed") == 0 || strcmp(mode, "mixed_session_first") == 0) {
    int session_first = strcmp(mode, "mixed_session_first") == 0, provided = 0;
    MPI_Session s = MPI_SESSION_NULL;
    if (session_first) s = open_session();
    CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) == MPI_SUCCESS, "MPI_Init_thread");
    if (!session_first) s = open_session();
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    int n = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    check_psets(s, n);
    MPI_Comm c = from_pset(s, "mpi://WORLD", "org.cohort.test.mixed");
    int cr = -1;
    MPI_Comm_rank(c, &cr);
    CHECK(cr == g_rank, "rank %d in the session's communicator, %d in MPI_COMM_WORLD", cr, g_rank);
    loops(MPI_COMM_WORLD, victim, kKillAt, "MPI_COMM_WORLD");
    loops(c, victim, 0, "session communicator");
    MPI_Comm_free(&c);
    if (session_first) {
      CHECK(MPI_Finalize() == MPI_SUCCESS, "MPI_Finalize");
      CHECK(MPI_Session_finalize(&s) == MPI_SUCCESS, "MPI_Session_finalize");
    } else {
      CHECK(MPI_Session_finalize(&s) == MPI_SUCCESS, "MPI_Session_finalize");
      CHECK(MPI_Finalize() == MPI_SUCCESS, "MPI_Finalize");
    }
    line("PASS");
    return 0;
  }
  CHECK(strcmp(mode, "nofail") == 0 || strcmp(mode, "kill") == 0 || strcmp(mode, "init_killed") == 0,
        "unknown mode %s", mode);
  sessions_only(mode, victim);
  return 0;
}
