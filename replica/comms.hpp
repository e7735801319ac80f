// The program's communicators under replication, sans-IO: their members (logical ranks of the world, by
// communicator rank) and the channel contexts their messages travel on. No MPI: the integration
// (wrap/replica/) gathers what the members said and feeds it here.
//
// Contexts. Every replica of every member must give a new communicator the same context, and no two
// communicators that share a pair of members (or one member, for its messages to itself) may share one,
// or their channels (context, src, dst) would mix. Each logical rank keeps one counter, the next context
// it has not used; a creation agrees on the maximum of its participants' counters (the integration
// gathers them with the creation's own exchange) and every participant moves its counter past it. Why
// this is enough: when a communicator over a and b is made, both counters end above its context, so any
// later communicator over a and b gets a higher one. Communicators with no member in common may share a
// context (the disjoint results of one MPI_Comm_split do): their channels differ by src and dst. The
// replicas of a logical rank run the same program, so their counters agree.
//
// Each context carries two channel contexts: 2c for the program's point-to-point, 2c+1 for the
// collectives' schedules (so a collective never matches a program's receive). MPI_COMM_WORLD has
// context 0, MPI_COMM_SELF context 1.
//
// Thread-safety: none; one table per replica, used by the program's thread.
#pragma once
#include <map>
#include <memory>
#include <vector>

namespace cohort::replica {

/// One logical communicator as this logical rank sees it.
struct LogicalComm {
  int context = 0;
  std::vector<int> members;  ///< members[r]: the logical world rank of communicator rank r
  int rank = -1;             ///< this logical rank's communicator rank

  int size() const { return static_cast<int>(members.size()); }
  int p2p_context() const { return 2 * context; }
  int coll_context() const { return 2 * context + 1; }
  /// Communicator rank of logical world rank w; -1 when w is no member.
  int rank_of(int w) const;
};

/// What one member contributes to a creation: its color (or kUndefined), its key, its counter.
struct Contribution {
  int color = 0;
  int key = 0;
  int counter = 0;
};

/// MPI_Comm_compare's answers, in MPI's order of strength (the integration maps them to MPI_IDENT, ...).
enum class Similarity { ident, congruent, similar, unequal };

class CommTable {
 public:
  static constexpr int kUndefined = -32766;  ///< a color for "not in any new communicator" (MPI_UNDEFINED)

  /// The world of n logical ranks and this logical rank (`self`).
  CommTable(int n, int self);

  const std::shared_ptr<const LogicalComm> &world() const { return world_; }
  const std::shared_ptr<const LogicalComm> &self_comm() const { return self_comm_; }
  /// The counter this logical rank contributes to its next creation.
  int counter() const { return counter_; }

  /// A split of `parent` (also MPI_Comm_dup: one color, keys = ranks; MPI_Comm_create: the color names
  /// the group): `all[r]` is what parent rank r contributed. The new communicator of this logical rank's
  /// color, ranked by key then parent rank; null when its color is kUndefined. Every participant's
  /// counter moves past the agreed context, also with kUndefined.
  std::shared_ptr<const LogicalComm> split(const LogicalComm &parent, const std::vector<Contribution> &all);
  /// MPI_Comm_create_group: the members (logical world ranks, in group order) and their counters, in
  /// that order; only the members take part. Null when this logical rank is not a member.
  std::shared_ptr<const LogicalComm> create(const std::vector<int> &members, const std::vector<int> &counters);

  static Similarity compare(const LogicalComm &a, const LogicalComm &b);

 private:
  std::shared_ptr<const LogicalComm> make(int context, std::vector<int> members);

  int self_;
  int counter_ = 2;  ///< 0 and 1 are MPI_COMM_WORLD's and MPI_COMM_SELF's
  std::shared_ptr<const LogicalComm> world_, self_comm_;
};

}  // namespace cohort::replica
