// ULFM's three failure classes as cohort returns them, their strings, the MPIX_FT attribute (its wrapper of
// MPI_Comm_get_attr is here too), and the error handlers cohort calls.
#pragma once
#include <mpi.h>

namespace cohort::wrap {

/// The error class of a failure that prevents a call from completing: MPIX_ERR_PROC_FAILED where the
/// MPI's headers define it (MPICH, Open MPI 5), otherwise a class added with MPI_Add_error_class at
/// MPI_Init (Open MPI 4.1). -1 before MPI_Init where cohort adds it.
int err_proc_failed();

/// The code that calls return for that failure: the class itself, on every MPI (MPI 4.0 section 9.4: a
/// call may return an error class as its code), so that `rc == MPIX_ERR_PROC_FAILED` holds as under a ULFM
/// MPI. Where cohort adds the class, MPI_Error_class of it is answered by cohort (see error_class).
int err_proc_failed_code();

/// The other two failure classes of ULFM (the ULFM API, wrap/core/ulfm_mode.hpp): MPIX_ERR_PROC_FAILED_PENDING
/// (an MPI_ANY_SOURCE receive interrupted by an unacknowledged failure) and MPIX_ERR_REVOKED (an operation
/// on a revoked communicator). As err_proc_failed(): the MPI's where its headers define them, otherwise
/// classes added at MPI_Init; the *_code() functions (what calls return) give the class itself.
int err_proc_failed_pending();
int err_proc_failed_pending_code();
int err_revoked();
int err_revoked_code();

/// rc is one of the three failure codes above (what cohort itself returns for a failure).
bool is_failure_code(int rc);

/// cohort's text for one of the three failure classes ("MPI_ERR_PROC_FAILED: ..."), or nullptr for any
/// other code. Valid before MPI_Init where the MPI's headers define the classes.
const char *failure_text(int code);

/// MPI_Error_class as the program sees it: a failure class maps to itself (Open MPI 4.1 maps a class added
/// by MPI_Add_error_class to MPI_ERR_UNKNOWN), any other code to the MPI's answer.
int error_class(int code, int *cls);

/// MPI_Error_string as the program sees it: cohort's text for a failure class (MPICH 4.0.2 has none for
/// its MPIX_ERR_* and prints "Unknown error class"), the MPI's for any other code.
int error_string(int code, char *text, int *len);

/// Called once from the MPI_Init wrappers, after PMPI_Init_thread: adds the failure classes where the MPI
/// lacks them and the MPIX_FT attribute on MPI_COMM_WORLD (cohort_mpix_ft, <cohort/mpi-ext.h>). ULFM
/// build: also gives MPI_COMM_WORLD, if its error handler is MPI_ERRORS_ARE_FATAL, cohort's handler that
/// is fatal for every error except the failure classes, which MPI raises on the program's communicators
/// and cohort's wrappers handle (dead-peer policy, repair).
void init_error_classes();

/// Sets the MPIX_FT attribute on MPI_COMM_WORLD: for MPI_Init in a program that started cohort with
/// MPI_Session_init (init_error_classes ran then, without MPI_COMM_WORLD).
void set_world_ft_attribute();

/// Gives `to` (just created from `from`) from's error handler, as MPI does for a new communicator. Local.
void copy_errhandler(MPI_Comm from, MPI_Comm to);

/// Calls comm's error handler with code on behalf of cohort (policy error): fatal under
/// MPI_ERRORS_ARE_FATAL (also under cohort's ULFM handler), whatever the code's class; a fatal handler's
/// failure class is logged with cohort's text first (MPICH's own message would say "Unknown error class").
void call_errhandler(MPI_Comm comm, int code);

/// Applies `error`: calls comm's error handler with err_proc_failed_code() (of class err_proc_failed())
/// and returns that code.
int raise_error(MPI_Comm comm, const char *call);

}  // namespace cohort::wrap
