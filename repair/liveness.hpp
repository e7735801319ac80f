// Non-collective creation of a communicator over the live members of a group, and its building block,
// the group's liveness discovery: a sans-IO state machine (no MPI, no threads, no clock). It decides what
// the member does next; the member's agreements (repair/agreement.hpp, run over the group's members
// only) and its MPI_Comm_create_group calls are executed by the caller, which feeds their outcomes back.
// The MPI adapter is repair/group.cpp; the unit tests and bench/liveness_scale.cpp run it over a fake
// network with Agreement instances.
//
// Source: Rocco and Palermo, "Fault-Aware Non-Collective Communication Creation and Reparation in MPI"
// (arXiv:2209.01849, 2022), which introduces the Liveness Discovery Algorithm (LDA): the members of a
// group, and only they, find out which of them are alive and create the communicator over those. The
// paper's text was not available to us; this is our own design with the same contract, built on the
// agreement of repair/agreement.hpp restricted to the group's members (group ranks [0, size)):
// - Attempt 0 is optimistic: a member whose detector knows no member of the group dead calls
//   MPI_Comm_create_group over the whole group; one that knows a dead member does not (it could never
//   complete) and contributes "not made".
// - After each attempt, a *confirming agreement* over the group decides (AND of "I made it", the failed
//   set F). If every live member made it and F equals the set the attempt left out, the communicator
//   is the result on every survivor (the agreement is uniform, so they all return it or none does).
// - Otherwise F is the group's agreed liveness: attempt k+1 creates over the members outside F (the
//   same set and the same tag on every member, both derived from the decision), then confirms again.
//   F only grows (each decision's failed set contains the previous one, since every member merges it
//   into its view), so a member dying during the creation makes the others retry with it left out, and
//   the loop ends after at most (group size) attempts.
// Ranks outside the group are never sent a message and never waited for: the agreement's tree, and the
// creations, hold group members only. Failure-free cost: one MPI_Comm_create_group and one agreement
// (2(n-1) messages over the group, 2*ceil(log_r n) steps).
//
// The same agreement alone is the group agree of the paper (repair::group_agree); the whole loop is its
// group shrink (repair::group_create).
//
// Not thread-safe: the caller serialises access.
#pragma once
#include <vector>

#include "repair/agreement.hpp"

namespace cohort::repair {

class GroupCreation {
 public:
  /// What the member must do next.
  struct Action {
    enum Kind { kCreate, kAgree, kDone, kFenced } kind = kAgree;
    /// kCreate: the members (sorted group ranks) to create over; kDone: the created communicator's
    /// members. The tag of kCreate is `attempt`'s and `failed().size()`'s function (the same everywhere).
    RankSet members;
    /// kAgree: this member's input to the confirming agreement (1: the attempt's communicator was made).
    int flag = 0;
  };

  /// `size`: members in the group; `me`: this member's group rank; `known_failed`: group ranks that the
  /// local detector knows dead at the call.
  GroupCreation(int size, int me, const RankSet &known_failed);

  /// The first action: kCreate over the whole group (nobody known dead), else kAgree with flag 0.
  Action start();
  /// The creation of the current attempt finished: made = the communicator exists here. Next: kAgree.
  Action on_created(bool made);
  /// The confirming agreement of the current attempt decided (flag, failed: group ranks). Next: kDone,
  /// kCreate (the next attempt), or kFenced if this member is in `failed` (it must stop).
  Action on_decided(int flag, const RankSet &failed);

  int attempt() const { return attempt_; }
  /// The members the current attempt leaves out (agreed dead; empty for attempt 0).
  const RankSet &failed() const { return failed_; }
  /// The members the current attempt creates over.
  RankSet live() const;
  bool done() const { return done_; }

 private:
  int size_, me_;
  bool knows_dead_;
  int attempt_ = 0;
  bool made_ = false, done_ = false;
  RankSet failed_;
};

}  // namespace cohort::repair
