#include "wrap/runtime/watchdog.hpp"

#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "detector/log.hpp"
#include "detector/runtime.hpp"
#include "wrap/calls.h"

namespace cohort::wrap::watchdog {
namespace {

constexpr int kSignal = SIGURG;
constexpr int kMaxFrames = 64;
constexpr std::int64_t kLookEveryMs = 100;  // how often a stalled thread's state is read

pthread_t g_main;
char g_state_path[64];  // /proc/self/task/<tid>/syscall of the thread that called MPI_Init
long g_stall_ms = 3000;
bool g_own_handler = false;  // false: the program has its own SIGURG handler

// Written by the signal handler, read by the hook once g_captured is set.
void *g_frames[kMaxFrames];
std::atomic<int> g_nframes{0};
std::atomic<bool> g_captured{false};

// The hook's own state (the detector thread only).
std::uint64_t g_seen = ~0ULL;
std::int64_t g_since_ms = 0;
std::int64_t g_next_look_ms = 0;
enum class Phase { watching, signalled, reported } g_phase = Phase::watching;

std::int64_t now_ms() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

void on_signal(int) {
  int saved = errno;
  g_nframes.store(backtrace(g_frames, kMaxFrames), std::memory_order_relaxed);
  g_captured.store(true, std::memory_order_release);
  errno = saved;
}

// Whether the main thread runs (on a core or ready to), rather than waits in a system call: the kernel's
// /proc/<pid>/task/<tid>/syscall reads "running" then, and the call's number and arguments while it waits.
// NOTE: a handled signal ends a waiting sleep(), nanosleep(), poll(), select(), epoll_wait() (and a few more)
// with EINTR even under SA_RESTART, so cohort signals the thread only while it runs. False when the file
// cannot be read: no signal then.
bool main_thread_runs() {
  int fd = open(g_state_path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[16] = {};
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  return n >= 7 && std::strncmp(buf, "running", 7) == 0;
}

bool in_mpi_library(void *pc, Dl_info *info) {
  if (dladdr(pc, info) == 0 || info->dli_fname == nullptr) return false;
  const char *base = std::strrchr(info->dli_fname, '/');
  base = base == nullptr ? info->dli_fname : base + 1;
  return std::strncmp(base, "libmpi", 6) == 0;  // libmpi.so (Open MPI), libmpich.so (MPICH)
}

bool wrapped(const std::string &name) {
  return std::any_of(std::begin(kCallInfo), std::end(kCallInfo), [&](const CallInfo &c) { return name == c.name; });
}

// The MPI function the program called, from the captured stack: the outermost frame inside the MPI
// library. "" when the stack has no such frame (the program is not inside MPI).
std::string called_mpi_function() {
  int n = g_nframes.load(std::memory_order_relaxed);
  std::string found;
  for (int i = n - 1; i >= 0; --i) {  // from the outermost frame inwards
    Dl_info info;
    if (in_mpi_library(g_frames[i], &info)) {
      found = info.dli_sname != nullptr ? info.dli_sname : "the MPI library";
      break;
    }
  }
  if (found.rfind("PMPI_", 0) == 0) found = found.substr(1);  // one function, two names
  return found;
}

void report(std::int64_t stalled_ms) {
  std::string call = g_own_handler ? called_mpi_function() : std::string("?");
  if (call.empty()) return;  // computing, not inside MPI: nothing to say
  if (call == "?") {
    COHORT_LOG_WARN("no progress through cohort for %lld ms since a rank failed: the program may be blocked in an MPI "
                    "call that cohort does not wrap, which can wait on a dead rank forever (its own SIGURG handler "
                    "keeps cohort from naming the call)",
                    static_cast<long long>(stalled_ms));
  } else if (call.rfind("MPI_", 0) != 0) {
    COHORT_LOG_WARN("no progress through cohort for %lld ms since a rank failed: the program is inside %s, outside "
                    "cohort's wrappers; it can wait on a dead rank forever",
                    static_cast<long long>(stalled_ms), call.c_str());
  } else if (wrapped(call)) {
    COHORT_LOG_WARN("no progress through cohort for %lld ms since a rank failed: the program is inside %s called "
                    "around cohort's wrapper (as PMPI_ or from a library linked without cohort's flags); it can wait "
                    "on a dead rank forever",
                    static_cast<long long>(stalled_ms), call.c_str());
  } else {
    COHORT_LOG_WARN("no progress through cohort for %lld ms since a rank failed: the program is inside %s, which "
                    "cohort does not wrap; it can wait on a dead rank forever",
                    static_cast<long long>(stalled_ms), call.c_str());
  }
  g_phase = Phase::reported;
}

void check() {
  if (detector::failure_epoch() == 0) return;
  std::uint64_t seen = detector::progress_count();
  std::int64_t now = now_ms();
  if (seen != g_seen) {  // progress: a new stall starts from here
    g_seen = seen;
    g_since_ms = now;
    g_phase = Phase::watching;
    g_captured.store(false);
    return;
  }
  std::int64_t stalled = now - g_since_ms;
  if (g_phase == Phase::watching && stalled >= g_stall_ms) {
    if (!g_own_handler) {
      report(stalled);
      return;
    }
    // A thread waiting in a system call (the program's sleep, a read) is left alone: looked at again later.
    if (now < g_next_look_ms) return;
    g_next_look_ms = now + kLookEveryMs;
    if (!main_thread_runs()) return;
    g_phase = Phase::signalled;
    pthread_kill(g_main, kSignal);
  } else if (g_phase == Phase::signalled && g_captured.load(std::memory_order_acquire)) {
    report(stalled);
    if (g_phase != Phase::reported) g_phase = Phase::reported;  // not inside MPI: once per stall
  }
}

}  // namespace

void start(long timeout_ms) {
  g_main = pthread_self();
  std::snprintf(g_state_path, sizeof g_state_path, "/proc/self/task/%ld/syscall", static_cast<long>(syscall(SYS_gettid)));
  g_stall_ms = std::max(3000L, 3 * timeout_ms);
  struct sigaction old;
  std::memset(&old, 0, sizeof old);
  sigaction(kSignal, nullptr, &old);
  if (old.sa_handler == SIG_DFL || old.sa_handler == SIG_IGN) {
    void *warm[2];
    backtrace(warm, 2);  // NOTE: the first call loads libgcc_s (malloc, dlopen): never in the handler
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    g_own_handler = sigaction(kSignal, &sa, nullptr) == 0;
  }
  detector::add_progress_hook(check);
}

}  // namespace cohort::wrap::watchdog
