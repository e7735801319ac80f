// Point-to-point requests that never wait on a dead rank: cohort's record of each request the program
// holds, and the one way every point-to-point wrapper completes requests (OCFTL section 4.5 and its
// Algorithm 1: a blocking call is its nonblocking variant polled together with the failure detector;
// Legio thesis section 3.4: what a send to, or a receive from, a dead rank does).
//
// A request whose peer is dead is *withdrawn*, never waited on:
//   - a send is re-tested COHORT_SEND_RETRIES times (default 3; pauses 100 µs, 200 µs, 400 µs...), since
//     a few sends to a dead rank still complete; then it is abandoned (kept, never freed: MPI may still use
//     it; MPI_Cancel does not cancel sends to a dead rank);
//   - a receive is cancelled (PMPI_Cancel) and then completes either cancelled or, when the message had
//     already arrived before the sender died, received: such a message is delivered as usual. A receive
//     that does neither within 100 ms (a transfer cut by the sender's death) is abandoned.
// Then the dead-peer policy (wrap/core/policy.hpp; COHORT_ON_DEAD_PEER[_SEND|_RECV]) decides: skip completes
// the request as if its peer were MPI_PROC_NULL (MPI_SUCCESS; status: MPI_SOURCE = MPI_PROC_NULL,
// MPI_TAG = MPI_ANY_TAG, count 0); error completes it with cohort's proc-failed error code (of class
// cohort_err_proc_failed(); status: MPI_SOURCE and MPI_TAG as asked, count 0, MPI_ERROR = the code) after
// calling the communicator's error handler;
// abort ends the job. Defaults (Legio): send skip, receive abort.
// A request the program cancelled itself (MPI_Cancel) and that MPI reports cancelled completes as MPI
// says (MPI_SUCCESS, MPI_Test_cancelled true), whatever the policy. A persistent request is cohort's own
// (Persistent below): each start is a fresh nonblocking operation, handled as any other.
//
// Ranks in Op are ranks of the program's own communicator (the alias); point-to-point never renumbers.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "detector/runtime.hpp"
#include "repair/repair.hpp"
#include "wrap/core/datatype_holder.hpp"

namespace cohort::wrap::p2p {

/// none: a request cohort did not start (a collective's, an inactive persistent one): completed as MPI would,
/// never considered dead.
enum class Dir : std::uint8_t { none, send, recv };

/// posted: started on MPI; not_posted: a send to a rank already known dead, stood in for by a completed
/// generalized request; cancelling: PMPI_Cancel issued; stuck: neither completed nor cancelled in time.
enum class Stage : std::uint8_t { posted, not_posted, cancelling, stuck };

/// Cohort's record of one point-to-point request.
struct Op {
  Dir dir = Dir::none;
  Stage stage = Stage::posted;
  int peer = MPI_PROC_NULL;  ///< rank of comm; MPI_ANY_SOURCE for a wildcard receive
  int tag = MPI_ANY_TAG;
  MPI_Comm comm = MPI_COMM_NULL;
  const char *call = "";   ///< the MPI call in progress, for messages
  bool cancelled = false;  ///< the program called MPI_Cancel on it: a withdrawal then reports MPI's cancelled status
};

/// COHORT_SEND_RETRIES (default 3): re-tests of a send to a dead rank, and re-posts of a blocking send
/// that MPI failed. Read once; an invalid value: one line naming the variable, exit code 2.
int send_retries();

inline Op make_op(Dir dir, int peer, int tag, MPI_Comm comm, const char *call) {
  return Op{dir, Stage::posted, peer, tag, comm, call};
}

/// True when op can never complete by itself: its peer is known dead (MPI_ANY_SOURCE: no rank of the
/// communicator but the caller can send) or it was already withdrawn. Never true for Dir::none.
bool dead(const Op &op);

/// The nonblocking send of one send mode: PMPI_Isend, PMPI_Issend, PMPI_Irsend or PMPI_Ibsend.
using IsendFn = int (*)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);

/// Starts a send (`isend`, PMPI_Isend by default; test hook "send.posted"). To a rank already known dead
/// nothing is sent: *req is a completed generalized request and op.stage is not_posted (the policy applies
/// on completion).
int post_send(const void *buf, int count, MPI_Datatype type, Op &op, MPI_Request *req, IsendFn isend = PMPI_Isend);
/// Starts a receive (PMPI_Irecv; test hook "recv.posted"), also from a dead rank: its message may be here.
int post_recv(void *buf, int count, MPI_Datatype type, Op &op, MPI_Request *req);
/// Receives a message matched by MPI_Mprobe/MPI_Improbe (PMPI_Imrecv; test hook "recv.posted"); op describes
/// it (source and tag of the match). *msg becomes MPI_MESSAGE_NULL.
int post_mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *msg, Op &op, MPI_Request *req);
/// MPI_Test calls a blocking completion makes before it sets up its watch of the detector.
constexpr int kInlineSpins = 64;

/// The first part of a blocking completion while no failure is known: up to kInlineSpins PMPI_Test calls
/// on *req (stopping at once if the detector learns of a failure). True when MPI completed *req or failed
/// the test (*rc holds MPI's code); false when *req is still active and the caller must go on with
/// complete() (also when MPI failed it for a dead peer, under ULFM). Builds no record: the blocking wrappers' fast path (inlined).
inline bool spin(MPI_Request *req, MPI_Status *status, int *rc) {
  const std::uint64_t epoch = detector::failure_epoch();
  for (int i = 0; i < kInlineSpins; ++i) {
    int done = 0;
    *rc = PMPI_Test(req, &done, status);
    // NOTE: under ULFM MPI itself fails a request whose peer died: then complete() decides (policy).
    if (done || *rc != MPI_SUCCESS) return *rc == MPI_SUCCESS || repair::error_kind(*rc) == repair::ErrorKind::none;
    if (detector::failure_epoch() != epoch) return false;
  }
  return false;
}

/// Blocking completion (MPI_Wait semantics) of the active request *req described by op. Returns MPI's
/// code, or the policy's outcome (see above); *req is MPI_REQUEST_NULL on return unless MPI failed.
/// ULFM mode (wrap/core/ulfm_mode.hpp): MPIX_ERR_REVOKED when op.comm is revoked (before or while waiting; the
/// request withdrawn); a receive from MPI_ANY_SOURCE with an unacknowledged failure returns
/// MPIX_ERR_PROC_FAILED_PENDING and stays active if keep_pending (MPI_Wait), else is withdrawn and returns
/// MPIX_ERR_PROC_FAILED (MPI_Recv).
int complete(MPI_Request *req, Op &op, MPI_Status *status, bool keep_pending = false);
/// MPI_Waitall semantics over reqs[0..n) described by ops[0..n) (statuses may be MPI_STATUSES_IGNORE).
/// Returns MPI_SUCCESS, or MPI_ERR_IN_STATUS when a request failed (policy error: its MPI_ERROR holds the
/// proc-failed code, the others MPI_SUCCESS; the error handler is called once).
int complete_all(int n, MPI_Request *reqs, Op *ops, MPI_Status *statuses);
/// MPI_Waitany semantics: completes one request (a live one that completed, or a dead one, per policy).
int complete_any(int n, MPI_Request *reqs, Op *ops, int *index, MPI_Status *status);
/// ULFM backend: *rc, from a PMPI_Iprobe described by op, says MPI knows the peer dead (true: op.stage is
/// then not_posted and apply_policy decides). From MPI_ANY_SOURCE (..._PENDING) the failure is
/// acknowledged on op.comm and *rc becomes MPI_SUCCESS (false). Heartbeat backend: always false.
bool mpi_reported_dead_probe(int *rc, Op &op);
/// MPI_Test semantics: a request whose peer is dead completes (per policy) with *flag = 1.
int test(MPI_Request *req, Op &op, int *flag, MPI_Status *status);
/// MPI_Request_get_status semantics: like test() but frees nothing. A request whose peer is dead reports
/// *flag = 1 and the outcome that a later MPI_Wait gives (delivered: MPI's status; else the policy's),
/// after withdrawing it (op.stage records how far; the caller keeps the record).
int peek(MPI_Request req, Op &op, int *flag, MPI_Status *status);
/// MPI_Testall semantics: *flag = 1 once every live request completed; requests with a dead peer are then
/// completed per policy as well. With *flag = 0 no request handle changes (dead receives may have been
/// cancelled already: ops[i].stage records it, and the caller keeps the records).
int test_all(int n, MPI_Request *reqs, Op *ops, int *flag, MPI_Status *statuses);

/// Applies the dead-peer policy to an operation that has nothing to withdraw (a probe): fills *status
/// (unless MPI_STATUS_IGNORE) and returns MPI_SUCCESS (skip) or the proc-failed code (error, after the
/// communicator's error handler); abort ends the job.
int apply_policy(const Op &op, MPI_Status *status);

/// The request table (wrap/p2p/request_table.hpp) of the requests the program holds.
void track(MPI_Request req, const Op &op);
std::optional<Op> lookup(MPI_Request req);
std::optional<Op> untrack(MPI_Request req);
/// A persistent request (MPI_Send_init & co.) as cohort keeps it. The program's handle is the request that
/// MPI's own init call made; cohort never starts it, so MPI never completes, fails or frees it (under ULFM,
/// Open MPI 5 frees a persistent request that it fails for a dead peer). Each MPI_Start posts a fresh
/// nonblocking operation (post_send with `isend`, or post_recv) recorded like an MPI_Isend's/MPI_Irecv's;
/// the wait and test calls complete that operation in place of the handle (dead-peer policies included),
/// after which the handle is inactive again. `type` is held for the record's life (HeldType).
/// A persistent collective (MPI_Allreduce_init & co., wrap/coll/persistent_coll.cpp) has `start_coll` instead:
/// each start calls it (cohort's nonblocking twin of the collective), and op names only the communicator and
/// the call. Its handle is an MPI_Send_init to MPI_PROC_NULL on MPI_COMM_SELF that cohort never starts.
struct Persistent {
  Op op;  ///< what each start posts (op.dir send or recv; never MPI_PROC_NULL: MPI's own request runs then)
  /// A persistent collective's start: posts the operation, *req its request (a nonblocking collective's).
  std::shared_ptr<const std::function<int(MPI_Request *req)>> start_coll;
  void *buf = nullptr;
  int count = 0;
  TypeRef type;                          ///< null for a persistent collective
  IsendFn isend = nullptr;               ///< the send mode (PMPI_Isend & co.); nullptr for a receive
  MPI_Request active = MPI_REQUEST_NULL;  ///< the started operation; MPI_REQUEST_NULL while inactive
};
/// The table of Persistent records, keyed by the program's handle. Thread-safety as the request table's.
void track_persistent(MPI_Request req, const Persistent &p);
std::optional<Persistent> lookup_persistent(MPI_Request req);
std::optional<Persistent> untrack_persistent(MPI_Request req);
/// True once any persistent request is recorded (one relaxed load): the wait and test wrappers look up
/// handles in the persistent table only then.
bool any_persistent();
/// Messages matched by MPI_Mprobe/MPI_Improbe: who sent them, for MPI_Mrecv/MPI_Imrecv.
void track_message(MPI_Message msg, const Op &op);
std::optional<Op> untrack_message(MPI_Message msg);
/// For MPI_Isend/MPI_Irecv: tracks *req (just posted for op) when rc, the post's result, is MPI_SUCCESS;
/// returns rc. (*req is read here, after the post wrote it.)
inline int tracked(int rc, const MPI_Request *req, const Op &op) {
  if (rc == MPI_SUCCESS) track(*req, op);
  return rc;
}

/// For tests and leak checks: records in the table, and requests abandoned to MPI (sends to, or cut
/// receives from, a dead rank; dropped once MPI completes them after all).
std::size_t tracked_requests();
std::size_t abandoned_requests();

}  // namespace cohort::wrap::p2p
