// The MPI adapter of the resumable collective operation (wrap/core/collective_op.hpp): posts, polls,
// confirms, agrees and shrinks for one call on one alias. The driver (wrap/core/driver.hpp) runs it to the
// end, a nonblocking collective (wrap/core/nbc.hpp) steps it, deferred confirmation (wrap/core/deferred.hpp)
// replays calls through it.
#pragma once
#include <mpi.h>

#include <memory>
#include <vector>

#include "wrap/core/alias.hpp"
#include "wrap/core/call_desc.hpp"
#include "wrap/core/collective_op.hpp"
#include "wrap/core/progress.hpp"
#include "wrap/core/small_coll.hpp"

namespace cohort::wrap {

/// The MPI adapter of one CollectiveOp (wrap/core/collective_op.hpp): run() drives it to the end, a nonblocking
/// collective (wrap/core/nbc.hpp) steps it from the program's wait and test calls.
/// Not thread-safe: one thread steps an adapter at a time.
class OpAdapter {
 public:
  /// Takes the alias's next call number (Alias::next_call).
  OpAdapter(Alias &alias, const CallDesc &call);
  /// Runs as the alias's call number call_no (a retry or a replay of deferred confirmation).
  OpAdapter(Alias &alias, const CallDesc &call, unsigned long long call_no);
  ~OpAdapter();
  OpAdapter(const OpAdapter &) = delete;
  OpAdapter &operator=(const OpAdapter &) = delete;

  /// Does the operation's next action with `post`. wait: poll and poll_confirm wait until the request
  /// completes or a member is known dead (the blocking form); otherwise they test once. Returns false when
  /// nothing moved (a request still pending), true otherwise.
  bool step(PostFn post, bool wait);
  /// The action ahead (wrap/core/collective_op.hpp).
  OpAction next() const;
  /// 0 for the first attempt.
  int attempt() const { return op_.attempt(); }
  /// A request of this operation was abandoned: what its posts used must never be freed.
  bool abandoned() const { return abandoned_; }
  /// A revoke of the alias (MPIX_Comm_revoke by any member, ULFM 17.3.1) ends the operation: its waits
  /// end, the request is abandoned and the result is MPIX_ERR_REVOKED. Set by the program's own calls
  /// (blocking and nonblocking), not by cohort's joins. In ULFM mode (wrap/core/ulfm_mode.hpp, fixed when the
  /// adapter is made) this holds anyway, and a failure ends the operation with MPIX_ERR_PROC_FAILED where a
  /// transparent one agrees and retries.
  void end_on_revoke() { end_on_revoke_ = true; }
  /// Once next() is done: MPI_SUCCESS, the policy's result, or an MPI error code (already passed to the
  /// alias's error handler).
  int result();

 private:
  bool poll(bool wait);
  bool poll_confirm(bool wait);
  bool poll_small(small::Op &op, bool wait, WaitResult *out, int *rc);
  Watch watch_call() const;
  bool ended_by_ulfm();
  void abandon();

  Alias &alias_;
  CallDesc call_;
  CollectiveOp op_;
  const Substitute *sub_ = nullptr;
  int sub_root_ = -1;
  AgreementCode agreed_code_;
  MPI_Request req_ = MPI_REQUEST_NULL, confirm_ = MPI_REQUEST_NULL;
  // The call and its confirmation when they run on point-to-point schedules (wrap/core/small_coll.hpp) instead
  // of req_ and confirm_.
  std::unique_ptr<small::Op> small_op_, small_confirm_;
  bool small_error_ = false;      // the request's error came from a schedule
  bool self_confirming_ = false;  // CollectiveOp::self_confirming was set
  bool refused_ = false;  // MPI refused the post for a dead member (ULFM)
  bool abandoned_ = false;
  bool ulfm_ = false;  // the alias was in ULFM mode when the operation began
  bool end_on_revoke_ = false;
  std::vector<int> failed_;
};

/// Called by every OpAdapter on this process right before it agrees on `alias` (step 4), on the agreeing
/// thread; null (the default) for none. wrap/coll/hierarchy.cpp sets it: there a rank may have to take part in
/// another communicator's repair first (see the note in wrap/coll/hierarchy.cpp). Set once, at MPI_Init.
using BeforeAgree = void (*)(Alias &alias);
void set_before_agree(BeforeAgree hook);

/// Survivors one call apart (step 5): those one call behind ask the others to join their agreement at once
/// (repair::ask_to_join) rather than at their next collective on the alias. A survivor that waits in
/// point-to-point (Watch::join_repairs) calls this: for every alias with no operation in progress whose
/// current substitute has a member known dead and was asked to join, it runs the first steps of its next
/// call as that call would after finding the failure before its post (agree with its call number, shrink)
/// and stops there; its next collective then starts on the shrunk substitute. Not with
/// COHORT_CONFIRM_WINDOW > 1 (its recovery replays calls) nor in ULFM mode. Runs on the waiting thread.
void join_repairs();

/// run() as the alias's call number call_no, confirmed before it returns, without settling windows.
int run_numbered(Alias &alias, const CallDesc &call, PostFn post, unsigned long long call_no);

/// Posts call number call_no on sub (the alias's current substitute; sub_root: the root's rank there, or -1):
/// on cohort's schedule where small::eligible allows (*op is set, tag small::tag(call_no, false)), else with
/// post (*req). Returns the post's MPI code; on an error *op, if set, may hold a started schedule.
int post_call(const Alias &alias, const CallDesc &call, const Substitute &sub, int sub_root,
              unsigned long long call_no, PostFn post, std::unique_ptr<small::Op> *op, MPI_Request *req);

}  // namespace cohort::wrap
