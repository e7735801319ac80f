#include "wrap/core/policy.hpp"

#include <cctype>
#include <string>

#include "detector/env.hpp"
#include "detector/log.hpp"

namespace cohort::wrap {
namespace {

const std::vector<std::string> kWords = {"abort", "skip", "error"};  // in the order of Policy

// Reads `name` into *out when it is set and valid; "" or one line naming the variable.
std::string read_policy(const char *name, Policy *out) {
  int i = static_cast<int>(*out);
  std::string err = env::read_word(name, kWords, &i);
  *out = static_cast<Policy>(i);
  return err;
}

// As read_policy, for a value that MPI_Init checked already: only a program that changed its environment
// since then meets the error (one line, exit 2).
bool read_checked_policy(const char *name, Policy *out) {
  if (!env::get(name)) return false;
  std::string err = read_policy(name, out);
  if (!err.empty()) log::fatal(2, "%s", err.c_str());
  return true;
}

}  // namespace

const char *policy_name(Policy p) {
  switch (p) {
    case Policy::abort: return "abort";
    case Policy::skip: return "skip";
    case Policy::error: return "error";
  }
  return "?";
}

std::string dead_root_variable(const char *call) {
  std::string suffix = call;
  if (suffix.rfind("MPI_", 0) == 0) suffix = suffix.substr(4);
  for (char &c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return "COHORT_ON_DEAD_ROOT_" + suffix;
}

std::string check_policy_variables(const std::vector<std::string> &per_call_variables) {
  Policy p = Policy::abort;
  for (const char *name : {"COHORT_ON_DEAD_ROOT", "COHORT_ON_DEAD_PEER", "COHORT_ON_DEAD_PEER_SEND", "COHORT_ON_DEAD_PEER_RECV"}) {
    std::string err = read_policy(name, &p);
    if (!err.empty()) return err;
  }
  for (const std::string &name : per_call_variables) {
    std::string err = read_policy(name.c_str(), &p);
    if (!err.empty()) return err;
  }
  return "";
}

Policy dead_root_policy(const char *call, Policy fallback) {
  Policy p = fallback;
  if (read_checked_policy(dead_root_variable(call).c_str(), &p)) return p;
  if (read_checked_policy("COHORT_ON_DEAD_ROOT", &p)) return p;
  return fallback;
}

Policy dead_peer_policy(bool send, Policy fallback) {
  Policy p = fallback;
  if (read_checked_policy(send ? "COHORT_ON_DEAD_PEER_SEND" : "COHORT_ON_DEAD_PEER_RECV", &p)) return p;
  if (read_checked_policy("COHORT_ON_DEAD_PEER", &p)) return p;
  return fallback;
}

}  // namespace cohort::wrap
