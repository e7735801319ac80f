// The RMA log of one fence epoch (wrap/rma/rma_log.hpp: bulk_regions and apply), as received from an origin
// rank, applied to a target window of 256 bytes. Input: one byte choosing the displacement unit, then the
// log. Every region and every write must stay inside the window; the reply must have the size the origin
// expects.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "wrap/rma/rma_log.hpp"

using namespace cohort::wrap::rma_log;

namespace {
// Datatype codes 1..4: 1, 2, 4, 8 bytes; every other code is unknown.
std::size_t elem_size(int type) { return type >= 1 && type <= 4 ? std::size_t{1} << (type - 1) : 0; }

bool accumulate(int type, int op, const void *in, void *inout, int count) {
  if (op != 2 || elem_size(type) == 0 || count < 0) return false;
  auto *d = static_cast<unsigned char *>(inout);
  const auto *s = static_cast<const unsigned char *>(in);
  for (std::size_t i = 0; i < static_cast<std::size_t>(count) * elem_size(type); ++i) d[i] ^= s[i];
  return true;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  if (size < 1) return 0;
  static char window[256];
  Memory mem{window, sizeof window, 1 << (data[0] % 4)};
  Apply fx{elem_size, accumulate};
  const char *log = reinterpret_cast<const char *>(data + 1);
  std::size_t len = size - 1;
  for (const Region &r : bulk_regions(log, len, mem, fx)) {
    if (r.offset >= 0 && (r.offset > mem.size || r.bytes > static_cast<std::size_t>(mem.size - r.offset)))
      std::abort();
    if (r.offset >= 0) std::memset(window + r.offset, 0x5a, r.bytes);
  }
  std::vector<char> reply;
  apply(log, len, mem, fx, &reply);
  return 0;
}
