// COHORT_HIERARCHY (topology/hierarchy.hpp: parse_hierarchy) and COHORT_BCAST (topology/ring.hpp:
// parse_bcast). Input: the value. An accepted fixed size is in [2, 2^20]; a rejection has one line.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "topology/hierarchy.hpp"
#include "topology/ring.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  text = text.substr(0, text.find('\0'));
  cohort::topology::HierarchySpec spec;
  std::string error;
  if (cohort::topology::parse_hierarchy(text.c_str(), &spec, &error)) {
    if (spec.mode == cohort::topology::HierarchySpec::fixed && (spec.k < 2 || spec.k > (1 << 20))) std::abort();
  } else if (error.empty() || error.find('\n') != std::string::npos) {
    std::abort();
  }
  cohort::topology::Bcast b;
  cohort::topology::parse_bcast(text, &b);
  return 0;
}
