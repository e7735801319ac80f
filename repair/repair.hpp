// Repair of communicators over the survivors: agree, shrink, revoke, ack/get failed.
// The interface mirrors ULFM (MPIX_Comm_agree/shrink/revoke/failure_ack; Bland et al. 2013) so that a
// later issue can expose MPIX_* on top of it. Backends, chosen at configure time (COHORT_DETECTOR):
// - heartbeat (repair/mpi_only.cpp): MPI-only, over the detector's failure notices; the agreement is
//   the tree protocol of repair/agreement.hpp on a private duplicate of MPI_COMM_WORLD;
// - ulfm (repair/ulfm.cpp): the MPI's own MPIX_Comm_* (Open MPI >= 5 --with-ft=ulfm, MPICH ch3).
//
// All ranks are ranks of `comm` unless said otherwise. Collective calls (agree, shrink) must be called by
// every live member of comm, in the same order, like any MPI collective. Every function is thread-safe;
// several threads may run collectives concurrently on *different* communicators.
//
// Communicator identity (heartbeat backend): the members of a communicator must agree on an id for it
// without communicating. MPI_COMM_WORLD and every communicator returned by shrink() are registered by
// repair itself. Register every other communicator that repair will see with register_comm() right after
// creating it (on every member, in creation order); an unregistered communicator is registered at its
// first agree/shrink/revoke on each member, which is consistent only if the members reach their first
// such call on the communicators with the same members in the same order.
#pragma once
#include <mpi.h>

#include <vector>

namespace cohort::repair {

/// Called from the MPI_Init wrappers after detector::start (collective over MPI_COMM_WORLD, while every
/// rank is alive): sets up the backend's private communication. finalize() is local and never blocks.
void init();
void finalize();

/// Status codes (beside MPI_SUCCESS) returned by this interface.
enum Status : int {
  kRevoked = -101,  ///< comm was revoked (by any member); for operations that revocation interrupts
};

/// Registers comm, just created by a collective over parent (dup, split, create, create_group, ...;
/// parent may be MPI_COMM_NULL), under an id derived from parent's id and comm's members. Call it on every
/// member of comm, in the order the communicators were created. Local; idempotent.
void register_comm(MPI_Comm comm, MPI_Comm parent);

/// Uniform agreement among the survivors of comm: on return every survivor holds the bitwise AND of the
/// survivors' *flag (and of the flags of members that failed after contributing) and the same set of
/// failed members (sorted comm ranks): the members that some survivor knew dead when the decision was
/// made. Never waits on a dead rank. Works on a revoked comm (as in ULFM). Failure-free cost: 2(n-1)
/// messages, 2*ceil(log2 n) steps. Returns MPI_SUCCESS.
int agree(MPI_Comm comm, int *flag, std::vector<int> *failed);

/// A new communicator over the survivors of comm, in comm's rank order (Legio's P.7). Fast path (no
/// member known dead, comm not revoked): MPI_Comm_idup of comm, then one agreement that every member made
/// it and that nobody is dead. Otherwise, or when that agreement fails: MPI_Comm_create_group over the
/// survivors of the agreed failed set (parent MPI_COMM_WORLD, as MPICH's ulfm_impl.c shrinks), then an
/// agreement that every one of them got it; repeats with the larger failed set if a member dies
/// meanwhile. Works on a revoked comm. The new communicator is registered. Failure-free cost: one idup
/// and one agreement. Returns MPI_SUCCESS or the MPI error of MPI_Comm_create_group (one line logged).
int shrink(MPI_Comm comm, MPI_Comm *newcomm);

/// Marks comm revoked on every member (asynchronously: a notice to each member; if the revoking rank dies
/// before all have it, those that have it pass it on). Local call; never blocks. Returns MPI_SUCCESS.
int revoke(MPI_Comm comm);
/// True once this rank knows comm revoked. Cheap enough for a poll loop (an atomic load while nothing
/// was ever revoked); receives pending notices at most every 200 µs. False for a comm repair never saw.
bool is_revoked(MPI_Comm comm);
/// False while this rank has received no revoke notice for any communicator (an atomic load): lets a poll
/// loop of a communicator not in ULFM mode skip is_revoked. Heartbeat backend: set by the first notice
/// received (the detector thread receives them every period); ulfm backend: always false (MPI reports a
/// revocation through its return codes).
bool revoke_seen();

/// Survivors one call apart (wrap/core/driver.hpp, step 5): a survivor whose confirmation of a call broke after
/// its own request completed may have others one call ahead, which take part in its agreement only in
/// their next collective on comm; until then they may wait in point-to-point on it for good. It asks them
/// to join at once: ask_to_join(comm) on that survivor, asked_to_join(comm) polled by the others' waits.
/// Heartbeat backend: a notice to every member on a second engine communicator over comm's members (comm
/// itself is not revoked: it may be the program's). ULFM backend: MPIX_Comm_revoke(comm), only when
/// `private_comm` (a communicator the program never sees; comm is shrunk next anyway), else nothing.
/// Local, never blocks.
void ask_to_join(MPI_Comm comm, bool private_comm);
bool asked_to_join(MPI_Comm comm);

/// What an MPI return code says about failures. ULFM backend: MPIX_ERR_PROC_FAILED and
/// MPIX_ERR_PROC_FAILED_PENDING give proc_failed (and make the detector ask MPI at once, so that
/// detector::failure_epoch() has moved when this returns), MPIX_ERR_REVOKED gives revoked. Heartbeat
/// backend: always none (MPI never reports a failure there; the detector is the only source). Local.
enum class ErrorKind { none, proc_failed, revoked };
ErrorKind error_kind(int rc);
/// rc reports a failure (error_kind(rc) is not none): MPI_SUCCESS never does. Local.
inline bool is_failure(int rc) { return rc != MPI_SUCCESS && error_kind(rc) != ErrorKind::none; }
/// True when rc is of class MPIX_ERR_PROC_FAILED_PENDING: MPI suspended a receive from MPI_ANY_SOURCE (the
/// request stays active and resumes once the failure is acknowledged). Heartbeat backend: false. Local.
bool failure_pending(int rc);

/// ULFM's failure_ack / failure_get_acked: acknowledge the failures known now; get them (sorted comm
/// ranks). Local. Return MPI_SUCCESS.
int ack_failed(MPI_Comm comm);
int get_failed(MPI_Comm comm, std::vector<int> *acked);

}  // namespace cohort::repair
