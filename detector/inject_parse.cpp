#include "detector/inject_parse.hpp"

#include <signal.h>

#include <algorithm>
#include <cctype>

#include "detector/env.hpp"

namespace cohort::inject {
namespace {

std::string parse_entry(const std::string &text, Entry *e, std::vector<int> *ranks) {
  bool have_after = false, have_hit = false, have_cont = false;
  for (const std::string &field : env::split(text, ',')) {
    size_t eq = field.find('=');
    if (eq == std::string::npos) return "'" + field + "' is not key=value";
    std::string key = field.substr(0, eq), value = field.substr(eq + 1);
    if (key == "rank") {
      for (const std::string &r : env::split(value, '+')) {
        auto v = env::parse_long(r, 0, 1 << 30);
        if (!v) return "rank must be a rank number or ranks joined by '+', not '" + value + "'";
        ranks->push_back(static_cast<int>(*v));
      }
      e->rank = ranks->front();
    } else if (key == "after_ms") {
      auto v = env::parse_long(value, 0, 1L << 40);
      if (!v) return "after_ms must be ms >= 0, not '" + value + "'";
      e->after_ms = *v;
      have_after = true;
    } else if (key == "at") {
      if (value.empty()) return "at needs a hook name";
      e->at = value;
    } else if (key == "hit") {
      auto v = env::parse_long(value, 1, 1 << 30);
      if (!v) return "hit must be a count >= 1, not '" + value + "'";
      e->hit = static_cast<int>(*v);
      have_hit = true;
    } else if (key == "signal") {
      if (value == "KILL" || value == "SIGKILL") {
        e->signal = SIGKILL;
      } else if (value == "STOP" || value == "SIGSTOP") {
        e->signal = SIGSTOP;
      } else {
        return "signal must be KILL or STOP, not '" + value + "'";
      }
    } else if (key == "cont_ms") {
      auto v = env::parse_long(value, 0, 1L << 40);
      if (!v) return "cont_ms must be ms >= 0, not '" + value + "'";
      e->cont_ms = *v;
      have_cont = true;
    } else {
      return "unknown key '" + key + "' (expected rank, after_ms, at, hit, signal, cont_ms)";
    }
  }
  if (e->rank < 0) return "an entry needs rank=";
  if (have_after == !e->at.empty()) return "an entry needs exactly one of after_ms= and at=";
  if (have_hit && e->at.empty()) return "hit= goes with at=";
  if (have_cont && e->signal != SIGSTOP) return "cont_ms= goes with signal=STOP";
  return "";
}

}  // namespace

std::vector<std::string> known_hooks(const std::vector<std::string> &calls) {
  std::vector<std::string> hooks = {
#define COHORT_HOOK(name, reached) name,
#include "detector/hooks.def"
#undef COHORT_HOOK
  };
  for (const std::string &c : calls) {
    std::string h = c.rfind("MPI_", 0) == 0 ? c.substr(4) : c;
    for (char &ch : h) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    h += ".posted";
    if (std::find(hooks.begin(), hooks.end(), h) == hooks.end()) hooks.push_back(h);
  }
  return hooks;
}

std::string validate(const std::vector<Entry> &entries, int world_size, const std::vector<std::string> &hooks) {
  for (const Entry &e : entries) {
    if (e.rank >= world_size) {
      return "rank " + std::to_string(e.rank) + " is out of range: the job has " + std::to_string(world_size) +
             " ranks (0.." + std::to_string(world_size - 1) + ")";
    }
    if (!e.at.empty() && std::find(hooks.begin(), hooks.end(), e.at) == hooks.end()) {
      std::string near = env::closest(e.at, hooks);
      return "unknown hook '" + env::printable(e.at) + "'" + (near.empty() ? std::string() : " (did you mean " + near + "?)");
    }
  }
  return "";
}

std::string parse(const std::string &text, std::vector<Entry> *out) {
  out->clear();
  for (const std::string &part : env::split(text, ';')) {
    if (part.empty()) continue;
    Entry e;
    std::vector<int> ranks;
    std::string err = parse_entry(part, &e, &ranks);
    if (!err.empty()) return env::printable("entry '" + part + "': " + err);
    for (int r : ranks) {
      e.rank = r;
      out->push_back(e);
    }
  }
  if (out->empty()) return "no entry";
  return "";
}

std::string failure_message(const std::string &text, const std::string &error) {
  return "invalid COHORT_INJECT_FAILURE='" + env::printable(text) + "': " + error;
}

}  // namespace cohort::inject
