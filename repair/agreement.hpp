// The agreement protocol of the heartbeat backend, as a sans-IO state machine: no MPI, no threads, no
// clock. It is fed the local detector's failure notices and peers' messages and emits messages; the MPI
// adapter (repair/mpi_only.cpp), the unit tests and the simulator move them.
//
// Algorithm (a tree-shaped consensus in the style of ERA: Herault et al., "Practical scalable consensus
// for pseudo-synchronous distributed systems", SC'15, sections 3-4, with its tree rebuilt from each
// rank's failure view instead of ERA's re-parenting):
// - Every member keeps a *view* F: the members it knows dead (from its detector, or merged from any
//   message it receives). F only grows.
// - The live members (not in F), in comm order, form a binomial tree rooted at the lowest of them.
//   Up phase: a member sends its parent CONTRIB(AND of its subtree's flags, F) once it holds a CONTRIB
//   tagged with exactly its own F from every child. A CONTRIB is valid only if its tag equals the
//   receiver's view after merging the tag into it; a stale one is answered with VIEW(F). When F grows,
//   the tree is recomputed and the contribution resent.
// - The root, holding all its children's contributions, decides (AND, F) and sends DECIDE down. A
//   member that accepts a DECIDE sends it on to all its tree neighbours except the sender.
// - Safety (uniform agreement): a member never contributes once it has decided, and accepts a DECIDE
//   only from a sender that is not in its view. Then, for two rounds F1 ⊊ F2 that both complete, no
//   member of live(F2) ever decides round F1's value (each one contributed to F2 before it could, so it
//   already saw F1's root, and every other holder of that value, as dead); and rounds whose live sets
//   share a member are ordered by inclusion. So the survivors, who are in every completed round's live
//   set, can only decide the value of the largest completed round.
// - Termination: a decided member keeps answering (any CONTRIB gets DECIDE back) and, whenever its view
//   grows, floods DECIDE to its neighbours in the new tree. Once views stop changing, either some
//   survivor has decided and the flood reaches every survivor through the tree, or none has and the
//   round over the final view completes.
// Failure-free cost: 2(n-1) messages, depth 2*ceil(log_r n) for the tree's radix r (a k-nomial tree;
// the binomial tree is r = 2).
//
// Members are comm ranks in [0, size). Not thread-safe: the caller serialises access.
#pragma once
#include <cstdint>
#include <map>
#include <vector>

namespace cohort::repair {

/// A sorted, duplicate-free set of members (comm ranks).
using RankSet = std::vector<int>;

/// Inserts the members of `add` into `*set`; returns true if `*set` grew.
bool merge_into(RankSet *set, const RankSet &add);
bool contains(const RankSet &set, int member);

/// Default fan-in of the tree: a star up to 32 live members (2 message steps per agreement, like a
/// small allreduce), depth 2 up to 1024, ceil(log32 n) beyond.
constexpr int kDefaultRadix = 32;

/// The k-nomial tree (radix r) over the members of [0, size) that are not in `failed`, in comm order,
/// rooted at the lowest live member. Position p's parent is p with its lowest non-zero base-r digit
/// cleared; p's children are p + v*r^j for v in [1, r) and every r^j below the weight of p's lowest
/// non-zero digit (every r^j for the root). Radix 2 is the binomial tree. Each lookup is O(|failed|).
class LiveTree {
 public:
  LiveTree(int size, const RankSet *failed, int radix = kDefaultRadix)
      : size_(size), radix_(radix < 2 ? 2 : radix), failed_(failed) {}
  int live_count() const;
  /// Position of a live member among the live members, or -1 if it is in `failed`.
  int position(int member) const;
  int member_at(int position) const;
  int root() const { return live_count() > 0 ? member_at(0) : -1; }
  /// -1 for the root.
  int parent(int member) const;
  /// Largest subtree first (it has the longest way down).
  std::vector<int> children(int member) const;

 private:
  int size_, radix_;
  const RankSet *failed_;
};

struct AgreeMsg {
  enum Type : std::uint8_t { kContrib = 1, kDecide = 2, kView = 3 };
  Type type = kContrib;
  /// kContrib: AND of the sender's subtree flags; kDecide: the decided flag; kView: unused.
  int flag = 0;
  /// kContrib and kView: the sender's view (the contribution's tag); kDecide: the decided failed set.
  RankSet failed;
};

struct Outgoing {
  int to;  ///< member (comm rank)
  AgreeMsg msg;
};

/// One agreement instance on one member.
class Agreement {
 public:
  /// `known_failed`: what the local detector knows now (members of the comm). `radix`: the tree's fan-in,
  /// the same on every member.
  Agreement(int size, int me, int flag, RankSet known_failed, int radix = kDefaultRadix);

  /// The local detector reports `member` dead.
  void on_failure(int member);
  /// A message from member `from`.
  void on_message(int from, const AgreeMsg &msg);

  /// Messages to send, in order (the caller sends them in this order).
  std::vector<Outgoing> take_outbox();
  /// Members this instance learned dead from messages (not through on_failure) since the last call: the
  /// caller tells its detector, which disseminates them.
  RankSet take_learned();

  bool decided() const { return decided_; }
  int decided_flag() const { return dflag_; }
  const RankSet &decided_failed() const { return dfailed_; }
  /// This member found itself in a view or a decision: the others consider it dead. It must stop (self-
  /// fencing); the instance ignores all further input.
  bool fenced() const { return fenced_; }
  const RankSet &view() const { return view_; }
  int size() const { return size_; }
  int me() const { return me_; }

 private:
  struct Contribution {
    int flag;
    RankSet tag;
  };
  void merge(const RankSet &add, bool from_message);
  void view_changed();
  void try_complete();
  void decide(int flag, RankSet failed, int except);
  void flood(int except);
  void send(int to, AgreeMsg::Type type, int flag, const RankSet &failed);

  int size_, me_, input_, radix_;
  RankSet view_;
  bool sent_for_view_ = false;
  std::map<int, Contribution> contribs_;  // by child
  bool decided_ = false, fenced_ = false;
  int dflag_ = 0;
  RankSet dfailed_;
  std::vector<Outgoing> outbox_;
  RankSet learned_;
};

}  // namespace cohort::repair
