// The detector's ring and its broadcast overlays: pure data, no MPI.
//
// Ranks are MPI_COMM_WORLD ranks 0..n-1. A *position* is a place on the ring 0..n-1; the ring order maps
// positions to ranks (identity by default, or a seeded shuffle that every rank computes identically).
// A *live ring* is the ring with some positions removed (failed or departed ranks); broadcast targets are
// given as offsets counted in live positions.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace cohort::topology {

/// Position -> rank for n ranks. shuffle == false: identity. shuffle == true: a Fisher-Yates shuffle
/// driven by splitmix64(seed), so the order depends only on (n, seed), never on the platform or the
/// standard library (OCFTL, Rosso and Francesquini, section 4.1: a shuffled ring spreads the observers of
/// a rack-local failure burst over many racks).
std::vector<int> ring_order(int n, bool shuffle, std::uint64_t seed);

/// The inverse permutation of ring_order: rank -> position.
std::vector<int> inverse(const std::vector<int> &order);

/// Host index of each rank from a per-rank host key (any string that is equal for ranks of one host):
/// hosts are numbered 0, 1, ... in the order of their lowest rank. Shape: keys[rank] -> result[rank].
std::vector<int> host_indices(const std::vector<std::string> &keys);

/// Position -> rank grouped by host: the ranks of each host take consecutive positions, so every rank's
/// observer (next position) is on its own host except at the H host boundaries of a ring of H hosts.
/// host[rank] is a host index from host_indices (n = host.size()). shuffle == false: hosts in the order of
/// their lowest rank, each host's ranks ascending. shuffle == true: the order of the hosts and, within
/// each host, the order of its ranks are each a ring_order shuffle (hosts: seed; host h's ranks: seed + h),
/// so the order still depends only on (host, seed), and on one host it equals ring_order(n, shuffle, seed).
/// Grouping by host lets an observer watch its emitter's process directly (detector/runtime.cpp: pidfd).
std::vector<int> host_ring_order(const std::vector<int> &host, bool shuffle, std::uint64_t seed);

/// The ring shared by every detector state machine of one job (immutable; share it by pointer).
struct Ring {
  std::vector<int> rank_at;      ///< position -> rank
  std::vector<int> position_of;  ///< rank -> position
  Ring(int n, bool shuffle, std::uint64_t seed);
  /// The host-grouped ring of host_ring_order(host, shuffle, seed).
  Ring(const std::vector<int> &host, bool shuffle, std::uint64_t seed);
  int size() const { return static_cast<int>(rank_at.size()); }
};

/// The failure-notice broadcast overlay. Every rank sends a notice to its targets once, on first learning
/// of a failure (flooding), so each overlay tolerates dead forwarders as long as it stays connected.
///  - chord: +1, +2, +4, ..., +2^k with k = ceil(log2 L) - 1, L the number of live positions: Chord's
///    finger table as used by OCFTL (Rosso and Francesquini, section 4.1). About log2 L messages per
///    rank, log2 L hops.
///  - bmg: +-1, +-2, +-4, ..., +-2^k, same k: the binomial graph over which the ULFM detector floods its
///    failure notices (Bosilca et al., "A failure detector for HPC platforms", IJHPCA 32(1), 2018, the
///    propagation stage; Open MPI's ULFM comm_ft_reliable_bcast.c sends to me +- 2^i for 2^i <= L/2).
///    About 2 log2 L messages per rank.
///  - hba: +-1, +-2, ..., +-k with k = floor(log2 L): a Harary-style circulant graph, the k nearest
///    live ranks on each side (the definition in this project's issue: "k = floor(log2 N) both ways").
///    2k-connected, but its diameter is about L / (2k), so it needs many more hops than chord and bmg.
/// Offsets that coincide modulo L are sent once.
enum class Bcast { chord, bmg, hba };

/// "chord", "bmg", "hba".
const char *bcast_name(Bcast b);
/// Parses "chord", "bmg" or "hba"; false on anything else.
bool parse_bcast(const std::string &text, Bcast *out);

/// Offsets (in live positions, negative = predecessors) to which a rank sends, or forwards on first
/// receipt, a failure notice, on a live ring of `live` positions. Distinct, never 0 and never equal
/// modulo live (no rank gets the same notice twice from one sender). Empty when live <= 1.
std::vector<int> bcast_offsets(Bcast b, int live);

/// A set of absent positions on a ring of n positions, and the live positions between them. Memory is
/// O(absent), so a simulator can hold one per simulated rank at n = 65,536.
class LiveRing {
 public:
  explicit LiveRing(int n) : n_(n) {}
  int size() const { return n_; }
  int live() const { return n_ - static_cast<int>(absent_.size()); }
  bool absent(int pos) const;
  /// Removes a position; false if it was already absent.
  bool remove(int pos);
  /// The live position `steps` live places after (steps > 0) or before (steps < 0) position `from`
  /// (which need not be live); -1 when no live position other than `from` exists.
  int step(int from, int steps) const;
  /// Absent positions strictly between a and b going forward (a+1 .. b-1, wrapping).
  std::vector<int> absent_between(int a, int b) const;

 private:
  int live_index_floor(int pos) const;  // number of live positions < pos
  int nth_live(int idx) const;          // position of the idx-th live position (0-based)
  int n_;
  std::vector<int> absent_;  // sorted
};

}  // namespace cohort::topology
