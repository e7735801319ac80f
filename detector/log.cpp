#include "detector/log.hpp"

#include "detector/env.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace cohort::log {
namespace {
std::atomic<int> g_rank{-1};
std::atomic<int> g_level{static_cast<int>(Level::warn)};
const char *const kNames[] = {"error", "warn", "info", "debug"};
}  // namespace

void set_rank(int world_rank) { g_rank.store(world_rank); }
void set_level(Level level) { g_level.store(static_cast<int>(level)); }
bool enabled(Level level) { return static_cast<int>(level) <= g_level.load(std::memory_order_relaxed); }

std::string configure_from_env() {
  int level = static_cast<int>(g_level.load());
  std::string err = env::read_word("COHORT_LOG", {kNames[0], kNames[1], kNames[2], kNames[3]}, &level);
  g_level.store(level);
  return err;
}

void vwrite(Level level, const char *fmt, va_list ap) {
  char line[1024];
  int rank = g_rank.load();
  int n = rank >= 0 ? std::snprintf(line, sizeof line, "cohort[rank %d] %s: ", rank, kNames[static_cast<int>(level)])
                    : std::snprintf(line, sizeof line, "cohort[rank ?] %s: ", kNames[static_cast<int>(level)]);
  int m = std::vsnprintf(line + n, sizeof line - n - 1, fmt, ap);
  size_t len = static_cast<size_t>(n) + (m < 0 ? 0 : static_cast<size_t>(m));
  if (len > sizeof line - 2) len = sizeof line - 2;
  line[len++] = '\n';
  ssize_t rc = ::write(STDERR_FILENO, line, len);
  (void)rc;
}

void write(Level level, const char *fmt, ...) {
  if (!enabled(level)) return;
  va_list ap;
  va_start(ap, fmt);
  vwrite(level, fmt, ap);
  va_end(ap);
}

void fatal(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vwrite(Level::error, fmt, ap);
  va_end(ap);
  std::_Exit(code);
}

}  // namespace cohort::log
