#include "wrap/core/progress.hpp"

#include <sched.h>
#include <time.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <utility>

#include "detector/runtime.hpp"
#include "repair/repair.hpp"

namespace cohort::wrap {

std::atomic<int> g_ops_in_flight{0};

namespace {

// NOTE: spin for latency, then yield now and then, then sleep: the detector thread and, when
// oversubscribed, other ranks share these cores; a rank that spins forever delays heartbeats into false suspicions. The spin
// is measured in time, not polls: a fixed 64 polls (~3 µs) made MPICH's 64 KiB Bcast ~1 µs slower than
// the same call polled without yielding (bench/overhead, 2 ranks). Open MPI yields inside its own
// progress when oversubscribed, so its polls are not pure spins either way.
class Backoff {
 public:
  void pause() {
    detector::note_progress();
    if (spinning_) {
      // The clock is read every 64 polls, first at the 64th: most waits end within a few polls, and a
      // clock read cost an 8-byte collective at 2 ranks about 5% of its time (perf, Open MPI).
      if ((++n_ & 63) != 0) return;
      if (start_ < 0) {
        start_ = now_ns();
        return;
      }
      if (now_ns() - start_ < kSpinNs) return;
      spinning_ = false;
    }
    if (now_ns() - start_ < kYieldNs) {
      // NOTE: every 8th poll: a sched_yield costs a system call (~0.5 µs), which on every poll made a
      // 1 MiB ping-pong's waits (~100 µs) notice completion ~1% late.
      if ((++n_ & 7) == 0) sched_yield();
      return;
    }
    struct timespec ts = {0, 50 * 1000};  // 50 µs
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
    }
  }

 private:
  static constexpr std::int64_t kSpinNs = 20 * 1000;    // pure spin: 64 polls, then 20 µs
  static constexpr std::int64_t kYieldNs = 1000 * 1000;  // then sched_yield up to 1 ms, then sleeps
  static std::int64_t now_ns() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
  }
  bool spinning_ = true;
  std::uint64_t n_ = 0;
  std::int64_t start_ = -1;
};

std::atomic<WaitHook> g_wait_hook{nullptr};
thread_local const std::function<void()> *t_poll_hook = nullptr;  // ThreadPollHook
std::atomic<WaitHook> g_join_hook{nullptr};
std::atomic<WaitHook> g_in_flight_driver{nullptr};

template <typename Test>
WaitResult poll(Test test, const Watch &watch) {
  std::uint64_t epoch = detector::failure_epoch();
  bool broken = watch.broken && watch.broken();
  Backoff backoff;
  for (std::uint64_t polls = 0;; ++polls) {
    // NOTE: every wait in cohort drives the nonblocking collectives in flight (wrap/core/nbc.hpp): a program
    // blocked in any call keeps taking part in their confirmations and agreements.
    if (g_ops_in_flight.load(std::memory_order_relaxed) != 0) {
      if (WaitHook drive = g_in_flight_driver.load(std::memory_order_relaxed)) drive();
    }
    if (test()) return WaitResult::completed;
    if (WaitHook hook = g_wait_hook.load(std::memory_order_relaxed)) hook();
    if (t_poll_hook != nullptr) (*t_poll_hook)();
    if (watch.join_repairs && (polls & 63) == 63 && epoch > 0) {
      if (WaitHook join = g_join_hook.load(std::memory_order_relaxed)) join();
    }
    if (watch.revocable != MPI_COMM_NULL && (!watch.revoke_lazily || repair::revoke_seen()) &&
        repair::is_revoked(watch.revocable))
      return WaitResult::revoked;
    std::uint64_t now = detector::failure_epoch();
    if (now != epoch) {
      epoch = now;
      broken = watch.broken && watch.broken();
    }
    if (broken && failure_grace_over()) return WaitResult::broken;
    backoff.pause();
  }
}

// ---- backend hook (ULFM): MPI itself reports failures through return codes ----
// An error of a failure class ends the wait as the detector would (broken, or revoked); the heartbeat
// backend classifies every code as none, so there this changes nothing.
bool failure_reported(int rc, WaitResult *out) {
  switch (repair::error_kind(rc)) {
    case repair::ErrorKind::none: return false;
    case repair::ErrorKind::proc_failed: *out = WaitResult::broken; return true;
    case repair::ErrorKind::revoked: *out = WaitResult::revoked; return true;
  }
  return false;
}

// poll() over a test that returns MPI's code: a failure-class code ends the wait with its outcome (broken
// or revoked); any other error ends it as failed, with the code in *error (if not null).
template <typename Test>
WaitResult poll_reporting(Test test, const Watch &watch, int *error) {
  WaitResult reported = WaitResult::completed;
  int failed_rc = MPI_SUCCESS;
  WaitResult r = poll(
      [&] {
        int done = 0;
        int rc = test(&done);
        if (rc != MPI_SUCCESS) {
          if (!failure_reported(rc, &reported)) failed_rc = rc;
          return true;
        }
        return done != 0;
      },
      watch);
  if (r != WaitResult::completed) return r;
  if (failed_rc != MPI_SUCCESS) {
    if (error != nullptr) *error = failed_rc;
    return WaitResult::failed;
  }
  return reported;
}

std::atomic<std::uint64_t> g_grace_epoch{0};
std::atomic<std::int64_t> g_grace_start_ns{0};

std::int64_t monotonic_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

ThreadPollHook::ThreadPollHook(std::function<void()> fn) : fn_(std::move(fn)), prev_(t_poll_hook) {
  if (fn_) t_poll_hook = &fn_;
}

ThreadPollHook::~ThreadPollHook() { t_poll_hook = prev_; }

void set_wait_hook(WaitHook hook) { g_wait_hook.store(hook, std::memory_order_release); }
void set_join_hook(WaitHook hook) { g_join_hook.store(hook, std::memory_order_release); }
void set_in_flight_driver(WaitHook drive) { g_in_flight_driver.store(drive, std::memory_order_release); }

// NOTE: two threads seeing a new epoch at once both start the grace; either start is as good.
bool failure_grace_over() {
  std::uint64_t epoch = detector::failure_epoch();
  std::int64_t now = monotonic_ns();
  if (g_grace_epoch.load(std::memory_order_acquire) != epoch) {
    g_grace_start_ns.store(now, std::memory_order_relaxed);
    g_grace_epoch.store(epoch, std::memory_order_release);
    return false;
  }
  return now - g_grace_start_ns.load(std::memory_order_relaxed) >= std::int64_t{kFailureGraceMs} * 1000000;
}

// NOTE: an error of the test (e.g. MPI_ERR_TRUNCATE when a receiver's count is smaller than the root's)
// ends the wait: the request has completed in error, and the caller must hand the code to the program.
WaitResult wait(MPI_Request *req, MPI_Status *status, const Watch &watch, int *error) {
  return poll_reporting([&](int *done) { return PMPI_Test(req, done, status); }, watch, error);
}

WaitResult wait_all(int count, MPI_Request *reqs, MPI_Status *statuses, const Watch &watch, int *error) {
  return poll_reporting([&](int *done) { return PMPI_Testall(count, reqs, done, statuses); }, watch, error);
}

int raise_test_error(MPI_Comm alias, int rc) {
#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION < 5
  if (alias == MPI_COMM_WORLD) return rc;
#endif
  PMPI_Comm_call_errhandler(alias, rc);
  return rc;
}

int raise_p2p_test_error(MPI_Comm alias, int rc) {
#if defined(MPICH)
  if (alias == MPI_COMM_WORLD) return rc;
#endif
  PMPI_Comm_call_errhandler(alias, rc);
  return rc;
}

WaitResult wait_until(FunctionRef<bool()> done, const Watch &watch) { return poll(done, watch); }

}  // namespace cohort::wrap
