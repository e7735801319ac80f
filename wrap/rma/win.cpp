// One-sided communication that survives failures (Legio, Rocco et al. 2021, sections 3.7 and
// 4.2.6: windows as aliases of substitutes).
//
// The plan, built around what hangs on these MPIs (wrap/rma/helper_thread.hpp): any RMA synchronisation whose
// target is dead, and MPI_Win_fence or MPI_Win_free with a dead member.
//   - The program's MPI_Win is the first window cohort made (the alias); cohort keeps a record: the
//     communicator alias it was made on, the memory (base, size, displacement unit, info), the substitute
//     window it works on now and the substitute communicator that one was made on (its rank map
//     translates the program's target ranks). MPI_Win_allocate takes its memory from MPI_Alloc_mem and
//     makes the window with MPI_Win_create, so that a substitute made later covers the same memory and the
//     program's pointer stays valid.
//   - Creation and MPI_Win_free are collective over the survivors: a confirmation through the driver
//     first, then MPI's call on the current substitute communicator. A window with a dead member is never
//     freed (MPI_Win_free would wait on it): it is left to MPI, like an abandoned request.
//   - RMA calls go to the substitute window with the target's substitute rank. To a dead target nothing
//     is posted: the point-to-point policy applies (COHORT_ON_DEAD_PEER_SEND, default skip, for Put,
//     Rput, Accumulate; COHORT_ON_DEAD_PEER_RECV, default abort, for the calls that return data).
//   - Fence epochs travel as two-sided messages (wrap/rma/rma_log.hpp): between two fences, operations on
//     predefined datatypes go into a log per target; at the fence every member sends each live member its
//     log and applies the logs it receives, fetched data comes back in a second round, all nonblocking
//     and polled with the detector (FenceExchange); then MPI_Win_sync. No MPI RMA call, no helper thread, no
//     flush that a dying target could hold. The exchange is the fence's request in the driver and, like
//     MPI_Barrier's, confirms itself (every member's log proves that every member entered the fence; fence());
//     with deferred confirmation or ULFM the survivors confirm with an MPI_Ibarrier while it travels.
//     Other operations in a fence epoch (derived datatypes, MPI_Rput, MPI_Rget) use cohort's
//     passive-target epoch (MPI_Win_lock_all with MPI_MODE_NOCHECK, opened at the first fence), flushed at
//     the fence: a flush whose target dies meanwhile is abandoned.
//   - Recreation over the survivors (Legio, section 3.7): at the first MPI_Win_fence whose request is
//     posted on a substitute communicator other than the one the window was made on, that post makes a
//     new window over the same memory on it (MPI_Win_create on a thread of its own, completing a
//     generalized request that the driver polls like any collective's request), and the fence returns on
//     the new window; the old one is left to MPI (it has a dead member). Every survivor recreates at the
//     same fence: the driver gives a call the same outcome everywhere, so the attempt that completes a
//     fence was posted on the same substitute by every survivor (a creation that a member's death
//     interrupts is abandoned with its attempt and made again on the shrunk communicator). A survivor that
//     returned from the fence that saw the failure before it learned of it (the driver's "one call ahead")
//     switches at the next fence with the others. Only fences switch: lock/unlock epochs have no point that
//     every survivor passes, so a window used only with passive target synchronisation stays on the
//     communicator it was made on (no cohort call on it needs a dead member: RMA never targets one).
//   - Lock, unlock, flush and MPI_Win_lock_all/unlock_all: MPI's calls, each abandonable
//     (win::guarded); to a dead target they do nothing. MPI_Win_lock_all is taken with MPI_MODE_NOCHECK.
//   - Batches: every MPI call that may wait on a target runs on the helper thread, and a handoff to it
//     costs more than a small put (4 µs at 2 ranks on 2 cores, ~70 µs at 4). So inside an epoch an RMA
//     put or get on predefined datatypes is deferred to the epoch's next synchronisation, and the
//     synchronisation runs the deferred operations, then a flush of each target sent operations since
//     its last flush (w.dirty; other targets have nothing to complete), as one batch: one handoff per
//     fence, unlock or flush. MPI allows it: an operation completes only at a synchronisation, and the
//     program may not touch its buffers before (MPI_Win_flush_local is a synchronisation too, wrapped).
//   - MPI_Rput and MPI_Rget complete before they return (the operation, then a guarded flush of its
//     target), with an already completed generalized request: a wait on it never waits on a dead rank.
//
// Thread-safety: the registry is thread-safe; calls on one window follow MPI's rules.
#include <mpi.h>

#include <time.h>

#include <cstdio>
#include <cstring>
#include <algorithm>
#include <atomic>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>
#include <vector>

#include "wrap/calls.h"
#include "wrap/core/deferred.hpp"
#include "wrap/core/driver.hpp"
#include "wrap/core/errors.hpp"
#include "wrap/core/policy.hpp"
#include "wrap/core/progress.hpp"
#include "wrap/rma/rma_log.hpp"
#include "wrap/core/stop_job.hpp"
#include "wrap/core/ulfm_mode.hpp"
#include "wrap/rma/helper_thread.hpp"
#include "detector/inject.hpp"
#include "detector/log.hpp"
#include "wrap/core/reduce_local.hpp"

namespace cohort::wrap {
namespace {

// One step of a batch that the helper thread runs on w.win (win::guarded): an RMA operation or a
// synchronisation (flush, unlock). `world` is the MPI_COMM_WORLD rank it needs alive (-1: none); with
// `every_member`, it needs every member of the window's substitute communicator.
struct WinStep {
  int target = -1;  // a rank of the window's communicator (the program's numbering); -1: every member
  int world = -1;
  bool every_member = false;
  std::function<int(MPI_Win)> run;
};

// Where the data that an operation of the fence exchange fetches goes (a reply's next `bytes`).
struct Fetch {
  void *addr;
  std::size_t bytes;
  CallId id;   // the call, for the policy when its target dies before replying
  int target;  // a rank of the window's communicator
};

// The data of a bulk put (rma_log::kBulk): the program's buffer, sent as it is at the fence.
struct Bulk {
  const void *addr;
  std::size_t bytes;
};

// The fence exchange of a window (wrap/rma/rma_log.hpp): the epoch's logs until the fence, then the fence's
// buffers and requests. Kept from fence to fence (the buffers keep their capacity); when a peer dies during a
// fence its requests are abandoned, MPI may still read or write these buffers, and the whole object is kept
// for good (g_lost_exchanges) and replaced. Indexed by substitute rank of the window's made_on.
struct Exchange {
  std::vector<std::vector<char>> out;       // this rank's log to each member
  std::vector<std::vector<Bulk>> bulk;      // and the data of its bulk puts (the program's buffers)
  std::vector<std::vector<Fetch>> fetch;    // where the replies of its fetching operations go
  std::vector<std::unique_ptr<char[]>> in;  // round 1: each member's log to this rank (in_len bytes)
  std::vector<std::size_t> in_len, in_cap;
  std::vector<std::vector<char>> scratch;   // bulk data that falls outside this rank's memory (dropped)
  std::vector<std::vector<char>> reply, got;  // round 2: the replies to it (its fetches) and from it (ours)
  std::vector<MPI_Request> recv, rrecv;       // the receive of each member's log (round 1), reply (round 2)
  std::vector<std::vector<MPI_Request>> more, rmore;  // sends and bulk receives of each round
};

struct WinRecord {
  Alias *alias = nullptr;             // the communicator the window was made on
  void *base = nullptr;               // the window's memory (this rank's part)
  MPI_Aint size = 0;
  int disp_unit = 1;
  MPI_Info info = MPI_INFO_NULL;      // a duplicate of the program's, for substitutes
  bool owns_memory = false;           // MPI_Win_allocate: cohort's MPI_Alloc_mem
  const Substitute *made_on = nullptr;  // the substitute communicator `win` was made on
  MPI_Win handle = MPI_WIN_NULL;      // the program's window: the first one cohort made
  MPI_Win win = MPI_WIN_NULL;         // the substitute window, where RMA goes (handle until a recreation)
  int recreations = 0;                // times the window was made again over the survivors
  std::vector<MPI_Win> retired;       // windows replaced by a recreation: left to MPI, never freed
  bool fence_open = false;            // cohort's lock_all of a fence epoch is held on win
  bool lock_all = false;              // the program's MPI_Win_lock_all is held on win
  bool left_to_mpi = false;           // a guarded call on win was abandoned: never free it
  std::set<int> locked;               // the program's locked targets (ranks of its communicator)
  MPI_Errhandler program_eh = MPI_ERRHANDLER_NULL;  // the window's handler at creation (cohort's is ERRORS_RETURN)
  std::vector<WinStep> pending;          // RMA operations deferred to the epoch's next synchronisation
  std::set<int> dirty;                // targets (program ranks) sent operations since their last flush
  // Fence epochs on messages (wrap/rma/rma_log.hpp): per substitute rank of made_on, this rank's logged
  // operations to it and where their replies go; exchanged on xcomm, cohort's duplicate of made_on->comm.
  MPI_Comm xcomm = MPI_COMM_NULL;
  bool xabandoned = false;            // an exchange request on xcomm was abandoned: never free it
  std::shared_ptr<Exchange> x;
};

std::mutex g_wins_mu;
std::unordered_map<MPI_Win, std::unique_ptr<WinRecord>> g_wins;  // guarded by g_wins_mu

WinRecord *find_win(MPI_Win win) {
  std::lock_guard<std::mutex> lock(g_wins_mu);
  auto it = g_wins.find(win);
  return it == g_wins.end() ? nullptr : it->second.get();
}

// The dead-peer policy for an RMA call whose target `target` (a rank of the window's communicator) is
// dead: send-like calls (Put, Accumulate) take COHORT_ON_DEAD_PEER_SEND, the others _RECV.
int dead_target(const WinRecord &w, MPI_Win handle, bool send, const char *call, int target) {
  Policy p = dead_peer_policy(send, send ? Policy::skip : Policy::abort);
  char what[64];
  std::snprintf(what, sizeof what, "target %d is dead", target);
  if (p == Policy::abort) abort_job(call, what);
  if (p == Policy::skip) return MPI_SUCCESS;
  int code = err_proc_failed_code();
  COHORT_LOG_INFO("%s: %s (policy error, code %d)", call, what, code);
  (void)w;
  PMPI_Win_call_errhandler(handle, code);
  return code;
}

constexpr int kDeadTarget = -0x7fffffff;  // distinct from MPI_PROC_NULL (-1 in MPICH, -2 in Open MPI)

// The substitute rank of target in w.win (MPI_PROC_NULL stays), or kDeadTarget when the target is dead
// (agreed or known here).
int sub_target(const WinRecord &w, int target) {
  if (target == MPI_PROC_NULL) return MPI_PROC_NULL;
  int sub = w.made_on->map.to_sub(target);
  if (sub < 0 || w.alias->known_failed(target)) return kDeadTarget;
  return sub;
}

// A batch in flight on the helper thread. Shared with it: an abandoned batch outlives the call.
struct Batch {
  MPI_Win win = MPI_WIN_NULL;
  std::vector<WinStep> steps;
  std::atomic<std::size_t> at{0};  // the step the helper runs now (steps.size(): all done)
  std::mutex mu;
  bool stopped = false;  // abandoned: the helper starts no further step; guarded by mu
  std::vector<std::pair<std::size_t, int>> errors;  // (step, MPI's code); guarded by mu
};

// True when a rank that step s needs is known dead: its target, or (every_member) a member of the
// substitute communicator w.win was made on.
bool step_dead(const WinRecord &w, const WinStep &s) {
  return s.every_member ? w.made_on->any_member_failed() : s.target >= 0 && w.alias->known_failed(s.target);
}

// A step's MPI error. Where MPI fails an operation or a flush whose target died instead of waiting for it
// (ULFM's MPIX_ERR_PROC_FAILED; UCX without CMA under MPICH), that is the target's death, not the program's
// error, and is dropped once the target is known dead (waiting up to kErrorGraceMs for the detector to say
// so). Otherwise the program's error: the window's handler from its creation is called
// (MPI_ERRORS_ARE_FATAL by default) and the code returned.
constexpr int kErrorGraceMs = 200;

int step_error(WinRecord &w, const WinStep &s, int rc) {
  for (int ms = 0; !step_dead(w, s) && ms < kErrorGraceMs; ++ms) {
    struct timespec ts = {0, 1000 * 1000};
    nanosleep(&ts, nullptr);
  }
  if (step_dead(w, s)) {
    COHORT_LOG_INFO("window: MPI failed an operation or synchronisation (code %d): %s is dead", rc,
                    s.every_member ? "a member" : "its target");
    return MPI_SUCCESS;
  }
  if (w.program_eh != MPI_ERRHANDLER_NULL) {
    PMPI_Win_set_errhandler(w.handle, w.program_eh);
    PMPI_Win_call_errhandler(w.handle, rc);
    PMPI_Win_set_errhandler(w.handle, MPI_ERRORS_RETURN);
  }
  return rc;
}

// Runs `steps` in order on the helper thread, as one guarded call (one handoff for the whole batch,
// however many operations and flushes it holds). A step whose target is known dead when its turn comes
// is skipped; a step whose target dies while it runs is abandoned (the helper stays in MPI with it) and
// the steps after it run again on a new helper. The step abandoned is not run again: an operation might
// apply twice, and its target is dead. Returns the first error of a step that ran, else MPI_SUCCESS (at
// once, with no handoff, when there are no steps).
int run_steps(WinRecord &w, std::vector<WinStep> steps) {
  int rc = MPI_SUCCESS;
  while (!steps.empty()) {
    auto b = std::make_shared<Batch>();
    b->win = w.win;
    b->steps = std::move(steps);
    steps.clear();
    // NOTE: a step is started only under b->mu and while the batch is not stopped: an abandoned helper
    // whose call returns late must not run the steps that a new helper now runs (an operation twice).
    auto job = [b] {
      for (;; b->at.fetch_add(1)) {
        std::size_t i;
        {
          std::lock_guard<std::mutex> lock(b->mu);
          i = b->at.load();
          if (b->stopped || i >= b->steps.size()) return MPI_SUCCESS;
        }
        const WinStep &s = b->steps[i];
        if (s.world >= 0 && detector::is_failed(s.world)) continue;
        int r = s.run(b->win);
        if (r != MPI_SUCCESS) {
          std::lock_guard<std::mutex> lock(b->mu);
          b->errors.emplace_back(i, r);
        }
      }
    };
    WinRecord *wp = &w;
    auto dead = [b, wp] {
      std::size_t i = b->at.load();
      return i < b->steps.size() && step_dead(*wp, b->steps[i]);
    };
    bool abandoned = false;
    win::guarded(dead, job, &abandoned);
    std::vector<std::pair<std::size_t, int>> errors;
    std::size_t stuck = 0;
    {
      std::lock_guard<std::mutex> lock(b->mu);
      b->stopped = true;
      stuck = b->at.load();
      errors = b->errors;
    }
    for (const auto &e : errors) {
      int r = step_error(w, b->steps[e.first], e.second);
      if (r != MPI_SUCCESS && rc == MPI_SUCCESS) rc = r;
    }
    if (!abandoned) break;
    w.left_to_mpi = true;
    if (stuck >= b->steps.size()) break;  // (its last step returned as it was abandoned)
    COHORT_LOG_INFO("window synchronisation abandoned: %s died during it (step %zu of %zu)",
                    b->steps[stuck].every_member ? "a member" : "its target", stuck + 1, b->steps.size());
    for (std::size_t i = stuck + 1; i < b->steps.size(); ++i) steps.push_back(std::move(b->steps[i]));
  }
  return rc;
}

// A step for target (a program rank, alive, substitute rank sub) running call(sub, win).
template <typename F>
WinStep target_step(const WinRecord &w, int target, int sub, F call) {
  WinStep s;
  s.target = target;
  s.world = w.made_on->map.to_world(target);
  s.run = [call, sub](MPI_Win win) { return call(sub, win); };
  return s;
}

// A step that needs every member of w.win (MPI_Win_unlock_all, MPI_Win_free).
template <typename F>
WinStep member_step(F call) {
  WinStep s;
  s.every_member = true;
  s.run = [call](MPI_Win win) { return call(win); };
  return s;
}

// Takes w's deferred operations (the first steps of the next batch).
std::vector<WinStep> take_pending(WinRecord &w) {
  std::vector<WinStep> steps;
  steps.swap(w.pending);
  return steps;
}

// Runs one synchronisation of w.win that needs target (a program rank; -1: every member), after the
// deferred operations.
template <typename F>
int sync_call(WinRecord &w, int target, F call) {
  std::vector<WinStep> steps = take_pending(w);
  if (target >= 0) {
    steps.push_back(target_step(w, target, w.made_on->map.to_sub(target),
                                [call](int, MPI_Win win) { return call(win); }));
  } else {
    steps.push_back(member_step(call));
  }
  return run_steps(w, std::move(steps));
}

// The deferred operations, then flush(substitute rank, win) of each live target this rank sent operations
// to since its last flush (w.dirty).
template <typename F>
std::vector<WinStep> pending_and_dirty_flushes(WinRecord &w, F flush) {
  std::vector<WinStep> steps = take_pending(w);
  for (int r : w.dirty) {
    int sub = sub_target(w, r);
    if (sub == kDeadTarget || sub == MPI_PROC_NULL) continue;
    steps.push_back(target_step(w, r, sub, flush));
  }
  return steps;
}

// The deferred operations, then a flush of each live target this rank sent operations to since its last
// flush (w.dirty), then `last` (if any): one batch. Afterwards this rank's operations are complete at
// every live target. NOTE: a target without operations is not flushed: MPI's flush would return at once
// there, and it is one handoff less per target.
int complete_epoch(WinRecord &w, WinStep *last = nullptr) {
  std::vector<WinStep> steps = pending_and_dirty_flushes(w, [](int s, MPI_Win win) { return PMPI_Win_flush(s, win); });
  w.dirty.clear();
  if (last != nullptr) steps.push_back(std::move(*last));
  return run_steps(w, std::move(steps));
}

// The survivors confirm (the driver: completes among the survivors, shrinks on a failure).
int confirm(WinRecord &w, CallId id) {
  return run(*w.alias, describe(id), [](const Substitute &, int, MPI_Request *req) {
    *req = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
  });
}

// The fence exchange's communicator over the members of comm (collective over them).
int make_exchange_comm(MPI_Comm comm, MPI_Comm *xcomm) {
  int rc = PMPI_Comm_dup(comm, xcomm);
  if (rc == MPI_SUCCESS) PMPI_Comm_set_errhandler(*xcomm, MPI_ERRORS_RETURN);
  return rc;
}

// A log message starts with its length in bytes (this prefix included); the first kLogInline bytes travel
// in one message whose receive every member posts at the start of the fence, the rest (rare: a few hundred
// small operations to one target) in a second one posted once the first told its length.
constexpr std::size_t kLogPrefix = sizeof(std::uint64_t);
constexpr std::size_t kLogInline = 8192;

// Empty exchange logs, one per member of the substitute the window was made on (w.x made if none).
void reset_logs(WinRecord &w) {
  std::size_t n = static_cast<std::size_t>(w.made_on->map.sub_size());
  if (!w.x) w.x = std::make_shared<Exchange>();
  Exchange &x = *w.x;
  auto fit = [n](auto &v) {
    v.resize(n);
    for (auto &e : v) e.clear();
  };
  fit(x.out);
  for (auto &log : x.out) log.resize(kLogPrefix);  // the message's length, written at the fence
  fit(x.bulk);
  fit(x.fetch);
  fit(x.reply);
  fit(x.got);
  fit(x.more);
  fit(x.rmore);
  x.in.resize(n);
  x.in_len.assign(n, 0);
  x.in_cap.resize(n, 0);
  x.scratch.resize(n);
  x.recv.assign(n, MPI_REQUEST_NULL);
  x.rrecv.assign(n, MPI_REQUEST_NULL);
}

// Makes the substitute window over w's memory on the alias's current substitute (collective over the
// survivors, after a confirmation).
int make_window(WinRecord &w) {
  const Substitute &s = w.alias->current();
  MPI_Win win = MPI_WIN_NULL;
  int rc = PMPI_Win_create(w.base, w.size, w.disp_unit, w.info, s.comm, &win);
  if (rc != MPI_SUCCESS) return rc;
  // NOTE: cohort's calls on the window must see a dead target's error rather than have MPI end the job
  // (step_error); the program's handler is called for the program's own errors.
  PMPI_Win_get_errhandler(win, &w.program_eh);
  PMPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  w.handle = w.win = win;
  w.made_on = &s;
  rc = make_exchange_comm(s.comm, &w.xcomm);
  if (rc != MPI_SUCCESS) {
    PMPI_Win_free(&w.win);
    w.handle = w.win = MPI_WIN_NULL;
    return rc;
  }
  reset_logs(w);
  return MPI_SUCCESS;
}

// A generalized request that the caller completes (PMPI_Grequest_complete); its status is empty.
int start_request(MPI_Request *request) {
  auto query = [](void *, MPI_Status *st) {
    PMPI_Status_set_elements(st, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
  };
  auto nothing = [](void *) { return MPI_SUCCESS; };
  auto no_cancel = [](void *, int) { return MPI_SUCCESS; };
  return PMPI_Grequest_start(query, nothing, no_cancel, nullptr, request);
}

// One attempt to make w's window again over the substitute `on` (a fence's post). Shared with the thread
// that runs MPI_Win_create: an attempt abandoned because a member died outlives the fence.
struct Remake {
  const Substitute *on = nullptr;
  MPI_Win win = MPI_WIN_NULL;      // written by the thread before it sets `created`
  MPI_Comm xcomm = MPI_COMM_NULL;  // the new window's exchange communicator (idem)
  int rc = MPI_SUCCESS;            // (idem)
  std::atomic<bool> created{false};  // MPI_Win_create (and the exchange communicator's dup) returned
};

// Starts MPI_Win_create over w's memory on sub.comm, on a thread of its own (MPI has no nonblocking window
// creation, and a member that dies during it would hold it forever); *req completes when it returns, or,
// with `barrier` (a self-confirming fence), once every member has its window too: an MPI_Barrier on the new
// exchange communicator (nothing else uses it yet), so that one survivor's completion proves every member's
// creation, as the fence's confirmation does otherwise.
std::shared_ptr<Remake> start_remake(const WinRecord &w, const Substitute &sub, bool barrier, MPI_Request *req,
                                     int *rc) {
  *rc = start_request(req);
  if (*rc != MPI_SUCCESS) return nullptr;
  auto m = std::make_shared<Remake>();
  m->on = &sub;
  MPI_Info info = MPI_INFO_NULL;
  if (w.info != MPI_INFO_NULL) PMPI_Info_dup(w.info, &info);  // the thread's own: it may outlive w
  MPI_Request done = *req;
  std::thread([m, done, info, barrier, base = w.base, size = w.size, unit = w.disp_unit, comm = sub.comm]() mutable {
    MPI_Win win = MPI_WIN_NULL;
    int r = PMPI_Win_create(base, size, unit, info, comm, &win);
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

// Creation (MPI_Win_create and MPI_Win_allocate): collective over the survivors of comm.
int create(Alias &a, CallId id, void *base, MPI_Aint size, int disp_unit, MPI_Info info, bool owns, MPI_Win *out) {
  auto w = std::make_unique<WinRecord>();
  w->alias = &a;
  w->base = base;
  w->size = size;
  w->disp_unit = disp_unit;
  w->owns_memory = owns;
  if (info != MPI_INFO_NULL) PMPI_Info_dup(info, &w->info);
  int rc = confirm(*w, id);
  if (rc == MPI_SUCCESS) rc = make_window(*w);
  if (rc != MPI_SUCCESS) {
    if (w->info != MPI_INFO_NULL) PMPI_Info_free(&w->info);
    if (owns) PMPI_Free_mem(base);
    *out = MPI_WIN_NULL;
    return rc;
  }
  *out = w->handle;
  std::lock_guard<std::mutex> lock(g_wins_mu);
  g_wins[w->handle] = std::move(w);
  return MPI_SUCCESS;
}

// MPI_Win_flush or MPI_Win_flush_local of rank (a program rank): the deferred operations, then
// flush(substitute rank, win), one batch; `remote`: a remote completion (rank is then clean).
// NOTE: without a deferred operation, nor one sent to rank since its last flush, MPI's flush would
// return at once: no handoff to the helper.
template <typename F>
int flush_target(WinRecord &w, int rank, bool remote, F flush) {
  if (w.pending.empty() && w.dirty.count(rank) == 0) return MPI_SUCCESS;
  int sub = sub_target(w, rank);
  if (sub == kDeadTarget || sub == MPI_PROC_NULL) return run_steps(w, take_pending(w));
  if (remote) w.dirty.erase(rank);
  return sync_call(w, rank, [flush, sub](MPI_Win s) { return flush(sub, s); });
}

// Ends cohort's fence epoch on w.win (all operations flushed already).
int close_fence_epoch(WinRecord &w) {
  if (!w.fence_open) return MPI_SUCCESS;
  w.fence_open = false;
  return sync_call(w, -1, [](MPI_Win win) { return PMPI_Win_unlock_all(win); });
}

// ---- Fence epochs on messages (wrap/rma/rma_log.hpp) ----

// The predefined datatypes that the exchange carries: those whose size is their extent (no holes), so
// that `count` elements are count * size contiguous bytes. A code is an index here.
struct XType {
  MPI_Datatype type;
  std::size_t size;
};
const std::vector<XType> &xtypes() {
  static const std::vector<XType> table = [] {
    const MPI_Datatype all[] = {
        MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE, MPI_WCHAR, MPI_SHORT, MPI_UNSIGNED_SHORT, MPI_INT,
        MPI_UNSIGNED, MPI_LONG, MPI_UNSIGNED_LONG, MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG, MPI_FLOAT, MPI_DOUBLE,
        MPI_LONG_DOUBLE, MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T, MPI_UINT16_T,
        MPI_UINT32_T, MPI_UINT64_T, MPI_C_BOOL, MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX, MPI_AINT, MPI_OFFSET,
        MPI_COUNT, MPI_2INT, MPI_FLOAT_INT};
    std::vector<XType> t;
    for (MPI_Datatype d : all) {
      int size = 0;
      MPI_Aint lb = 0, extent = 0;
      if (d == MPI_DATATYPE_NULL || PMPI_Type_size(d, &size) != MPI_SUCCESS ||
          PMPI_Type_get_extent(d, &lb, &extent) != MPI_SUCCESS || size <= 0 || lb != 0 || extent != size)
        continue;
      t.push_back(XType{d, static_cast<std::size_t>(size)});
    }
    return t;
  }();
  return table;
}

// The datatype's code, or -1 when the exchange does not carry it.
int xtype(MPI_Datatype d) {
  const std::vector<XType> &t = xtypes();
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i].type == d) return static_cast<int>(i);
  }
  return -1;
}

std::size_t xsize(int code) {
  const std::vector<XType> &t = xtypes();
  return code >= 0 && static_cast<std::size_t>(code) < t.size() ? t[static_cast<std::size_t>(code)].size : 0;
}

// The predefined operations, by code (rma_log::kOpReplace and rma_log::kOpNoOp first).
const std::vector<MPI_Op> &xops() {
  static const std::vector<MPI_Op> ops = {MPI_REPLACE, MPI_NO_OP, MPI_SUM,  MPI_PROD, MPI_MAX,    MPI_MIN,   MPI_LAND,
                                          MPI_LOR,     MPI_LXOR,  MPI_BAND, MPI_BOR,  MPI_BXOR,   MPI_MAXLOC, MPI_MINLOC};
  return ops;
}

int xop(MPI_Op op) {
  const std::vector<MPI_Op> &t = xops();
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i] == op) return static_cast<int>(i);
  }
  return -1;
}

const rma_log::Apply &xapply() {
  static const rma_log::Apply fx = [] {
    rma_log::Apply a;
    a.elem_size = [](int type) { return xsize(type); };
    a.accumulate = [](int type, int op, const void *in, void *inout, int count) {
      if (xsize(type) == 0 || op < 0 || static_cast<std::size_t>(op) >= xops().size()) return false;
      return reduce_local(in, inout, count, xtypes()[static_cast<std::size_t>(type)].type,
                          xops()[static_cast<std::size_t>(op)], "MPI_Win_fence") == MPI_SUCCESS;
    };
    return a;
  }();
  return fx;
}

// True while the window is in cohort's fence epoch: its operations on the exchange's datatypes are logged.
bool exchanged(const WinRecord &w) {
  return w.fence_open && !w.lock_all && w.locked.empty() && w.xcomm != MPI_COMM_NULL;
}

// A call logged for the next fence: to a dead target, the policy; to MPI_PROC_NULL, nothing; else
// add(substitute rank) logs it.
template <typename Add>
int log_call(WinRecord &w, MPI_Win handle, CallId id, bool send, int target, Add add) {
  int sub = sub_target(w, target);
  if (sub == kDeadTarget) return dead_target(w, handle, send, info(id).name, target);
  if (sub == MPI_PROC_NULL) return MPI_SUCCESS;
  add(static_cast<std::size_t>(sub));
  cohort::inject::point(posted_hook(id));
  return MPI_SUCCESS;
}

// Logs one operation to target. `result`/`result_bytes`: where the fetched data goes (0: the operation
// fetches nothing).
int log_op(WinRecord &w, MPI_Win handle, CallId id, bool send, int target, rma_log::Kind kind, int type, int op, int count,
           MPI_Aint disp, const void *payload, std::size_t bytes, const void *payload2, std::size_t bytes2,
           void *result, std::size_t result_bytes) {
  return log_call(w, handle, id, send, target, [&](std::size_t sub) {
    rma_log::append(&w.x->out[sub], kind, type, op, count, static_cast<std::int64_t>(disp), payload, bytes, payload2,
                    bytes2);
    if (result_bytes > 0) w.x->fetch[sub].push_back(Fetch{result, result_bytes, id, target});
  });
}

// A put of at least kBulkBytes is a bulk put: its data goes from the program's buffer straight into the
// target's memory as a message of its own (no copy on either side), where a smaller one is copied into the
// log (one message per target per fence, whatever the number of operations).
constexpr std::size_t kBulkBytes = 4096;

int log_bulk_put(WinRecord &w, MPI_Win handle, int target, int type, int count, MPI_Aint disp, const void *data,
                 std::size_t bytes) {
  return log_call(w, handle, CallId::MPI_Put, true, target, [&](std::size_t sub) {
    rma_log::append_bulk_put(&w.x->out[sub], type, count, static_cast<std::int64_t>(disp));
    w.x->bulk[sub].push_back(Bulk{data, bytes});
  });
}

std::mutex g_lost_mu;
std::vector<std::shared_ptr<Exchange>> g_lost_exchanges;  // guarded by g_lost_mu

constexpr int kLogTag = 1;
constexpr int kLogRestTag = 4;
constexpr int kBulkTag = 2;
constexpr int kReplyTag = 3;

// A member's state in one round of the exchange: the receive of its log (round 1; receiving_rest: the part
// beyond kLogInline) or of its reply (round 2).
enum class Peer : std::uint8_t { receiving, receiving_rest, received, lost };

// One fence's exchange (wrap/rma/rma_log.hpp), on the fence's stack. The constructor posts the receive of every
// live member's log, then sends each its log; progress() advances the receipt of theirs (one pass; the fence
// calls it while the survivors confirm, so that bulk data flows meanwhile); finish() completes that, applies
// the logs to this rank's memory in member order, then exchanges the replies of the operations that fetch,
// and returns MPI_SUCCESS or the policy's result for a fetch whose target died before it replied.
class FenceExchange {
 public:
  FenceExchange(WinRecord &w, MPI_Win handle)
      : w_(w), handle_(handle), map_(w.made_on->map), n_(map_.sub_size()), me_(w.made_on->rank), x_(*w.x),
        mem_{static_cast<char *>(w.base), static_cast<std::int64_t>(w.size), w.disp_unit} {
    state_.assign(static_cast<std::size_t>(n_), Peer::received);
    settled_.assign(static_cast<std::size_t>(n_), false);
    for (int s = 0; s < n_; ++s) {
      if (s == me_) continue;  // (received: its own log is at hand)
      if (w_.alias->known_failed(map_.to_alias(s))) {
        state_[s] = Peer::lost;
        continue;
      }
      if (x_.in_cap[s] < kLogInline) {
        x_.in[s].reset(new char[kLogInline]);
        x_.in_cap[s] = kLogInline;
      }
      int rc = PMPI_Irecv(x_.in[s].get(), static_cast<int>(kLogInline), MPI_BYTE, s, kLogTag, w_.xcomm, &x_.recv[s]);
      if (rc != MPI_SUCCESS) {
        state_[s] = Peer::lost;
        continue;
      }
      state_[s] = Peer::receiving;
    }
    for (int s = 0; s < n_; ++s) {
      if (s == me_ || state_[s] == Peer::lost) continue;
      std::vector<char> &log = x_.out[s];
      std::uint64_t total = log.size();
      std::memcpy(log.data(), &total, kLogPrefix);
      std::size_t first = std::min<std::size_t>(log.size(), kLogInline);
      x_.more[s].push_back(MPI_REQUEST_NULL);
      int rc = PMPI_Isend(log.data(), static_cast<int>(first), MPI_BYTE, s, kLogTag, w_.xcomm, &x_.more[s].back());
      if (rc == MPI_SUCCESS && log.size() > first) {
        x_.more[s].push_back(MPI_REQUEST_NULL);
        rc = PMPI_Isend(log.data() + first, static_cast<int>(log.size() - first), MPI_BYTE, s, kLogRestTag, w_.xcomm,
                        &x_.more[s].back());
      }
      for (const Bulk &b : x_.bulk[s]) {
        if (rc != MPI_SUCCESS) break;
        x_.more[s].push_back(MPI_REQUEST_NULL);
        rc = PMPI_Isend(b.addr, static_cast<int>(b.bytes), MPI_BYTE, s, kBulkTag, w_.xcomm, &x_.more[s].back());
      }
      if (rc != MPI_SUCCESS) {
        state_[s] = Peer::lost;  // (MPI failed a call with it, as ULFM does for a dead peer)
        abandoned_ = true;       // its receive, perhaps a send, stay with MPI
      }
      cohort::inject::point("fence.sent");  // (a test kills a rank whose log reached some members only)
    }
  }

  /// A self-confirming fence's request (fence()): a generalized request that progress() completes once
  /// every member's log and data arrived, every member being alive: each member sends its log only once it
  /// entered this fence and completed its epoch's other operations, so this rank's completion proves that
  /// every member entered the fence, as the confirming barrier would. With a member lost it never completes
  /// here (the driver sees the death; finish() completes and frees it).
  int start(MPI_Request *req) {
    if (request_ != MPI_REQUEST_NULL) return MPI_ERR_INTERN;
    int rc = start_request(&request_);
    if (rc == MPI_SUCCESS) *req = request_;
    return rc;
  }

  void progress() {
    if (!pass(true) || request_ == MPI_REQUEST_NULL || request_completed_) return;
    if (std::find(state_.begin(), state_.end(), Peer::lost) != state_.end()) return;
    request_completed_ = true;
    PMPI_Grequest_complete(request_);  // (the driver's test frees it)
  }

  int finish() {
    if (request_ != MPI_REQUEST_NULL && !request_completed_) {
      // The driver gave it up (a member died): nothing else refers to it.
      PMPI_Grequest_complete(request_);
      PMPI_Request_free(&request_);
    }
    wait([this] { return pass(true); });
    apply_logs();
    int rc = replies();
    if (abandoned_) {
      w_.xabandoned = true;
      std::lock_guard<std::mutex> lock(g_lost_mu);
      g_lost_exchanges.push_back(std::move(w_.x));  // (w_.x is then empty: reset_logs makes a new one)
    }
    reset_logs(w_);
    return rc;
  }

 private:
  // One pass over the members of the current round (round 1 when `logs`): true when every one is settled:
  // its receive completed and every request in more[s] (sends, bulk receives) too, or it is lost (known dead
  // after the failure grace, or MPI failed a call with it, as under ULFM: its requests are then left to MPI).
  bool pass(bool logs) {
    std::vector<MPI_Request> &recv = logs ? x_.recv : x_.rrecv;
    std::vector<std::vector<MPI_Request>> &more = logs ? x_.more : x_.rmore;
    bool all = true;
    for (int s = 0; s < n_; ++s) {
      if (settled_[s]) continue;
      int rc = MPI_SUCCESS;
      if (state_[s] == Peer::receiving || state_[s] == Peer::receiving_rest) {
        int flag = 0;
        bool rest = state_[s] == Peer::receiving_rest;
        rc = PMPI_Test(&recv[s], &flag, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS && flag) {
          state_[s] = Peer::received;
          if (logs && !rest) rc = receive_rest(s);
          if (rc == MPI_SUCCESS && state_[s] == Peer::received && logs) rc = post_bulk(s);
        }
      }
      int flag = 1;
      if (rc == MPI_SUCCESS && !more[s].empty()) {
        rc = PMPI_Testall(static_cast<int>(more[s].size()), more[s].data(), &flag, MPI_STATUSES_IGNORE);
      }
      bool lost = rc != MPI_SUCCESS;
      if (lost) {
        COHORT_LOG_INFO("MPI_Win_fence: MPI failed the exchange with rank %d (code %d): taken as dead",
                        map_.to_alias(s), rc);
      } else if (state_[s] == Peer::received && flag) {
        settled_[s] = true;
        continue;
      } else {
        lost = state_[s] == Peer::lost || (w_.alias->known_failed(map_.to_alias(s)) && failure_grace_over());
      }
      if (lost) {
        if (state_[s] == Peer::receiving || state_[s] == Peer::receiving_rest || !flag || rc != MPI_SUCCESS)
          abandoned_ = true;
        state_[s] = Peer::lost;
        settled_[s] = true;
        continue;
      }
      all = false;
    }
    return all;
  }

  template <typename Done>
  void wait(Done done) {
    Watch watch;
    watch.join_repairs = true;  // a survivor one fence behind may wait for this rank in its repair
    wait_until(done, watch);
  }

  // Round 1: member s's log arrived (its first kLogInline bytes): its length, and the receive of the rest.
  int receive_rest(int s) {
    std::uint64_t total = 0;
    std::memcpy(&total, x_.in[s].get(), kLogPrefix);
    if (total < kLogPrefix) total = kLogPrefix;  // (malformed: an empty log)
    x_.in_len[s] = static_cast<std::size_t>(total);
    if (total <= kLogInline) return MPI_SUCCESS;
    if (x_.in_cap[s] < total) {
      std::unique_ptr<char[]> bigger(new char[total]);
      std::memcpy(bigger.get(), x_.in[s].get(), kLogInline);
      x_.in[s] = std::move(bigger);
      x_.in_cap[s] = static_cast<std::size_t>(total);
    }
    int rc = PMPI_Irecv(x_.in[s].get() + kLogInline, static_cast<int>(total - kLogInline), MPI_BYTE, s, kLogRestTag,
                        w_.xcomm, &x_.recv[s]);
    if (rc == MPI_SUCCESS) state_[s] = Peer::receiving_rest;
    return rc;
  }

  // Round 1: the bulk puts' data of member s's log, straight into this rank's memory (in log order: MPI
  // keeps the order of messages between two ranks with the same tag).
  int post_bulk(int s) {
    for (const rma_log::Region &r :
         rma_log::bulk_regions(x_.in[s].get() + kLogPrefix, x_.in_len[s] - kLogPrefix, mem_, xapply())) {
      char *to = nullptr;
      if (r.offset >= 0) {
        to = mem_.base + r.offset;
      } else {
        x_.scratch[s].resize(std::max(x_.scratch[s].size(), r.bytes));
        to = x_.scratch[s].data();
      }
      x_.more[s].push_back(MPI_REQUEST_NULL);
      int rc = PMPI_Irecv(to, static_cast<int>(r.bytes), MPI_BYTE, s, kBulkTag, w_.xcomm, &x_.more[s].back());
      if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
  }

  // Every received log, in member order (this rank's own to itself at its place; its bulk puts too).
  void apply_logs() {
    for (int s = 0; s < n_; ++s) {
      if (state_[s] != Peer::received) continue;
      const char *log = (s == me_ ? x_.out[s].data() : x_.in[s].get()) + kLogPrefix;
      std::size_t len = (s == me_ ? x_.out[s].size() : x_.in_len[s]) - kLogPrefix;
      if (s == me_ && !x_.bulk[s].empty()) {
        std::size_t i = 0;
        for (const rma_log::Region &r : rma_log::bulk_regions(log, len, mem_, xapply())) {
          if (r.offset >= 0 && i < x_.bulk[s].size()) std::memmove(mem_.base + r.offset, x_.bulk[s][i].addr, r.bytes);
          ++i;
        }
      }
      std::string error = rma_log::apply(log, len, mem_, xapply(), &x_.reply[s]);
      if (!error.empty())
        COHORT_LOG_ERROR("MPI_Win_fence: an RMA operation from rank %d: %s; skipped", map_.to_alias(s), error.c_str());
    }
  }

  // Round 2: the replies, only between an origin that fetched and its target (both know); then the fetched
  // data into the program's buffers.
  int replies() {
    std::vector<Peer> logs_state = state_;
    bool round2 = false;
    for (int s = 0; s < n_; ++s) {
      std::size_t expected = 0;
      for (const Fetch &f : x_.fetch[s]) expected += f.bytes;
      state_[s] = Peer::received;
      settled_[s] = false;
      if (s == me_) {
        x_.got[s] = x_.reply[s];
        continue;
      }
      if (logs_state[s] == Peer::lost) {
        if (expected > 0) state_[s] = Peer::lost;
        continue;
      }
      if (!x_.reply[s].empty()) {
        round2 = true;
        x_.rmore[s].push_back(MPI_REQUEST_NULL);
        PMPI_Isend(x_.reply[s].data(), static_cast<int>(x_.reply[s].size()), MPI_BYTE, s, kReplyTag, w_.xcomm,
                   &x_.rmore[s].back());
      }
      if (expected > 0) {
        round2 = true;
        x_.got[s].resize(expected);
        state_[s] = PMPI_Irecv(x_.got[s].data(), static_cast<int>(expected), MPI_BYTE, s, kReplyTag, w_.xcomm,
                               &x_.rrecv[s]) == MPI_SUCCESS
                        ? Peer::receiving
                        : Peer::lost;
      }
    }
    if (round2) wait([this] { return pass(false); });
    int rc = MPI_SUCCESS;
    for (int s = 0; s < n_; ++s) {
      if (x_.fetch[s].empty()) continue;
      if (state_[s] != Peer::received) {
        // The target died before its reply came: what the call would have returned is lost.
        const Fetch &f = x_.fetch[s].front();
        int r = dead_target(w_, handle_, false, info(f.id).name, f.target);
        if (rc == MPI_SUCCESS) rc = r;
        continue;
      }
      std::size_t at = 0;
      for (const Fetch &f : x_.fetch[s]) {
        std::memcpy(f.addr, x_.got[s].data() + at, f.bytes);
        at += f.bytes;
      }
    }
    return rc;
  }

  WinRecord &w_;
  MPI_Win handle_;
  const RankMap &map_;
  const int n_, me_;
  Exchange &x_;
  rma_log::Memory mem_;
  std::vector<Peer> state_;
  std::vector<bool> settled_;
  bool abandoned_ = false;
  MPI_Request request_ = MPI_REQUEST_NULL;  // start()
  bool request_completed_ = false;
};

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

// Looks up the program's window; for the RMA entry points below.
#define COHORT_WIN_OR_PASS(passthrough) \
  WinRecord *w = find_win(win);         \
  if (w == nullptr) return passthrough;

// True when every datatype given is predefined: an operation on them may be deferred (a derived datatype
// may be freed by the program before the synchronisation that would issue it).
bool predefined(std::initializer_list<MPI_Datatype> types) {
  for (MPI_Datatype t : types) {
    int ints = 0, addrs = 0, dts = 0, combiner = 0;
    if (PMPI_Type_get_envelope(t, &ints, &addrs, &dts, &combiner) != MPI_SUCCESS || combiner != MPI_COMBINER_NAMED)
      return false;
  }
  return true;
}

// An RMA call to target: to a dead one the policy; otherwise `post` with the substitute rank.
// Inside an epoch that covers target, a put or get on predefined datatypes (`deferrable`) is deferred: it is issued by
// the helper thread at the epoch's next synchronisation (fence, flush, unlock), in the same batch as that
// synchronisation, as MPI allows (an operation completes only at a synchronisation, and the program may
// not touch its buffers before). So a put and its fence cost one handoff to the helper, not one each.
// Otherwise the call is issued now, after the deferred operations (accumulates keep their order).
// NOTE: issued on the helper thread either way: Open MPI's osc/rdma emulates atomics over the
// shared-memory BTL with a message that the target must answer, so MPI_Accumulate to a target that has
// just died waits inside the call. For the same reason the accumulate family is never deferred: issued
// at the fence, where deaths cluster (a rank dies in its fence), an accumulate waiting inside MPI on a
// target that died there wedged Open MPI 4.1's progress for the issuer's later flushes to live targets
// (3 of 30 runs of win.fault.fence.before_then_during hung; 2 of 30 issued at the call, 1 of 30 before
// batching; the rate follows the load, see README, Windows).
// post must capture by value (it may outlive the call: win::guarded).
template <typename F>
int rma(WinRecord &w, MPI_Win handle, CallId id, bool send, int target, bool deferrable, F post) {
  int sub = sub_target(w, target);
  if (sub == kDeadTarget) return dead_target(w, handle, send, info(id).name, target);
  if (sub == MPI_PROC_NULL) return post(sub, w.win);
  bool in_epoch = w.fence_open || w.lock_all || w.locked.count(target) != 0;
  WinStep step = target_step(w, target, sub, post);
  w.dirty.insert(target);
  int rc = MPI_SUCCESS;
  if (deferrable && in_epoch) {
    w.pending.push_back(std::move(step));
  } else {
    std::vector<WinStep> steps = take_pending(w);
    steps.push_back(std::move(step));
    rc = run_steps(w, std::move(steps));
  }
  cohort::inject::point(posted_hook(id));
  return rc;
}

// A completed generalized request, for MPI_Rput/MPI_Rget, which complete before they return.
int completed_request(MPI_Request *request) {
  int rc = start_request(request);
  return rc != MPI_SUCCESS ? rc : PMPI_Grequest_complete(*request);
}

// A request-based call: the deferred operations, the operation and a flush of its target, one batch
// (local completion for a put, the data for a get).
template <typename F>
int rma_now(WinRecord &w, MPI_Win handle, CallId id, bool send, int target, MPI_Request *request, F post) {
  int rc = rma(w, handle, id, send, target, false, [post](int sub, MPI_Win win) {
    int r = post(sub, win);
    return r != MPI_SUCCESS || sub == MPI_PROC_NULL ? r : PMPI_Win_flush(sub, win);
  });
  if (rc != MPI_SUCCESS) {
    *request = MPI_REQUEST_NULL;
    return rc;
  }
  return completed_request(request);
}

}  // namespace
}  // namespace cohort::wrap

using namespace cohort::wrap;

extern "C" int __wrap_MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win) {
  count_call(CallId::MPI_Win_create);
  Alias *a = find_alias(comm);
  if (a == nullptr) return PMPI_Win_create(base, size, disp_unit, info, comm, win);
  return create(*a, CallId::MPI_Win_create, base, size, disp_unit, info, false, win);
}

extern "C" int __wrap_MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win) {
  count_call(CallId::MPI_Win_allocate);
  Alias *a = find_alias(comm);
  if (a == nullptr) return PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win);
  void *base = nullptr;
  int rc = PMPI_Alloc_mem(size > 0 ? size : 1, MPI_INFO_NULL, &base);
  if (rc != MPI_SUCCESS) return rc;
  rc = create(*a, CallId::MPI_Win_allocate, base, size, disp_unit, info, true, win);
  if (rc == MPI_SUCCESS) *static_cast<void **>(baseptr) = base;
  return rc;
}

extern "C" int __wrap_MPI_Win_free(MPI_Win *win) {
  count_call(CallId::MPI_Win_free);
  WinRecord *w = win != nullptr ? find_win(*win) : nullptr;
  if (w == nullptr) return PMPI_Win_free(win);
  int rc = MPI_SUCCESS;
  if (w->fence_open || w->lock_all) rc = complete_epoch(*w);
  if (rc == MPI_SUCCESS) rc = close_fence_epoch(*w);
  int confirmed = confirm(*w, CallId::MPI_Win_free);
  // NOTE: only a window whose members all live is freed (MPI_Win_free synchronises with each member): the
  // current one when no shrink was agreed since it was made (the program's own only if never recreated;
  // a member that died since, not yet agreed, makes the free abandoned, as any synchronisation).
  // Windows replaced by a recreation had a dead member; they keep the memory, which is then not freed.
  bool whole = confirmed == MPI_SUCCESS && &w->alias->current() == w->made_on && !w->left_to_mpi;
  if (whole) {
    rc = sync_call(*w, -1, [](MPI_Win sub) { return PMPI_Win_free(&sub); });
    whole = !w->left_to_mpi;
  }
  if (whole && !w->xabandoned && w->xcomm != MPI_COMM_NULL) PMPI_Comm_free(&w->xcomm);
  if (whole && w->owns_memory && w->retired.empty()) PMPI_Free_mem(w->base);
  if (w->info != MPI_INFO_NULL) PMPI_Info_free(&w->info);
  {
    std::lock_guard<std::mutex> lock(g_wins_mu);
    g_wins.erase(*win);
  }
  *win = MPI_WIN_NULL;
  return rc != MPI_SUCCESS ? rc : confirmed;
}

extern "C" int __wrap_MPI_Win_fence(int assert, MPI_Win win) {
  count_call(CallId::MPI_Win_fence);
  COHORT_WIN_OR_PASS(PMPI_Win_fence(assert, win))
  return fence(*w, win, assert);
}

extern "C" int __wrap_MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win) {
  count_call(CallId::MPI_Win_lock);
  COHORT_WIN_OR_PASS(PMPI_Win_lock(lock_type, rank, assert, win))
  int rc = close_fence_epoch(*w);
  int sub = sub_target(*w, rank);
  if (rc != MPI_SUCCESS || sub == kDeadTarget || rank == MPI_PROC_NULL) return rc;  // dead: the policy at each operation
  rc = sync_call(*w, rank, [lock_type, sub, assert](MPI_Win s) { return PMPI_Win_lock(lock_type, sub, assert, s); });
  if (rc == MPI_SUCCESS) w->locked.insert(rank);
  return rc;
}

extern "C" int __wrap_MPI_Win_unlock(int rank, MPI_Win win) {
  count_call(CallId::MPI_Win_unlock);
  COHORT_WIN_OR_PASS(PMPI_Win_unlock(rank, win))
  if (w->locked.erase(rank) == 0) return MPI_SUCCESS;  // a dead target's lock was never taken
  int sub = w->made_on->map.to_sub(rank);
  w->dirty.erase(rank);
  int rc = sync_call(*w, rank, [sub](MPI_Win s) { return PMPI_Win_unlock(sub, s); });
  cohort::inject::point(posted_hook(CallId::MPI_Win_unlock));  // between epochs: this rank holds no lock
  return rc;
}

extern "C" int __wrap_MPI_Win_lock_all(int assert, MPI_Win win) {
  count_call(CallId::MPI_Win_lock_all);
  COHORT_WIN_OR_PASS(PMPI_Win_lock_all(assert, win))
  int rc = close_fence_epoch(*w);
  if (rc != MPI_SUCCESS) return rc;
  // NOTE: without NOCHECK MPI may ask each target for its lock, a dead one included.
  rc = PMPI_Win_lock_all(assert | MPI_MODE_NOCHECK, w->win);
  w->lock_all = rc == MPI_SUCCESS;
  return rc;
}

extern "C" int __wrap_MPI_Win_unlock_all(MPI_Win win) {
  count_call(CallId::MPI_Win_unlock_all);
  COHORT_WIN_OR_PASS(PMPI_Win_unlock_all(win))
  if (!w->lock_all) return PMPI_Win_unlock_all(w->win);  // MPI's error for an epoch never opened
  // One batch: the deferred operations, a flush of each live target sent operations, the unlock.
  WinStep unlock = member_step([](MPI_Win s) { return PMPI_Win_unlock_all(s); });
  int rc = complete_epoch(*w, &unlock);
  w->lock_all = false;
  cohort::inject::point(posted_hook(CallId::MPI_Win_unlock_all));
  return rc;
}

extern "C" int __wrap_MPI_Win_flush(int rank, MPI_Win win) {
  count_call(CallId::MPI_Win_flush);
  COHORT_WIN_OR_PASS(PMPI_Win_flush(rank, win))
  return flush_target(*w, rank, true, [](int sub, MPI_Win s) { return PMPI_Win_flush(sub, s); });
}

extern "C" int __wrap_MPI_Win_flush_all(MPI_Win win) {
  count_call(CallId::MPI_Win_flush_all);
  COHORT_WIN_OR_PASS(PMPI_Win_flush_all(win))
  return complete_epoch(*w);
}

extern "C" int __wrap_MPI_Win_flush_local(int rank, MPI_Win win) {
  count_call(CallId::MPI_Win_flush_local);
  COHORT_WIN_OR_PASS(PMPI_Win_flush_local(rank, win))
  return flush_target(*w, rank, false, [](int sub, MPI_Win s) { return PMPI_Win_flush_local(sub, s); });
}

extern "C" int __wrap_MPI_Win_flush_local_all(MPI_Win win) {
  count_call(CallId::MPI_Win_flush_local_all);
  COHORT_WIN_OR_PASS(PMPI_Win_flush_local_all(win))
  return run_steps(*w, pending_and_dirty_flushes(*w, [](int s, MPI_Win x) { return PMPI_Win_flush_local(s, x); }));
}

extern "C" int __wrap_MPI_Win_get_group(MPI_Win win, MPI_Group *group) {
  count_call(CallId::MPI_Win_get_group);
  COHORT_WIN_OR_PASS(PMPI_Win_get_group(win, group))
  return PMPI_Comm_group(w->alias->handle(), group);  // dead ranks included, like the communicator's size
}

extern "C" int __wrap_MPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
  count_call(CallId::MPI_Put);
  COHORT_WIN_OR_PASS(PMPI_Put(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                              target_datatype, win))
  if (exchanged(*w)) {
    int ot = xtype(origin_datatype), tt = xtype(target_datatype);
    std::size_t bytes = static_cast<std::size_t>(origin_count) * xsize(ot);
    if (ot >= 0 && tt >= 0 && origin_count >= 0 && target_count >= 0 &&
        bytes == static_cast<std::size_t>(target_count) * xsize(tt))
      return bytes >= kBulkBytes ? log_bulk_put(*w, win, target_rank, tt, target_count, target_disp, origin_addr, bytes)
                                 : log_op(*w, win, CallId::MPI_Put, true, target_rank, rma_log::Kind::put, tt, 0,
                                          target_count, target_disp, origin_addr, bytes, nullptr, 0, nullptr, 0);
  }
  int rc = rma(*w, win, CallId::MPI_Put, true, target_rank, predefined({origin_datatype, target_datatype}), [=](int sub, MPI_Win s) {
    return PMPI_Put(origin_addr, origin_count, origin_datatype, sub, target_disp, target_count, target_datatype, s);
  });
  return rc;
}

extern "C" int __wrap_MPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
  count_call(CallId::MPI_Get);
  COHORT_WIN_OR_PASS(PMPI_Get(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                              target_datatype, win))
  if (exchanged(*w)) {
    int ot = xtype(origin_datatype), tt = xtype(target_datatype);
    std::size_t bytes = static_cast<std::size_t>(origin_count) * xsize(ot);
    if (ot >= 0 && tt >= 0 && origin_count >= 0 && target_count >= 0 &&
        bytes == static_cast<std::size_t>(target_count) * xsize(tt))
      return log_op(*w, win, CallId::MPI_Get, false, target_rank, rma_log::Kind::get, tt, 0, target_count, target_disp,
                    nullptr, 0, nullptr, 0, origin_addr, bytes);
  }
  return rma(*w, win, CallId::MPI_Get, false, target_rank, predefined({origin_datatype, target_datatype}), [=](int sub, MPI_Win s) {
    return PMPI_Get(origin_addr, origin_count, origin_datatype, sub, target_disp, target_count, target_datatype, s);
  });
}

extern "C" int __wrap_MPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                                     int target_rank, MPI_Aint target_disp, int target_count,
                                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  count_call(CallId::MPI_Accumulate);
  COHORT_WIN_OR_PASS(PMPI_Accumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                                     target_count, target_datatype, op, win))
  if (exchanged(*w)) {
    int tt = xtype(target_datatype), code = xop(op);
    bool none = code == rma_log::kOpNoOp;
    if (tt >= 0 && code >= 0 && target_count >= 0 && (none || (origin_datatype == target_datatype && origin_count == target_count))) {
      std::size_t bytes = none ? 0 : static_cast<std::size_t>(target_count) * xsize(tt);
      return log_op(*w, win, CallId::MPI_Accumulate, true, target_rank, rma_log::Kind::accumulate, tt, code, target_count,
                    target_disp, origin_addr, bytes, nullptr, 0, nullptr, 0);
    }
  }
  return rma(*w, win, CallId::MPI_Accumulate, true, target_rank, false, [=](int sub, MPI_Win s) {
    return PMPI_Accumulate(origin_addr, origin_count, origin_datatype, sub, target_disp, target_count,
                           target_datatype, op, s);
  });
}

extern "C" int __wrap_MPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                                         void *result_addr, int result_count, MPI_Datatype result_datatype,
                                         int target_rank, MPI_Aint target_disp, int target_count,
                                         MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  count_call(CallId::MPI_Get_accumulate);
  COHORT_WIN_OR_PASS(PMPI_Get_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                                         result_datatype, target_rank, target_disp, target_count, target_datatype,
                                         op, win))
  if (exchanged(*w)) {
    int tt = xtype(target_datatype), code = xop(op);
    bool none = code == rma_log::kOpNoOp;
    if (tt >= 0 && code >= 0 && target_count >= 0 && result_datatype == target_datatype && result_count == target_count &&
        (none || (origin_datatype == target_datatype && origin_count == target_count))) {
      std::size_t span = static_cast<std::size_t>(target_count) * xsize(tt);
      return log_op(*w, win, CallId::MPI_Get_accumulate, false, target_rank, rma_log::Kind::get_accumulate, tt, code,
                    target_count, target_disp, origin_addr, none ? 0 : span, nullptr, 0, result_addr, span);
    }
  }
  return rma(*w, win, CallId::MPI_Get_accumulate, false, target_rank, false, [=](int sub, MPI_Win s) {
    return PMPI_Get_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                               result_datatype, sub, target_disp, target_count, target_datatype, op, s);
  });
}

extern "C" int __wrap_MPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                                       int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
  count_call(CallId::MPI_Fetch_and_op);
  COHORT_WIN_OR_PASS(PMPI_Fetch_and_op(origin_addr, result_addr, datatype, target_rank, target_disp, op, win))
  if (exchanged(*w)) {
    int tt = xtype(datatype), code = xop(op);
    if (tt >= 0 && code >= 0) {
      std::size_t span = xsize(tt);
      return log_op(*w, win, CallId::MPI_Fetch_and_op, false, target_rank, rma_log::Kind::get_accumulate, tt, code, 1,
                    target_disp, origin_addr, code == rma_log::kOpNoOp ? 0 : span, nullptr, 0, result_addr, span);
    }
  }
  return rma(*w, win, CallId::MPI_Fetch_and_op, false, target_rank, false, [=](int sub, MPI_Win s) {
    return PMPI_Fetch_and_op(origin_addr, result_addr, datatype, sub, target_disp, op, s);
  });
}

extern "C" int __wrap_MPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                                           MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                                           MPI_Win win) {
  count_call(CallId::MPI_Compare_and_swap);
  COHORT_WIN_OR_PASS(PMPI_Compare_and_swap(origin_addr, compare_addr, result_addr, datatype, target_rank,
                                           target_disp, win))
  if (exchanged(*w)) {
    int tt = xtype(datatype);
    if (tt >= 0) {
      std::size_t span = xsize(tt);
      return log_op(*w, win, CallId::MPI_Compare_and_swap, false, target_rank, rma_log::Kind::compare_and_swap, tt, 0, 1,
                    target_disp, origin_addr, span, compare_addr, span, result_addr, span);
    }
  }
  return rma(*w, win, CallId::MPI_Compare_and_swap, false, target_rank, false, [=](int sub, MPI_Win s) {
    return PMPI_Compare_and_swap(origin_addr, compare_addr, result_addr, datatype, sub, target_disp, s);
  });
}

extern "C" int __wrap_MPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                               int target_rank, MPI_Aint target_disp, int target_count,
                               MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request) {
  count_call(CallId::MPI_Rput);
  COHORT_WIN_OR_PASS(PMPI_Rput(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                               target_datatype, win, request))
  return rma_now(*w, win, CallId::MPI_Rput, true, target_rank, request, [=](int sub, MPI_Win s) {
    return PMPI_Put(origin_addr, origin_count, origin_datatype, sub, target_disp, target_count, target_datatype, s);
  });
}

extern "C" int __wrap_MPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                               MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
                               MPI_Request *request) {
  count_call(CallId::MPI_Rget);
  COHORT_WIN_OR_PASS(PMPI_Rget(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                               target_datatype, win, request))
  return rma_now(*w, win, CallId::MPI_Rget, false, target_rank, request, [=](int sub, MPI_Win s) {
    return PMPI_Get(origin_addr, origin_count, origin_datatype, sub, target_disp, target_count, target_datatype, s);
  });
}

extern "C" int __wrap_MPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                                      int target_rank, MPI_Aint target_disp, int target_count,
                                      MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request) {
  count_call(CallId::MPI_Raccumulate);
  COHORT_WIN_OR_PASS(PMPI_Raccumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                                      target_count, target_datatype, op, win, request))
  return rma_now(*w, win, CallId::MPI_Raccumulate, true, target_rank, request, [=](int sub, MPI_Win s) {
    return PMPI_Accumulate(origin_addr, origin_count, origin_datatype, sub, target_disp, target_count,
                           target_datatype, op, s);
  });
}

extern "C" int __wrap_MPI_Rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                                          void *result_addr, int result_count, MPI_Datatype result_datatype,
                                          int target_rank, MPI_Aint target_disp, int target_count,
                                          MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                                          MPI_Request *request) {
  count_call(CallId::MPI_Rget_accumulate);
  COHORT_WIN_OR_PASS(PMPI_Rget_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                                          result_datatype, target_rank, target_disp, target_count, target_datatype,
                                          op, win, request))
  return rma_now(*w, win, CallId::MPI_Rget_accumulate, false, target_rank, request, [=](int sub, MPI_Win s) {
    return PMPI_Get_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                               result_datatype, sub, target_disp, target_count, target_datatype, op, s);
  });
}

extern "C" int cohort_win_state(MPI_Win win, int *members, int *recreations) {
  WinRecord *w = find_win(win);
  if (w == nullptr) return 0;
  if (members != nullptr) *members = w->made_on->map.sub_size();
  if (recreations != nullptr) *recreations = w->recreations;
  return 1;
}
