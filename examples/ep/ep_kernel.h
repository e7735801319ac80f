/* The NPB EP kernel (NAS Parallel Benchmarks, "Embarrassingly Parallel"), written from the NPB
 * specification (see /work/shared/data/npb-ep-reference.md for the figures used here):
 * 2^M pairs of uniform deviates from the NPB linear congruential generator x_{k+1} = a x_k mod 2^46
 * (a = 5^13, seed 271828183), in 2^(M-16) batches of 2^16 pairs; each accepted pair becomes two Gaussian
 * deviates by the Marsaglia polar method; their sums (sx, sy) and the counts per square annulus
 * (10 annuli by max(|X|,|Y|)) are the result. */
#ifndef COHORT_EXAMPLES_EP_KERNEL_H
#define COHORT_EXAMPLES_EP_KERNEL_H
#include <mpi.h>

#define EP_MK 16 /* log2 of the pairs per batch */
#define EP_NQ 10 /* annuli */

typedef struct {
  char name;     /* 'S', 'W', 'A', 'B', 'C' */
  int m;         /* log2 of the number of pairs */
  double sx_ref; /* NPB's reference sums */
  double sy_ref;
} EpClass;

/* The class named c (S, W, A, B or C), or NULL. */
const EpClass *ep_class(char c);

/* One rank's share: batches [first, first + count) of class m. Partial sums in batch order. */
typedef struct {
  double sx, sy;
  double q[EP_NQ];
  double batches; /* how many batches this share holds; NaN marks an absent share */
} EpShare;

void ep_compute(int m, long first, long count, EpShare *out);

/* Batches of rank r when nbatches are split among n ranks in blocks: [*first, *first + *count). */
void ep_block(long nbatches, int n, int r, long *first, long *count);

/* The whole run on comm: each rank computes its block, MPI_Allgather collects every rank's share in rank
 * order and every rank sums the present shares in rank order (so that every survivor gets bitwise the
 * same sums). shares (size of comm entries) receives the gathered shares: a rank that died before its
 * share arrived keeps the NaN mark (cohort's positional Allgather leaves a dead rank's slot untouched). */
typedef struct {
  double sx, sy;
  double q[EP_NQ];
  long counted;  /* batches counted */
  long total;    /* batches of the class */
  int absent;    /* ranks whose share is missing */
  double seconds; /* compute and gather time on this rank */
} EpResult;

int ep_run(const EpClass *cls, MPI_Comm comm, EpShare *shares, EpResult *result);

#endif
