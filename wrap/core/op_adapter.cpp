#include "wrap/core/op_adapter.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>

#include "detector/inject.hpp"
#include "detector/log.hpp"
#include "detector/runtime.hpp"
#include "repair/repair.hpp"
#include "wrap/core/confirm_state.hpp"
#include "wrap/core/errors.hpp"
#include "wrap/core/outcome.hpp"
#include "wrap/core/stop_job.hpp"
#include "wrap/core/ulfm_mode.hpp"

namespace cohort::wrap {
namespace {

std::atomic<BeforeAgree> g_before_agree{nullptr};

}  // namespace

void set_before_agree(BeforeAgree hook) { g_before_agree.store(hook, std::memory_order_release); }

namespace {

// NOTE: Open MPI 4.1 allocates context ids for new communicators one at a time, lowest parent id first;
// an abandoned creation (a member died during it) never finishes, and every later creation on a parent
// with the same or a higher id, the shrink included, then waits forever. MPICH does not block.
void refuse_after_lost_creation(const char *call) {
#ifdef OPEN_MPI
  abort_job(call, "a member died while the new communicator was being created; Open MPI cannot create "
                  "communicators after that");
#else
  (void)call;
#endif
}

// The root of `call` is dead in the agreed view: the policy decides (the same on every survivor).
int dead_root(const Alias &alias, const CallDesc &call, int world_rank) {
  char what[96];
  std::snprintf(what, sizeof what, "root %d (world rank %d) is dead", call.root, world_rank);
  return apply_policy(alias, dead_root_policy(call.name, call.dead_root), call.name, what);
}

}  // namespace

OpAdapter::OpAdapter(Alias &alias, const CallDesc &call) : OpAdapter(alias, call, alias.next_call()) {}

OpAdapter::OpAdapter(Alias &alias, const CallDesc &call, unsigned long long call_no)
    : alias_(alias), call_(call), op_(call_no, call.shape == Shape::communicator), ulfm_(ulfm::active(alias.handle())) {
  if (deferred::window() > 1) op_.use_counts(deferred::window());
#if !defined(COHORT_USE_ULFM)
  // (kept off under the ulfm backend, where joining goes through ULFM's revocation: not tested there)
  else if (call.self_confirming) self_confirming_ = true;
  if (self_confirming_) op_.self_confirming();
#endif
  alias_.busy.fetch_add(1, std::memory_order_acq_rel);
}

OpAdapter::~OpAdapter() {
  small::release(std::move(small_op_));  // (an Op with requests still active is lost, not reused)
  small::release(std::move(small_confirm_));
  alias_.busy.fetch_sub(1, std::memory_order_acq_rel);
}

OpAction OpAdapter::next() const { return op_.next(); }

// The request (or confirmation) in flight stays with MPI, which may still use it: its substitute and what
// the post gave MPI are never freed.
void OpAdapter::abandon() {
  sub_->abandoned.store(true);
  abandoned_ = true;
  small::lose(std::move(small_op_));
  small::lose(std::move(small_confirm_));
}

Watch OpAdapter::watch_call() const {
  Watch watch;
  watch.broken = [this] { return sub_->any_member_failed(); };
  if (end_on_revoke_) {
    watch.revocable = alias_.handle();
    watch.revoke_lazily = true;
  }
  return watch;
}

// Tests a point-to-point schedule once or, with wait_, until it completes or a member is known dead.
// Returns false when nothing moved (tested once, still pending); else *out is its outcome.
bool OpAdapter::poll_small(small::Op &op, bool wait_, WaitResult *out, int *rc) {
  if (wait_) {
    Watch watch = watch_call();
    *out = wait_until([&] { return op.test(rc); }, watch);
  } else if (op.test(rc)) {
    *out = WaitResult::completed;
  } else if (sub_->any_member_failed() && failure_grace_over()) {
    *out = WaitResult::broken;
  } else {
    return false;
  }
  if (*out == WaitResult::completed && *rc != MPI_SUCCESS) *out = WaitResult::failed;
  return true;
}

// ULFM's errors (wrap/core/ulfm_mode.hpp): the alias revoked (a program's call), or in ULFM mode a failure
// where a transparent call would agree, shrink or apply the dead-root policy. What is in flight stays with
// MPI (abandoned). Returns true when the operation ended here.
bool OpAdapter::ended_by_ulfm() {
  // (the usual case, checked at every step: no ULFM mode, and no revoke seen, so nothing is revoked; ulfm_
  // cannot change during a call: only the program's own MPIX_* calls select the mode)
  if (!ulfm_ && (!end_on_revoke_ || !repair::revoke_seen())) return false;
  const OpAction a = op_.next();
  if (a == OpAction::done) return false;
  ulfm::Failure f;
  if ((ulfm_ || end_on_revoke_) && ulfm::revoked(alias_.handle())) {
    f = ulfm::Failure::revoked;
  } else if (ulfm_ && (a == OpAction::agree || a == OpAction::shrink || a == OpAction::dead_root)) {
    f = ulfm::Failure::proc_failed;
  } else {
    return false;
  }
  if (req_ != MPI_REQUEST_NULL || confirm_ != MPI_REQUEST_NULL || small_op_ || small_confirm_) abandon();
  op_.ended_by_ulfm(ulfm::raise(alias_.handle(), f, call_.name));
  return true;
}

bool OpAdapter::poll(bool wait_) {
  int rc = MPI_SUCCESS;
  WaitResult waited;
  if (refused_) {
    waited = WaitResult::broken;
  } else if (small_op_) {
    if (!poll_small(*small_op_, wait_, &waited, &rc)) return false;
    small_error_ = rc != MPI_SUCCESS;
    if (waited == WaitResult::completed) small::release(std::move(small_op_));
  } else if (wait_) {
    Watch watch = watch_call();
    // (a request that completed in error is completed: its code is the program's, kept for the outcome)
    waited = wait(&req_, MPI_STATUS_IGNORE, watch, &rc);
  } else {
    int done = 0;
    rc = PMPI_Test(&req_, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
      waited = repair::error_kind(rc) == repair::ErrorKind::none ? WaitResult::failed : WaitResult::broken;
    } else if (done) {
      waited = WaitResult::completed;
    } else if (sub_->any_member_failed() && failure_grace_over()) {
      waited = WaitResult::broken;
    } else {
      return false;
    }
  }
  refused_ = false;
  // (a revocation that is not the program's, e.g. ULFM's of a private substitute under the ulfm backend,
  // breaks the request as a failure does)
  if (waited == WaitResult::revoked && ended_by_ulfm()) return true;
  if (waited == WaitResult::completed || waited == WaitResult::failed) {
    op_.completed(rc, sub_->any_member_failed());
    // (a self-confirming call returns here: the point where others post their confirmation)
    if (self_confirming_ && op_.next() == OpAction::done) inject::point("confirm.posted");
  } else {
    if (req_ != MPI_REQUEST_NULL || small_op_) abandon();
    op_.broken();
  }
  // NOTE: after a self-confirming call, survivors that completed it may have returned and wait in
  // point-to-point on this one: when this rank agrees instead of returning (its request broke), it asks
  // them to join (join_repairs), as a broken confirmation does.
  if (self_confirming_ && op_.next() == OpAction::agree) {
    repair::ask_to_join(sub_->comm, sub_->comm != alias_.handle());
  }
  return true;
}

bool OpAdapter::poll_confirm(bool wait_) {
  WaitResult waited;
  if (small_confirm_) {
    int rc = MPI_SUCCESS;
    if (!poll_small(*small_confirm_, wait_, &waited, &rc)) return false;
    if (waited == WaitResult::completed) small::release(std::move(small_confirm_));
  } else if (wait_) {
    Watch watch = watch_call();
    waited = wait(&confirm_, MPI_STATUS_IGNORE, watch);
  } else {
    int done = 0;
    int rc = PMPI_Test(&confirm_, &done, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS && done) {
      waited = WaitResult::completed;
    } else if (rc != MPI_SUCCESS || (sub_->any_member_failed() && failure_grace_over())) {
      waited = WaitResult::broken;
    } else {
      return false;
    }
  }
  if (waited == WaitResult::revoked && ended_by_ulfm()) return true;
  if (waited == WaitResult::completed) {
    op_.confirmed();
  } else {
    abandon();
    op_.confirm_broken();
    // NOTE: this rank's request completed and its confirmation broke: others may have passed the barrier
    // and be one call ahead, perhaps waiting in point-to-point on this rank (join_repairs).
    repair::ask_to_join(sub_->comm, sub_->comm != alias_.handle());
  }
  return true;
}

bool OpAdapter::step(PostFn post, bool wait_) {
  if (ended_by_ulfm()) return true;
  switch (op_.next()) {
    case OpAction::begin: {
      sub_ = &alias_.current();
      sub_root_ = -1;
      bool root_dead = false;
      if (call_.root >= 0) {
        // NOTE: an invalid root is the program's error; let MPI report it as it would without cohort.
        sub_root_ = call_.root >= sub_->map.alias_size() ? call_.root : sub_->map.to_sub(call_.root);
        root_dead = sub_root_ < 0;
      }
      op_.begin(root_dead, !root_dead && sub_->any_member_failed(), sub_->map.sub_size());
      return true;
    }
    case OpAction::dead_root:
      op_.dead_root_applied(dead_root(alias_, call_, sub_->map.to_world(call_.root)));
      return true;
    case OpAction::post: {
      req_ = MPI_REQUEST_NULL;  // (a post may leave MPI_REQUEST_NULL: nothing to do on this rank)
      int rc = post_call(alias_, call_, *sub_, sub_root_, op_.call_no(), post, &small_op_, &req_);
      // NOTE: under ULFM, MPI refuses a call on a communicator with a dead member (a failure-class
      // code, repair::error_kind): that is "not completed here", as a failure seen while waiting.
      refused_ = repair::is_failure(rc);
      op_.posted(refused_ ? MPI_SUCCESS : rc);
      return true;
    }
    case OpAction::hook:
      // NOTE: the hook is reached once per call (first attempt, posted or found broken), so that
      // COHORT_INJECT_FAILURE=...,at=<call>.posted,hit=k counts calls, not retries.
      if (call_.posted_hook != nullptr) inject::point(call_.posted_hook);
      op_.hooked();
      return true;
    case OpAction::poll: return poll(wait_);
    case OpAction::confirm: {
      // Fast path: confirmed by a barrier when no member is known dead (see driver.hpp, step 4).
      confirm_ = MPI_REQUEST_NULL;
      bool ok;
      if (small::confirm_eligible(alias_, *sub_)) {
        // A dissemination barrier of messages (wrap/core/small_coll.hpp), on the call's own tag
        small_confirm_ = small::acquire(topology::CollKind::barrier);
        const small::Call barrier{topology::CollKind::barrier};
        ok = small_confirm_->start(barrier, sub_->comm, sub_->map.sub_size(), sub_->rank, 0,
                                   small::tag(op_.call_no(), true)) == MPI_SUCCESS;
      } else {
        ok = PMPI_Ibarrier(sub_->comm, &confirm_) == MPI_SUCCESS;
      }
      if (ok) inject::point("confirm.posted");
      op_.confirm_posted(ok);
      return true;
    }
    case OpAction::poll_confirm: return poll_confirm(wait_);
    case OpAction::agree: {
      if (BeforeAgree hook = g_before_agree.load(std::memory_order_acquire)) hook(alias_);
      agreed_code_ = op_.agreement_code();
      int rc = deferred::agree_code(sub_->comm, &agreed_code_, op_.code_words(), &failed_);
      // NOTE: for an all-to-one call, "completed everywhere" only says the survivors delivered their
      // data; if the root is in the agreed failed set, the result is lost with it and the policy decides.
      bool root_lost = call_.output_at_root && sub_root_ >= 0 &&
                       std::binary_search(failed_.begin(), failed_.end(), sub_root_);
      op_.agreed(agreed_code_, rc == MPI_SUCCESS, !failed_.empty(), root_lost);
      CompletedSpan span;
      if (op_.counts() && read_span(agreed_code_, op_.count(), &span, op_.window_size())) {
        deferred::note_span(alias_.deferred_state(), span);
      }
      return true;
    }
    case OpAction::shrink:
      if (op_.retry_pending()) {
        abandon();  // other survivors' requests on it may still be pending
        if (call_.creates_communicator) refuse_after_lost_creation(call_.name);
        if (op_.window() == Window::behind) {
          COHORT_LOG_INFO("%s: survivors one call behind; retrying after a shrink", call_.name);
        } else {
          COHORT_LOG_INFO("%s: attempt %d did not complete on every survivor; retrying after a shrink",
                          call_.name, op_.attempt() + 1);
        }
      }
      op_.shrunk(alias_.shrink(*sub_, call_.name));
      return true;
    case OpAction::done: return false;
  }
  return false;
}

int OpAdapter::result() {
  const OpOutcome &out = op_.outcome();
  switch (out.kind) {
    case OpOutcome::success:  // rc: MPI's error for this rank's request, the program's error
      if (out.rc == MPI_SUCCESS) return MPI_SUCCESS;
      return small_error_ ? raise_p2p_test_error(alias_.handle(), out.rc) : raise_test_error(alias_.handle(), out.rc);
    case OpOutcome::error: return alias_.return_error(out.rc, *sub_);
    case OpOutcome::policy: return out.rc;
    case OpOutcome::inconsistent:
      COHORT_LOG_ERROR("%s: survivors more than one call apart (agreed code %#x...); returning MPI_ERR_OTHER",
                       call_.name, static_cast<unsigned>(agreed_code_.word[0]));
      break;
    case OpOutcome::no_progress:
      COHORT_LOG_ERROR("%s: no progress after %d attempts; returning MPI_ERR_OTHER", call_.name, op_.attempt() + 1);
      break;
  }
  PMPI_Comm_call_errhandler(alias_.handle(), MPI_ERR_OTHER);
  return MPI_ERR_OTHER;
}

void join_repairs() {
  thread_local bool joining = false;
  if (joining || deferred::window() > 1) return;
  joining = true;
  std::vector<Alias *> asked;
  for_each_alias([&asked](Alias &a) {
    if (a.busy.load(std::memory_order_acquire) == 0 && !ulfm::active(a.handle()) && a.current().any_member_failed() &&
        repair::asked_to_join(a.current().comm))
      asked.push_back(&a);
  });
  for (Alias *a : asked) {
    if (a->busy.load(std::memory_order_acquire) != 0) continue;
    COHORT_LOG_INFO("point-to-point wait: joining the survivors' repair of a communicator (call %llu)",
                    static_cast<unsigned long long>(a->peek_call()));
    CallDesc d{"joining from a point-to-point wait", nullptr, Shape::all_to_all};
    OpAdapter op(*a, d, a->peek_call());
    auto nothing = [](const Substitute &, int, MPI_Request *req) {
      *req = MPI_REQUEST_NULL;
      return MPI_SUCCESS;
    };
    // The first steps of the call: found broken before its post, it agrees and shrinks; it stops where the
    // call would post (or retry) on the shrunk substitute.
    while (op.next() != OpAction::done && op.next() != OpAction::post &&
           !(op.next() == OpAction::begin && op.attempt() > 0)) {
      op.step(nothing, true);
    }
  }
  joining = false;
}

int post_call(const Alias &alias, const CallDesc &call, const Substitute &sub, int sub_root,
              unsigned long long call_no, PostFn post, std::unique_ptr<small::Op> *op, MPI_Request *req) {
  small::Layout layout;
  if (call.small != nullptr && small::eligible(alias, sub, *call.small, &layout)) {
    *op = small::acquire(call.small->kind);
    return (*op)->start(*call.small, sub.comm, sub.map.sub_size(), sub.rank, std::max(sub_root, 0),
                        small::tag(call_no, false), &layout);
  }
  return post(sub, sub_root, req);
}

int run_numbered(Alias &alias, const CallDesc &call, PostFn post, unsigned long long call_no) {
  OpAdapter op(alias, call, call_no);
  op.end_on_revoke();
  while (op.next() != OpAction::done) op.step(post, true);
  return op.result();
}

}  // namespace cohort::wrap
