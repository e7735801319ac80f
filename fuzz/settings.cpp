// The detector's settings (detector/settings.hpp: load_settings reads every COHORT_* variable of
// detector/settings.def) and the unknown-variable check (each warning one line). Input: records of (one byte: which variable;
// one byte: length; the value), set in the environment before load_settings. The result is "" or one
// line naming the variable.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "detector/settings.hpp"
#include "fuzz/fuzz_input.hpp"

using namespace cohort::detector;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  const std::vector<std::string> &names = known_variables();
  for (const std::string &n : names) unsetenv(n.c_str());
  cohort::fuzz::Input in(data, size);
  std::vector<std::string> seen;
  while (!in.empty()) {
    std::uint8_t pick = in.byte();
    std::string value = in.bytes(in.byte());
    value = value.substr(0, value.find('\0'));
    if (pick < names.size()) {
      setenv(names[pick].c_str(), value.c_str(), 1);
    } else {
      seen.push_back("COHORT_" + value);  // a name that may or may not be known
    }
  }
  Settings s;
  std::string err = load_settings(&s);
  if (err.find('\n') != std::string::npos) std::abort();
  for (const std::string &w : unknown_variables(seen, {"COHORT_ON_DEAD_ROOT_BCAST"})) {
    if (w.find('\n') != std::string::npos) std::abort();
  }
  return 0;
}
