// The helper thread of wrap/rma/helper_thread.hpp.
#include "wrap/rma/helper_thread.hpp"

#include <mpi.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "wrap/core/progress.hpp"

namespace cohort::wrap::win {
namespace {

// One helper thread and its mailbox. Shared with the thread, which keeps it alive if abandoned.
struct Helper {
  std::mutex mu;
  std::condition_variable cv;
  std::function<int()> job;  // guarded by mu
  bool has_job = false;      // guarded by mu
  std::atomic<bool> done{false};
  int rc = MPI_SUCCESS;      // written by the helper before done

  static void loop(std::shared_ptr<Helper> h) {
    for (;;) {
      std::function<int()> job;
      {
        std::unique_lock<std::mutex> lock(h->mu);
        h->cv.wait(lock, [&] { return h->has_job; });
        job = std::move(h->job);
        h->has_job = false;
      }
      h->rc = job();
      h->done.store(true, std::memory_order_release);
    }
  }
};

std::mutex g_mu;                   // serialises guarded calls
std::shared_ptr<Helper> g_helper;  // guarded by g_mu; null: start one at the next call

}  // namespace

int guarded(const std::function<bool()> &dead, const std::function<int()> &call, bool *abandoned,
            const std::function<bool()> *stalled) {
  std::lock_guard<std::mutex> serial(g_mu);
  *abandoned = false;
  if (!g_helper) {
    g_helper = std::make_shared<Helper>();
    std::thread(Helper::loop, g_helper).detach();
  }
  std::shared_ptr<Helper> h = g_helper;
  h->done.store(false, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(h->mu);
    h->job = call;
    h->has_job = true;
  }
  h->cv.notify_one();
  Watch watch;
  watch.broken = dead;
  bool gave_up = false;
  WaitResult r = wait_until(
      [&] {
        if (h->done.load(std::memory_order_acquire)) return true;
        gave_up = stalled != nullptr && (*stalled)();
        return gave_up;
      },
      watch);
  if (r == WaitResult::completed && !gave_up) return h->rc;
  // NOTE: the helper stays inside MPI, perhaps for good; it keeps its mailbox. The next call starts anew.
  g_helper.reset();
  *abandoned = true;
  return MPI_SUCCESS;
}

}  // namespace cohort::wrap::win
