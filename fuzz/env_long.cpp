// The integer parser behind every numeric COHORT_* value (detector/env.hpp: parse_long). Input: two bytes
// choosing the range, then the text. A result is always inside the range.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "detector/env.hpp"
#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  cohort::fuzz::Input in(data, size);
  static const long bounds[] = {-(1L << 62), -1000000, -1, 0, 1, 2, 1000, 1 << 30, 1L << 40, 1L << 62};
  long lo = bounds[in.byte() % 10], hi = bounds[in.byte() % 10];
  std::string text = in.rest();
  auto v = cohort::env::parse_long(text, lo, hi);
  if (v && (*v < lo || *v > hi)) std::abort();
  return 0;
}
