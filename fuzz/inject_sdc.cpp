// COHORT_INJECT_SDC (replica/sdc_inject.hpp: parse, then validate against a job of 4 logical ranks with 3
// replicas). Input: the variable's value. Either is "" (accepted) or one line saying what is wrong, and
// so is the message that stops MPI_Init (injection_failure_message).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "replica/sdc_inject.hpp"

using namespace cohort::replica::sdc;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  text = text.substr(0, text.find('\0'));  // an environment value ends at its first NUL
  std::vector<Injection> entries;
  std::string err = parse_injections(text, &entries);
  if (err.empty()) err = validate_injections(entries, 4, 3);
  if (err.find('\n') != std::string::npos) std::abort();
  if (!err.empty() && injection_failure_message(text, err).find('\n') != std::string::npos) std::abort();
  for (const Injection &e : entries)
    if (e.rank < 0 || e.replica < 0 || e.replica > 2 || e.send < 1 || e.bit < 0) std::abort();
  return 0;
}
