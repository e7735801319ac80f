// COHORT_INJECT_FAILURE (detector/inject_parse.hpp: parse, then validate against a job of 4 ranks and
// cohort's hooks). Input: the variable's value. Either is "" (accepted) or one line saying what is wrong,
// and so is the message that stops MPI_Init (failure_message).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "detector/inject_parse.hpp"

using namespace cohort::inject;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  text = text.substr(0, text.find('\0'));  // an environment value ends at its first NUL
  std::vector<Entry> entries;
  std::string err = parse(text, &entries);
  if (err.find('\n') != std::string::npos) std::abort();
  if (!err.empty()) {
    if (failure_message(text, err).find('\n') != std::string::npos) std::abort();
    return 0;
  }
  static const std::vector<std::string> hooks = known_hooks({"MPI_Bcast", "MPI_Allreduce"});
  err = validate(entries, 4, hooks);
  if (err.find('\n') != std::string::npos) std::abort();
  if (!err.empty() && failure_message(text, err).find('\n') != std::string::npos) std::abort();
  return 0;
}
