// Fault injection for users and tests: COHORT_INJECT_FAILURE, done by cohort itself.
//
//   COHORT_INJECT_FAILURE="rank=3,after_ms=2000[,signal=KILL|STOP][,cont_ms=1500]"  timed: ms after MPI_Init
//   COHORT_INJECT_FAILURE="rank=1,at=agree.decide[,hit=2][,signal=KILL]"  at a named test hook
//   several entries separated by ';', e.g. "rank=1,after_ms=500;rank=2,after_ms=900"
//   several ranks in one entry joined by '+', e.g. "rank=1+2+5,after_ms=500"
//
// Named hooks are places in cohort's own code that call inject::point("name"); the rank named by an
// entry kills itself there (the hit-th time the point is reached, default the first). The points that
// cohort's own MPI_Init passes (its first shrink and agreements) are not counted: hooks name the
// program's calls.
// signal=STOP pauses the whole process (every thread); with cont_ms=D a helper process forked at MPI_Init
// sends it SIGCONT D ms later (without cont_ms, something outside must send SIGCONT).
#pragma once
#include <atomic>
#include <string>
#include <vector>

namespace cohort::inject {

/// Parses COHORT_INJECT_FAILURE for this world rank and arms the timed entries (a timer thread).
/// On a malformed value: one line naming the variable, exit code 2.
/// Also checks every entry against the job (detector/inject_parse.hpp, validate: ranks in range, hooks
/// known, the driver's "<call>.posted" hooks taken from declare_calls).
void arm(int world_rank, int world_size);

/// The wrapped calls whose "<call>.posted" hook the driver passes (from wrap/calls.def); call before arm.
void declare_calls(std::vector<std::string> calls);

namespace detail {
extern std::atomic<bool> g_armed;  // an entry with `at` names this rank
void point_armed(const char *name);
}  // namespace detail

/// A named test hook. Cheap when nothing is armed for this rank (one inlined relaxed atomic load).
inline void point(const char *name) {
  if (detail::g_armed.load(std::memory_order_relaxed)) detail::point_armed(name);
}

/// While held (from the MPI_Init wrappers), point() neither counts nor fires. Thread-safe.
void hold(bool on);

}  // namespace cohort::inject
