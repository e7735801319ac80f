/* montecarlo_pi: estimates pi by throwing random points at the unit square, an unmodified MPI program.
 *
 *   montecarlo_pi [rounds] [samples per rank per round]      (defaults 60 and 2000000)
 *
 * Every round each rank counts the points that fall inside the quarter circle, and MPI_Reduce sums
 * (hits, samples, contributing ranks) at rank 0. Linked with cohort, the program keeps running when a
 * rank dies: the reductions continue over the survivors, and since the samples are summed with the hits,
 * the estimate stays unbiased; it just uses fewer points. Rank 0 prints the estimate, its error, the
 * survivors and the wall time. */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(__has_include)
#if __has_include(<cohort/cohort.h>)
#include <cohort/cohort.h>
#endif
#endif

/* xorshift64*: a small, fast generator; each rank gets its own seed. */
static uint64_t next(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717ULL;
}

static double uniform(uint64_t *s) { return (double)(next(s) >> 11) * (1.0 / 9007199254740992.0); }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int rounds = argc > 1 ? atoi(argv[1]) : 60;
  long per_round = argc > 2 ? atol(argv[2]) : 2000000;
  if (rounds <= 0 || per_round <= 0) {
    if (rank == 0) fprintf(stderr, "usage: montecarlo_pi [rounds > 0] [samples per rank per round > 0]\n");
    MPI_Finalize();
    return 2;
  }
  uint64_t seed = 0x9E3779B97F4A7C15ULL * (uint64_t)(rank + 1);
  double t0 = MPI_Wtime();
  long long total[3] = {0, 0, 0}; /* hits, samples, ranks that contributed to the last round */
  long long last_ranks = size;
  for (int round = 0; round < rounds; ++round) {
    long long mine[3] = {0, per_round, 1}, sum[3] = {0, 0, 0};
    for (long i = 0; i < per_round; ++i) {
      double x = uniform(&seed), y = uniform(&seed);
      if (x * x + y * y <= 1.0) ++mine[0];
    }
    MPI_Reduce(mine, sum, 3, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      total[0] += sum[0];
      total[1] += sum[1];
      if (sum[2] != last_ranks) {
        printf("round %d of %d: %lld of %d ranks contributed\n", round + 1, rounds, sum[2], size);
        fflush(stdout);
        last_ranks = sum[2];
      }
    }
  }
  double elapsed = MPI_Wtime() - t0;
  if (rank == 0) {
    double pi = 4.0 * (double)total[0] / (double)total[1];
    printf("pi ~ %.8f, error %.2e, from %lld samples\n", pi, fabs(pi - M_PI), total[1]);
    printf("survivors: %lld of %d ranks", last_ranks, size);
#ifdef COHORT_API
    int dead[64];
    int n = cohort_failed_ranks(dead, 64);
    if (n > 0) {
      printf(" (failed:");
      for (int i = 0; i < n; ++i) printf(" %d", dead[i]);
      printf(")");
    }
#endif
    printf("\nwall time: %.2f s\n", elapsed);
  }
  MPI_Finalize();
  return 0;
}
