// Batches on the helper thread (wrap/rma/helper_batch.hpp).
#include "wrap/rma/helper_batch.hpp"

#include <time.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>

#include "detector/log.hpp"
#include "detector/runtime.hpp"
#include "wrap/core/stop_job.hpp"
#include "wrap/rma/helper_thread.hpp"

namespace cohort::wrap::win {
namespace {

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

// How long an accumulate-family step may run once a member of the window is dead before it is taken to wait
// on a lock the dead member held (WinStep::lock_wait). NOTE: such a lock is never released, and every
// later accumulate to that target, by any rank, waits on it; 5 s is far above one accumulate's time (the
// soak's work_counter makes 6000 MPI_Fetch_and_op on one target in about 1 s at 4 to 8 ranks).
constexpr double kLockWaitS = 5.0;

double now_s() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace

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
    // (the step the helper was seen on, and since when: for a step waiting on a dead member's lock)
    auto seen = std::make_shared<std::pair<std::size_t, double>>(b->steps.size(), 0.0);
    auto dead = [b, wp] {
      std::size_t i = b->at.load();
      return i < b->steps.size() && step_dead(*wp, b->steps[i]);
    };
    std::function<bool()> stalled = [b, wp, seen] {
      std::size_t i = b->at.load();
      if (i >= b->steps.size() || !b->steps[i].lock_wait || !wp->made_on->any_member_failed())
        return false;
      if (seen->first != i) *seen = {i, now_s()};
      return now_s() - seen->second > kLockWaitS;
    };
    bool abandoned = false;
    guarded(dead, job, &abandoned, &stalled);
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
    const WinStep &held = b->steps[stuck];
    if (held.lock_wait && !step_dead(w, held)) {
      // NOTE: the operation may or may not have applied, and every later accumulate to this target would
      // wait the same way: no result the program could trust, so the job stops with the reason.
      char what[160];
      std::snprintf(what, sizeof what,
                    "target %d has not answered for %.0f s since a member of the window died; MPI waits on a "
                    "lock at the target that the dead rank held", held.target, kLockWaitS);
      abort_job(held.call, what);
    }
    // NOTE: an operation that returns data, abandoned as its target died, wrote nothing the program can use:
    // the dead target's policy applies, as it does to such a call made after the death.
    if (held.returns_data && held.call != nullptr && step_dead(w, held)) {
      int r = dead_target(w, w.handle, false, held.call, held.target);
      if (r != MPI_SUCCESS && rc == MPI_SUCCESS) rc = r;
    }
    COHORT_LOG_INFO("window synchronisation abandoned: %s died during it (step %zu of %zu)",
                    b->steps[stuck].every_member ? "a member" : "its target", stuck + 1, b->steps.size());
    for (std::size_t i = stuck + 1; i < b->steps.size(); ++i) steps.push_back(std::move(b->steps[i]));
  }
  return rc;
}

std::vector<WinStep> take_pending(WinRecord &w) {
  std::vector<WinStep> steps;
  steps.swap(w.pending);
  return steps;
}

int complete_epoch(WinRecord &w, WinStep *last) {
  std::vector<WinStep> steps = pending_and_dirty_flushes(w, [](int s, MPI_Win win) { return PMPI_Win_flush(s, win); });
  w.dirty.clear();
  if (last != nullptr) steps.push_back(std::move(*last));
  return run_steps(w, std::move(steps));
}

int close_fence_epoch(WinRecord &w) {
  if (!w.fence_open) return MPI_SUCCESS;
  w.fence_open = false;
  return sync_call(w, -1, [](MPI_Win win) { return PMPI_Win_unlock_all(win); });
}

}  // namespace cohort::wrap::win
