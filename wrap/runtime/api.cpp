// The C API of include/cohort/cohort.h, over the detector runtime and the call counters.
#include <atomic>
#include <cctype>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "cohort/cohort.h"
#include "detector/runtime.hpp"
#include "wrap/calls.h"
#include "wrap/core/errors.hpp"
#include "wrap/replica/replica.hpp"

namespace cohort::wrap {
namespace {
constexpr int kCalls = static_cast<int>(CallId::count_);

// NOTE: one block of counters per thread (wrap/calls.h), written only by its thread and summed here.
// Blocks are never freed, so the calls of threads that ended still count.
std::mutex g_counters_mu;
std::vector<CallCounters *> g_counters;  // guarded by g_counters_mu

long total(int i) {
  std::lock_guard<std::mutex> lock(g_counters_mu);
  long sum = 0;
  for (const CallCounters *c : g_counters) sum += c->n[i].load(std::memory_order_relaxed);
  return sum;
}
}  // namespace

const char *posted_hook(CallId id) {
  static const std::vector<std::string> hooks = [] {
    std::vector<std::string> h;
    for (const CallInfo &c : kCallInfo) {
      std::string s = c.name + 4;  // without "MPI_"
      for (char &ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      h.push_back(s + ".posted");
    }
    return h;
  }();
  return hooks[static_cast<std::size_t>(id)].c_str();
}

CallCounters *new_thread_counters() {
  auto *c = new CallCounters();
  std::lock_guard<std::mutex> lock(g_counters_mu);
  g_counters.push_back(c);
  return c;
}

}  // namespace cohort::wrap

extern "C" {

int cohort_failed_count(void) {
  if (cohort::wrap::replica::on()) return cohort::wrap::replica::failed_logical_count();
  return static_cast<int>(cohort::detector::failure_epoch());
}

int cohort_failed_ranks(int *ranks, int max) {
  if (max <= 0) return 0;
  if (ranks == nullptr) return -1;
  if (cohort::wrap::replica::on()) return cohort::wrap::replica::failed_logical(ranks, max);
  std::vector<int> failed = cohort::detector::failed_ranks();
  int n = 0;
  for (int r : failed) {
    if (n == max) break;
    ranks[n++] = r;
  }
  return n;
}

int cohort_is_alive(int world_rank) {
  if (cohort::wrap::replica::on()) return cohort::wrap::replica::logical_alive(world_rank);
  int size = cohort::detector::world_size();
  if (world_rank < 0 || (size > 0 && world_rank >= size)) return -1;
  return cohort::detector::is_failed(world_rank) ? 0 : 1;
}

int cohort_on_failure(cohort_failure_callback callback, void *ctx) {
  static std::mutex mu;
  static int registered = 0;
  if (callback == nullptr) return -1;
  std::lock_guard<std::mutex> lock(mu);
  if (registered == 16) return -1;
  ++registered;
  cohort::detector::on_failure([callback, ctx](int r) { callback(r, ctx); });
  return 0;
}

int cohort_err_proc_failed(void) { return cohort::wrap::err_proc_failed(); }

long cohort_call_count(const char *mpi_call) {
  if (mpi_call == nullptr) return -1;
  for (int i = 0; i < cohort::wrap::kCalls; ++i) {
    if (std::strcmp(cohort::wrap::kCallInfo[i].name, mpi_call) == 0)
      return cohort::wrap::total(i);
  }
  return -1;
}

}  // extern "C"
