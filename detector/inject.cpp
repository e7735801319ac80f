#include "detector/inject.hpp"

#include <signal.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "detector/env.hpp"
#include "detector/inject_parse.hpp"
#include "detector/log.hpp"
#include "detector/run_status.hpp"

namespace cohort::inject {

std::atomic<bool> detail::g_armed{false};

namespace {

std::atomic<bool> g_held{false};
std::atomic<int> g_rank{-1};
std::mutex g_mu;
std::vector<Entry> g_points;  // entries with `at`, for this rank
std::vector<int> g_hits;

void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
  }
}

// For signal=STOP with cont_ms: a helper process that resumes this one. Forked now (single-threaded
// enough: the child only sleeps, signals and _exits, all async-signal-safe).
void fork_resumer(long delay_ms) {
  pid_t target = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    struct timespec ts = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
    }
    kill(target, SIGCONT);
    _exit(0);
  }
}

void fire(const Entry &e, const char *where) {
  // NOTE: the record tells cohort-run that this signal death is the test's, not a crash of the program.
  run_status::put("injected", g_rank.load(), e.signal == SIGKILL ? "KILL" : "STOP");
  COHORT_LOG_WARN("inject: raising SIG%s %s (COHORT_INJECT_FAILURE)", e.signal == SIGKILL ? "KILL" : "STOP", where);
  raise(e.signal);
}

}  // namespace

static std::vector<std::string> g_calls;  // set once at MPI_Init, before arm

void declare_calls(std::vector<std::string> calls) { g_calls = std::move(calls); }

void arm(int world_rank, int world_size) {
  g_rank.store(world_rank);
  auto text = env::get("COHORT_INJECT_FAILURE");
  if (!text) return;
  std::vector<Entry> entries;
  std::string err = parse(*text, &entries);
  if (err.empty()) err = validate(entries, world_size, known_hooks(g_calls));
  if (!err.empty()) log::fatal(2, "MPI_Init: %s", failure_message(*text, err).c_str());
  std::vector<Entry> timed;
  std::lock_guard<std::mutex> lock(g_mu);
  for (const Entry &e : entries) {
    if (e.rank != world_rank) continue;
    if (e.at.empty()) {
      timed.push_back(e);
      if (e.signal == SIGSTOP && e.cont_ms >= 0) fork_resumer(e.after_ms + e.cont_ms);
    } else {
      g_points.push_back(e);
      g_hits.push_back(0);
    }
  }
  if (!g_points.empty()) detail::g_armed.store(true);
  if (timed.empty()) return;
  std::sort(timed.begin(), timed.end(), [](const Entry &a, const Entry &b) { return a.after_ms < b.after_ms; });
  std::thread([timed] {
    long elapsed = 0;
    for (const Entry &e : timed) {
      sleep_ms(e.after_ms - elapsed);
      elapsed = e.after_ms;
      std::string where = "after " + std::to_string(e.after_ms) + " ms";
      fire(e, where.c_str());
    }
  }).detach();
}

void hold(bool on) { g_held.store(on); }

void detail::point_armed(const char *name) {
  if (g_held.load(std::memory_order_relaxed)) return;
  const Entry *hit = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    for (size_t i = 0; i < g_points.size(); ++i) {
      if (g_points[i].at == name && ++g_hits[i] == g_points[i].hit) hit = &g_points[i];
    }
  }
  if (hit != nullptr) {
    std::string where = std::string("at ") + name + " (hit " + std::to_string(hit->hit) + ")";
    if (hit->signal == SIGSTOP && hit->cont_ms >= 0) fork_resumer(hit->cont_ms);
    fire(*hit, where.c_str());
  }
}

}  // namespace cohort::inject
