// Deferred confirmation (COHORT_CONFIRM_WINDOW > 1): small blocking Barrier, Bcast, Reduce and Allreduce
// return once this rank's own request completed; they are confirmed later by count reports. The window of
// unconfirmed calls is the sans-IO wrap/core/confirm_window.hpp; this is its MPI adapter.
//
// Per call j (run()): settle the other communicators' windows, post the call on the substitute (cohort's
// schedule of messages where wrap/core/small_coll.hpp allows, else MPI's nonblocking variant), wait for it
// (never on a dead rank), log what a replay needs (the result; for Reduce the input and, at the root, the
// result), report this rank's completed count to every other member when due (every ceil(W/2) calls since
// the last report or the last all-to-all call: an MPI_Isend of 8 bytes, tag kReportTag, on the substitute)
// and return while at most W - 1 calls are
// unconfirmed (else report a stale count and wait for the others' reports). A later all-to-all call's
// completion confirms the calls before it. A pending MPI_Irecv (MPI_ANY_SOURCE) per communicator takes the
// others' reports; the lowest count heard from every other member confirms the calls below it. A rank whose
// own request waits more than 200 us reports a stale count (a member at a settle point may need exactly it).
// A call found broken (before its post, while waiting, or refused at its post by MPI under ULFM with a
// failure-class code) is posted again, deferred, on the shrunk substitute unless a survivor completed it:
// every survivor runs call j the same way, also one that joined the same agreement in an earlier call.
//
// Settle points: before any call that could let a rank wait on another one while a survivor still misses
// a call's outcome, every pending confirmation of every communicator completes (settle_all): point-to-
// point and request calls (count_call, wrap/calls.h), every other collective, nonblocking collective,
// communicator and file call (driver run() and nbc::start), and MPI_Finalize (its barrier). Otherwise a
// rank could block in MPI_Recv from a rank that waits in an earlier collective for the replay only the
// receiver can give.
//
// On a failure (seen while waiting for a request or for reports): the survivors agree on their counts of
// completed calls (repair::agree on count_code), shrink, and those ahead replay the calls the others miss
// (replay(): one resilient MPI_Iallreduce of a record per call, "holder wins": a rank that completed the
// call gives its result, the others their input, so that with no holder left the record reduces the
// survivors' inputs; outputs of holders go to scratch). See wrap/core/confirm_window.hpp for the protocol.
//
// Deferred only when: W > 1, the call's payload (count x type size) <= COHORT_CONFIRM_MAX_BYTES, the
// datatype is predefined and, for reductions, the op is predefined (a replay may run after the call
// returned, when the program may have freed a derived type or its own op), and for Reduce the dead-root
// policy is `skip` (its default: a non-root returns before the root's fate is known). Every rank decides the same
// way as long as all ranks pass predefined datatypes, as MPI's type matching makes usual.
//
// Thread-safety: one mutex per communicator's window; settle_all skips windows that another thread holds
// (that thread is inside a collective on that communicator). A settle point also reports a stale count,
// and a window counts as settled only once its count is reported: a rank that heard every other count may
// go on to calls that never report, while the others still wait for its count.
#pragma once
#include <mpi.h>

#include "wrap/core/confirm_state.hpp"
#include "wrap/core/op_adapter.hpp"

namespace cohort::wrap::deferred {

/// Reads COHORT_CONFIRM_WINDOW and COHORT_CONFIRM_MAX_BYTES (confirm_state.hpp) at MPI_Init: an invalid value stops the rank with one line naming the variable. With W > 1
/// it also registers report_idle() as a progress hook of the detector thread.
void check_settings();
/// On the detector thread (detector::add_progress_hook: every 1-5 ms): for each communicator whose
/// window no thread holds and whose count of completed calls has not moved since the last look, reports
/// a stale count. A rank tells the others its count from inside MPI calls; after a deferred call it may
/// stay outside MPI (computing, or waiting for something only another rank's next call brings about)
/// while the others wait at a settle point for exactly that count: this sends it within a few ms.
void report_idle();
/// At MPI_Finalize, after its barrier: cancels every communicator's pending receive of reports and lets
/// their sends go (MPI_Request_free). Not thread-safe against collectives still running.
void shutdown();

/// Runs a blocking collective of wrap/coll (call.defer set; Kind::other for those never deferred): deferred
/// when the rules above allow, else confirmed before it returns, and its confirmation then confirms this
/// communicator's pending calls too (no settle round of reports first). Returns as wrap::run.
int run(Alias &alias, const CallDesc &call, PostFn post);
/// Completes every pending confirmation of alias (recovering on a failure). Collective in effect: returns
/// once every member completed the calls this rank completed.
void settle(Alias &alias);
/// settle() on every communicator with pending confirmations except `except`.
void settle_all(const Alias *except);

}  // namespace cohort::wrap::deferred
