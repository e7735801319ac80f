#include "wrap/core/driver.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <numeric>
#include <unordered_map>

#include "detector/inject.hpp"
#include "detector/log.hpp"
#include "detector/runtime.hpp"
#include "repair/group.hpp"
#include "repair/repair.hpp"
#include "wrap/core/collective_op.hpp"
#include "wrap/core/deferred.hpp"
#include "wrap/core/errors.hpp"
#include "wrap/core/nbc.hpp"
#include "wrap/core/outcome.hpp"
#include "wrap/core/progress.hpp"
#include "wrap/core/ulfm_mode.hpp"
#include "detector/world.hpp"

namespace cohort::wrap {
namespace {

std::mutex g_registry_mu;
std::unordered_map<MPI_Comm, std::unique_ptr<Alias>> g_registry;  // guarded by g_registry_mu
std::atomic<Alias *> g_world{nullptr};
std::atomic<BeforeAgree> g_before_agree{nullptr};

// Ranks of `to`'s members in from's numbering, in to's rank order (ascending when to was built from a
// subset of from in from's order, as shrink does).
std::vector<int> ranks_in(MPI_Comm to, MPI_Comm from) {
  int n = 0;
  PMPI_Comm_size(to, &n);
  MPI_Group gt, gf;
  PMPI_Comm_group(to, &gt);
  PMPI_Comm_group(from, &gf);
  std::vector<int> ranks(n), out(n);
  std::iota(ranks.begin(), ranks.end(), 0);
  PMPI_Group_translate_ranks(gt, n, ranks.data(), gf, out.data());
  PMPI_Group_free(&gt);
  PMPI_Group_free(&gf);
  return out;
}

}  // namespace

bool Substitute::any_member_failed() const {
  std::uint64_t epoch = detector::failure_epoch();
  if (epoch == clean_epoch.load(std::memory_order_relaxed)) return false;
  for (int a : map.members()) {
    if (detector::is_failed(map.to_world(a))) return true;
  }
  clean_epoch.store(epoch, std::memory_order_relaxed);
  return false;
}

void Alias::set_lineage(const std::vector<int> &alias_to_world) {
  // NOTE: members register the aliases over the same members in the same order (the creating calls are
  // collective over them), so the ordinal agrees.
  static std::mutex mu;
  static std::map<std::vector<int>, std::uint64_t> made;
  std::lock_guard<std::mutex> lock(mu);
  // (one more FNV-1a step, with the ordinal)
  lineage_ = (repair::ranks_fingerprint(alias_to_world) ^ ++made[alias_to_world]) * 1099511628211ULL;
}

Alias::Alias(MPI_Comm comm, std::vector<int> alias_to_world) : handle_(comm) {
  set_lineage(alias_to_world);
  auto sub = std::make_unique<Substitute>();
  sub->comm = comm;
  sub->map = RankMap(std::move(alias_to_world));
  PMPI_Comm_rank(comm, &sub->rank);
  rank_ = sub->rank;
  current_.store(sub.get(), std::memory_order_release);
  history_.push_back(std::move(sub));
}

Alias::Alias(MPI_Comm comm, std::vector<int> alias_to_world, const std::vector<int> &live) : handle_(comm) {
  set_lineage(alias_to_world);
  to_handle_.assign(alias_to_world.size(), kHole);
  to_program_ = live;
  for (std::size_t h = 0; h < live.size(); ++h) to_handle_[static_cast<std::size_t>(live[h])] = static_cast<int>(h);
  auto sub = std::make_unique<Substitute>();
  sub->comm = comm;
  sub->map = RankMap(std::move(alias_to_world)).shrunk(live);  // (live ranks are the complete map's substitute ranks)
  PMPI_Comm_rank(comm, &sub->rank);
  rank_ = to_program(sub->rank);
  current_.store(sub.get(), std::memory_order_release);
  history_.push_back(std::move(sub));
}

Alias::~Alias() = default;

deferred::State &Alias::deferred_state() {
  if (has_deferred_.load(std::memory_order_acquire)) return *deferred_;
  std::lock_guard<std::mutex> lock(mu_);
  if (!deferred_) deferred_ = std::make_unique<deferred::State>();
  has_deferred_.store(true, std::memory_order_release);
  return *deferred_;
}

void for_each_alias(const std::function<void(Alias &)> &f) {
  std::vector<Alias *> all;
  {
    std::lock_guard<std::mutex> lock(g_registry_mu);
    for (auto &kv : g_registry) all.push_back(kv.second.get());
  }
  for (Alias *a : all) f(*a);
}

void for_each_alias_locked(FunctionRef<void(Alias &)> f) {
  std::lock_guard<std::mutex> lock(g_registry_mu);
  for (auto &kv : g_registry) f(*kv.second);
}

bool Alias::known_failed(int r) const {
  const RankMap &m = current().map;
  if (r < 0 || r >= m.alias_size()) return false;
  return m.to_sub(r) < 0 || detector::is_failed(m.to_world(r));
}

int Alias::shrink(const Substitute &from, const char *call) {
  MPI_Comm next = MPI_COMM_NULL;
  int rc = repair::shrink(from.comm, &next);
  if (rc != MPI_SUCCESS) {
    COHORT_LOG_ERROR("%s: shrinking the substitute communicator failed (code %d)", call, rc);
    return rc;
  }
  PMPI_Comm_set_errhandler(next, MPI_ERRORS_RETURN);
  auto sub = std::make_unique<Substitute>();
  sub->comm = next;
  sub->map = from.map.shrunk(ranks_in(next, from.comm));
  PMPI_Comm_rank(next, &sub->rank);
  COHORT_LOG_INFO("%s: new substitute communicator over %d ranks (was %d; alias size %d)", call,
                  sub->map.sub_size(), from.map.sub_size(), sub->map.alias_size());
  std::lock_guard<std::mutex> lock(mu_);
  current_.store(sub.get(), std::memory_order_release);
  history_.push_back(std::move(sub));
  return MPI_SUCCESS;
}

int Alias::return_error(int rc, const Substitute &on) const {
  if (rc != MPI_SUCCESS && on.comm != handle_) PMPI_Comm_call_errhandler(handle_, rc);
  return rc;
}

bool Alias::release_substitutes() {
  std::lock_guard<std::mutex> lock(mu_);
  bool handle_free = !history_.front()->abandoned.load();
  for (auto &s : history_) {
    // NOTE: a substitute with an abandoned request stays allocated forever: freeing it could let MPI
    // reuse its context id while the abandoned request still matches messages on it.
    // The Substitute object is leaked with it: an abandoned v-collective may still read its layout.
    if (s->abandoned.load()) {
      (void)s.release();
      continue;
    }
    if (s->comm != handle_ && s->comm != MPI_COMM_NULL) PMPI_Comm_free(&s->comm);
  }
  return handle_free;
}

void register_world(const char *call) {
  set_join_hook(join_repairs);
  int n = 0;
  PMPI_Comm_size(cohort::world(), &n);
  std::vector<int> world(n);
  std::iota(world.begin(), world.end(), 0);
  auto a = std::make_unique<Alias>(cohort::world(), std::move(world));
  // NOTE: the program's collectives on MPI_COMM_WORLD never run on MPI_COMM_WORLD itself: repair creates
  // communicators over it (MPI_Comm_create_group on its slow path, idups at init), and under Open MPI 4.1
  // a nonblocking collective abandoned on world, or one posted while such a creation is in progress, takes
  // libnbc tags in a different order on different ranks (MPI_ERR_TRUNCATE in NBC, then a hang). So the
  // first substitute is repair's own communicator over the survivors of world (all of them unless a rank
  // died during MPI_Init), registered with repair like every later substitute.
  if (a->shrink(a->current(), call) != MPI_SUCCESS) {
    log::fatal(1, "%s: cannot create the substitute communicator of MPI_COMM_WORLD (or of cohort's own under the Sessions model)", call);
  }
  std::lock_guard<std::mutex> lock(g_registry_mu);
  g_world.store(a.get());
  g_registry[cohort::world()] = std::move(a);
}

void set_before_agree(BeforeAgree hook) { g_before_agree.store(hook, std::memory_order_release); }

Alias *find_alias(MPI_Comm comm) {
  if (comm == cohort::world()) return g_world.load(std::memory_order_acquire);
  std::lock_guard<std::mutex> lock(g_registry_mu);
  auto it = g_registry.find(comm);
  return it == g_registry.end() ? nullptr : it->second.get();
}

namespace {

std::atomic<int> g_with_holes{0};  // aliases with holes registered

Alias *adopt_alias(std::unique_ptr<Alias> a, bool private_substitute) {
  MPI_Comm comm = a->handle();
  Alias *p = a.get();
#if defined(COHORT_USE_ULFM)
  // NOTE: under ULFM, collectives run on a private substitute from the start, as world's do (see
  // register_world), never on the program's communicator: on a 2x2 Cartesian grid whose Allreduce was
  // repaired on the grid itself (ULFM failed its libnbc request, then agree/shrink on the grid), the
  // survivors hung right after: one in the Allreduce, the others in the next halo exchange on the grid,
  // waiting for it (issue 13). Costs one MPIX_Comm_shrink per communicator the program creates.
  private_substitute = true;
#endif
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (private_substitute && !inter && a->shrink(a->current(), "communicator creation") != MPI_SUCCESS) {
    log::fatal(1, "communicator creation (MPI_Comm_dup/split/create, MPI_Cart_create ...): cannot create its "
                  "substitute communicator");
  }
  if (a->has_holes()) g_with_holes.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(g_registry_mu);
  g_registry[comm] = std::move(a);
  return p;
}

}  // namespace

Alias *register_alias(MPI_Comm comm, bool private_substitute) {
  return adopt_alias(std::make_unique<Alias>(comm, ranks_in(comm, cohort::world())), private_substitute);
}

Alias *register_alias_with_holes(MPI_Comm comm, std::vector<int> alias_to_world, bool private_substitute) {
  std::vector<int> world = ranks_in(comm, cohort::world()), live;
  for (int w : world) {
    auto it = std::find(alias_to_world.begin(), alias_to_world.end(), w);
    if (it == alias_to_world.end()) log::fatal(1, "topology creation: world rank %d is not in the topology", w);
    live.push_back(static_cast<int>(it - alias_to_world.begin()));
  }
  if (live.size() == alias_to_world.size()) return register_alias(comm, private_substitute);  // no hole
  return adopt_alias(std::make_unique<Alias>(comm, std::move(alias_to_world), live), private_substitute);
}

bool any_alias_with_holes() { return g_with_holes.load(std::memory_order_relaxed) != 0; }

Unregistered unregister_alias(MPI_Comm comm) {
  std::unique_ptr<Alias> a;
  {
    std::lock_guard<std::mutex> lock(g_registry_mu);
    auto it = g_registry.find(comm);
    if (it == g_registry.end() || comm == cohort::world()) return Unregistered::unknown;
    a = std::move(it->second);
    g_registry.erase(it);
  }
  if (a->has_holes()) g_with_holes.fetch_sub(1, std::memory_order_relaxed);
  return a->release_substitutes() ? Unregistered::free_handle : Unregistered::keep_handle;
}

int apply_policy(const Alias &alias, Policy policy, const char *call, const char *what) {
  switch (policy) {
    case Policy::abort: abort_job(call, what);
    case Policy::skip:
      COHORT_LOG_INFO("%s: %s (policy skip)", call, what);
      return MPI_SUCCESS;
    case Policy::error: return raise_error(alias.handle(), call);
  }
  return MPI_SUCCESS;
}

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

// ULFM mode (wrap/core/ulfm_mode.hpp): one attempt on the current substitute, no confirmation, no repair. A
// member known dead (before the post or while waiting) gives MPIX_ERR_PROC_FAILED, a revoke
// MPIX_ERR_REVOKED; the request is then abandoned with its substitute, which the program replaces by
// MPIX_Comm_shrink.
int run_ulfm(Alias &alias, const CallDesc &call, PostFn post) {
  alias.next_call();
  const MPI_Comm h = alias.handle();
  const Substitute &sub = alias.current();
  if (repair::is_revoked(h)) return ulfm::raise(h, ulfm::Failure::revoked, call.name);
  int sub_root = -1;
  if (call.root >= 0) sub_root = call.root >= sub.map.alias_size() ? call.root : sub.map.to_sub(call.root);
  if (sub_root == -1 && call.root >= 0) return ulfm::raise(h, ulfm::Failure::proc_failed, call.name);
  if (sub.any_member_failed()) return ulfm::raise(h, ulfm::Failure::proc_failed, call.name);
  MPI_Request req = MPI_REQUEST_NULL;
  int rc = post(sub, sub_root, &req);
  if (rc != MPI_SUCCESS) return alias.return_error(rc, sub);
  if (call.posted_hook != nullptr) inject::point(call.posted_hook);
  Watch watch;
  watch.broken = [&sub] { return sub.any_member_failed(); };
  watch.revocable = h;
  switch (wait(&req, MPI_STATUS_IGNORE, watch, &rc)) {
    case WaitResult::completed: return MPI_SUCCESS;
    case WaitResult::failed: return raise_test_error(h, rc);
    case WaitResult::broken: break;
    case WaitResult::revoked:
      sub.abandoned.store(true);
      return ulfm::raise(h, ulfm::Failure::revoked, call.name);
  }
  sub.abandoned.store(true);
  return ulfm::raise(h, ulfm::Failure::proc_failed, call.name);
}

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
        deferred::note_span(alias_, span);
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

// The blocking form: the adapter driven to the end (nonblocking collectives on the alias finish first).
int run(Alias &alias, const CallDesc &call, PostFn post) {
  nbc::finish_all(alias);
  if (ulfm::active(alias.handle())) return run_ulfm(alias, call, post);
  if (deferred::window() > 1) {
    // Deferred confirmation: a small Barrier, Bcast, Reduce or Allreduce may return unconfirmed; any other
    // collective first completes every pending confirmation (a settle point, wrap/core/deferred.hpp).
    if (call.defer != nullptr) return deferred::run(alias, call, post);
    deferred::settle_all(nullptr);
  }
  return run_numbered(alias, call, post, alias.next_call());
}

int post_call(const Alias &alias, const CallDesc &call, const Substitute &sub, int sub_root,
              unsigned long long call_no, PostFn post, std::unique_ptr<small::Op> *op, MPI_Request *req) {
  if (call.small != nullptr && small::eligible(alias, sub, *call.small)) {
    *op = small::acquire(call.small->kind);
    return (*op)->start(*call.small, sub.comm, sub.map.sub_size(), sub.rank, std::max(sub_root, 0),
                        small::tag(call_no, false));
  }
  return post(sub, sub_root, req);
}

int run_numbered(Alias &alias, const CallDesc &call, PostFn post, unsigned long long call_no) {
  OpAdapter op(alias, call, call_no);
  op.end_on_revoke();
  while (op.next() != OpAction::done) op.step(post, true);
  return op.result();
}

SavedInput::SavedInput(const void *buf, int count, MPI_Datatype type, std::vector<char> *own) {
  thread_local std::vector<char> per_thread;
  std::vector<char> &storage = own != nullptr ? *own : per_thread;
  MPI_Aint lb = 0;
  PMPI_Type_get_extent(type, &lb, &extent_);
  PMPI_Type_get_true_extent(type, &true_lb_, &true_extent_);
  std::size_t span = count > 0 ? static_cast<std::size_t>((count - 1) * extent_ + true_extent_) : 0;
  if (storage.size() < span + 1) storage.resize(span + 1);
  if (span > 0) std::memcpy(storage.data(), static_cast<const char *>(buf) + true_lb_, span);
  data_ = storage.data() - true_lb_;
}

void SavedInput::restore(void *buf, int first, int count) const {
  if (count <= 0) return;
  MPI_Aint offset = first * extent_ + true_lb_;
  std::memcpy(static_cast<char *>(buf) + offset, data_ + offset, (count - 1) * extent_ + true_extent_);
}

}  // namespace cohort::wrap
