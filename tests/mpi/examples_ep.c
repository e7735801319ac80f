/* EP class S under failures: the survivors' sums must be exactly the sums over the shares of the ranks
 * that were counted, recomputed here independently (NPB's original double-precision generator and the
 * block split written again), summed in rank order, compared bit for bit.
 *
 *   examples_ep [before:V[+V...]] [during:V[+V...]]
 *     before: rank V is killed (SIGKILL) before it computes anything: its share must be absent.
 *     during: rank V dies inside the Allgather (COHORT_INJECT_FAILURE=rank=V,at=allgather.posted set by
 *             the test): its share is either present everywhere or absent everywhere.
 * Every survivor checks that each present share equals the recomputed one and that every survivor's
 * share is present, then that the totals are the in-order sums and the fraction counted is (n-f)/n. */
#include <math.h>
#include <signal.h>
#include <string.h>

#include "check.h"
#include "ep_kernel.h"

/* NPB's randlc: x = a*x mod 2^46 in double arithmetic (23-bit halves); returns x * 2^-46. */
static double randlc(double *x, double a) {
  const double r23 = 1.0 / 8388608.0, r46 = r23 * r23, t23 = 8388608.0, t46 = t23 * t23;
  double t1 = r23 * a, a1 = (int)t1, a2 = a - t23 * a1;
  t1 = r23 * *x;
  double x1 = (int)t1, x2 = *x - t23 * x1;
  t1 = a1 * x2 + a2 * x1;
  double t2 = (int)(r23 * t1), z = t1 - t23 * t2;
  double t3 = t23 * z + a2 * x2, t4 = (int)(r46 * t3);
  *x = t3 - t46 * t4;
  return r46 * *x;
}

/* Rank r's share of class m on n ranks, NPB style: batch seeds by binary powers of a^(2*2^16). */
static void share(int m, int n, int r, EpShare *out) {
  const double a = 1220703125.0, s = 271828183.0;
  const long nk = 1L << 16, total = 1L << (m - 16);
  long first = total * r / n, last = total * (r + 1) / n;
  double an = a;
  for (int i = 0; i <= 16; ++i) randlc(&an, an);
  double *x = malloc(sizeof(double) * 2 * (size_t)nk);
  memset(out, 0, sizeof *out);
  out->batches = (double)(last - first);
  for (long k = first; k < last; ++k) {
    double t1 = s, t2 = an;
    for (long kk = k;;) {
      long ik = kk / 2;
      if (2 * ik != kk) randlc(&t1, t2);
      if (ik == 0) break;
      randlc(&t2, t2);
      kk = ik;
    }
    for (long i = 0; i < 2 * nk; ++i) x[i] = randlc(&t1, a);
    for (long i = 0; i < nk; ++i) {
      double x1 = 2.0 * x[2 * i] - 1.0, x2 = 2.0 * x[2 * i + 1] - 1.0, tt = x1 * x1 + x2 * x2;
      if (tt <= 1.0) {
        double f = sqrt(-2.0 * log(tt) / tt), gx = x1 * f, gy = x2 * f;
        out->q[(int)fmax(fabs(gx), fabs(gy))] += 1.0;
        out->sx += gx;
        out->sy += gy;
      }
    }
  }
  free(x);
}

static unsigned parse(const char *arg, const char *prefix) {
  unsigned m = 0;
  if (strncmp(arg, prefix, strlen(prefix))) return 0;
  for (const char *p = arg + strlen(prefix); *p;) {
    m |= 1u << atoi(p);
    while (*p && *p != '+') ++p;
    if (*p) ++p;
  }
  return m;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  unsigned before = 0, during = 0;
  for (int i = 1; i < argc; ++i) before |= parse(argv[i], "before:"), during |= parse(argv[i], "during:");
  if ((before >> rank) & 1) raise(SIGKILL);
  const EpClass *cls = ep_class('S');
  EpShare *shares = malloc(sizeof(EpShare) * (size_t)size);
  EpResult res;
  CHECK(ep_run(cls, MPI_COMM_WORLD, shares, &res) == MPI_SUCCESS, "ep_run failed");
  double sx = 0, sy = 0, q[EP_NQ] = {0};
  long counted = 0;
  int absent = 0;
  for (int r = 0; r < size; ++r) {
    int present = !isnan(shares[r].batches);
    if ((before >> r) & 1) CHECK(!present, "rank %d was killed before computing, but its share is present", r);
    if (!(((before | during) >> r) & 1)) CHECK(present, "survivor %d's share is absent", r);
    if (!present) {
      ++absent;
      continue;
    }
    EpShare want;
    share(cls->m, size, r, &want);
    CHECK(memcmp(&want, &shares[r], sizeof want) == 0, "rank %d's share differs: sx %.17g vs %.17g", r,
          shares[r].sx, want.sx);
    sx += want.sx, sy += want.sy, counted += (long)want.batches;
    for (int i = 0; i < EP_NQ; ++i) q[i] += want.q[i];
  }
  CHECK(res.sx == sx && res.sy == sy, "sums %.17g %.17g, recomputed %.17g %.17g", res.sx, res.sy, sx, sy);
  CHECK(memcmp(q, res.q, sizeof q) == 0, "annulus counts differ");
  CHECK(res.counted == counted && res.absent == absent, "counted %ld batches (%d absent), recomputed %ld (%d)",
        res.counted, res.absent, counted, absent);
  CHECK(absent > 0 || (fabs(sx / cls->sx_ref - 1) <= 1e-8 && fabs(sy / cls->sy_ref - 1) <= 1e-8),
        "fault-free sums do not verify");
  TEST_PASS("EP class S: %ld of %ld batches counted, (n-f)/n = %d/%d, sums exact", counted, res.total,
            size - absent, size);
  free(shares);
  MPI_Finalize();
  return 0;
}
