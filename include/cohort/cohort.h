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
 * No function here calls MPI, except the group functions at the end (declared when mpi.h comes first).
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
 *  Returns how many were copied (0 <= n <= max), or -1 if ranks is NULL while max > 0. Under replication:
 *  the logical ranks with no live replica left. */
int cohort_failed_ranks(int *ranks, int max);

/** 1 if world_rank is not known dead, 0 if it is, -1 if world_rank is out of [0, world size). Under
 *  replication (COHORT_REPLICAS >= 2) ranks are logical ranks, as the program sees them: 0 once the rank
 *  has no live replica left, as cohort_failed_ranks reports it. */
int cohort_is_alive(int world_rank);

/** Called once per dead rank, with that MPI_COMM_WORLD rank and ctx.
 *  It runs on cohort's detector thread, not on the thread that calls MPI: it must be short, must not block
 *  and must not call MPI; set a flag or push to a queue instead. */
typedef void (*cohort_failure_callback)(int world_rank, void *ctx);

/** Registers callback (up to 16 of them). Failures learned before registration are not replayed; read
 *  cohort_failed_ranks() after registering to catch up. Returns 0, or -1 when the table is full or
 *  callback is NULL. */
int cohort_on_failure(cohort_failure_callback callback, void *ctx);

/** Legio's hierarchy (COHORT_HIERARCHY=host|K), for tests and diagnostics: on this rank, the repairs
 *  (shrinks) of its local communicator and of the POV communicators it is a member of so far, its local
 *  group (0-based, in the order of each group's lowest rank), and its group's current master (the lowest
 *  MPI_COMM_WORLD rank among the agreed survivors of the local communicator). Any pointer may be NULL.
 *  Returns 1, or 0 when the hierarchy is off (outputs untouched). */
int cohort_hierarchy_state(int *local_repairs, int *pov_repairs, int *group, int *master);

/** The MPI error class of what calls return under the `error` policy when the rank that matters is dead:
 *  MPIX_ERR_PROC_FAILED where the MPI's headers define it, otherwise a class added at MPI_Init. Calls
 *  return the class itself as the code: rc == cohort_err_proc_failed(), and MPI_Error_class(rc, &cls)
 *  gives cls == rc. Valid after MPI_Init (-1 before where cohort adds the class). */
int cohort_err_proc_failed(void);

/** How many times this process entered cohort's wrapper for the named call (e.g. "MPI_Barrier"), or -1
 *  if cohort does not wrap that call. Lets a program or a test check that its link line is right. */
long cohort_call_count(const char *mpi_call);

#if defined(MPI_VERSION) || defined(COHORT_DOXYGEN)
/* Non-collective repair over a group (declared when <mpi.h> is included before this header). These
 * functions call MPI. Only the members of `group` take part: ranks outside it are never sent a message
 * nor waited for, so they may be busy elsewhere or blocked forever. `group` is any MPI group (say of a
 * communicator that holds dead ranks); every live member passes the same group (members and order) and
 * tag, and makes its group calls with that (group, tag) in the same order. Thread-safe; concurrent calls
 * need different (group, tag). Source: Rocco and Palermo, "Fault-Aware Non-Collective Communication
 * Creation and Reparation in MPI" (arXiv:2209.01849, 2022): its group agree, group shrink and liveness
 * discovery; cohort's own design of them is in repair/liveness.hpp. Under the ULFM backend they fall
 * back to ULFM's own calls (see repair/group_ulfm.cpp). */

/** Uniform agreement among the live members of group: on return every live member holds in *flag the
 *  bitwise AND of the live members' *flag, and the same failed members (sorted ranks of group) in
 *  failed[0..*nfailed) (at most max_failed copied; *nfailed is the full count). Cost without failures:
 *  2(n-1) messages for n members. Returns MPI_SUCCESS, MPI_ERR_GROUP (this rank is not in group),
 *  MPI_ERR_ARG (flag or nfailed NULL, or failed NULL with max_failed > 0), MPI_ERR_OTHER (called outside
 *  MPI_Init/MPI_Finalize). */
int cohort_group_agree(MPI_Group group, int tag, int *flag, int *failed, int max_failed, int *nfailed);

/** A new communicator over the live members of group, in group order (the group shrink: what cohort's
 *  MPI_Comm_create_group does). A member that dies during the call makes the others retry without it.
 *  Cost without failures: one MPI_Comm_create_group and one group agreement. Returns MPI_SUCCESS,
 *  MPI_ERR_GROUP (this rank is not in group), MPI_ERR_ARG (newcomm NULL), MPI_ERR_OTHER (outside
 *  MPI_Init/MPI_Finalize), or MPI's error code when creating failed 5 times without a new failure. */
int cohort_group_shrink(MPI_Group group, int tag, MPI_Comm *newcomm);

/** A window made on a communicator cohort protects, for tests and diagnostics: the number of ranks of the
 *  window cohort works on now (the survivors it was last made over, dead ones included until the fence
 *  that makes it again) and how many times it was made again over the survivors (at an MPI_Win_fence
 *  after a shrink; README, "Windows"). Local, not thread-safe against calls on the same window. Either
 *  pointer may be NULL. Returns 1, or 0 when cohort does not protect win (outputs untouched). */
int cohort_win_state(MPI_Win win, int *members, int *recreations);
#endif

#ifdef __cplusplus
}
#endif
#endif /* COHORT_COHORT_H */
