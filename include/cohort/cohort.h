/* cohort: keeps MPI jobs alive on the survivors when ranks die.
 *
 * The optional C API. A program linked with cohort's flags needs none of it: its MPI calls keep working
 * on the survivors. Programs that want to know who died include this header and test COHORT_API, so the
 * same source also builds without cohort:
 *
 *     #if __has_include(<cohort/cohort.h>)
 *     #include <cohort/cohort.h>
 *     #endif
 *     #ifdef COHORT_API
 *       n = cohort_failed_ranks(dead, 64);
 *     #endif
 *
 * Ranks are always ranks of MPI_COMM_WORLD. Every function is thread-safe and may be called from any
 * thread after MPI_Init has returned (before it, or after MPI_Finalize, they report no failures).
 * No function here calls MPI.
 */
#ifndef COHORT_COHORT_H
#define COHORT_COHORT_H

#ifdef __cplusplus
extern "C" {
#endif

/** Defined when this header is present; guard uses of the optional API with it. */
#define COHORT_API 1
#define COHORT_VERSION_MAJOR 0
#define COHORT_VERSION_MINOR 1

/** Exit code of a rank that learned the survivors declared it dead (self-fencing). cohort-run counts
 *  such a rank as dead, not as a failure of the job. */
#define COHORT_EXIT_FENCED 86

/** Number of MPI_COMM_WORLD ranks known dead on this rank. Monotone: it never decreases. */
int cohort_failed_count(void);

/** Copies up to max dead MPI_COMM_WORLD ranks, in the order this rank learned of them, into ranks[0..max).
 *  Returns how many were copied (0 <= n <= max), or -1 if ranks is NULL while max > 0. */
int cohort_failed_ranks(int *ranks, int max);

/** 1 if world_rank is not known dead, 0 if it is, -1 if world_rank is out of [0, world size). */
int cohort_is_alive(int world_rank);

/** Called once per dead rank, with that MPI_COMM_WORLD rank and ctx.
 *  It runs on cohort's detector thread, not on the thread that calls MPI: it must be short, must not block
 *  and must not call MPI; set a flag or push to a queue instead. */
typedef void (*cohort_failure_callback)(int world_rank, void *ctx);

/** Registers callback (up to 16 of them). Failures learned before registration are not replayed; read
 *  cohort_failed_ranks() after registering to catch up. Returns 0, or -1 when the table is full or
 *  callback is NULL. */
int cohort_on_failure(cohort_failure_callback callback, void *ctx);

/** The MPI error class of what calls return under the `error` policy when the rank that matters is dead:
 *  MPIX_ERR_PROC_FAILED where mpi.h defines it, otherwise a class registered at MPI_Init. Test a return
 *  code with MPI_Error_class(rc, &cls) and compare cls (where the class is registered, calls return an
 *  error code of that class, not the class itself). Valid after MPI_Init; -1 before. */
int cohort_err_proc_failed(void);

/** How many times this process entered cohort's wrapper for the named call (e.g. "MPI_Barrier"), or -1
 *  if cohort does not wrap that call. Lets a program or a test check that its link line is right. */
long cohort_call_count(const char *mpi_call);

#ifdef __cplusplus
}
#endif
#endif /* COHORT_COHORT_H */
