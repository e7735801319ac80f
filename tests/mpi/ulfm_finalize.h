/* The last call of the ULFM test programs (ulfm_api.c, ulfm_conformance/conformance.c).
 *
 * Through cohort it is MPI_Finalize, which the programs test (ULFM 17.2.1: it completes at the survivors).
 * Built natively (-DULFM_NATIVE, Open MPI 5.0.7's own ULFM, the witness), MPI_Finalize after a failure hangs
 * in about one run in four (gdb: ompi_mpi_finalize's barrier over MPI_COMM_WORLD,
 * ompi_coll_base_barrier_intra_doublering, one survivor stuck in mca_pml_ob1_send to the dead rank, another
 * in mca_pml_ob1_recv), whatever the subtest checked. So natively the survivors first agree over
 * MPI_COMM_WORLD (17.3.1: the agreement raises MPIX_ERR_PROC_FAILED where a member died, and it also makes
 * a survivor that never talked to the dead rank learn of it) and, when a process has failed, end without
 * MPI_Finalize; prterun --with-ft ulfm accepts a survivor that exits 0 without it. The finalize subtests
 * call MPI_Finalize themselves and so still witness it. */
#ifndef COHORT_TEST_ULFM_FINALIZE_H
#define COHORT_TEST_ULFM_FINALIZE_H
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

static inline int ulfm_test_finalize(void) {
#ifdef ULFM_NATIVE
  int flag = 1, n = 0;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rc = MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
  MPI_Group failed = MPI_GROUP_NULL;
  if (MPIX_Comm_get_failed(MPI_COMM_WORLD, &failed) == MPI_SUCCESS) {
    MPI_Group_size(failed, &n);
    MPI_Group_free(&failed);
  }
  if (rc != MPI_SUCCESS || n > 0) {
    fflush(NULL);
    _exit(0);
  }
#endif
  return MPI_Finalize();
}
#endif
