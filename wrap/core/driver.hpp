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
// The parts: the aliases and their registry (wrap/core/alias.hpp), the call's description
// (wrap/core/call_desc.hpp), one attempt's adapter (wrap/core/op_adapter.hpp); this header gathers them
// for the wrappers of every chapter.
#pragma once
#include <mpi.h>

#include <vector>

#include "wrap/calls.h"
#include "wrap/core/alias.hpp"
#include "wrap/core/call_desc.hpp"
#include "wrap/core/confirm_state.hpp"
#include "wrap/core/op_adapter.hpp"

namespace cohort::wrap {

/// Registers cohort::world() (MPI_COMM_WORLD, or cohort's communicator under the Sessions model) when
/// cohort starts (`call`: MPI_Init or MPI_Session_init; once, after repair::init; collective over it). Its
/// first substitute is a private communicator over world's survivors (repair::shrink), never world itself:
/// see the note in alias.cpp.
/// It also installs join_repairs as the waits' join hook.
void register_world(const char *call);

/// Runs one collective resiliently on `alias` (the loop above). Returns MPI_SUCCESS, the policy's
/// result when the root is dead, or an MPI error code (already passed to the alias's error handler).
int run(Alias &alias, const CallDesc &call, PostFn post);

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
