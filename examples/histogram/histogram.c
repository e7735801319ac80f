/* histogram: a distributed histogram by value range, an unmodified MPI program whose data movement is
 * positional: MPI_Alltoall (how many values go to each owner), MPI_Alltoallv (the values themselves) and
 * MPI_Gatherv (each owner's bins, at their offsets, at rank 0).
 *
 *   histogram [rounds] [values per rank per round]      (defaults 40 and 200000)
 *
 * Every round each rank draws values in [0, 1) (a triangular distribution, from a seed fixed by rank and
 * round), sends each value to the rank that owns its bin (owners hold contiguous, irregular ranges of the
 * 61 bins), and the owners count them. Rank 0 gathers the bins and adds them to the running histogram.
 * Linked with cohort the program keeps running when a rank dies: the values of the dead rank and the bins
 * it owned are simply missing (their slots stay as they were, zero). Rank 0 checks the last round exactly:
 * it redraws every live rank's values, bins those that fall in a live owner's range, and compares. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#if __has_include(<cohort/cohort.h>)
#include <cohort/cohort.h>
#endif
#endif

#define BINS 61

static uint64_t next(uint64_t *s) { /* xorshift64* */
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717ULL;
}
static double uniform(uint64_t *s) { return (double)(next(s) >> 11) * (1.0 / 9007199254740992.0); }
static uint64_t seed_of(int rank, int round) { return 0x9E3779B97F4A7C15ULL * (uint64_t)(rank + 1) + (uint64_t)round * 7919; }
static double draw(uint64_t *s) { return (uniform(s) + uniform(s)) / 2; } /* triangular on [0, 1) */
static int bin_of(double v) { return (int)(v * BINS); }

static int size;
static int first_bin(int r) { return (r * BINS + size - 1) / size; } /* owner r holds [first_bin(r), first_bin(r + 1)) */
static int owner_of(int b) {
  int r = 0;
  while (first_bin(r + 1) <= b) ++r;
  return r;
}
static int alive(int r) {
#ifdef COHORT_API
  return cohort_is_alive(r);
#else
  (void)r;
  return 1;
#endif
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int rounds = argc > 1 ? atoi(argv[1]) : 40;
  long n = argc > 2 ? atol(argv[2]) : 200000;
  if (rounds <= 0 || n <= 0 || size > BINS) {
    if (rank == 0) fprintf(stderr, "usage: histogram [rounds > 0] [values per rank per round > 0] (at most %d ranks)\n", BINS);
    MPI_Finalize();
    return 2;
  }
  double *values = malloc(sizeof(double) * (size_t)n), *sorted = malloc(sizeof(double) * (size_t)n);
  double *mine = NULL;
  int *scount = calloc((size_t)size, sizeof(int)), *sdispl = calloc((size_t)size, sizeof(int));
  int *rcount = calloc((size_t)size, sizeof(int)), *rdispl = calloc((size_t)size, sizeof(int));
  int *bcount = calloc((size_t)size, sizeof(int)), *bdispl = calloc((size_t)size, sizeof(int));
  for (int r = 0; r < size; ++r) bcount[r] = first_bin(r + 1) - first_bin(r), bdispl[r] = first_bin(r);
  long long hist[BINS] = {0}, round_hist[BINS], total = 0;
  int last_ranks = size;
  double t0 = MPI_Wtime();
  for (int round = 0; round < rounds; ++round) {
    uint64_t s = seed_of(rank, round);
    for (int d = 0; d < size; ++d) scount[d] = 0;
    for (long i = 0; i < n; ++i) values[i] = draw(&s), ++scount[owner_of(bin_of(values[i]))];
    for (int d = 0, at = 0; d < size; ++d) sdispl[d] = at, at += scount[d];
    int *fill = calloc((size_t)size, sizeof(int));
    for (long i = 0; i < n; ++i) {
      int d = owner_of(bin_of(values[i]));
      sorted[sdispl[d] + fill[d]++] = values[i];
    }
    free(fill);
    /* counts first (a dead sender's slot stays 0), then the values at their senders' offsets */
    memset(rcount, 0, sizeof(int) * (size_t)size);
    MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, MPI_COMM_WORLD);
    long received = 0;
    for (int r = 0; r < size; ++r) rdispl[r] = (int)received, received += rcount[r];
    mine = realloc(mine, sizeof(double) * (size_t)(received > 0 ? received : 1));
    MPI_Alltoallv(sorted, scount, sdispl, MPI_DOUBLE, mine, rcount, rdispl, MPI_DOUBLE, MPI_COMM_WORLD);
    long long my_bins[BINS] = {0};
    for (long i = 0; i < received; ++i) ++my_bins[bin_of(mine[i]) - first_bin(rank)];
    for (int b = 0; b < BINS; ++b) round_hist[b] = 0;
    MPI_Gatherv(my_bins, bcount[rank], MPI_LONG_LONG, round_hist, bcount, bdispl, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    long long contributors = 0, one = 1;
    MPI_Reduce(&one, &contributors, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank != 0) continue;
    for (int b = 0; b < BINS; ++b) hist[b] += round_hist[b], total += round_hist[b];
    if (contributors != last_ranks) {
      printf("round %d of %d: %lld of %d ranks contributed\n", round + 1, rounds, contributors, size);
      fflush(stdout);
      last_ranks = (int)contributors;
    }
    if (round == rounds - 1) { /* the last round, redrawn from the seeds of the live ranks */
      long long want[BINS] = {0};
      int senders = 0;
      for (int r = 0; r < size; ++r) {
        if (!alive(r)) continue;
        ++senders;
        uint64_t t = seed_of(r, round);
        for (long i = 0; i < n; ++i) {
          int b = bin_of(draw(&t));
          if (alive(owner_of(b))) ++want[b];
        }
      }
      int exact = memcmp(want, round_hist, sizeof want) == 0;
      printf("last round: %s (values of %d of %d ranks)\n", exact ? "exact" : "WRONG", senders, size);
    }
  }
  if (rank == 0) {
    int peak = 0;
    for (int b = 1; b < BINS; ++b)
      if (hist[b] > hist[peak]) peak = b;
    printf("histogram: %lld values in %d bins, peak bin %d (%.3f..%.3f) with %lld\n", total, BINS, peak,
           (double)peak / BINS, (double)(peak + 1) / BINS, hist[peak]);
#ifdef COHORT_API
    int failed[64], nf = cohort_failed_ranks(failed, 64);
    printf("survivors: %d of %d ranks", size - nf, size);
    if (nf > 0) {
      printf(" (failed:");
      for (int i = 0; i < nf && i < 64; ++i) printf(" %d", failed[i]);
      printf(")");
    }
    printf("\n");
#endif
    printf("time: %.2f s\n", MPI_Wtime() - t0);
  }
  free(values), free(sorted), free(mine), free(scount), free(sdispl), free(rcount), free(rdispl), free(bcount), free(bdispl);
  MPI_Finalize();
  return 0;
}
