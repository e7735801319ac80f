#include "detector/settings.hpp"

#include <algorithm>

#include "detector/env.hpp"

namespace cohort::detector {
namespace {

// Reads one integer variable; on error fills *err with one line naming it.
bool read_long(const char *name, long fallback, long lo, long hi, const char *unit, long *out, std::string *err) {
  auto v = env::get_long(name, fallback, lo, hi);
  if (!v) {
    *err = std::string("invalid ") + name + "='" + env::get(name).value_or("") + "' (expected " + unit + " in " +
           std::to_string(lo) + ".." + std::to_string(hi) + ")";
    return false;
  }
  *out = *v;
  return true;
}

}  // namespace

const std::vector<std::string> &known_variables() {
  static const std::vector<std::string> names = {
      // read by the runtime (README, "Environment")
      "COHORT_LOG", "COHORT_HB_PERIOD_MS", "COHORT_HB_TIMEOUT_MS", "COHORT_HB_GRACE_MS", "COHORT_POLL_US",
      "COHORT_IDLE_POLL_US", "COHORT_BCAST", "COHORT_RING_SHUFFLE", "COHORT_RING_SEED", "COHORT_PIDFD", "COHORT_INJECT_FAILURE",
      "COHORT_ON_DEAD_ROOT", "COHORT_ON_DEAD_PEER", "COHORT_ON_DEAD_PEER_SEND", "COHORT_ON_DEAD_PEER_RECV",
      "COHORT_SEND_RETRIES", "COHORT_ULFM_API", "COHORT_HIERARCHY", "COHORT_CONFIRM_WINDOW", "COHORT_CONFIRM_MAX_BYTES",
      "COHORT_P2P_COLL_MAX_BYTES", "COHORT_P2P_CONFIRM",
      // set by cohort-run for the ranks, and by the scripts and tests for themselves
      "COHORT_RUN_ID", "COHORT_RUN_STATUS_DIR", "COHORT_RUN", "COHORT_DEMO_MPI", "COHORT_PRELOAD_LIB",
      "COHORT_IN_OPENMPI5", "COHORT_OPENMPI5_ROOT", "COHORT_DEBIAN_MIRROR",
      "COHORT_TEST_OPENMPI5_HEARTBEAT"};
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
    out.push_back("unknown variable " + n + (near.empty() ? std::string(" (ignored)") : " (ignored; did you mean " + near + "?)"));
  }
  return out;
}

std::string load_settings(Settings *s) {
  std::string err;
  long shuffle = 0, seed = 1;
  if (!read_long("COHORT_HB_PERIOD_MS", 100, 1, 3600000, "ms", &s->period_ms, &err)) return err;
  if (!read_long("COHORT_HB_TIMEOUT_MS", 1000, 2, 36000000, "ms", &s->timeout_ms, &err)) return err;
  if (s->timeout_ms < 2 * s->period_ms) {
    return "invalid COHORT_HB_TIMEOUT_MS=" + std::to_string(s->timeout_ms) + ": must be at least 2 x COHORT_HB_PERIOD_MS (" +
           std::to_string(s->period_ms) + " ms)";
  }
  if (!read_long("COHORT_HB_GRACE_MS", s->period_ms, 0, s->timeout_ms, "ms", &s->grace_ms, &err)) return err;
  if (!read_long("COHORT_POLL_US", 1000, 50, 100000, "µs", &s->poll_us, &err)) return err;
  if (!read_long("COHORT_IDLE_POLL_US", std::max(5000L, s->poll_us), s->poll_us, 100000, "µs", &s->idle_poll_us, &err))
    return err;
  if (auto b = env::get("COHORT_BCAST")) {
    if (!topology::parse_bcast(*b, &s->bcast)) return "invalid COHORT_BCAST='" + *b + "' (expected chord, bmg or hba)";
  }
  if (!read_long("COHORT_RING_SHUFFLE", 0, 0, 1, "0 or 1", &shuffle, &err)) return err;
  if (!read_long("COHORT_RING_SEED", 1, 0, 0x7fffffffffffffffL, "an integer", &seed, &err)) return err;
  if (auto p = env::get("COHORT_PIDFD")) {
    if (*p == "on" || *p == "1") {
      s->pidfd = true;
    } else if (*p == "off" || *p == "0") {
      s->pidfd = false;
    } else {
      return "invalid COHORT_PIDFD='" + *p + "' (expected on or off)";
    }
  }
  s->shuffle = shuffle != 0;
  s->seed = static_cast<std::uint64_t>(seed);
  return "";
}

}  // namespace cohort::detector
