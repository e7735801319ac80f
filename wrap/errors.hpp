// The error class returned under the `error` policy when the rank that matters is dead.
#pragma once

namespace cohort::wrap {

/// MPIX_ERR_PROC_FAILED where mpi.h defines it; otherwise a class added with MPI_Add_error_class at
/// MPI_Init (its string: "cohort: a rank needed by this call has failed"). -1 before MPI_Init.
int err_proc_failed();

/// Called once from the MPI_Init wrappers, after PMPI_Init_thread.
void init_error_classes();

}  // namespace cohort::wrap
