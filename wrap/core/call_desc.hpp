// What a wrapper tells the driver about its call (CallDesc) and how it posts the call on a substitute (PostFn).
#pragma once
#include <mpi.h>

#include "wrap/calls.h"
#include "wrap/core/alias.hpp"
#include "wrap/core/function_ref.hpp"
#include "wrap/core/policy.hpp"

namespace cohort::wrap {

namespace deferred {
struct Buffers;
}  // namespace deferred
namespace small {
struct Call;
}  // namespace small

/// What a wrapper tells the driver about its call.
struct CallDesc {
  const char *name;              ///< "MPI_Bcast": used in log lines and for COHORT_ON_DEAD_ROOT_<CALL>
  const char *posted_hook;  ///< inject point reached once per call, after the first post: "bcast.posted"; or null
  Shape shape;
  int root = -1;                 ///< alias rank of the root, -1 when the call has none
  Policy dead_root = Policy::abort;  ///< default policy when the root is dead (env may override)
  /// The call allocates a context id (communicator creation). Such a call must only start once every
  /// member is agreed alive (run a cheap resilient collective first): if a member dies during it, the
  /// job stops under Open MPI (see op_adapter.cpp), MPICH retries after a shrink.
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

}  // namespace cohort::wrap
