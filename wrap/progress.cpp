#include "wrap/progress.hpp"

#include <sched.h>
#include <time.h>

#include <cerrno>
#include <cstdint>

#include "detector/runtime.hpp"
#include "repair/repair.hpp"

namespace cohort::wrap {
namespace {

// NOTE: spin briefly for latency, then yield, then sleep: the detector thread and, when oversubscribed,
// other ranks share these cores; a rank that spins forever delays heartbeats into false suspicions.
class Backoff {
 public:
  void pause() {
    ++n_;
    if (n_ < 64) return;
    if (n_ < 1024) {
      sched_yield();
      return;
    }
    struct timespec ts = {0, 50 * 1000};  // 50 µs
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
    }
  }

 private:
  std::uint64_t n_ = 0;
};

template <typename Test>
WaitResult poll(Test test, const Watch &watch) {
  std::uint64_t epoch = detector::failure_epoch();
  if (watch.broken && watch.broken()) return WaitResult::broken;
  Backoff backoff;
  for (;;) {
    if (test()) return WaitResult::completed;
    if (watch.revocable != MPI_COMM_NULL && repair::is_revoked(watch.revocable)) return WaitResult::revoked;
    std::uint64_t now = detector::failure_epoch();
    if (now != epoch) {
      epoch = now;
      if (watch.broken && watch.broken()) return WaitResult::broken;
    }
    backoff.pause();
  }
}

}  // namespace

WaitResult wait(MPI_Request *req, MPI_Status *status, const Watch &watch) {
  return poll(
      [&] {
        int done = 0;
        PMPI_Test(req, &done, status);
        return done != 0;
      },
      watch);
}

WaitResult wait_all(int count, MPI_Request *reqs, MPI_Status *statuses, const Watch &watch) {
  return poll(
      [&] {
        int done = 0;
        PMPI_Testall(count, reqs, &done, statuses);
        return done != 0;
      },
      watch);
}

WaitResult wait_until(const std::function<bool()> &done, const Watch &watch) { return poll(done, watch); }

}  // namespace cohort::wrap
