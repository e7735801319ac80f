// ULFM's API on MPIs without ULFM (MPICH 4.0.2 ch4, Open MPI 4.1): the MPIX_Comm_* calls (wrap/calls.def,
// COHORT_MPIX rows) over cohort's repair layer, and ULFM's error semantics for the communicators that use it.
//
// Source: the ULFM specification (Bland, Bouteiller, Herault, Bosilca, Dongarra, "Post-failure recovery of
// MPI communication capability", IJHPCA 2013; the MPI Forum's fault-tolerance chapter draft, as in Open MPI
// 5's mpi-ext.h): error classes MPIX_ERR_PROC_FAILED, _PENDING, MPIX_ERR_REVOKED; revoke, shrink, agree,
// failure acknowledgement.
//
// ULFM mode of a communicator (the program's, an alias of wrap/core/driver.hpp):
//   - a collective returns MPIX_ERR_PROC_FAILED as soon as a member is known dead (before it is posted, or
//     while it waits: the request is abandoned); no transparent shrink, no retry, no confirmation;
//   - a send to / receive from a dead rank returns MPIX_ERR_PROC_FAILED (the dead-peer policy is `error`);
//   - a receive from MPI_ANY_SOURCE returns MPIX_ERR_PROC_FAILED_PENDING while a member is dead and not
//     acknowledged (MPIX_Comm_failure_ack / MPIX_Comm_ack_failed); a nonblocking one stays active;
//   - every operation on a revoked communicator returns MPIX_ERR_REVOKED, pending ones included, except
//     agree, shrink, the acknowledgement calls, revoke, is_revoked and MPI_Comm_free.
// Errors go to the communicator's error handler; under MPI_ERRORS_ARE_FATAL the job stops with one line
// naming the call (as MPI's fatal handler would, ULFM 17.2).
// Otherwise the communicator keeps cohort's transparent shrinking.
//
// Which communicators are in ULFM mode must be the same at every member (the two modes run different
// protocols for one collective), so it depends on nothing local to a rank (not on the error handler):
// COHORT_ULFM_API (read at MPI_Init)
//   auto (default)  every communicator once the program included <cohort/mpi-ext.h> (its constructor
//                   calls cohort_ulfm_api_select at load time); otherwise a communicator on which the
//                   program called a collective MPIX_* function (agree, iagree, shrink), and those that
//                   shrink, dup, split make from it;
//   on              every communicator; off: none (the MPIX_* calls still work, errors stay transparent).
// A revoked communicator is in ULFM mode whatever the setting: the revoke is the program's own order.
//
// Thread-safety: every function is thread-safe.
#pragma once
#include <mpi.h>

namespace cohort::wrap::ulfm {

/// The program asked for ULFM semantics on every communicator (cohort_ulfm_api_select). Local.
void select_all();
/// Reads COHORT_ULFM_API (MPI_Init); an invalid value: one line naming it and the rank, exit code 2.
void read_setting();
/// comm (and what it creates) is in ULFM mode under `auto`: called by the collective MPIX_* calls on comm.
void mark(MPI_Comm comm);
/// child, just created from parent (dup, split, shrink), takes parent's mode. Local.
void inherit(MPI_Comm parent, MPI_Comm child);

/// comm is in ULFM mode by the setting, the header or a mark (not by a revoke). Local.
bool selected(MPI_Comm comm);
/// The communicator whose revocation is comm's: comm itself, or for an intercommunicator cohort made its
/// union alias (wrap/comm/intercomm.hpp).
MPI_Comm revocation_comm(MPI_Comm comm);
/// comm is revoked (known here), whatever its mode. Two atomic loads while nothing was revoked or selected.
bool revoked(MPI_Comm comm);
/// ULFM semantics apply to comm now: selected(comm) or revoked(comm).
bool active(MPI_Comm comm);
/// active(comm) and a member of comm is known dead here and not acknowledged.
bool unacknowledged_failure(MPI_Comm comm);

enum class Failure { proc_failed, pending, revoked };
/// The code calls return for `f` (wrap/core/errors.hpp).
int code(Failure f);
/// Calls comm's error handler with code(f) (one info line naming call) and returns code(f).
int raise(MPI_Comm comm, Failure f, const char *call);

}  // namespace cohort::wrap::ulfm
