/* The frame of the replication test programs (replica_ring.c, replica_comms.c): start with the logical
 * rank, size and rounds; end with one line from rank 0 saying whether every rank's checks passed, so that
 * the whole output has one order whichever replicas print it. */
#ifndef COHORT_TEST_REPLICA_PROGRAM_H
#define COHORT_TEST_REPLICA_PROGRAM_H
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* MPI_Init, the rank and size of MPI_COMM_WORLD, and the rounds (argv[1], or the default). */
static int replica_program_start(int *argc, char ***argv, int *rank, int *size, int default_rounds) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  return *argc > 1 ? atoi((*argv)[1]) : default_rounds;
}

/* `cohort-test: rank 0 PASS` (or FAIL) from rank 0 when every rank's ok is 1, then MPI_Finalize. */
static int replica_program_finish(int ok) {
  int rank, size, all_ok = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Reduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("cohort-test: rank 0 %s (all %d ranks checked)\n", all_ok ? "PASS" : "FAIL", size);
  fflush(stdout);
  MPI_Finalize();
  return 0;
}
#endif
