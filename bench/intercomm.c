/* Intercommunicator collectives: cohort's (run on the union of both groups, packed blocks) beside
 * raw MPI's on an intercommunicator made with PMPI_Intercomm_create, fault-free, in one run. Even world
 * ranks against odd ones. Prints one CSV line per call at world rank 0: call,ranks,raw_us,cohort_us,ratio
 * (the slowest rank's mean time per call; rounds of each alternate so that both see the same machine).
 *   cohort-run -n 4 build/openmpi/bench/intercomm_bench [iterations]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { BARRIER, BCAST, ALLREDUCE, ALLGATHER, NCALLS };
static const char *names[NCALLS] = {"MPI_Barrier", "MPI_Bcast", "MPI_Allreduce", "MPI_Allgather"};

static void one(int call, int raw, MPI_Comm ic, int side, int me) {
  int x[1] = {me}, y[64];
  int root = side == 0 ? (me == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  switch (call) {
    case BARRIER: raw ? PMPI_Barrier(ic) : MPI_Barrier(ic); break;
    case BCAST: raw ? PMPI_Bcast(x, 1, MPI_INT, root, ic) : MPI_Bcast(x, 1, MPI_INT, root, ic); break;
    case ALLREDUCE:
      raw ? PMPI_Allreduce(x, y, 1, MPI_INT, MPI_SUM, ic) : MPI_Allreduce(x, y, 1, MPI_INT, MPI_SUM, ic);
      break;
    case ALLGATHER:
      raw ? PMPI_Allgather(x, 1, MPI_INT, y, 1, MPI_INT, ic) : MPI_Allgather(x, 1, MPI_INT, y, 1, MPI_INT, ic);
      break;
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int iters = argc > 1 ? atoi(argv[1]) : 200, w, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &w);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  int side = w % 2;
  MPI_Comm local, rlocal, ic[2];
  MPI_Comm_split(MPI_COMM_WORLD, side, w, &local);
  PMPI_Comm_split(MPI_COMM_WORLD, side, w, &rlocal);
  MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - side, 7, &ic[0]);
  PMPI_Intercomm_create(rlocal, 0, MPI_COMM_WORLD, 1 - side, 8, &ic[1]);
  int me;
  MPI_Comm_rank(ic[0], &me);
  for (int call = 0; call < NCALLS; ++call) {
    double t[2] = {0, 0};
    for (int round = 0; round < 10; ++round)
      for (int raw = 0; raw < 2; ++raw) {
        PMPI_Barrier(MPI_COMM_WORLD);
        double t0 = PMPI_Wtime();
        for (int i = 0; i < iters / 10; ++i) one(call, raw, ic[raw], side, me);
        t[raw] += PMPI_Wtime() - t0;
      }
    double slowest[2];
    PMPI_Reduce(t, slowest, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    int done = iters / 10 * 10;
    if (w == 0)
      printf("%s,%d,%.1f,%.1f,%.1f\n", names[call], n, slowest[1] / done * 1e6, slowest[0] / done * 1e6,
             slowest[0] / slowest[1]);
  }
  MPI_Comm_free(&ic[0]);
  PMPI_Comm_free(&ic[1]);
  MPI_Comm_free(&local);
  PMPI_Comm_free(&rlocal);
  MPI_Finalize();
  return 0;
}
