/* bench/entry: what entering cohort costs per call, without any communication: MPI_Comm_rank (a wrapped
 * call whose wrapper only counts it and calls PMPI_Comm_rank) against PMPI_Comm_rank, in one process,
 * batches alternating. Built twice: `entry` (linked with --wrap: MPI_Comm_rank is __wrap_MPI_Comm_rank) and
 * `entry_preload` (plain, run with `cohort-run --preload`: MPI_Comm_rank is libcohort-preload.so's entry
 * point). The difference between the two builds' "cohort - real" is what the preload entry point adds to
 * every call (bench/run_preload.sh prints it).
 *
 *   entry [batches]        (default 21; 10^6 calls per batch)
 *
 * Prints on rank 0: `entry <mpi> cohort X ns real Y ns cohort-real Z ns` (medians over batches, per call). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { CALLS = 1000000, MAX_BATCHES = 101 };

static int cmp(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

static double batch(int (*rank_of)(MPI_Comm, int *)) {
  int r = 0;
  volatile int sink = 0;
  double t0 = PMPI_Wtime();
  for (int i = 0; i < CALLS; ++i) {
    rank_of(MPI_COMM_WORLD, &r);
    sink += r;
  }
  (void)sink;
  return (PMPI_Wtime() - t0) * 1e9 / CALLS;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int batches = argc > 1 ? atoi(argv[1]) : 21;
  if (batches < 1 || batches > MAX_BATCHES) batches = 21;
  int (*const cohort)(MPI_Comm, int *) = MPI_Comm_rank, (*const real)(MPI_Comm, int *) = PMPI_Comm_rank;
  double c[MAX_BATCHES], p[MAX_BATCHES], d[MAX_BATCHES];
  batch(cohort);
  batch(real);
  for (int i = 0; i < batches; ++i) {
    /* NOTE: alternate which goes first, so that neither always follows the other */
    if (i % 2) { c[i] = batch(cohort); p[i] = batch(real); }
    else { p[i] = batch(real); c[i] = batch(cohort); }
    d[i] = c[i] - p[i];
  }
  qsort(c, (size_t)batches, sizeof *c, cmp);
  qsort(p, (size_t)batches, sizeof *p, cmp);
  qsort(d, (size_t)batches, sizeof *d, cmp);
  int rank;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    printf("entry %s cohort %.2f ns real %.2f ns cohort-real %.2f ns\n",
#ifdef OPEN_MPI
           "openmpi",
#else
           "mpich",
#endif
           c[batches / 2], p[batches / 2], d[batches / 2]);
  MPI_Finalize();
  return 0;
}
