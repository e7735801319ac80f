// The wrappers' COHORT_* values: the dead-root and dead-peer policies (wrap/core/policy.hpp:
// check_policy_variables, then dead_root_policy and dead_peer_policy), every whole-number setting of
// detector/settings.def as the wrappers read it (wrap/core/settings.hpp: check_setting), COHORT_LOG
// (log::configure_from_env) and COHORT_ULFM_API (env::read_word with its words). Input: records of (one
// byte: which variable; one byte: length; the value), set in the environment. Every error is one line
// naming its variable; every value read is one the variable allows.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "detector/env.hpp"
#include "detector/log.hpp"
#include "fuzz/fuzz_input.hpp"
#include "wrap/core/policy.hpp"
#include "wrap/core/settings.hpp"

using namespace cohort;

namespace {

const std::vector<wrap::setting::Int> kInts = {
#define COHORT_INT(name, scope, def, lo, hi, unit, def_doc, meaning) wrap::setting::name,
#include "detector/settings.def"
#undef COHORT_INT
};
const std::vector<std::string> kPerCall = {"COHORT_ON_DEAD_ROOT_BCAST", "COHORT_ON_DEAD_ROOT_GATHER",
                                           "COHORT_ON_DEAD_ROOT_REDUCE_SCATTER_BLOCK"};

std::vector<std::string> names() {
  std::vector<std::string> n = {"COHORT_ON_DEAD_ROOT", "COHORT_ON_DEAD_PEER", "COHORT_ON_DEAD_PEER_SEND",
                                "COHORT_ON_DEAD_PEER_RECV", "COHORT_LOG", "COHORT_ULFM_API"};
  n.insert(n.end(), kPerCall.begin(), kPerCall.end());
  for (const wrap::setting::Int &s : kInts) n.emplace_back(s.name);
  return n;
}

// An error must be one line that names a variable.
void check_error(const std::string &err) {
  if (err.empty()) return;
  if (err.find('\n') != std::string::npos || err.rfind("invalid COHORT_", 0) != 0) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  static const std::vector<std::string> all = names();
  for (const std::string &n : all) unsetenv(n.c_str());
  fuzz::Input in(data, size);
  while (!in.empty()) {
    std::uint8_t pick = in.byte();
    std::string value = in.bytes(in.byte());
    value = value.substr(0, value.find('\0'));  // an environment value ends at its first NUL
    setenv(all[pick % all.size()].c_str(), value.c_str(), 1);
  }

  std::string err = wrap::check_policy_variables(kPerCall);
  check_error(err);
  if (err.empty()) {
    // Checked values: these read them again and must not stop the process.
    wrap::Policy p = wrap::dead_root_policy("MPI_Bcast", wrap::Policy::skip);
    p = wrap::dead_peer_policy(true, p);
    p = wrap::dead_peer_policy(false, p);
    if (wrap::policy_name(p)[0] == '?') std::abort();
  }
  for (const wrap::setting::Int &s : kInts) {
    long v = s.def;
    err = wrap::check_setting(s.name, s.def, s.lo, s.hi, &v);
    check_error(err);
    if (v < s.lo || v > s.hi) std::abort();
  }
  log::set_level(log::Level::warn);
  check_error(log::configure_from_env());
  int mode = -1;
  check_error(env::read_word("COHORT_ULFM_API", {"auto", "on", "off"}, &mode));
  if (mode < -1 || mode > 2) std::abort();
  return 0;
}
