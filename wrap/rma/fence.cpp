// MPI_Win_fence and the window's recreation over the survivors (wrap/rma/fence.hpp).
#include "wrap/rma/fence.hpp"

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <thread>

#include "detector/log.hpp"
#include "wrap/core/deferred.hpp"
#include "wrap/core/driver.hpp"
#include "wrap/core/progress.hpp"
#include "wrap/core/ulfm_mode.hpp"
#include "wrap/rma/fence_exchange.hpp"
#include "wrap/rma/helper_batch.hpp"

namespace cohort::wrap::win {
namespace {

// One attempt to make w's window again over the substitute `on` (a fence's post). Shared with the thread
// that runs MPI_Win_create: an attempt abandoned because a member died outlives the fence.
struct Remake {
  const Substitute *on = nullptr;
  MPI_Win win = MPI_WIN_NULL;      // written by the thread before it sets `created`
  MPI_Comm xcomm = MPI_COMM_NULL;  // the new window's exchange communicator (idem)
  int rc = MPI_SUCCESS;            // (idem)
  MPI_Errhandler created_eh = MPI_ERRHANDLER_NULL;  // a first creation's: the window's handler as MPI made it (idem)
  std::atomic<bool> created{false};  // MPI_Win_create (and the exchange communicator's dup) returned
};

// Starts MPI_Win_create over w's memory on sub.comm, on a thread of its own (MPI has no nonblocking window
// creation, and a member that dies during it would hold it forever); *req completes when it returns, or,
// with `barrier` (a self-confirming fence), once every member has its window too: an MPI_Barrier on the new
// exchange communicator (nothing else uses it yet), so that one survivor's completion proves every member's
// creation, as the fence's confirmation does otherwise. `first`: the program's creation, whose window's
// handler as MPI made it is kept (created_eh) for the program's own errors.
std::shared_ptr<Remake> start_remake(const WinRecord &w, const Substitute &sub, bool barrier, MPI_Request *req,
                                     int *rc, bool first = false) {
  *rc = start_request(req);
  if (*rc != MPI_SUCCESS) return nullptr;
  auto m = std::make_shared<Remake>();
  m->on = &sub;
  MPI_Info info = MPI_INFO_NULL;
  if (w.info != MPI_INFO_NULL) PMPI_Info_dup(w.info, &info);  // the thread's own: it may outlive w
  MPI_Request done = *req;
  std::thread([m, done, info, barrier, first, base = w.base, size = w.size, unit = w.disp_unit, comm = sub.comm]() mutable {
    MPI_Win win = MPI_WIN_NULL;
    int r = PMPI_Win_create(base, size, unit, info, comm, &win);
    if (r == MPI_SUCCESS && first) PMPI_Win_get_errhandler(win, &m->created_eh);
    if (r == MPI_SUCCESS) PMPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    if (r == MPI_SUCCESS) r = make_exchange_comm(comm, &m->xcomm);
    if (info != MPI_INFO_NULL) PMPI_Info_free(&info);
    m->win = win;
    m->rc = r;
    m->created.store(true, std::memory_order_release);
    if (barrier && r == MPI_SUCCESS) PMPI_Barrier(m->xcomm);  // (a dead member keeps the thread here for good)
    PMPI_Grequest_complete(done);
  }).detach();
  return m;
}

// Switches w to the window of a completed recreation. The old window keeps its epoch (cohort's lock_all
// of the fence, taken with MPI_MODE_NOCHECK) and is left to MPI: it has a dead member, so unlocking or
// freeing it could wait for good.
// NOTE: a creation that MPI failed because a member died (ULFM refuses it) leaves w as it was: the shrink
// that death brings makes every survivor recreate at the next fence, those whose creation succeeded too.
int adopt(WinRecord &w, const Remake &m) {
  // (a self-confirming fence that others completed while this rank's barrier broke: its window exists)
  const bool created = m.created.load(std::memory_order_acquire);
  const bool failed = !created || m.rc != MPI_SUCCESS || m.win == MPI_WIN_NULL || m.xcomm == MPI_COMM_NULL;
  if (failed && m.on->any_member_failed()) {
    COHORT_LOG_INFO("MPI_Win_fence: making the window again failed (code %d): a member died; at the next fence", m.rc);
    return MPI_SUCCESS;
  }
  if (failed) {
    COHORT_LOG_ERROR("MPI_Win_fence: making the window again over %d survivors failed (code %d)",
                     m.on->map.sub_size(), m.rc);
    return m.rc != MPI_SUCCESS ? m.rc : MPI_ERR_WIN;
  }
  w.retired.push_back(w.win);
  w.win = m.win;
  w.made_on = m.on;
  w.xcomm = m.xcomm;  // the old one is left to MPI with the old window (it may hold abandoned requests)
  w.xabandoned = false;
  reset_logs(w);
  w.fence_open = false;
  w.left_to_mpi = false;
  ++w.recreations;
  COHORT_LOG_INFO("MPI_Win_fence: window made again over the %d survivors (recreation %d)", m.on->map.sub_size(),
                  w.recreations);
  return MPI_SUCCESS;
}

// The fence's confirmation (the driver, as confirm()). Its post recreates the window when the
// substitute it is posted on is not the one w.win was made on; *made is then the recreation of the
// attempt that completed the call, to be adopted.
// exchange: a self-confirming fence's exchange (see fence()): posted as the call's request on the
// substitute the window was made on.
int confirm_fence(WinRecord &w, std::shared_ptr<Remake> *made, FenceExchange *exchange) {
  WinRecord *wp = &w;
  bool ulfm_mode = ulfm::active(w.alias->handle());  // the program repairs (MPIX_Comm_shrink): no recreation
  CallDesc call = describe(CallId::MPI_Win_fence);
  call.self_confirming = exchange != nullptr;
  return run(*w.alias, call, [wp, made, ulfm_mode, exchange](const Substitute &sub, int, MPI_Request *req) {
    *req = MPI_REQUEST_NULL;
    made->reset();
    if (ulfm_mode) return MPI_SUCCESS;
    if (&sub == wp->made_on) return exchange != nullptr ? exchange->start(req) : MPI_SUCCESS;
    int rc = MPI_SUCCESS;
    *made = start_remake(*wp, sub, exchange != nullptr, req, &rc);
    return rc;
  });
}

}  // namespace

int create_window(WinRecord &w, CallId id) {
  WinRecord *wp = &w;
  std::shared_ptr<Remake> made;
  int rc = run(*w.alias, describe(id), [wp, &made](const Substitute &sub, int, MPI_Request *req) {
    int r = MPI_SUCCESS;
    made = start_remake(*wp, sub, false, req, &r, true);
    return r;
  });
  if (rc != MPI_SUCCESS) return rc;
  // (the driver returns success once every survivor's attempt returned: this one's too)
  if (made == nullptr || !made->created.load(std::memory_order_acquire)) return MPI_ERR_INTERN;
  if (made->rc != MPI_SUCCESS || made->win == MPI_WIN_NULL || made->xcomm == MPI_COMM_NULL) {
    COHORT_LOG_ERROR("%s: making the window over %d ranks failed (code %d)", info(id).name, made->on->map.sub_size(),
                     made->rc);
    return made->rc != MPI_SUCCESS ? made->rc : MPI_ERR_WIN;
  }
  w.handle = w.win = made->win;
  w.program_eh = made->created_eh;
  w.made_on = made->on;
  w.xcomm = made->xcomm;
  reset_logs(w);
  return MPI_SUCCESS;
}

namespace {

// True when a fence with an exchange confirms itself (fence()): with COHORT_CONFIRM_WINDOW 1 (deferred
// confirmation counts calls instead, wrap/core/collective_op.hpp), under the heartbeat backend (as for
// MPI_Barrier: a survivor left behind joins through ULFM's revocation there, not tested) and unless the
// program repairs its communicators itself (ULFM mode: no recreation, ULFM's semantics).
bool self_confirming_fences(const WinRecord &w) {
#if defined(COHORT_USE_ULFM)
  (void)w;
  return false;
#else
  return deferred::window() <= 1 && !ulfm::active(w.alias->handle());
#endif
}

}  // namespace

int fence(WinRecord &w, MPI_Win handle, int assert) {
  // NOTE: every member exchanges at the same fences: fence_open changes at the same fences everywhere, and
  // MPI_MODE_NOPRECEDE is given by all members or none (MPI-3.1, section 11.5.5).
  // The exchange's logs are applied after the call's outcome is known, before the window may be made again
  // (adopt) and before the fence returns. Self-confirming (the default): the exchange is the call's
  // request, its messages sent once this rank's other operations of the epoch are complete, and, as for
  // MPI_Barrier, its completion is the confirmation (no MPI_Ibarrier; a survivor whose exchange broke on a
  // death agrees with any that returned, wrap/core/collective_op.hpp); a recreation then ends with a barrier of
  // its own (start_remake). Otherwise its messages travel while the survivors confirm.
  const bool exchange = w.fence_open && (assert & MPI_MODE_NOPRECEDE) == 0;
  const bool self = exchange && self_confirming_fences(w);
  std::optional<FenceExchange> x;
  if (exchange && !self) x.emplace(w, handle);
  int rc = w.fence_open ? complete_epoch(w) : MPI_SUCCESS;
  if (self) x.emplace(w, handle);  // (after complete_epoch: a member's log proves its operations complete)
  if (rc != MPI_SUCCESS) {
    if (x) x->finish();
    return rc;
  }
  if (w.fence_open) PMPI_Win_sync(w.win);
  std::shared_ptr<Remake> made;
  {
    ThreadPollHook hook(x ? std::function<void()>([&x] { x->progress(); }) : std::function<void()>());
    rc = confirm_fence(w, &made, self ? &*x : nullptr);
  }
  int xrc = x ? x->finish() : MPI_SUCCESS;
  if (rc == MPI_SUCCESS && made) rc = adopt(w, *made);
  if (rc != MPI_SUCCESS) return rc;
  if (w.fence_open) PMPI_Win_sync(w.win);
  if ((assert & MPI_MODE_NOSUCCEED) != 0) {
    rc = close_fence_epoch(w);
    return rc != MPI_SUCCESS ? rc : xrc;
  }
  if (!w.fence_open) {
    rc = PMPI_Win_lock_all(MPI_MODE_NOCHECK, w.win);
    w.fence_open = rc == MPI_SUCCESS;
  }
  return rc != MPI_SUCCESS ? rc : xrc;
}

}  // namespace cohort::wrap::win
