/* cohort: ULFM's API (the MPIX_* of the ULFM specification, as in Open MPI 5's <mpi-ext.h>) on MPIs that
 * lack it (MPICH 4.0.2's ch4 device, whose MPIX_Comm_* abort; Open MPI 4.1, which has none).
 *
 * Include it after <mpi.h>, in place of <mpi-ext.h>, and link with cohort:
 *
 *     #include <mpi.h>
 *     #include <cohort/mpi-ext.h>
 *
 * Including it selects ULFM's error semantics for every communicator whose error handler is not
 * MPI_ERRORS_ARE_FATAL (a constructor runs at load time, unless COHORT_ULFM_API_NO_SELECT is defined;
 * COHORT_ULFM_API=off overrides it): operations
 * that need a dead rank return MPIX_ERR_PROC_FAILED instead of completing over the survivors (README,
 * "ULFM's API without ULFM"). Where the MPI has ULFM itself (Open MPI 5 built --with-ft=ulfm) this header
 * is the MPI's <mpi-ext.h> plus that selection (for cohort's heartbeat build, whose MPIX_* are cohort's;
 * the ulfm build and a program without cohort ignore it).
 *
 * MPIX_ERR_PROC_FAILED, MPIX_ERR_PROC_FAILED_PENDING, MPIX_ERR_REVOKED: error classes, which cohort's calls
 * return as the code itself (rc == MPIX_ERR_PROC_FAILED holds, and so does MPI_Error_class(rc, &cls),
 * cls == MPIX_ERR_PROC_FAILED). MPICH's mpi.h defines them; elsewhere they are classes that cohort adds at
 * MPI_Init, so they are not constant expressions there (no `case` labels) and are valid only after it.
 *
 * MPIX_FT: the attribute key of ULFM (Open MPI 5's mpi-ext.h): on MPI_COMM_WORLD its value points to an int,
 * 1 when the ULFM API is there (with cohort, always):
 *     int *ft, flag;  MPI_Comm_get_attr(MPI_COMM_WORLD, MPIX_FT, &ft, &flag);  if (flag && *ft) ...
 *
 * The names of the ULFM chapter proposed for the MPI standard, without the X (MPI_ERR_PROC_FAILED,
 * MPI_ERR_PROC_FAILED_PENDING, MPI_ERR_REVOKED, MPI_FT; MPI_Comm_revoke, _is_revoked, _shrink, _agree,
 * _iagree, _get_failed, _ack_failed), are defined as the MPIX_ ones wherever the MPI's headers lack them
 * (MPICH 4.0.2, Open MPI 4.1, and Open MPI 5, which has the error classes and MPI_FT but not the calls).
 */
#ifndef COHORT_MPI_EXT_H
#define COHORT_MPI_EXT_H

#include <mpi.h>
#if defined(OPEN_MPI)
#include <mpi-ext.h>
#endif

#if !defined(OMPI_HAVE_MPI_EXT_FTMPI) || !OMPI_HAVE_MPI_EXT_FTMPI
#include <cohort/cohort.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The error classes of MPIX_ERR_PROC_FAILED_PENDING and MPIX_ERR_REVOKED (see cohort_err_proc_failed). */
int cohort_err_proc_failed_pending(void);
int cohort_err_revoked(void);
/** Selects ULFM's error semantics for every communicator (unless COHORT_ULFM_API=off). Thread-safe; may be
 *  called before MPI_Init. The constructor below calls it. */
void cohort_ulfm_api_select(void);

#ifndef MPIX_ERR_PROC_FAILED
#define MPIX_ERR_PROC_FAILED (cohort_err_proc_failed())
#define MPIX_ERR_PROC_FAILED_PENDING (cohort_err_proc_failed_pending())
#define MPIX_ERR_REVOKED (cohort_err_revoked())
#endif

/** The attribute key of MPIX_FT (see above): a key that cohort creates and sets on MPI_COMM_WORLD at
 *  MPI_Init. MPI_KEYVAL_INVALID before. */
int cohort_mpix_ft(void);
#ifndef MPIX_FT
#define MPIX_FT (cohort_mpix_ft())
#endif
/* NOTE: Open MPI 5 declares MPI_FT in an enum (also when built without ULFM), invisible to #ifdef. */
#if !defined(MPI_FT) && !(defined(OPEN_MPI) && OMPI_MAJOR_VERSION >= 5)
#define MPI_FT MPIX_FT
#endif

/* The calls (MPICH's mpi.h declares the first five with the same signatures). Ranks are ranks of comm;
 * groups are subsets of comm's group. All return MPI_SUCCESS or an error code (MPI_ERR_COMM: a
 * communicator cohort does not know, MPI_ERR_ARG: a NULL output). Thread-safe. */
int MPIX_Comm_revoke(MPI_Comm comm);
int MPIX_Comm_shrink(MPI_Comm comm, MPI_Comm *newcomm);
int MPIX_Comm_failure_ack(MPI_Comm comm);
int MPIX_Comm_failure_get_acked(MPI_Comm comm, MPI_Group *failedgrp);
int MPIX_Comm_agree(MPI_Comm comm, int *flag);
int MPIX_Comm_iagree(MPI_Comm comm, int *flag, MPI_Request *request);
int MPIX_Comm_is_revoked(MPI_Comm comm, int *flag);
int MPIX_Comm_ack_failed(MPI_Comm comm, int num_to_ack, int *num_acked);
int MPIX_Comm_get_failed(MPI_Comm comm, MPI_Group *failedgrp);

/* NOTE: static, so each translation unit that includes this header has its own copy; they all set the
 * same flag. Define COHORT_ULFM_API_NO_SELECT before including this header to leave the choice per
 * communicator (ULFM mode where the program calls MPIX_*; README, "ULFM's API without ULFM"). */
#ifndef COHORT_ULFM_API_NO_SELECT
__attribute__((constructor, used)) static void cohort_ulfm_api_select_at_load_(void) { cohort_ulfm_api_select(); }
#endif

#ifdef __cplusplus
}
#endif
#elif !defined(COHORT_ULFM_API_NO_SELECT)
/* NOTE: the MPI has ULFM (Open MPI 5), but a program linked with cohort's heartbeat build gets cohort's
 * MPIX_* all the same (--wrap), and so needs the same selection as above. Weak: a program built natively,
 * without cohort, has no cohort_ulfm_api_select and runs on the MPI's ULFM alone. */
#ifdef __cplusplus
extern "C" {
#endif
void cohort_ulfm_api_select(void) __attribute__((weak));
__attribute__((constructor, used)) static void cohort_ulfm_api_select_at_load_(void) {
  if (cohort_ulfm_api_select) cohort_ulfm_api_select();
}
#ifdef __cplusplus
}
#endif
#endif /* native ULFM or not */

/* The names of the ULFM chapter proposed for the MPI standard, where the MPI's headers lack them. */
#ifndef MPI_ERR_PROC_FAILED
#define MPI_ERR_PROC_FAILED MPIX_ERR_PROC_FAILED
#endif
#ifndef MPI_ERR_PROC_FAILED_PENDING
#define MPI_ERR_PROC_FAILED_PENDING MPIX_ERR_PROC_FAILED_PENDING
#endif
#ifndef MPI_ERR_REVOKED
#define MPI_ERR_REVOKED MPIX_ERR_REVOKED
#endif
/* NOTE: object-like macros: a program may also take a call's address. An MPI whose mpi.h declares these
 * calls has parsed its declarations already; its MPIX_ calls are the same. */
#ifndef MPI_Comm_revoke
#define MPI_Comm_revoke MPIX_Comm_revoke
#endif
#ifndef MPI_Comm_is_revoked
#define MPI_Comm_is_revoked MPIX_Comm_is_revoked
#endif
#ifndef MPI_Comm_shrink
#define MPI_Comm_shrink MPIX_Comm_shrink
#endif
#ifndef MPI_Comm_agree
#define MPI_Comm_agree MPIX_Comm_agree
#endif
#ifndef MPI_Comm_iagree
#define MPI_Comm_iagree MPIX_Comm_iagree
#endif
#ifndef MPI_Comm_get_failed
#define MPI_Comm_get_failed MPIX_Comm_get_failed
#endif
#ifndef MPI_Comm_ack_failed
#define MPI_Comm_ack_failed MPIX_Comm_ack_failed
#endif
#endif /* COHORT_MPI_EXT_H */
