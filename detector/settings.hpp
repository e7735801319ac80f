// The detector's configuration, read once from the environment at MPI_Init. Defaults in one place.
//
// | variable              | default | meaning                                                            |
// |-----------------------|---------|--------------------------------------------------------------------|
// | COHORT_HB_PERIOD_MS   | 100     | heartbeat period, ms (1..3600000)                                  |
// | COHORT_HB_TIMEOUT_MS  | 1000    | silence before suspicion, ms (>= 2 x period, <= 36000000)          |
// | COHORT_HB_GRACE_MS    | period  | extra time a new emitter gets after re-targeting, ms (0..timeout)  |
// | COHORT_POLL_US        | 1000    | detector loop interval while active, µs (50..100000)               |
// | COHORT_IDLE_POLL_US   | 5000    | loop interval when nothing but heartbeats happened for 100 ms, µs  |
// | COHORT_BCAST          | chord   | failure-notice broadcast: chord, bmg or hba                        |
// | COHORT_RING_SHUFFLE   | 0       | 1: shuffle the ring order (same on every rank)                     |
// | COHORT_RING_SEED      | 1       | seed of that shuffle (0..2^63-1)                                   |
// | COHORT_PIDFD          | on      | on: an observer on its emitter's host watches its process (pidfd)  |
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "topology/ring.hpp"

namespace cohort::detector {

struct Settings {
  long period_ms = 100;
  long timeout_ms = 1000;
  long grace_ms = -1;  ///< -1: same as period_ms
  long poll_us = 1000;
  long idle_poll_us = 5000;
  topology::Bcast bcast = topology::Bcast::chord;
  bool shuffle = false;
  std::uint64_t seed = 1;
  bool pidfd = true;  ///< watch a same-host emitter's process (Linux pidfd_open) besides heartbeats
};

/// Every COHORT_* variable that cohort reads (the README's table, except the per-call
/// COHORT_ON_DEAD_ROOT_<CALL>, which the caller adds) or that cohort-run and the scripts set.
const std::vector<std::string> &known_variables();

/// One warning per name in `names` that starts with COHORT_ and is neither in known_variables() nor in
/// `more_known`: "unknown variable COHORT_HB_PERIOD (did you mean COHORT_HB_PERIOD_MS?)" (without the
/// question when nothing is close). Pure: the caller passes the environment's names.
std::vector<std::string> unknown_variables(const std::vector<std::string> &names,
                                           const std::vector<std::string> &more_known);

/// Reads the COHORT_* variables above into *out. Returns "" when all are valid, else one line naming the
/// first invalid variable, its value and what is expected (the caller prefixes the call and exits 2).
std::string load_settings(Settings *out);

}  // namespace cohort::detector
