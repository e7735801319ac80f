// The program's communicators as cohort keeps them: each an alias (the handle the program holds) with its
// substitutes (the communicators cohort runs collectives on, over the survivors) and rank maps, in one
// registry. Point-to-point wrappers read them; the driver (wrap/core/driver.hpp) repairs them.
//
// ---- API for point-to-point wrappers (wrap/p2p/p2p*, wrap/p2p/request*) ----
//   Alias *a = find_alias(comm);            // nullptr: cohort did not create comm -> pass through to PMPI
//   const Substitute &s = a->current();     // agreed view: s.map is the alias <-> substitute <-> world map
//   s.map.to_world(r)                       // MPI_COMM_WORLD rank of the program's rank r (dead or alive)
//   a->member(r)                            // r is in the agreed survivors (all survivors agree on this)
//   a->known_failed(r)                      // the detector on *this* rank knows r is dead (may be ahead
//                                           // of the agreed view; never behind it)
//   apply_policy(*a, policy, "MPI_Recv", "source 3 is dead")   // abort / skip / error, one code path
//   a->return_error(rc, sub)                // route an MPI error code through the alias's error handler
// Point-to-point traffic may keep using the alias handle itself with the program's ranks: the alias is a
// real communicator (MPI_COMM_WORLD or one cohort created) and messages between live ranks never need
// the dead ones. Only collectives move to the substitute. The one exception is an alias with holes (a
// topology made of a degraded communicator, Alias::has_holes): its handle lacks the dead ranks, so
// point-to-point ranks and statuses are translated (wrap/p2p/p2p_peers.hpp: handle_rank, program_source).
#pragma once
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "wrap/core/function_ref.hpp"
#include "wrap/core/policy.hpp"
#include "wrap/core/rankmap.hpp"

namespace cohort::wrap {

namespace deferred {
struct State;
}  // namespace deferred

/// What one post of a collective needs to stay alive while MPI may use it: positional layouts (counts and
/// displacements per substitute rank; slot 0 and 1: receive and send side), datatypes per substitute rank
/// (MPI_Alltoallw) and bytes (Reduce_scatter's packed input, Exscan's discarded output at substitute rank 0).
struct PostScratch {
  PositionalLayout layouts[2];
  std::vector<MPI_Datatype> types[2];
  std::vector<char> bytes;
};

/// One substitute communicator and its rank map. Immutable once published, except `abandoned`.
struct Substitute {
  MPI_Comm comm = MPI_COMM_NULL;  ///< what cohort communicates on
  RankMap map;                    ///< alias <-> substitute <-> world ranks
  int rank = -1;                  ///< this process's rank in comm
  /// A request was abandoned on comm: MPI may still use it, so cohort never frees comm.
  mutable std::atomic<bool> abandoned{false};
  /// The detector's failure epoch at which no member was known dead (a cache for any_member_failed).
  mutable std::atomic<std::uint64_t> clean_epoch{0};

  /// True when the detector on this rank knows a member of comm is dead. One atomic load while the
  /// detector's failure epoch has not changed since the last check.
  bool any_member_failed() const;

  /// Scratch that the blocking collectives' posts on comm use (layouts, datatypes, bytes: PostScratch). A
  /// nonblocking v-collective reads it until it completes, or forever if abandoned: blocking collectives
  /// on one communicator are serialised, and a substitute with an abandoned request is never posted on
  /// again (and is leaked, scratch included), so one per substitute suffices. Nonblocking collectives
  /// (wrap/core/nbc.hpp) keep their own, one per attempt.
  PostScratch &post_scratch() const { return scratch_; }
  PositionalLayout &layout(int slot) const { return scratch_.layouts[slot]; }

 private:
  mutable PostScratch scratch_;
};

/// A communicator the program holds (MPI_COMM_WORLD or one cohort created) and its substitutes.
class Alias {
 public:
  /// comm becomes its own first substitute; alias_to_world gives each rank's MPI_COMM_WORLD rank.
  Alias(MPI_Comm comm, std::vector<int> alias_to_world);
  /// A communicator with holes (a topology made of a degraded communicator, wrap/topo/process_topology.cpp): comm holds
  /// the live ranks of alias_to_world, in its order; the others are dead from the start (its first
  /// substitute, comm, already lacks them), yet keep their ranks in the program's numbering.
  Alias(MPI_Comm comm, std::vector<int> alias_to_world, const std::vector<int> &live);
  ~Alias();
  Alias(const Alias &) = delete;
  Alias &operator=(const Alias &) = delete;

  MPI_Comm handle() const { return handle_; }
  /// This process's rank in the program's numbering.
  int rank() const { return rank_; }
  /// The program's size (dead ranks and holes included).
  int size() const { return current().map.alias_size(); }
  /// The handle lacks the holes: its ranks are not the program's (see to_handle/to_program).
  bool has_holes() const { return !to_handle_.empty(); }
  /// What to_handle gives for a hole (no MPI constant has this value).
  static constexpr int kHole = -2147483647 - 1;
  /// The handle's rank of the program's rank r: r itself without holes; kHole for a hole. MPI_PROC_NULL,
  /// MPI_ANY_SOURCE and ranks out of range are kept (MPI judges them).
  int to_handle(int r) const {
    return to_handle_.empty() || r < 0 || r >= static_cast<int>(to_handle_.size()) ? r : to_handle_[r];
  }
  /// The program's rank of the handle's rank h (inverse of to_handle); others kept.
  int to_program(int h) const {
    return to_program_.empty() || h < 0 || h >= static_cast<int>(to_program_.size()) ? h : to_program_[h];
  }
  /// The current substitute (acquire load; the reference stays valid until the alias is freed).
  const Substitute &current() const { return *current_.load(std::memory_order_acquire); }
  /// Some rank of the alias has been removed by an agreed shrink.
  bool degraded() const { return !current().map.complete(); }
  /// Alias rank r is in the agreed survivors.
  bool member(int r) const { return current().map.to_sub(r) >= 0; }
  /// The detector on this rank knows alias rank r is dead.
  bool known_failed(int r) const;

  /// Collective over the survivors of `from` (which must be current()): shrinks it with repair::shrink
  /// and publishes the new substitute. Returns MPI_SUCCESS or the error of repair::shrink.
  int shrink(const Substitute &from, const char *call);

  /// Routes rc (an MPI error code from an operation on `on`) through the alias's error handler, unless
  /// the operation ran on the alias itself (MPI already called its handler). Returns rc.
  int return_error(int rc, const Substitute &on) const;

  /// Numbers the alias's collectives: 0 for the first run() on it, then 1, 2, ... (the same on every
  /// member, since they call the same collectives in the same order; serialised like them).
  unsigned long long next_call() { return calls_++; }
  /// The number next_call() will give (without taking it).
  unsigned long long peek_call() const { return calls_; }

  /// The same number on every member and different for every alias a member has made so far (FNV-1a of
  /// the members' MPI_COMM_WORLD ranks and how many aliases over those members this rank made before):
  /// names what belongs to this alias in a place all members share, such as a file's shared-pointer side file.
  std::uint64_t lineage() const { return lineage_; }

  /// Operations (OpAdapter) in progress on the alias, on any thread: while there are some, they take part
  /// in its repairs themselves, and a point-to-point wait must not join one (join_repairs).
  std::atomic<int> busy{0};

  /// The window of unconfirmed collectives (wrap/core/deferred.hpp), made at first use. Thread-safe.
  deferred::State &deferred_state();
  bool has_deferred_state() const { return has_deferred_.load(std::memory_order_acquire); }
  /// The window if it was made, else nullptr (never makes it). Thread-safe.
  const deferred::State *deferred_state_if_made() const {
    return has_deferred_.load(std::memory_order_acquire) ? deferred_.get() : nullptr;
  }

  /// Frees the substitutes that no abandoned request uses, except the alias itself (local call).
  /// Returns false when the alias handle itself has an abandoned request (then it must not be freed).
  bool release_substitutes();

 private:
  void set_lineage(const std::vector<int> &alias_to_world);

  MPI_Comm handle_;
  int rank_ = -1;
  std::vector<int> to_handle_, to_program_;  // empty unless the handle lacks holes
  std::uint64_t lineage_ = 0;
  unsigned long long calls_ = 0;
  std::atomic<const Substitute *> current_;
  std::mutex mu_;                                     // guards history_
  std::vector<std::unique_ptr<Substitute>> history_;  // every substitute ever published
  std::unique_ptr<deferred::State> deferred_;        // guarded by mu_ until has_deferred_
  std::atomic<bool> has_deferred_{false};
};

/// Calls f on every registered alias (f must not register or free aliases). Not safe against another
/// thread freeing an alias meanwhile: for the program's own thread.
void for_each_alias(const std::function<void(Alias &)> &f);
/// The same with the registry's lock held while f runs, so that no alias is freed meanwhile: for another
/// thread (the detector's). f must not block and must not look up, register or free aliases.
void for_each_alias_locked(FunctionRef<void(Alias &)> f);

/// Registers the world alias in the registry: register_world's part (wrap/core/driver.hpp).
void register_world_alias(const char *call);
/// The alias for comm, or nullptr when cohort did not create comm (then calls pass through to PMPI).
Alias *find_alias(MPI_Comm comm);
/// Registers comm, just created by cohort (dup/split of an alias's substitute); its world ranks are looked
/// up from MPI groups. Its first substitute is comm itself, or, with private_substitute (and always under
/// the ulfm backend), a communicator of cohort's over the same members (repair::shrink, collective over
/// comm's members; comm must be registered with repair): there cohort's own schedules and confirmations
/// may run (wrap/core/small_coll.hpp). Returns the new alias.
Alias *register_alias(MPI_Comm comm, bool private_substitute = false);
/// The same for a communicator with holes: comm holds the live ranks of alias_to_world (the program's
/// numbering, MPI_COMM_WORLD ranks), in that order; the others are holes (Alias's second constructor).
Alias *register_alias_with_holes(MPI_Comm comm, std::vector<int> alias_to_world, bool private_substitute);
/// Some alias with holes is registered (one relaxed load: the point-to-point wrappers' fast check).
bool any_alias_with_holes();
enum class Unregistered { unknown, free_handle, keep_handle };
/// Forgets comm (for MPI_Comm_free), freeing its unused substitutes. unknown: cohort did not create
/// comm (or it is MPI_COMM_WORLD); free_handle: the caller frees comm; keep_handle: an abandoned
/// request still uses comm, so the caller only sets the program's handle to MPI_COMM_NULL.
Unregistered unregister_alias(MPI_Comm comm);

/// Applies `policy` for a call whose needed rank is dead: abort (one line naming the call and `what`,
/// the job stops), skip (returns MPI_SUCCESS) or error (the alias's error handler with
/// an error code of class cohort_err_proc_failed(), returns that code). Every survivor must reach the same decision:
/// call it only on agreed information (membership of the substitute), never on the local detector view alone.
int apply_policy(const Alias &alias, Policy policy, const char *call, const char *what);

}  // namespace cohort::wrap
