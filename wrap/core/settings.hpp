// Whole-number COHORT_* settings of the wrappers, read once (at MPI_Init, through each module's
// check_settings): an invalid value stops the rank with one line naming the variable and the rank.
// Names, defaults and ranges come from the one list, detector/settings.def.
#pragma once
#include <string>

#include "detector/env.hpp"
#include "detector/log.hpp"

namespace cohort::wrap {

namespace setting {
/// One COHORT_INT row of detector/settings.def.
struct Int {
  const char *name;
  long def, lo, hi;
};
#define COHORT_INT(name, scope, def, lo, hi, unit, def_doc, meaning) inline constexpr Int name{#name, def, lo, hi};
#include "detector/settings.def"
#undef COHORT_INT
}  // namespace setting

/// Reads `name` into *out (`fallback` when unset); "" or, when it is not a whole number in [lo, hi], one line
/// naming the variable. Pure (the fuzz target wrap_settings runs it).
inline std::string check_setting(const char *name, long fallback, long lo, long hi, long *out) {
  auto v = env::get_long(name, fallback, lo, hi);
  if (!v) return env::invalid(name, env::get(name).value_or(""), "a whole number in " + std::to_string(lo) + ".." + std::to_string(hi));
  *out = *v;
  return "";
}

/// The value of `name` (`fallback` when unset); exits with code 2 and one line when it is not a whole
/// number in [lo, hi].
inline long read_setting(const char *name, long fallback, long lo, long hi) {
  long v = fallback;
  std::string err = check_setting(name, fallback, lo, hi, &v);
  if (!err.empty()) log::fatal(2, "%s", err.c_str());
  return v;
}

/// The value of setting s, with its declared default and range.
inline long read_setting(const setting::Int &s) { return read_setting(s.name, s.def, s.lo, s.hi); }

}  // namespace cohort::wrap
