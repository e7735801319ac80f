/* bench/schedule_floors: what a short collective costs on each path a wrapped call can take, in one
 * process, plain MPI (no cohort): the blocking call, MPI's nonblocking call polled with MPI_Test, and the
 * short-message schedules that cohort runs (wrap/core/small_coll.hpp: dissemination barrier, binomial Bcast and
 * Reduce, recursive-doubling Allreduce; power-of-two sizes only here), alone and followed by the
 * confirmation (a dissemination barrier of messages, or MPI_Ibarrier), or with the messages of deferred
 * confirmation alone (wrap/core/deferred.hpp at window W, default 8: every ceil(W/2) calls each rank sends its count of
 * completed calls to every other rank, an MPI_ANY_SOURCE receive takes the others' counts, read when W - 1
 * calls are unconfirmed, and a rank waits for counts only when it is W - 1 calls ahead of the slowest
 * report: the design's floor, with none of cohort's bookkeeping). 8 B (one double), best of 5 rounds of
 * ITERS calls, the slowest rank's mean per call in microseconds.
 *   mpirun -n 2|4 build/<mpi>/bench/schedule_floors [ITERS] [CSV] [W]   (appends "mpi,ranks,variant,us" rows) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int me, n;
static MPI_Comm pc;
static MPI_Status st[64];
static void waitall_poll(int k, MPI_Request *r) { int f = 0; while (!f) MPI_Testall(k, r, &f, st); }
static void wait_poll(MPI_Request *r) { int f = 0; while (!f) MPI_Test(r, &f, MPI_STATUS_IGNORE); }
static void p2p_bcast(double *b, int root, int tag) {
  int rel = (me - root + n) % n, mask = 1;
  while (mask < n) { if (rel & mask) { MPI_Request r; MPI_Irecv(b, 1, MPI_DOUBLE, (rel - mask + root) % n, tag, pc, &r); wait_poll(&r); break; } mask <<= 1; }
  mask >>= 1; MPI_Request rs[32]; int k = 0;
  while (mask > 0) { if (rel + mask < n) MPI_Isend(b, 1, MPI_DOUBLE, (rel + mask + root) % n, tag, pc, &rs[k++]); mask >>= 1; }
  if (k) waitall_poll(k, rs);
}
static void p2p_reduce(const double *in, double *out, int root, int tag) {
  int rel = (me - root + n) % n; double acc = *in, t; int mask = 1;
  while (mask < n) {
    if (rel & mask) { MPI_Request r; MPI_Isend(&acc, 1, MPI_DOUBLE, (rel - mask + root) % n, tag, pc, &r); wait_poll(&r); break; }
    if (rel + mask < n) { MPI_Request r; MPI_Irecv(&t, 1, MPI_DOUBLE, (rel + mask + root) % n, tag, pc, &r); wait_poll(&r); MPI_Reduce_local(&t, &acc, 1, MPI_DOUBLE, MPI_SUM); }
    mask <<= 1;
  }
  if (rel == 0) *out = acc;
}
static void p2p_allreduce(const double *in, double *out, int tag) { // power of 2 only
  double acc = *in, t;
  for (int mask = 1; mask < n; mask <<= 1) {
    int p = me ^ mask; MPI_Request r[2];
    MPI_Irecv(&t, 1, MPI_DOUBLE, p, tag, pc, &r[0]); MPI_Isend(&acc, 1, MPI_DOUBLE, p, tag, pc, &r[1]); waitall_poll(2, r);
    MPI_Reduce_local(&t, &acc, 1, MPI_DOUBLE, MPI_SUM);
  }
  *out = acc;
}
/* Deferred confirmation's messages (see the header), window kW (argument W). */
static int kW = 8, kReportEvery = 4;
static unsigned long long done_calls, reported_at, heard[64], heard_in, sent_count[4];
static MPI_Request heard_req = MPI_REQUEST_NULL, sent_req[4][64];
static int sent_k[4], sent_next;
static unsigned long long lowest_heard(void) {
  unsigned long long low = done_calls;
  for (int r = 0; r < n; ++r) if (r != me && heard[r] < low) low = heard[r];
  return low;
}
static void read_reports(void) {
  for (;;) {
    if (heard_req == MPI_REQUEST_NULL) MPI_Irecv(&heard_in, 1, MPI_UNSIGNED_LONG_LONG, MPI_ANY_SOURCE, 9, pc, &heard_req);
    int f = 0; MPI_Status s; MPI_Test(&heard_req, &f, &s);
    if (!f) return;
    if (heard_in > heard[s.MPI_SOURCE]) heard[s.MPI_SOURCE] = heard_in;
  }
}
static void send_report(void) {
  int slot = sent_next; sent_next = (sent_next + 1) % 4;
  if (sent_k[slot]) MPI_Waitall(sent_k[slot], sent_req[slot], st);  /* 3 reports ago: long done */
  sent_count[slot] = done_calls; sent_k[slot] = 0;
  for (int r = 0; r < n; ++r) if (r != me) MPI_Isend(&sent_count[slot], 1, MPI_UNSIGNED_LONG_LONG, r, 9, pc, &sent_req[slot][sent_k[slot]++]);
  reported_at = done_calls;
}
static void deferred_confirm(void) {  /* after each call's own schedule completed */
  ++done_calls;
  if (done_calls - reported_at >= kReportEvery) send_report();
  if (done_calls - lowest_heard() < kW - 1 && done_calls % 64 != 0) return;
  read_reports();
  while (done_calls - lowest_heard() >= kW - 1) {
    if (reported_at != done_calls) send_report();
    read_reports();
  }
}
static void deferred_drain(void) {  /* the end of a round: every rank's count heard, every send done */
  send_report();
  while (lowest_heard() < done_calls) read_reports();
  for (int k = 0; k < 4; ++k) if (sent_k[k]) { MPI_Waitall(sent_k[k], sent_req[k], st); sent_k[k] = 0; }
}
static void p2p_barrier(int tag) {
  char s = 0, t;
  for (int d = 1; d < n; d <<= 1) { MPI_Request r[2];
    MPI_Irecv(&t, 0, MPI_BYTE, (me - d + n) % n, tag, pc, &r[0]); MPI_Isend(&s, 0, MPI_BYTE, (me + d) % n, tag, pc, &r[1]); waitall_poll(2, r); }
}
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv); MPI_Comm_rank(MPI_COMM_WORLD, &me); MPI_Comm_size(MPI_COMM_WORLD, &n);
  MPI_Comm_dup(MPI_COMM_WORLD, &pc);
  int iters = argc > 1 ? atoi(argv[1]) : 20000;
  if (n > 64) { if (me == 0) fprintf(stderr, "schedule_floors: at most 64 ranks\n"); MPI_Abort(MPI_COMM_WORLD, 2); }
  if (argc > 3) kW = atoi(argv[3]);
  if (kW < 2 || kW > 64) { if (me == 0) fprintf(stderr, "schedule_floors: W must be 2..64\n"); MPI_Abort(MPI_COMM_WORLD, 2); }
  kReportEvery = (kW + 1) / 2;
  char rb[40], rr[40], ra[40];
  snprintf(rb, sizeof rb, "p2p bcast+reports W=%d", kW);
  snprintf(rr, sizeof rr, "p2p reduce+reports W=%d", kW);
  snprintf(ra, sizeof ra, "p2p allreduce+reports W=%d", kW);
  double x = me + 1, y = 0; MPI_Request r, r2;
  const char *names[] = {"Barrier", "Ibarrier", "p2p barrier", "Bcast", "Ibcast", "p2p bcast", "Reduce", "Ireduce", "p2p reduce", "Allreduce", "Iallreduce", "p2p allreduce",
    "Ibcast+Ibarrier", "p2p bcast+p2p barrier", "Iallreduce+Ibarrier", "p2p allreduce+barrier", "Ibcast+Ibarrier posted", "p2p bcast+Ibarrier",
    rb, rr, ra};
  int nv = 21; double best[32];
  for (int v = 0; v < nv; ++v) best[v] = 1e9;
  for (int round = 0; round < 5; ++round)
  for (int v = 0; v < nv; ++v) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) {
      switch (v) {
        case 0: MPI_Barrier(MPI_COMM_WORLD); break;
        case 1: MPI_Ibarrier(MPI_COMM_WORLD, &r); wait_poll(&r); break;
        case 2: p2p_barrier(1); break;
        case 3: MPI_Bcast(&x, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD); break;
        case 4: MPI_Ibcast(&x, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, &r); wait_poll(&r); break;
        case 5: p2p_bcast(&x, 0, 2); break;
        case 6: MPI_Reduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD); break;
        case 7: MPI_Ireduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD, &r); wait_poll(&r); break;
        case 8: p2p_reduce(&x, &y, 0, 3); break;
        case 9: MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
        case 10: MPI_Iallreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r); wait_poll(&r); break;
        case 11: p2p_allreduce(&x, &y, 4); break;
        case 12: MPI_Ibcast(&x, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, &r); wait_poll(&r); MPI_Ibarrier(MPI_COMM_WORLD, &r); wait_poll(&r); break;
        case 13: p2p_bcast(&x, 0, 2); p2p_barrier(1); break;
        case 14: MPI_Iallreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r); wait_poll(&r); MPI_Ibarrier(MPI_COMM_WORLD, &r); wait_poll(&r); break;
        case 15: p2p_allreduce(&x, &y, 4); p2p_barrier(1); break;
        case 16: MPI_Ibcast(&x, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, &r); wait_poll(&r); if (i) wait_poll(&r2); MPI_Ibarrier(MPI_COMM_WORLD, &r2); if (i == iters - 1) wait_poll(&r2); break;
        case 17: p2p_bcast(&x, 0, 2); if (i) wait_poll(&r2); MPI_Ibarrier(MPI_COMM_WORLD, &r2); if (i == iters - 1) wait_poll(&r2); break;
        case 18: p2p_bcast(&x, 0, 2); deferred_confirm(); break;
        case 19: p2p_reduce(&x, &y, 0, 3); deferred_confirm(); break;
        case 20: p2p_allreduce(&x, &y, 4); deferred_confirm(); break;
      }
    }
    if (v >= 18) deferred_drain();
    double t = (MPI_Wtime() - t0) / iters * 1e6, tm;
    MPI_Allreduce(&t, &tm, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (tm < best[v]) best[v] = tm;
  }
  if (me == 0) {
#if defined(OPEN_MPI)
    const char *mpi = "openmpi";
#else
    const char *mpi = "mpich";
#endif
    FILE *csv = argc > 2 ? fopen(argv[2], "a") : NULL;
    for (int v = 0; v < nv; ++v) {
      printf("%-24s %8.3f us\n", names[v], best[v]);
      if (csv) fprintf(csv, "%s,%d,%s,%.4f\n", mpi, n, names[v], best[v]);
    }
    if (csv) fclose(csv);
  }
  MPI_Finalize();
}
