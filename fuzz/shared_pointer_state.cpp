// The shared file pointer's state as read from its side file, written by any rank of the file's
// communicator (wrap/io/shared_file_pointer.hpp: shfp::decode). Input: the file's bytes (only exactly kBytes
// are decoded: wrap/io/file.cpp treats a short read as an error).
#include <cstdint>
#include <cstdlib>

#include "wrap/io/shared_file_pointer.hpp"

using namespace cohort::wrap::shfp;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  if (size != kBytes) return 0;
  State s;
  if (!decode(data, &s)) return 0;
  unsigned char again[kBytes];
  encode(s, again);
  State back;
  if (!decode(again, &back) || back.value != s.value || back.seq != s.seq || back.before != s.before) std::abort();
  take(s, 1);
  apply(s, s.seq + 1, [](std::int64_t v) { return v + 1; });
  return 0;
}
