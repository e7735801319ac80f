/* One-sided communication through cohort: fault-free equivalence with the raw calls, and fence
 * and lock epochs with ranks killed before and during them; every survivor checks its window.
 *
 *   win_faults equiv
 *       the same RMA sequence (Win_allocate and Win_create; fence, lock, lock_all; Put, Get, Accumulate,
 *       Get_accumulate, Fetch_and_op, Compare_and_swap, Rput, Rget, Raccumulate, Rget_accumulate) on
 *       MPI_COMM_WORLD (protected) and on a communicator cohort did not create (raw MPI): the same window
 *       contents and results at every rank;
 *       then, through cohort only, fence epochs with a bulk put, puts to oneself and MPI_PROC_NULL, atomics,
 *       fetches and MPI_NO_OP, checked against the values MPI defines.
 *   win_faults MODE STEP...
 *     MODE   fence | lock, or fence_known | lock_known: the survivors pass an MPI_Barrier after a
 *            "before" kill, and before the step that follows a "during" kill, so that they know the dead
 *            before their RMA calls (RMA to a rank that died but is not yet known dead can hang: README,
 *            "Windows"; a rank killed inside a fence's confirmation can leave survivors that returned from
 *            the fence before they knew)
 *     STEP   none | before:V[+V...] | during:V[+V...] | before:V,during:V (tests/mpi/check.h)
 *
 * At step s every live rank r puts V(s, r) = s * 1000 + r + 1 into slot s * size + r of every rank's window
 * (a fence epoch, or lock/unlock per target) and adds it to the step's counter slot with MPI_Accumulate.
 * After the step every survivor checks its own window: a survivor's value is there, a rank dead before the
 * step left zero, a rank that died during the step left its value or zero (whole: one long), and the
 * counter is the sum of the values that are there (no update lost or applied twice at a live target).
 * In fence mode, after the last step the window must have been made again over exactly the survivors
 * (cohort_win_state: its member count, and at least one recreation when a rank died, exactly one per step
 * that began with a kill when no rank died during a step); in lock mode it
 * stays on the communicator it was made on (no fence to switch at). */
#include <mpi.h>
/* after mpi.h: cohort_win_state is declared only with it */
#include <cohort/cohort.h>
#include <signal.h>
#include <string.h>

#include "check.h"

#define MAXSTEPS 8

static int rank, size;

static long value(int s, int r) { return s * 1000L + r + 1; }

/* ---- equivalence ---- */
static void sequence(MPI_Comm comm, long *out, int nout) {
  long *a = NULL, *b = NULL;
  MPI_Win wa, wb;
  int n = 6 * size;
  CHECK(MPI_Win_allocate(n * (MPI_Aint)sizeof(long), sizeof(long), MPI_INFO_NULL, comm, &a, &wa) == MPI_SUCCESS,
        "Win_allocate");
  CHECK(MPI_Alloc_mem(n * (MPI_Aint)sizeof(long), MPI_INFO_NULL, &b) == MPI_SUCCESS, "Alloc_mem");
  for (int i = 0; i < n; ++i) a[i] = b[i] = 0;
  CHECK(MPI_Win_create(b, n * (MPI_Aint)sizeof(long), sizeof(long), MPI_INFO_NULL, comm, &wb) == MPI_SUCCESS,
        "Win_create");
  MPI_Group g;
  int gs = 0;
  MPI_Win_get_group(wa, &g);
  MPI_Group_size(g, &gs);
  MPI_Group_free(&g);
  CHECK(gs == size, "Win_get_group: %d members", gs);
  long v = 10 + rank, one = 1, got = -1, fetched = -1, swapped = -1;
  MPI_Win_fence(0, wa);
  for (int t = 0; t < size; ++t) {
    MPI_Put(&v, 1, MPI_LONG, t, rank, 1, MPI_LONG, wa);
    MPI_Accumulate(&v, 1, MPI_LONG, t, size, 1, MPI_LONG, MPI_SUM, wa);
  }
  /* a derived datatype freed before the fence that completes the put (cohort issues it at once) */
  MPI_Datatype one_long;
  MPI_Type_contiguous(1, MPI_LONG, &one_long);
  MPI_Type_commit(&one_long);
  long dv = 50 + rank;
  MPI_Put(&dv, 1, one_long, (rank + 1) % size, 4 * size + rank, 1, one_long, wa);
  MPI_Type_free(&one_long);
  MPI_Win_fence(0, wa);
  MPI_Get(&got, 1, MPI_LONG, (rank + 1) % size, (rank + 2) % size, 1, MPI_LONG, wa);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, wa);
  /* NOTE: atomics to the next rank, never to oneself: Open MPI 4.1.4's osc/rdma crashes in a
   * Compare_and_swap to its own window (mca_btl_vader_emu_acswap, raw MPI too). */
  int next = (rank + 1) % size;
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, next, 0, wb);
  MPI_Fetch_and_op(&one, &fetched, MPI_LONG, next, 0, MPI_SUM, wb);
  MPI_Win_unlock(next, wb);
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, next, 0, wb);
  long cmp = 0, nv = 100 + rank;
  MPI_Compare_and_swap(&nv, &cmp, &swapped, MPI_LONG, next, 1, wb);
  MPI_Win_unlock(next, wb);
  MPI_Win_lock_all(0, wb);
  long ga = -1, two = 2;
  MPI_Get_accumulate(&two, 1, MPI_LONG, &ga, 1, MPI_LONG, (rank + 1) % size, 2 * size + rank, 1, MPI_LONG, MPI_SUM, wb);
  MPI_Request rq[4];
  long rv = 7 * rank + 1, rg = -1, ra = 3 * rank + 5, three = 3, rga = -1;
  MPI_Rput(&rv, 1, MPI_LONG, (rank + 1) % size, 3 * size + rank, 1, MPI_LONG, wb, &rq[0]);
  MPI_Win_flush_all(wb);
  /* origin buffers reused after a local flush (cohort defers puts to the next synchronisation) */
  long lp = 1000 + rank, lq = 2000 + rank;
  MPI_Put(&lp, 1, MPI_LONG, next, 4 * size + rank, 1, MPI_LONG, wb);
  MPI_Win_flush_local(next, wb);
  lp = -1;
  MPI_Put(&lq, 1, MPI_LONG, next, 5 * size + rank, 1, MPI_LONG, wb);
  MPI_Win_flush_local_all(wb);
  lq = -1;
  MPI_Win_flush(next, wb);
  MPI_Rget(&rg, 1, MPI_LONG, (rank + 1) % size, 3 * size + rank, 1, MPI_LONG, wb, &rq[1]);
  /* request-based atomics to the slot Get_accumulate added to: ordered from one origin (MPI's default
   * accumulate_ordering), so rga is 2 + ra */
  MPI_Raccumulate(&ra, 1, MPI_LONG, next, 2 * size + rank, 1, MPI_LONG, MPI_SUM, wb, &rq[2]);
  MPI_Rget_accumulate(&three, 1, MPI_LONG, &rga, 1, MPI_LONG, next, 2 * size + rank, 1, MPI_LONG, MPI_SUM, wb, &rq[3]);
  MPI_Status rs[4];
  MPI_Waitall(4, rq, rs);
  MPI_Win_unlock_all(wb);
  MPI_Barrier(comm);
  MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, wb);  /* a consistent view of my own memory */
  MPI_Win_unlock(rank, wb);
  int k = 0;
  for (int i = 0; i < n && k < nout; ++i) out[k++] = a[i];
  for (int i = 0; i < n && k < nout; ++i) out[k++] = b[i];
  out[k++] = got;
  out[k++] = ga;
  out[k++] = rg;
  out[k++] = rga;
  CHECK(lp == -1 && lq == -1, "origin buffers");
  CHECK(fetched == 0 && swapped == 0, "Fetch_and_op fetched %ld, Compare_and_swap found %ld", fetched, swapped);
  CHECK(rga == 2 + ra && b[2 * size + (rank + size - 1) % size] == 2 + 3 * ((rank + size - 1) % size) + 5 + 3,
        "Rget_accumulate fetched %ld (want %ld), slot %ld", rga, 2 + ra, b[2 * size + (rank + size - 1) % size]);
  MPI_Win_free(&wa);
  MPI_Win_free(&wb);
  MPI_Free_mem(b);
}

/* Fence epochs as cohort carries them, checked against the values MPI defines (not against raw MPI: Open MPI
 * 4.1.4's osc/rdma crashes in MPI_Win_fence after atomics in a fence epoch, raw MPI alone). */
static void fence_block(MPI_Comm comm) {
  int next = (rank + 1) % size;
  long one = 1;
  /* Two-sided messages (wrap/rma/rma_log.hpp): a put above its bulk threshold (8 KiB), a log longer than one
   * message (600 small puts), a put to oneself and to MPI_PROC_NULL, atomics and fetches (one origin per
   * target location, so the results do not depend on the order between origins), MPI_NO_OP, MPI_REPLACE. */
  enum { BIG = 1024, MANY = 600 }; /* MANY one-long puts: a log of about 24 KB, sent in two messages */
  long *c = NULL, *blk = malloc(BIG * sizeof(long));
  MPI_Win wc;
  CHECK(MPI_Win_allocate((MPI_Aint)(2 * BIG + 16 + MANY) * (MPI_Aint)sizeof(long), sizeof(long), MPI_INFO_NULL, comm,
                         &c, &wc) == MPI_SUCCESS,
        "Win_allocate (fence block)");
  for (int i = 0; i < 2 * BIG + 16 + MANY; ++i) c[i] = 0;
  long *many = malloc(MANY * sizeof(long));
  for (int i = 0; i < MANY; ++i) many[i] = rank * 1000L + i;
  for (int i = 0; i < BIG; ++i) blk[i] = rank * 100000L + i;
  long me5 = 5 + rank, fo = -1, fn = -1, cas_old = -1, cas_new = 100 + rank, cas_cmp = 0, gacc = -1, mx = rank;
  MPI_Win_fence(MPI_MODE_NOPRECEDE, wc);
  MPI_Put(blk, BIG, MPI_LONG, next, 0, BIG, MPI_LONG, wc);
  MPI_Put(&me5, 1, MPI_LONG, rank, 2 * BIG, 1, MPI_LONG, wc);
  MPI_Put(&me5, 1, MPI_LONG, MPI_PROC_NULL, 0, 1, MPI_LONG, wc);
  MPI_Fetch_and_op(&one, &fo, MPI_LONG, next, 2 * BIG + 1, MPI_SUM, wc);
  MPI_Accumulate(&mx, 1, MPI_LONG, 0, 2 * BIG + 2, 1, MPI_LONG, MPI_MAX, wc);
  MPI_Compare_and_swap(&cas_new, &cas_cmp, &cas_old, MPI_LONG, next, 2 * BIG + 3, wc);
  for (int i = 0; i < MANY; ++i) MPI_Put(&many[i], 1, MPI_LONG, next, 2 * BIG + 16 + i, 1, MPI_LONG, wc);
  MPI_Win_fence(0, wc);
  MPI_Fetch_and_op(&one, &fn, MPI_LONG, next, 2 * BIG + 1, MPI_NO_OP, wc);
  MPI_Get_accumulate(&one, 1, MPI_LONG, &gacc, 1, MPI_LONG, next, 2 * BIG + 3, 1, MPI_LONG, MPI_REPLACE, wc);
  MPI_Get(blk, 4, MPI_LONG, next, BIG - 2, 4, MPI_LONG, wc);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, wc);
  int prev = (rank + size - 1) % size, bulk_ok = 1;
  for (int i = 0; i < BIG; ++i) bulk_ok = bulk_ok && c[i] == prev * 100000L + i;
  for (int i = 0; i < MANY; ++i) bulk_ok = bulk_ok && c[2 * BIG + 16 + i] == prev * 1000L + i;
  CHECK(bulk_ok && c[2 * BIG + 1] == 1, "fence block: bulk put from rank %d, fetched-and-added slot %ld", prev,
        c[2 * BIG + 1]);
  CHECK(c[2 * BIG] == me5 && fo == 0 && fn == 1 && cas_old == 0 && gacc == 100 + rank && c[2 * BIG + 3] == 1 &&
            blk[0] == rank * 100000L + BIG - 2 && blk[2] == 0 && (rank != 0 || c[2 * BIG + 2] == size - 1),
        "fence block: self put %ld, fetch_and_op %ld/%ld, cas %ld, get_accumulate %ld, get %ld %ld", c[2 * BIG], fo,
        fn, cas_old, gacc, blk[0], blk[2]);
  MPI_Win_free(&wc);
  free(blk);
  free(many);
}

static void equiv(void) {
  MPI_Comm raw;
  PMPI_Comm_dup(MPI_COMM_WORLD, &raw);
  long x[256], y[256];
  memset(x, 0, sizeof x);
  memset(y, 0, sizeof y);
  sequence(MPI_COMM_WORLD, x, 200);
  sequence(raw, y, 200);
  CHECK(!memcmp(x, y, sizeof x), "window contents differ from raw MPI");
  fence_block(MPI_COMM_WORLD);
  CHECK(x[size] == 10L * size + (long)size * (size - 1) / 2, "accumulated %ld", x[size]);
  int prev = (rank + size - 1) % size, n = 6 * size;
  CHECK(x[4 * size + prev] == 50 + prev && x[n + 4 * size + prev] == 1000 + prev && x[n + 5 * size + prev] == 2000 + prev,
        "derived-type put %ld, flush_local puts %ld %ld", x[4 * size + prev], x[n + 4 * size + prev],
        x[n + 5 * size + prev]);
  TEST_PASS("one-sided calls equivalent to raw MPI (%d ranks)", size);
}

/* ---- faults ---- */
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(argc >= 2, "usage: win_faults equiv | MODE STEP...");
  if (!strcmp(argv[1], "equiv")) {
    equiv();
    MPI_Finalize();
    return 0;
  }
  int lock = !strncmp(argv[1], "lock", 4), known = strstr(argv[1], "_known") != NULL;
  CHECK(lock || !strncmp(argv[1], "fence", 5), "bad mode '%s'", argv[1]);
  int n = (MAXSTEPS + 1) * size;
  long *w = NULL;
  MPI_Win win;
  CHECK(MPI_Win_allocate(n * (MPI_Aint)sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &w, &win) ==
            MPI_SUCCESS, "Win_allocate");
  long *const mine = w;
  for (int i = 0; i < n; ++i) w[i] = 0;
  if (!lock) MPI_Win_fence(0, win);
  else MPI_Barrier(MPI_COMM_WORLD);
  unsigned dead = 0, prev_may = 0;
  int nsteps = 0, kill_steps = 0, during = 0;
  for (int i = 2; i < argc; ++i, ++nsteps) {
    CHECK(nsteps < MAXSTEPS, "too many steps");
    unsigned before, may;
    PARSE_STEP(argv[i], rank, &before, &may);
    dead |= before;
    kill_steps += before != 0;
    during |= may != 0;
    if (known && (before || prev_may)) CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS, "barrier");
    int s = nsteps;
    long v = value(s, rank);
    for (int t = 0; t < size; ++t) {
      if (lock) CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win) == MPI_SUCCESS, "lock %d", t);
      CHECK(MPI_Put(&v, 1, MPI_LONG, t, s * size + rank, 1, MPI_LONG, win) == MPI_SUCCESS, "put to %d", t);
      CHECK(MPI_Accumulate(&v, 1, MPI_LONG, t, MAXSTEPS * size + s, 1, MPI_LONG, MPI_SUM, win) == MPI_SUCCESS,
            "accumulate to %d", t);
      if (lock) CHECK(MPI_Win_unlock(t, win) == MPI_SUCCESS, "unlock %d", t);
    }
    if (lock) {
      CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS, "barrier");
      MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);  /* my own memory, consistent */
      MPI_Win_unlock(rank, win);
    } else {
      CHECK(MPI_Win_fence(0, win) == MPI_SUCCESS, "fence");
    }
    CHECK(w == mine, "the window's memory moved");
    long sum = 0;
    for (int r = 0; r < size; ++r) {
      long got = w[s * size + r];
      if ((dead >> r) & 1) CHECK(got == 0, "step %d: rank %d was dead but wrote %ld", s, r, got);
      else if ((may >> r) & 1) CHECK(got == 0 || got == value(s, r), "step %d: rank %d's value is torn: %ld", s, r, got);
      else CHECK(got == value(s, r), "step %d: survivor %d's value is %ld, not %ld", s, r, got, value(s, r));
      sum += got;
    }
    long counter = w[MAXSTEPS * size + s];
    /* a rank dying during the step may have reached the put and not the accumulate, or the reverse */
    long lo = 0, hi = 0;
    for (int r = 0; r < size; ++r) {
      if ((dead >> r) & 1) continue;
      if ((may >> r) & 1) hi += value(s, r);
      else lo += value(s, r), hi += value(s, r);
    }
    CHECK(counter >= lo && counter <= hi, "step %d: counter %ld outside [%ld, %ld] (sum of values %ld)", s, counter,
          lo, hi, sum);
    if (may == 0) CHECK(counter == sum, "step %d: counter %ld, values sum to %ld", s, counter, sum);
    dead |= may;  /* a rank killed during a step is dead by the next one's end (its puts: none later) */
    prev_may = may;
  }
  int live = 0, members = -1, remade = -1;
  for (int r = 0; r < size; ++r) live += !((dead >> r) & 1);
  CHECK(cohort_win_state(win, &members, &remade) == 1, "cohort_win_state: the window is not cohort's");
  if (lock) {
    CHECK(members == size && remade == 0, "lock epochs: window over %d ranks, made again %d times", members, remade);
  } else {
    CHECK(members == live, "window over %d ranks after the last fence, %d survivors", members, live);
    CHECK(dead == 0 ? remade == 0 : remade >= 1, "window made again %d times, dead ranks %#x", remade, dead);
    /* known kills before steps only: one shrink (the barrier) and one recreation (that step's fence) each */
    if (known && !during) CHECK(remade == kill_steps, "window made again %d times, %d steps began with a kill", remade, kill_steps);
  }
  if (!lock) MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  MPI_Win_free(&win);
  TEST_PASS("%s: %d steps, window checked", argv[1], nsteps);
  MPI_Finalize();
  return 0;
}
