// One-line log messages: `cohort[rank 3] warn: rank 5 suspected after 812 ms (timeout 800 ms)`.
// Thread-safe (one write(2) per line). Level from COHORT_LOG=error|warn|info|debug (default warn).
#pragma once
#include <cstdarg>
#include <string>

namespace cohort::log {

enum class Level { error = 0, warn = 1, info = 2, debug = 3 };

/// Sets the world rank shown in every line (-1 before MPI_Init: shown as `cohort[rank ?]`).
void set_rank(int world_rank);
/// Reads COHORT_LOG; returns "" or, when the value is not a level name (the level stays), one line naming
/// the variable and its value.
std::string configure_from_env();
void set_level(Level level);
bool enabled(Level level);

/// printf-style; appends the newline. Writes to stderr.
void write(Level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void vwrite(Level level, const char *fmt, va_list ap);

/// Writes an error line and terminates the process with exit code `code` (no MPI calls, no hang).
[[noreturn]] void fatal(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace cohort::log

#define COHORT_LOG_ERROR(...) ::cohort::log::write(::cohort::log::Level::error, __VA_ARGS__)
#define COHORT_LOG_WARN(...) ::cohort::log::write(::cohort::log::Level::warn, __VA_ARGS__)
#define COHORT_LOG_INFO(...)                                                              \
  do {                                                                                    \
    if (::cohort::log::enabled(::cohort::log::Level::info))                               \
      ::cohort::log::write(::cohort::log::Level::info, __VA_ARGS__);                      \
  } while (0)
#define COHORT_LOG_DEBUG(...)                                                             \
  do {                                                                                    \
    if (::cohort::log::enabled(::cohort::log::Level::debug))                              \
      ::cohort::log::write(::cohort::log::Level::debug, __VA_ARGS__);                     \
  } while (0)
