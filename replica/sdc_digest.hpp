// What a copy of a logical message is compared by (replica/sdc_compare.hpp), and the bit flip of SDC
// injection. Pure: no MPI.
//
// The hash is XXH3-64 from xxHash (Debian's libxxhash-dev, used header-only so that libcohort links
// nothing more): the fastest well-kept non-cryptographic hash on x86-64 and ARM (tens of GB/s per core,
// far above the memory bandwidth a message is copied at), and 64 bits wide, so a corrupted message
// escapes detection only by a collision, with probability 2^-64 whatever the number of flipped bits. A
// CRC32C detects every 1-3 bit flip for certain but lets 2^-32 of the others through, and runs slower
// without SSE4.2; no adversary is in the fault model, so a cryptographic hash would only cost time.
//
// Bytes hashed: the message packed by MPI_Pack (the integration packs every send), which holds the
// bytes the datatype's type map means and never the holes of a derived datatype or struct padding. The
// integration masks the padding inside basic types that have some (long double's 80 bits in 16 bytes
// on x86-64) before hashing.
//
// Thread-safety: the functions are pure and reentrant.
#pragma once
#include <cstddef>
#include <cstdint>

#include "replica/sdc_compare.hpp"

namespace cohort::replica::sdc {

/// XXH3-64 of n bytes at data (seed 0).
std::uint64_t hash_bytes(const void *data, std::size_t n);

/// The digest of a copy's packed bytes in `mode`: the hash, plus the bytes themselves in `full` mode.
Digest make_digest(Mode mode, const Bytes &packed);

/// Flips bit `bit` of the n bytes at data, counting from the least significant bit of byte 0; `bit` is
/// taken modulo 8 * n so that any seeded value lands. Returns the bit flipped, or -1 when n is 0
/// (nothing to flip).
long long flip_bit(unsigned char *data, std::size_t n, std::uint64_t bit);

}  // namespace cohort::replica::sdc
