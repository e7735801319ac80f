/* bench/comm_dup: what a communicator creation costs through cohort: MPI_Comm_dup + MPI_Comm_free of
 * MPI_COMM_WORLD, COUNT times (default 200) after 20 warm-up pairs, the slowest rank's mean per pair (µs).
 * Run it with the default settings (each new communicator gets a private first substitute: one
 * repair::shrink) and with COHORT_P2P_COLL_MAX_BYTES=0 COHORT_P2P_CONFIRM=0 (none) to see that cost.
 *   cohort-run -n N build/<mpi>/bench/comm_dup [COUNT] [CSV]   (appends "mpi,ranks,private,count,us") */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int count = argc > 1 ? atoi(argv[1]) : 200;
  if (count < 1) count = 200;
  MPI_Comm c;
  for (int i = 0; i < 20; ++i) {
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_free(&c);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int i = 0; i < count; ++i) {
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_free(&c);
  }
  double t = (MPI_Wtime() - t0) / count * 1e6, slowest = 0;
  MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) {
#ifdef OPEN_MPI
    const char *mpi = "openmpi";
#else
    const char *mpi = "mpich";
#endif
    const char *b = getenv("COHORT_P2P_COLL_MAX_BYTES"), *m = getenv("COHORT_P2P_CONFIRM");
    const int none = b != NULL && atoi(b) == 0 && m != NULL && atoi(m) == 0;
    printf("comm_dup %s %d ranks, private substitute %s: %.1f us per MPI_Comm_dup + MPI_Comm_free\n", mpi, size,
           none ? "no" : "yes", slowest);
    if (argc > 2) {
      FILE *f = fopen(argv[2], "a");
      if (f) {
        fseek(f, 0, SEEK_END);
        if (ftell(f) == 0) fprintf(f, "mpi,ranks,private,count,us\n");
        fprintf(f, "%s,%d,%s,%d,%.2f\n", mpi, size, none ? "no" : "yes", count, slowest);
        fclose(f);
      }
    }
  }
  MPI_Finalize();
  return 0;
}
