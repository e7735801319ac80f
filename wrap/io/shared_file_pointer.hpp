// The shared file pointer of a file opened on a protected communicator: its state and the two
// ways it moves, without I/O (wrap/io/file.cpp reads and writes the state in a side file under an fcntl lock).
//
// ROMIO keeps the shared pointer in a hidden file under fcntl locks (adio/common/ad_get_sh_fp.c); so does
// cohort, so that the independent calls (read/write_shared, iread/iwrite_shared) move it with no
// communication: a rank takes the lock, reads the state, writes it moved, releases. A rank that dies
// holding the lock loses it (the kernel drops a dead process's fcntl locks), so nobody waits on a dead rank.
// The collective calls (read/write_ordered, seek_shared, set_view) move the same pointer once per call:
// the lowest survivor applies the move tagged with the call's sequence number (the same on every
// survivor: the count of such calls on the file); a retry after its death that finds its own sequence
// number already applied reads the result instead of applying it again (idempotent).
//
// Unit: etypes of the file's current view, as MPI's shared pointer. Thread-safety: none (plain data).
#pragma once
#include <cstdint>
#include <cstring>

namespace cohort::wrap::shfp {

/// What the side file holds (encoded in kBytes bytes, native byte order: one host's ranks share it).
struct State {
  std::int64_t value = 0;   ///< the shared pointer, etypes
  std::uint64_t seq = 0;    ///< sequence number of the last collective move applied (0: none)
  std::int64_t before = 0;  ///< the pointer before that collective move
};

constexpr std::uint64_t kMagic = 0x70667368746f6863ULL;  // "cohtshfp"
constexpr std::size_t kBytes = 4 * sizeof(std::uint64_t);

inline void encode(const State &s, unsigned char out[kBytes]) {
  std::uint64_t w[4] = {kMagic, static_cast<std::uint64_t>(s.value), s.seq, static_cast<std::uint64_t>(s.before)};
  std::memcpy(out, w, kBytes);
}

/// Largest pointer a state may hold (etypes): 4 EiB at one byte per etype, past any file system; a larger
/// or negative one is a corrupt side file, and moving it would overflow.
constexpr std::int64_t kMaxPointer = std::int64_t{1} << 62;

/// False if the bytes are not a state cohort wrote (a foreign, truncated or corrupt side file).
inline bool decode(const unsigned char in[kBytes], State *s) {
  std::uint64_t w[4];
  std::memcpy(w, in, kBytes);
  if (w[0] != kMagic) return false;
  auto valid = [](std::uint64_t v) { return v <= static_cast<std::uint64_t>(kMaxPointer); };
  if (!valid(w[1]) || !valid(w[3])) return false;
  s->value = static_cast<std::int64_t>(w[1]);
  s->seq = w[2];
  s->before = static_cast<std::int64_t>(w[3]);
  return true;
}

/// An independent access of n etypes: returns where it goes (the pointer before) and moves it past.
inline std::int64_t take(State &s, std::int64_t n) {
  std::int64_t at = s.value;
  s.value += n;
  return at;
}

/// Where a collective move left the pointer: before and after it.
struct Move {
  std::int64_t before;
  std::int64_t after;
};

/// The collective move number seq (> 0): to = fn(pointer before). Applied once: if seq is already the last
/// move applied (a retry after the lowest survivor died), returns that move's result unchanged.
/// NOTE: only the last move needs remembering: the survivors start move seq + 1 only after every survivor
/// has the result of move seq.
template <typename F>
Move apply(State &s, std::uint64_t seq, F fn) {
  if (s.seq == seq) return Move{s.before, s.value};
  s.before = s.value;
  s.value = fn(s.before);
  s.seq = seq;
  return Move{s.before, s.value};
}

}  // namespace cohort::wrap::shfp
