#include "ep_kernel.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static const EpClass classes[] = {
    {'S', 24, -3.247834652034740e+3, -6.958407078382297e+3},
    {'W', 25, -2.863319731645753e+3, -6.320053679109499e+3},
    {'A', 28, -4.295875165629892e+3, -1.580732573678431e+4},
    {'B', 30, 4.033815542441498e+4, -2.660669192809235e+4},
    {'C', 32, 4.764367927995374e+4, -8.084072988043731e+4},
};

const EpClass *ep_class(char c) {
  for (size_t i = 0; i < sizeof classes / sizeof classes[0]; ++i)
    if (classes[i].name == c) return &classes[i];
  return NULL;
}

/* The generator in exact 64-bit integer arithmetic: states are 46-bit integers. */
#define EP_MASK ((1ULL << 46) - 1)
static const uint64_t ep_a = 1220703125ULL; /* 5^13 */
static const uint64_t ep_seed = 271828183ULL;
static const double ep_r46 = 1.0 / 70368744177664.0; /* 2^-46 */

static uint64_t mulmod46(uint64_t x, uint64_t y) { return (uint64_t)(((unsigned __int128)x * y) & EP_MASK); }

/* a^e mod 2^46 by squaring */
static uint64_t powmod46(uint64_t a, uint64_t e) {
  uint64_t r = 1;
  while (e) {
    if (e & 1) r = mulmod46(r, a);
    a = mulmod46(a, a);
    e >>= 1;
  }
  return r;
}

void ep_compute(int m, long first, long count, EpShare *out) {
  const long nk = 1L << EP_MK;
  double *x = malloc(sizeof(double) * 2 * (size_t)nk);
  out->sx = out->sy = 0.0;
  for (int i = 0; i < EP_NQ; ++i) out->q[i] = 0.0;
  out->batches = (double)count;
  (void)m;
  for (long k = first; k < first + count; ++k) {
    /* batch k starts after 2*nk*k numbers of the stream: state seed * a^(2 nk k) */
    uint64_t t = mulmod46(ep_seed, powmod46(ep_a, (uint64_t)(2 * nk) * (uint64_t)k));
    for (long i = 0; i < 2 * nk; ++i) {
      t = mulmod46(t, ep_a);
      x[i] = (double)t * ep_r46;
    }
    for (long i = 0; i < nk; ++i) {
      double x1 = 2.0 * x[2 * i] - 1.0, x2 = 2.0 * x[2 * i + 1] - 1.0;
      double t1 = x1 * x1 + x2 * x2;
      if (t1 <= 1.0) {
        double t2 = sqrt(-2.0 * log(t1) / t1);
        double t3 = x1 * t2, t4 = x2 * t2;
        int l = (int)fmax(fabs(t3), fabs(t4));
        out->q[l] += 1.0;
        out->sx += t3;
        out->sy += t4;
      }
    }
  }
  free(x);
}

void ep_block(long nbatches, int n, int r, long *first, long *count) {
  *first = nbatches * r / n;
  *count = nbatches * (r + 1) / n - *first;
}

int ep_run(const EpClass *cls, MPI_Comm comm, EpShare *shares, EpResult *result) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  long total = 1L << (cls->m - EP_MK), first, count;
  ep_block(total, size, rank, &first, &count);
  double t0 = MPI_Wtime();
  EpShare mine;
  ep_compute(cls->m, first, count, &mine);
  for (int r = 0; r < size; ++r) shares[r].batches = NAN;
  const int n = (int)(sizeof(EpShare) / sizeof(double));
  int rc = MPI_Allgather(&mine, n, MPI_DOUBLE, shares, n, MPI_DOUBLE, comm);
  result->seconds = MPI_Wtime() - t0;
  result->sx = result->sy = 0.0;
  for (int i = 0; i < EP_NQ; ++i) result->q[i] = 0.0;
  result->counted = 0;
  result->total = total;
  result->absent = 0;
  for (int r = 0; r < size; ++r) {
    if (isnan(shares[r].batches)) {
      ++result->absent;
      continue;
    }
    result->sx += shares[r].sx;
    result->sy += shares[r].sy;
    for (int i = 0; i < EP_NQ; ++i) result->q[i] += shares[r].q[i];
    result->counted += (long)shares[r].batches;
  }
  return rc;
}
