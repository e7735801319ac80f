// The resilient-operation driver: the one retry/translate/agree loop behind every wrapped collective,
// and the alias -> substitute registry that point-to-point wrappers share.
//
// Sources: Legio (Rocco, Gadioli, Palermo 2021), sections 3-4: aliases and substitute communicators,
// shrinking semantics, the broadcast notification problem (P.3); OCFTL (section 4.5): blocking calls
// rebuilt on their nonblocking variants so that no call waits on a dead rank.
//
// How one call flows (run()):
//   1. The wrapper describes its call (CallDesc: name, data-movement class, root as an alias rank, the
//      policy when that root is dead) and gives a `post` function that posts the nonblocking variant on
//      a substitute, with the root already translated to substitute numbering.
//   2. run() takes the alias's current substitute. If the root is not a member (agreed dead), the
//      policy decides: abort, skip (MPI_SUCCESS) or error (through the alias's error handler).
//   3. Otherwise it posts, then polls the request together with the detector (wrap::wait): it returns
//      when the request completes or when a member of the substitute is known dead.
//   4. Confirmation. Fast path (no member known dead, not a communicator call): an MPI_Ibarrier on the
//      substitute, posted once the request completed; when it completes, every member completed the
//      call, and run() returns. Otherwise (a failure known before or during the barrier) every survivor
//      runs the fault-tolerant agreement (repair::agree) on the outcome: the AND of "my request
//      completed", with the call's number on the alias, since some survivors may have passed the
//      barrier and be one call ahead (wrap/core/outcome.hpp, window_code). So a collective either completes
//      everywhere or is retried by all (Legio's P.3); Legio agrees after every call instead.
//   5. All survivors at the same call: on 0 the request is abandoned (never freed: MPI may still use
//      it), the survivors shrink the substitute (repair::shrink, in alias rank order), the rank map is
//      updated and the call retried. On 1 with a non-empty agreed failed set: the call succeeded; the
//      substitute is shrunk right away so that the next call does not start on a broken one (but an
//      all-to-one call whose root is in that set lost its result with the root: the dead-root policy
//      decides). Others one call ahead: this call completed everywhere (the root too), shrink and
//      return. Others one call behind: theirs completed; shrink with them, then retry this call. A
//      survivor one call behind asks the others to join at once (repair::ask_to_join): one ahead that
//      waits in point-to-point meanwhile joins from there (join_repairs) instead of at its next collective.
//   With COHORT_CONFIRM_WINDOW > 1, a small blocking Barrier, Bcast, Reduce or Allreduce (CallDesc::defer)
//   returns before its barrier completed and every other call settles the pending ones first
//   (wrap/core/deferred.hpp); every agreement on the alias then carries counts of completed calls (use_counts).
//   6. The inject hook CallDesc::posted_hook (e.g. "bcast.posted") is reached once per call, after the
//      first attempt was posted, for COHORT_INJECT_FAILURE=rank=R,at=bcast.posted[,hit=k] tests.
//
// Communicator creation (dup, split) allocates a context id, which cannot be abandoned safely under
// Open MPI: see CallDesc::creates_communicator.
//
// Thread-safety: the registry is thread-safe. Collectives on one alias must be serialised by the
// program (as MPI requires); the substitute snapshot (Alias::current) may be read from any thread at
// any time, snapshots stay valid until the alias is freed.
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
#include <type_traits>
#include <utility>
#include <vector>

#include "wrap/calls.h"
#include "wrap/core/collective_op.hpp"
#include "wrap/core/function_ref.hpp"
#include "wrap/core/policy.hpp"
#include "wrap/core/progress.hpp"
#include "wrap/core/rankmap.hpp"
#include "wrap/core/small_coll.hpp"

namespace cohort::wrap {

namespace deferred {
struct State;
enum class Kind { barrier, bcast, reduce, allreduce };
/// What deferred confirmation (wrap/core/deferred.hpp) needs of a blocking Barrier, Bcast, Reduce or Allreduce.
struct Buffers {
  Kind kind = Kind::barrier;
  const void *input = nullptr;  ///< Reduce/Allreduce: sendbuf (may be MPI_IN_PLACE); Bcast: the buffer
  void *result = nullptr;       ///< Bcast: the buffer; Reduce: recvbuf (root); Allreduce: recvbuf
  int count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
};
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

/// Registers cohort::world() (MPI_COMM_WORLD, or cohort's communicator under the Sessions model) when
/// cohort starts (`call`: MPI_Init or MPI_Session_init; once, after repair::init; collective over it). Its
/// first substitute is a private communicator over world's survivors (repair::shrink), never world itself:
/// see the note in driver.cpp.
void register_world(const char *call);
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

/// What a wrapper tells the driver about its call.
struct CallDesc {
  const char *name;              ///< "MPI_Bcast": used in log lines and for COHORT_ON_DEAD_ROOT_<CALL>
  const char *posted_hook;  ///< inject point reached once per call, after the first post: "bcast.posted"; or null
  Shape shape;
  int root = -1;                 ///< alias rank of the root, -1 when the call has none
  Policy dead_root = Policy::abort;  ///< default policy when the root is dead (env may override)
  /// The call allocates a context id (communicator creation). Such a call must only start once every
  /// member is agreed alive (run a cheap resilient collective first): if a member dies during it, the
  /// job stops under Open MPI (see driver.cpp), MPICH retries after a shrink.
  bool creates_communicator = false;
  /// Only the root receives (all-to-one: Reduce, Gather): when the root is in the agreed failed set, the
  /// dead-root policy applies even if every survivor's request completed.
  bool output_at_root = false;
  /// A nonblocking collective (completion `nonblocking` in wrap/calls.def): the program's request handle,
  /// which the post function hands to wrap/core/nbc.hpp instead of running the call to the end. Else null.
  MPI_Request *request = nullptr;
  /// A blocking Barrier, Bcast, Reduce or Allreduce that may return before it is confirmed
  /// (COHORT_CONFIRM_WINDOW > 1, wrap/core/deferred.hpp): its buffers. Else null.
  const deferred::Buffers *defer = nullptr;
  /// Confirmed before it returns whatever COHORT_CONFIRM_WINDOW says: cohort's own composed calls (the
  /// stages of wrap/coll/hierarchy.hpp) read the call's outcome, and its repairs, as soon as it returns.
  bool confirm_now = false;
  /// A Barrier, Bcast, Reduce or Allreduce (blocking or not) that may run on cohort's own point-to-point
  /// schedule (wrap/core/small_coll.hpp) where small::eligible says so; its post function is then not called.
  /// Must live as long as the operation. Else null.
  const small::Call *small = nullptr;
  /// A blocking Barrier: its completion proves every member entered it, so it needs no confirmation
  /// (CollectiveOp::self_confirming) unless confirmation is deferred (COHORT_CONFIRM_WINDOW > 1).
  bool self_confirming = false;
};

/// The description of a wrapped call from its wrap/calls.def row; root is the call's root argument (alias
/// rank) or -1.
inline CallDesc describe(CallId id, int root = -1) {
  const CallInfo &c = info(id);
  CallDesc d{c.name, posted_hook(id), c.shape, c.rooted ? root : -1, c.dead_root};
  d.output_at_root = c.output_at_root;
  return d;
}

/// Posts the nonblocking variant on sub.comm; sub_root is the root in sub.comm's numbering (-1 without
/// root). Returns an MPI error code; on MPI_SUCCESS *req is the active request.
using PostFn = FunctionRef<int(const Substitute &sub, int sub_root, MPI_Request *req)>;

/// The MPI adapter of one CollectiveOp (wrap/core/collective_op.hpp): run() drives it to the end, a nonblocking
/// collective (wrap/core/nbc.hpp) steps it from the program's wait and test calls.
/// Not thread-safe: one thread steps an adapter at a time.
class OpAdapter {
 public:
  /// Takes the alias's next call number (Alias::next_call).
  OpAdapter(Alias &alias, const CallDesc &call);
  /// Runs as the alias's call number call_no (a retry or a replay of deferred confirmation).
  OpAdapter(Alias &alias, const CallDesc &call, unsigned long long call_no);
  ~OpAdapter();
  OpAdapter(const OpAdapter &) = delete;
  OpAdapter &operator=(const OpAdapter &) = delete;

  /// Does the operation's next action with `post`. wait: poll and poll_confirm wait until the request
  /// completes or a member is known dead (the blocking form); otherwise they test once. Returns false when
  /// nothing moved (a request still pending), true otherwise.
  bool step(PostFn post, bool wait);
  /// The action ahead (wrap/core/collective_op.hpp).
  OpAction next() const;
  /// 0 for the first attempt.
  int attempt() const { return op_.attempt(); }
  /// A request of this operation was abandoned: what its posts used must never be freed.
  bool abandoned() const { return abandoned_; }
  /// A revoke of the alias (MPIX_Comm_revoke by any member, ULFM 17.3.1) ends the operation: its waits
  /// end, the request is abandoned and the result is MPIX_ERR_REVOKED. Set by the program's own calls
  /// (blocking and nonblocking), not by cohort's joins. In ULFM mode (wrap/core/ulfm_mode.hpp, fixed when the
  /// adapter is made) this holds anyway, and a failure ends the operation with MPIX_ERR_PROC_FAILED where a
  /// transparent one agrees and retries.
  void end_on_revoke() { end_on_revoke_ = true; }
  /// Once next() is done: MPI_SUCCESS, the policy's result, or an MPI error code (already passed to the
  /// alias's error handler).
  int result();

 private:
  bool poll(bool wait);
  bool poll_confirm(bool wait);
  bool poll_small(small::Op &op, bool wait, WaitResult *out, int *rc);
  Watch watch_call() const;
  bool ended_by_ulfm();
  void abandon();

  Alias &alias_;
  CallDesc call_;
  CollectiveOp op_;
  const Substitute *sub_ = nullptr;
  int sub_root_ = -1;
  AgreementCode agreed_code_;
  MPI_Request req_ = MPI_REQUEST_NULL, confirm_ = MPI_REQUEST_NULL;
  // The call and its confirmation when they run on point-to-point schedules (wrap/core/small_coll.hpp) instead
  // of req_ and confirm_.
  std::unique_ptr<small::Op> small_op_, small_confirm_;
  bool small_error_ = false;      // the request's error came from a schedule
  bool self_confirming_ = false;  // CollectiveOp::self_confirming was set
  bool refused_ = false;  // MPI refused the post for a dead member (ULFM)
  bool abandoned_ = false;
  bool ulfm_ = false;  // the alias was in ULFM mode when the operation began
  bool end_on_revoke_ = false;
  std::vector<int> failed_;
};

/// Called by every OpAdapter on this process right before it agrees on `alias` (step 4), on the agreeing
/// thread; null (the default) for none. wrap/coll/hierarchy.cpp sets it: there a rank may have to take part in
/// another communicator's repair first (see the note in wrap/coll/hierarchy.cpp). Set once, at MPI_Init.
using BeforeAgree = void (*)(Alias &alias);
void set_before_agree(BeforeAgree hook);

/// Survivors one call apart (step 5): those one call behind ask the others to join their agreement at once
/// (repair::ask_to_join) rather than at their next collective on the alias. A survivor that waits in
/// point-to-point (Watch::join_repairs) calls this: for every alias with no operation in progress whose
/// current substitute has a member known dead and was asked to join, it runs the first steps of its next
/// call as that call would after finding the failure before its post (agree with its call number, shrink)
/// and stops there; its next collective then starts on the shrunk substitute. Not with
/// COHORT_CONFIRM_WINDOW > 1 (its recovery replays calls) nor in ULFM mode. Runs on the waiting thread.
void join_repairs();

/// Runs one collective resiliently on `alias` (the loop above). Returns MPI_SUCCESS, the policy's
/// result when the root is dead, or an MPI error code (already passed to the alias's error handler).
int run(Alias &alias, const CallDesc &call, PostFn post);

/// run() as the alias's call number call_no, confirmed before it returns, without settling windows.
int run_numbered(Alias &alias, const CallDesc &call, PostFn post, unsigned long long call_no);

/// Posts call number call_no on sub (the alias's current substitute; sub_root: the root's rank there, or -1):
/// on cohort's schedule where small::eligible allows (*op is set, tag small::tag(call_no, false)), else with
/// post (*req). Returns the post's MPI code; on an error *op, if set, may hold a started schedule.
int post_call(const Alias &alias, const CallDesc &call, const Substitute &sub, int sub_root,
              unsigned long long call_no, PostFn post, std::unique_ptr<small::Op> *op, MPI_Request *req);

/// MPI_Barrier among the survivors of alias (MPI_Comm_disconnect's).
int barrier(Alias &alias);
/// MPI_Finalize's survivors-only barrier on alias. In ULFM mode (wrap/core/ulfm_mode.hpp) a uniform agreement
/// of the survivors instead (the communicator may be revoked): no error handler sees a failure there.
int survivors_barrier(Alias &alias);

/// A private copy of `count` elements of `type` at buf (the whole true-extent span). Used for
/// - calls with MPI_IN_PLACE: an abandoned attempt may have overwritten the input, so every attempt
///   posts from the copy;
/// - positional receive buffers (Gather at the root, Allgather): an abandoned attempt may have written a
///   rank's slot before that rank was found dead; restore_block puts the original bytes back, so dead
///   ranks' slots stay untouched.
/// Uses a per-thread buffer unless given one: at most one such SavedInput per thread at a time.
class SavedInput {
 public:
  /// storage: where the copy is kept (the default: a per-thread buffer).
  SavedInput(const void *buf, int count, MPI_Datatype type, std::vector<char> *storage = nullptr);
  /// The copy, to be used with the same count and type.
  const void *data() const { return data_; }
  /// Copies back elements [first, first + count) of the saved span into buf (the buffer it was taken
  /// from), byte for byte over their true extent.
  void restore(void *buf, int first, int count) const;

 private:
  const char *data_;
  MPI_Aint extent_ = 0, true_lb_ = 0, true_extent_ = 0;
};

}  // namespace cohort::wrap
