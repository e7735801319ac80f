// Which MPI_COMM_WORLD rank is behind each rank a point-to-point call names, and whether a wildcard
// receive can still be satisfied. Pure data (no MPI): wrap/p2p/p2p_peers.cpp fills it from the communicator's
// groups and asks the detector about the world ranks.
#pragma once
#include <vector>

namespace cohort::wrap::p2p {

/// The peers of one communicator: for an intracommunicator its group, for an intercommunicator its remote
/// group (the ranks that its point-to-point calls name).
class PeerMap {
 public:
  /// world[i] is the MPI_COMM_WORLD rank of peer rank i, or -1 for a process outside MPI_COMM_WORLD
  /// (never reported dead). self is the caller's rank among the peers, or -1 (intercommunicator).
  PeerMap(std::vector<int> world, int self) : world_(std::move(world)), self_(self) {}

  int size() const { return static_cast<int>(world_.size()); }

  /// The world rank of peer `rank`, or -1 when rank is out of [0, size()) or outside MPI_COMM_WORLD.
  int world_rank(int rank) const {
    if (rank < 0 || rank >= size()) return -1;
    return world_[static_cast<std::size_t>(rank)];
  }

  /// True when no peer but the caller itself can send any more: every other peer is known dead
  /// (is_failed(world rank) is true). This is when a receive from MPI_ANY_SOURCE fails (Legio thesis 3.4).
  /// A communicator whose only peer is the caller never fails this way: the caller can send to itself.
  template <typename IsFailed>
  bool no_live_sender(const IsFailed &is_failed) const {
    bool any_other = false;
    for (int r = 0; r < size(); ++r) {
      if (r == self_) continue;
      any_other = true;
      int w = world_[static_cast<std::size_t>(r)];
      if (w < 0 || !is_failed(w)) return false;
    }
    return any_other;
  }

 private:
  std::vector<int> world_;
  int self_;
};

}  // namespace cohort::wrap::p2p
