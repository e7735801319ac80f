// Whole-number COHORT_* settings of the wrappers, read once (at MPI_Init, through each module's
// check_settings): an invalid value stops the rank with one line naming the variable and the rank.
#pragma once
#include "detector/env.hpp"
#include "detector/log.hpp"

namespace cohort::wrap {

/// The value of `name` (`fallback` when unset); exits with code 2 and one line when it is not a whole
/// number in [lo, hi].
inline long read_setting(const char *name, long fallback, long lo, long hi) {
  auto v = env::get_long(name, fallback, lo, hi);
  if (!v) log::fatal(2, "invalid %s='%s' (expected a whole number in %ld..%ld)", name, env::get(name)->c_str(), lo, hi);
  return *v;
}

}  // namespace cohort::wrap
