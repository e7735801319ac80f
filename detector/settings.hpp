// The detector's configuration, read once from the environment at MPI_Init. Names, defaults, ranges and
// meanings are declared once, in detector/settings.def (the settings reference is generated from it).
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

/// Every COHORT_* variable of detector/settings.def: those cohort reads (except the per-call
/// COHORT_ON_DEAD_ROOT_<CALL>, which the caller adds) and those that cohort-run and the scripts set.
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
