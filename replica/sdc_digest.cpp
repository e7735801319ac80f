#include "replica/sdc_digest.hpp"

// Header-only use: every xxHash function is compiled into this translation unit, none is exported.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace cohort::replica::sdc {

std::uint64_t hash_bytes(const void *data, std::size_t n) { return XXH3_64bits(data, n); }

Digest make_digest(Mode mode, const Bytes &packed) {
  Digest d;
  d.hash = hash_bytes(packed.data(), packed.size());
  if (mode == Mode::full) d.bytes = packed;
  return d;
}

long long flip_bit(unsigned char *data, std::size_t n, std::uint64_t bit) {
  if (n == 0) return -1;
  std::uint64_t b = bit % (static_cast<std::uint64_t>(n) * 8);
  data[b / 8] ^= static_cast<unsigned char>(1u << (b % 8));
  return static_cast<long long>(b);
}

}  // namespace cohort::replica::sdc
