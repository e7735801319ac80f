// Counters of the detector runtime, for benchmarks and diagnostics. Thread-safe.
#pragma once
#include <cstdint>

namespace cohort::detector {

struct Stats {
  std::int64_t thread_cpu_us = 0;  ///< CPU time of the detector thread (getrusage RUSAGE_THREAD), µs
  std::int64_t thread_wall_us = 0; ///< wall time the detector thread ran, µs
  std::uint64_t iterations = 0;    ///< loop iterations
  std::uint64_t sent = 0;          ///< messages handed to MPI
  std::uint64_t dropped = 0;       ///< messages not sent because a peer had too many outstanding sends
  std::uint64_t received = 0;      ///< messages received
};

/// Current counters; thread_cpu_us is refreshed by the thread about once per second and when it stops.
Stats stats();

/// µs on the monotonic clock at which this rank learned that world_rank failed, or -1 (for benchmarks:
/// compare with the wall clock through wall_minus_monotonic_us()).
std::int64_t learned_at_us(int world_rank);
/// CLOCK_REALTIME - CLOCK_MONOTONIC, µs (to put learned_at_us on a clock shared by all ranks of a host).
std::int64_t wall_minus_monotonic_us();

}  // namespace cohort::detector
