#include "replica/sdc_inject.hpp"

#include <set>
#include <tuple>

#include "detector/env.hpp"

namespace cohort::replica::sdc {
namespace {

std::string parse_entry(const std::string &text, Injection *e) {
  bool have_send = false;
  std::set<std::string> seen;
  for (const std::string &field : env::split(text, ',')) {
    std::size_t eq = field.find('=');
    if (eq == std::string::npos) return "'" + field + "' is not key=value";
    std::string key = field.substr(0, eq), value = field.substr(eq + 1);
    if (!seen.insert(key).second) return key + "= is given twice";
    if (key == "rank") {
      auto v = env::parse_long(value, 0, 1 << 30);
      if (!v) return "rank must be a logical rank >= 0, not '" + value + "'";
      e->rank = static_cast<int>(*v);
    } else if (key == "replica") {
      auto v = env::parse_long(value, 0, 2);
      if (!v) return "replica must be 0, 1 or 2, not '" + value + "'";
      e->replica = static_cast<int>(*v);
    } else if (key == "send") {
      auto v = env::parse_long(value, 1, 1L << 50);
      if (!v) return "send must be a count >= 1, not '" + value + "'";
      e->send = *v;
      have_send = true;
    } else if (key == "bit") {
      auto v = env::parse_long(value, 0, 1L << 50);
      if (!v) return "bit must be a bit index >= 0, not '" + value + "'";
      e->bit = *v;
    } else if (key == "where") {
      if (value == "message") e->in_memory = false;
      else if (value == "memory") e->in_memory = true;
      else return "where must be message or memory, not '" + value + "'";
    } else {
      return "unknown key '" + key + "' (expected rank, replica, send, bit, where)";
    }
  }
  if (e->rank < 0) return "an entry needs rank=";
  if (e->replica < 0) return "an entry needs replica=";
  if (!have_send) return "an entry needs send=";
  return "";
}

}  // namespace

std::string parse_injections(const std::string &text, std::vector<Injection> *out) {
  out->clear();
  std::set<std::tuple<int, int, long long>> seen;
  for (const std::string &part : env::split(text, ';')) {
    if (part.empty()) continue;
    Injection e;
    std::string err = parse_entry(part, &e);
    if (!err.empty()) return env::printable("entry '" + part + "': " + err);
    if (!seen.insert({e.rank, e.replica, e.send}).second)
      return env::printable("entry '" + part + "': that message is already corrupted by an earlier entry");
    out->push_back(e);
  }
  if (out->empty()) return "no entry";
  return "";
}

std::string validate_injections(const std::vector<Injection> &entries, int logical_size, int replicas) {
  if (replicas < 2) return "SDC injection needs replication (COHORT_REPLICAS=2 or 3)";
  for (const Injection &e : entries) {
    if (e.rank >= logical_size)
      return "rank " + std::to_string(e.rank) + " is out of range: the job has " + std::to_string(logical_size) +
             " logical ranks (0.." + std::to_string(logical_size - 1) + ")";
    if (e.replica >= replicas)
      return "replica " + std::to_string(e.replica) + " is out of range: each rank has " +
             std::to_string(replicas) + " replicas (0.." + std::to_string(replicas - 1) + ")";
  }
  return "";
}

std::string injection_failure_message(const std::string &text, const std::string &error) {
  return "invalid COHORT_INJECT_SDC='" + env::printable(text) + "': " + error;
}

}  // namespace cohort::replica::sdc
