#include "detector/settings.hpp"

#include <algorithm>

#include "detector/env.hpp"

namespace cohort::detector {
namespace {

// Reads one integer variable; on error fills *err with one line naming it.
bool read_long(const char *name, long fallback, long lo, long hi, const char *unit, long *out, std::string *err) {
  auto v = env::get_long(name, fallback, lo, hi);
  if (!v) {
    *err = env::invalid(name, env::get(name).value_or(""), std::string(unit) + " in " + std::to_string(lo) + ".." + std::to_string(hi));
    return false;
  }
  *out = *v;
  return true;
}

// The integer settings of detector/settings.def: name, default and range, one constant each.
struct IntSetting {
  const char *name;
  long def, lo, hi;
};
#define COHORT_INT(name, scope, def, lo, hi, unit, def_doc, meaning) constexpr IntSetting name{#name, def, lo, hi};
#include "detector/settings.def"
#undef COHORT_INT

bool read_int(const IntSetting &v, const char *unit, long *out, std::string *err) {
  return read_long(v.name, v.def, v.lo, v.hi, unit, out, err);
}

}  // namespace

const std::vector<std::string> &known_variables() {
  static const std::vector<std::string> names = {
#define COHORT_INT(name, scope, def, lo, hi, unit, def_doc, meaning) #name,
#define COHORT_TEXT(name, scope, def, values, meaning) #name,
#include "detector/settings.def"
#undef COHORT_INT
#undef COHORT_TEXT
  };
  return names;
}

std::vector<std::string> unknown_variables(const std::vector<std::string> &names,
                                           const std::vector<std::string> &more_known) {
  std::vector<std::string> known = known_variables();
  known.insert(known.end(), more_known.begin(), more_known.end());
  std::vector<std::string> out;
  for (const std::string &n : names) {
    if (n.rfind("COHORT_", 0) != 0 || std::find(known.begin(), known.end(), n) != known.end()) continue;
    std::string near = env::closest(n, known);
    // NOTE: a name in the environment may hold any byte but '=' and NUL; printable keeps the warning one line.
    out.push_back("unknown variable " + env::printable(n) + (near.empty() ? std::string(" (ignored)") : " (ignored; did you mean " + near + "?)"));
  }
  return out;
}

std::string load_settings(Settings *s) {
  std::string err;
  long shuffle = 0, seed = 1;
  if (!read_int(COHORT_HB_PERIOD_MS, "ms", &s->period_ms, &err)) return err;
  if (!read_int(COHORT_HB_TIMEOUT_MS, "ms", &s->timeout_ms, &err)) return err;
  if (s->timeout_ms < 2 * s->period_ms) {
    return "invalid COHORT_HB_TIMEOUT_MS=" + std::to_string(s->timeout_ms) + ": must be at least 2 x COHORT_HB_PERIOD_MS (" +
           std::to_string(s->period_ms) + " ms)";
  }
  if (!read_long(COHORT_HB_GRACE_MS.name, s->period_ms, COHORT_HB_GRACE_MS.lo, s->timeout_ms, "ms", &s->grace_ms, &err)) return err;
  if (!read_int(COHORT_POLL_US, "µs", &s->poll_us, &err)) return err;
  if (!read_long(COHORT_IDLE_POLL_US.name, std::max(COHORT_IDLE_POLL_US.def, s->poll_us), s->poll_us, COHORT_IDLE_POLL_US.hi, "µs", &s->idle_poll_us, &err))
    return err;
  if (auto b = env::get("COHORT_BCAST")) {
    if (!topology::parse_bcast(*b, &s->bcast)) return "invalid COHORT_BCAST='" + env::printable(*b) + "' (expected chord, bmg or hba)";
  }
  if (!read_int(COHORT_RING_SHUFFLE, "0 or 1", &shuffle, &err)) return err;
  if (!read_int(COHORT_RING_SEED, "an integer", &seed, &err)) return err;
  if (auto p = env::get("COHORT_PIDFD")) {
    if (*p == "on" || *p == "1") {
      s->pidfd = true;
    } else if (*p == "off" || *p == "0") {
      s->pidfd = false;
    } else {
      return "invalid COHORT_PIDFD='" + env::printable(*p) + "' (expected on or off)";
    }
  }
  s->shuffle = shuffle != 0;
  s->seed = static_cast<std::uint64_t>(seed);
  return "";
}

}  // namespace cohort::detector
