// The error returned under the `error` policy when the rank that matters is dead.
#pragma once
#include <mpi.h>

namespace cohort::wrap {

/// The error class: MPIX_ERR_PROC_FAILED where mpi.h defines it; otherwise a class added with
/// MPI_Add_error_class at MPI_Init (its string: "cohort: a rank needed by this call has failed").
/// -1 before MPI_Init.
int err_proc_failed();

/// The error code that calls return: err_proc_failed() itself where mpi.h defines
/// MPIX_ERR_PROC_FAILED; otherwise a code of that class (MPI_Add_error_code). Programs test it with
/// MPI_Error_class(rc, &cls), cls == err_proc_failed().
/// NOTE: a code, not the class, because Open MPI 4.1's MPI_Error_class maps a class added by
/// MPI_Add_error_class to MPI_ERR_UNKNOWN, while it maps a code of that class to the class.
int err_proc_failed_code();

/// The other two failure classes of ULFM (the ULFM API, wrap/ulfm_api.hpp): MPIX_ERR_PROC_FAILED_PENDING
/// (an MPI_ANY_SOURCE receive interrupted by an unacknowledged failure) and MPIX_ERR_REVOKED (an operation
/// on a revoked communicator). As err_proc_failed(): mpi.h's where it defines them (MPICH), otherwise
/// classes added at MPI_Init, each with one code (the *_code() functions, what calls return). -1 before.
int err_proc_failed_pending();
int err_proc_failed_pending_code();
int err_revoked();
int err_revoked_code();

/// rc is one of the three failure codes above (what cohort itself returns for a failure).
bool is_failure_code(int rc);

/// Called once from the MPI_Init wrappers, after PMPI_Init_thread. ULFM build: also gives
/// MPI_COMM_WORLD, if its error handler is MPI_ERRORS_ARE_FATAL, cohort's handler that is fatal for every
/// error except the failure classes (MPIX_ERR_PROC_FAILED[_PENDING], MPIX_ERR_REVOKED), which MPI raises
/// on the program's communicators and cohort's wrappers handle (dead-peer policy, repair).
void init_error_classes();

/// Gives `to` (just created from `from`) from's error handler, as MPI does for a new communicator. Local.
void copy_errhandler(MPI_Comm from, MPI_Comm to);

/// Calls comm's error handler with code on behalf of cohort (policy error): fatal under
/// MPI_ERRORS_ARE_FATAL (also under cohort's ULFM handler), whatever the code's class.
void call_errhandler(MPI_Comm comm, int code);

}  // namespace cohort::wrap
