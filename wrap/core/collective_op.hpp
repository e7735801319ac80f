// One resilient collective as a resumable, sans-IO state machine: no MPI, no clock, no threads. The
// adapter (OpAdapter in wrap/core/op_adapter.cpp) asks next() what to do, does it with MPI, and feeds the result back;
// a blocking wrapper loops until done, and a nonblocking one can stop at any poll and resume later (from
// MPI_Test or MPI_Wait). Unit-tested in tests/unit/wrap_collective_op_test.cpp.
//
// The steps (driver.hpp explains the protocol; sources: Legio sections 3-4, OCFTL section 4.5):
//   begin -> [dead_root] | post -> hook (first attempt only) -> poll -> confirm -> poll_confirm -> done
//   a failure known before the post, during the poll or during the confirmation -> agree ->
//     finish | shrink then finish | shrink then begin again (retry) | shrink then dead_root | give up
// Every survivor feeds the same agreed values into agreed(), so every survivor takes the same path.
//
// Not thread-safe: one thread drives an operation at a time.
#pragma once
#include "wrap/core/confirm_window.hpp"
#include "wrap/core/outcome.hpp"

namespace cohort::wrap {

/// What the adapter must do next.
enum class OpAction {
  begin,         ///< look at the alias's current substitute: begin(root_dead, broken, sub_size)
  dead_root,     ///< apply the dead-root policy (agreed information): dead_root_applied(rc)
  post,          ///< post the nonblocking variant on the substitute: posted(rc)
  hook,          ///< first attempt only: reach the call's inject point: hooked()
  poll,          ///< test the request: completed(rc, failure_known) or broken(); nothing while pending
  confirm,       ///< post the confirmation barrier on the substitute: confirm_posted(ok)
  poll_confirm,  ///< test the barrier: confirmed() or confirm_broken(); nothing while pending
  agree,         ///< agree on agreement_code() over the substitute: agreed(code, ok, failures, root_lost)
  shrink,        ///< shrink the substitute (for a retry: mark it abandoned first): shrunk(rc)
  done,          ///< outcome() is final
};

/// How an operation ended.
struct OpOutcome {
  enum Kind {
    success,        ///< completed on every survivor; rc is MPI_SUCCESS or the error MPI gave this rank's request
    policy,         ///< the dead-root policy decided; rc is its result (already through the error handler)
    error,          ///< rc is an MPI error of a post or a shrink on the substitute (route it to the alias's handler)
    inconsistent,   ///< survivors more than one call apart (a defect): the adapter reports MPI_ERR_OTHER
    no_progress,    ///< retries stopped removing ranks: the adapter reports MPI_ERR_OTHER
  };
  Kind kind = success;
  int rc = 0;
};

class CollectiveOp {
 public:
  /// call_no: the alias's number for this collective (Alias::next_call); communicator: a communicator
  /// call (dup, split): never confirmed by the barrier, always agreed.
  CollectiveOp(unsigned long long call_no, bool communicator) : call_no_(call_no), communicator_(communicator) {}

  OpAction next() const { return action_; }
  const OpOutcome &outcome() const { return outcome_; }
  /// 0 for the first attempt.
  int attempt() const { return attempt_; }
  /// The alias's number for this collective.
  unsigned long long call_no() const { return call_no_; }
  /// The pending shrink is followed by a retry (the adapter marks the substitute abandoned first).
  bool retry_pending() const { return after_shrink_ == After::retry; }
  /// With a confirmation window W > 1 (wrap/core/confirm_window.hpp) every agreement on the alias, this one's
  /// included, gives the count of calls the rank completed (count_code), since ranks may be up to W calls
  /// apart; call this before the first step.
  void use_counts(int w) {
    counts_ = true;
    window_size_ = w;
  }
  bool counts() const { return counts_; }
  /// A call whose completion on one rank proves that every member entered it, and that has no result a
  /// survivor could miss (a blocking Barrier): it returns once its request completed, with no
  /// confirmation. A survivor whose request did not complete then agrees with others at most one call
  /// ahead (they entered no later call's confirmation without it), reads Window::ahead and completes the
  /// call too. Not with use_counts (deferred confirmation has its own window). Call before the first step.
  void self_confirming() { self_confirming_ = true; }
  /// Calls completed on this rank as counted by count_code: the call number, plus one once it completed.
  unsigned long long count() const { return call_no_ + (completed_ ? 1 : 0); }
  /// use_counts's W (1 without).
  int window_size() const { return window_size_; }
  /// The agreement input of this rank (window_code of its call number and whether its request completed;
  /// count_code of call_no + completed with use_counts).
  AgreementCode agreement_code() const {
    return counts_ ? count_code(call_no_ + (completed_ ? 1 : 0), window_size_) : window_code(call_no_, completed_);
  }
  /// Words of agreement_code() the survivors agree on (one without use_counts: window_code is one int).
  int code_words() const { return counts_ ? cohort::wrap::code_words(window_size_) : 1; }
  /// The last agreement's reading, for log lines.
  Window window() const { return window_; }

  /// begin: root_dead: the call's root is not a member of the current substitute; broken: a member is
  /// known dead (nothing is posted, the survivors agree at once); sub_size: members of the substitute.
  void begin(bool root_dead, bool broken, int sub_size) {
    sub_size_ = sub_size;
    completed_ = false;
    posted_ = false;
    if (root_dead) {
      action_ = OpAction::dead_root;
    } else if (broken) {
      action_ = attempt_ == 0 ? OpAction::hook : OpAction::agree;
    } else {
      action_ = OpAction::post;
    }
  }
  void dead_root_applied(int rc) { finish(OpOutcome::policy, rc); }
  /// ULFM mode, or a revoked communicator: the call ends with rc (already through the error handler) where a
  /// transparent call would agree, shrink or apply the dead-root policy.
  void ended_by_ulfm(int rc) { finish(OpOutcome::policy, rc); }
  /// rc: the post's MPI code. A post may leave no request (nothing to do on this rank): still MPI_SUCCESS;
  /// the adapter then feeds completed() at the first poll.
  void posted(int rc) {
    if (rc != 0) return finish(OpOutcome::error, rc);
    posted_ = true;
    action_ = attempt_ == 0 ? OpAction::hook : OpAction::poll;
  }
  void hooked() { action_ = posted_ ? OpAction::poll : OpAction::agree; }
  /// rc: MPI's code for this rank's completed request (kept for the outcome); failure_known: a member of
  /// the substitute is known dead now (then the survivors agree instead of confirming). A self-confirming
  /// call returns all the same: its completion proves every member entered it, whoever died since, and
  /// agreeing instead would wait for members that returned from it already and may not come back to MPI
  /// for long (one polling cohort_is_alive outside MPI kept p2p.killed_during_call waiting for good, under
  /// CPU load, when this rank learned of the death before its MPI progressed the dead rank's last message).
  void completed(int rc, bool failure_known) {
    completed_ = true;
    if (rc != 0 && request_rc_ == 0) request_rc_ = rc;
    if (!communicator_ && self_confirming_ && !counts_) return finish(OpOutcome::success, request_rc_);
    action_ = (!communicator_ && !failure_known) ? OpAction::confirm : OpAction::agree;
  }
  /// A member died before this rank's request completed: it is abandoned.
  void broken() { action_ = OpAction::agree; }
  void confirm_posted(bool ok) { action_ = ok ? OpAction::poll_confirm : OpAction::agree; }
  void confirmed() { finish(OpOutcome::success, request_rc_); }
  void confirm_broken() { action_ = OpAction::agree; }

  /// code: the agreed AND of agreement_code(); ok: the agreement returned MPI_SUCCESS (otherwise the
  /// attempt counts as not completed everywhere); failures: the agreed failed set is not empty; root_lost:
  /// an all-to-one call's root is in that set (its result is lost with it).
  void agreed(const AgreementCode &code, bool ok, bool failures, bool root_lost) {
    bool all_completed = false;
    if (counts_) {
      // Every survivor completed this call iff the lowest count is past it; a rank that is past it while
      // others are not has not returned from it (a call that is not deferred returns confirmed), so the
      // call is retried by all.
      CompletedSpan span;
      window_ = read_span(code, call_no_ + (completed_ ? 1 : 0), &span, window_size_) ? Window::same_call
                                                                                       : Window::inconsistent;
      all_completed = window_ == Window::same_call && span.low >= call_no_ + 1;
    } else {
      window_ = read_window(code.word[0], call_no_, &all_completed);
    }
    all_completed = all_completed && ok;
    switch (window_) {
      case Window::same_call: break;
      case Window::ahead:  // the others passed this call's barrier: it completed everywhere, the root too
        return shrink_then(After::finish);
      case Window::behind:  // theirs completed everywhere; mine must be retried
        return shrink_then(After::retry);
      case Window::inconsistent: return finish(OpOutcome::inconsistent, 0);
    }
    switch (next_step(all_completed, failures, attempt_, sub_size_)) {
      case Step::finish: return finish(OpOutcome::success, request_rc_);
      case Step::shrink_then_finish: return shrink_then(root_lost ? After::dead_root : After::finish);
      case Step::shrink_then_retry: return shrink_then(After::retry);
      case Step::give_up: return finish(OpOutcome::no_progress, 0);
    }
  }
  void shrunk(int rc) {
    if (rc != 0) return finish(OpOutcome::error, rc);
    switch (after_shrink_) {
      case After::finish: return finish(OpOutcome::success, request_rc_);
      case After::dead_root: action_ = OpAction::dead_root; break;
      case After::retry:
        ++attempt_;
        request_rc_ = 0;
        action_ = OpAction::begin;
        break;
    }
    after_shrink_ = After::finish;
  }

 private:
  enum class After { finish, retry, dead_root };
  void shrink_then(After a) {
    after_shrink_ = a;
    action_ = OpAction::shrink;
  }
  void finish(OpOutcome::Kind k, int rc) {
    outcome_ = OpOutcome{k, rc};
    action_ = OpAction::done;
  }

  unsigned long long call_no_;
  bool communicator_;
  OpAction action_ = OpAction::begin;
  OpOutcome outcome_;
  After after_shrink_ = After::finish;
  Window window_ = Window::same_call;
  int attempt_ = 0, sub_size_ = 0, request_rc_ = 0;
  bool completed_ = false, posted_ = false, counts_ = false, self_confirming_ = false;
  int window_size_ = 1;  ///< use_counts's W
};

}  // namespace cohort::wrap
