// Replication's rank maps: N logical ranks, each run as r processes (its replicas), placed on r*N world
// ranks; which replica leads each logical rank, and how that changes when replicas die. Pure data, no MPI.
//
// Placement rule. The world ranks are laid out in host order: sorted by (host index, world rank), with
// hosts numbered in the order of their lowest world rank (topology::host_indices). Replica k of logical
// rank l is the world rank at position k*N + l of that order. A host holds a contiguous run of positions,
// so a host with at most N world ranks never holds two replicas of one logical rank (two positions of
// one logical rank are N apart). With r hosts of N ranks each (or any hosts of at most N ranks each),
// a lost host therefore takes at most one replica of each logical rank. A host with c > N ranks must hold
// two replicas of at least c - N logical ranks (pigeonhole over N logical ranks); the rule doubles up
// exactly c - N of them when c <= 2N, which is the least possible. Without hosts (or on one host) the
// order is the identity: replica k of logical rank l is world rank k*N + l, so world ranks 0..N-1 are
// the replicas 0 of every logical rank (those the launcher's first block starts).
//
// Leader: the live replica with the lowest replica index (Ferreira et al., SC'11, rMPI: one replica of
// each rank is the active one that resolves nondeterminism for its twins). Replicas never come back, so
// the leader's replica index only grows; protocol.hpp uses it as the epoch of the leader's decisions.
//
// Thread-safety: Placement is immutable after construction (share it between threads freely); Liveness
// is a plain value, owned by one thread. Memory: O(dead replicas).
#pragma once
#include <string>
#include <unordered_set>
#include <vector>

namespace cohort::replica {

/// Largest number of replicas per logical rank.
constexpr int kMaxReplicas = 3;

/// Where each replica runs. Shapes: world ranks 0 .. logical_size*replicas - 1.
class Placement {
 public:
  /// Placement without host information: replica k of logical rank l is world rank k*N + l.
  /// Requires logical_size >= 1 and 1 <= replicas <= kMaxReplicas (throws std::invalid_argument).
  Placement(int logical_size, int replicas);
  /// Placement by the host rule above. host[w] is the host index of world rank w (any integers: equal
  /// for ranks of one host); host.size() must equal logical_size * replicas (throws otherwise).
  Placement(int logical_size, int replicas, const std::vector<int> &host);

  int logical_size() const { return n_; }
  int replicas() const { return r_; }
  int world_size() const { return n_ * r_; }
  /// World rank of replica k (0 <= k < replicas) of logical rank l.
  int world(int logical, int replica) const { return world_of_[static_cast<std::size_t>(replica) * n_ + logical]; }
  /// Logical rank that world rank w runs.
  int logical(int world_rank) const { return logical_of_[static_cast<std::size_t>(world_rank)]; }
  /// Replica index (0 .. replicas-1) of world rank w.
  int replica(int world_rank) const { return replica_of_[static_cast<std::size_t>(world_rank)]; }
  /// Host index of world rank w (0 for every rank when constructed without hosts).
  int host(int world_rank) const { return host_[static_cast<std::size_t>(world_rank)]; }
  /// Number of logical ranks with two replicas on one host (0 whenever every host has <= N ranks).
  int shared_host_ranks() const;
  /// One line per logical rank, "logical 3: world 3 (host 0), 7 (host 1)", for COHORT_LOG=info.
  std::string describe() const;

 private:
  void build(const std::vector<int> &order);
  int n_, r_;
  std::vector<int> host_, world_of_, logical_of_, replica_of_;
};

/// What a replica's death changed for its logical rank.
struct Death {
  int logical = -1;          ///< the dead replica's logical rank
  int replica = -1;          ///< its replica index
  bool was_alive = false;    ///< false: it was already known dead (nothing changed)
  bool leader_changed = false;
  int new_leader = -1;       ///< world rank of the logical rank's leader now; -1 if no replica is left
  bool logical_dead = false; ///< every replica of the logical rank is dead now
};

/// Which world ranks are alive, and the leader of each logical rank.
class Liveness {
 public:
  explicit Liveness(const Placement *placement);
  bool alive(int world_rank) const { return dead_.count(world_rank) == 0; }
  /// Number of live replicas of logical rank l.
  int live_replicas(int logical) const;
  bool logical_alive(int logical) const { return live_replicas(logical) > 0; }
  /// World rank of the leader (the live replica of lowest index) of l; -1 if none is alive.
  int leader(int logical) const;
  /// World ranks of the live replicas of l, by replica index.
  std::vector<int> live(int logical) const;
  /// Marks world rank w dead and says what that changed.
  Death mark_dead(int world_rank);
  const Placement &placement() const { return *p_; }

 private:
  const Placement *p_;
  // NOTE: the dead set, not a flag per world rank: a simulation holds one Liveness per replica.
  std::unordered_set<int> dead_;
};

}  // namespace cohort::replica
