// The rank maps of one alias communicator: alias rank <-> substitute rank <-> MPI_COMM_WORLD rank.
// Pure data (no MPI): unit-tested in tests/unit/wrap_rankmap_test.cpp.
//
// The *alias* is the communicator the program holds; its ranks and size never change. Its *substitute*
// is the communicator cohort actually communicates on: at first the alias itself, after each shrink a
// communicator over the survivors, in the alias's rank order (Legio's P.7). So substitute rank s is the
// s-th surviving alias rank, and a dead alias rank has no substitute rank.
#pragma once
#include <vector>

namespace cohort::wrap {

class RankMap {
 public:
  RankMap() = default;
  /// Every alias rank is a member. alias_to_world[a] is the MPI_COMM_WORLD rank of alias rank a.
  explicit RankMap(std::vector<int> alias_to_world);

  /// The map after a shrink: `kept` lists the substitute ranks of *this* map that are members of the new
  /// substitute, ascending (the new substitute's rank i is kept[i]).
  RankMap shrunk(const std::vector<int> &kept) const;

  int alias_size() const { return static_cast<int>(to_world_.size()); }
  int sub_size() const { return static_cast<int>(members_.size()); }
  /// True while no rank has been removed: substitute rank == alias rank.
  bool complete() const { return members_.size() == to_world_.size(); }

  /// Substitute rank of alias rank a, or -1 if a is dead (or out of range).
  int to_sub(int a) const { return a >= 0 && a < alias_size() ? to_sub_[a] : -1; }
  /// Alias rank of substitute rank s (0 <= s < sub_size()).
  int to_alias(int s) const { return members_[s]; }
  /// MPI_COMM_WORLD rank of alias rank a (dead or alive; 0 <= a < alias_size()).
  int to_world(int a) const { return to_world_[a]; }
  /// Alias rank of a MPI_COMM_WORLD rank, or -1 when that process is not in the alias.
  int world_to_alias(int w) const;

  /// Surviving alias ranks, ascending (substitute rank order).
  const std::vector<int> &members() const { return members_; }
  /// MPI_COMM_WORLD ranks of the survivors, in substitute rank order.
  std::vector<int> member_world_ranks() const;

 private:
  std::vector<int> to_world_;  // alias rank -> world rank
  std::vector<int> to_sub_;    // alias rank -> substitute rank or -1
  std::vector<int> members_;   // substitute rank -> alias rank
};

/// Picks the members' entries of a per-alias-rank array: out[s] = per_alias[map.to_alias(s)] for every
/// substitute rank s (sub_size() entries).
template <typename T>
void members_of(const RankMap &map, const T *per_alias, std::vector<T> *out) {
  out->resize(map.sub_size());
  for (int s = 0; s < map.sub_size(); ++s) (*out)[s] = per_alias[map.to_alias(s)];
}

/// The one layout of positional data (Legio without shift): counts and displacements, in elements (bytes
/// for MPI_Alltoallw), per substitute rank, so that every surviving alias rank's block sits at its original
/// displacement and dead ranks' blocks are neither sent nor received. The arguments of the v-variant
/// (MPI_Igatherv, MPI_Ialltoallv, ...) posted on the substitute.
struct PositionalLayout {
  std::vector<int> counts, displs;
  /// Uniform blocks (Gather, Scatter, Allgather, Alltoall): alias rank a's block is `count` elements at
  /// a * count.
  void uniform(const RankMap &map, int count);
  /// Blocks given per alias rank (the program's v-arguments: alias_size() entries each).
  void select(const RankMap &map, const int *alias_counts, const int *alias_displs) {
    members_of(map, alias_counts, &counts);
    members_of(map, alias_displs, &displs);
  }
};

}  // namespace cohort::wrap
