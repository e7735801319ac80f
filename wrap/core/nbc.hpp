// Nonblocking collectives (MPI_Ibarrier, MPI_Iallreduce, ...): the request the program holds is an MPI
// generalized request (MPI_Grequest_start) that cohort completes once the collective's CollectiveOp
// (wrap/core/collective_op.hpp, through OpAdapter in wrap/core/driver.hpp) is done: the same outcome as the blocking
// call, on every survivor (completed everywhere, or retried by all after a shrink). The same table also
// drives *local* operations (start_local): nonblocking calls with no confirmation, such as the nonblocking
// neighbourhood collectives (wrap/topo/process_topology.cpp), each a step function run on every pass.
//
// Who drives an operation: every wait and test call. The one poll loop (wrap/core/progress.cpp) calls progress()
// while operations are in flight, so MPI_Wait, MPI_Waitall (also mixed with point-to-point requests),
// MPI_Waitany, MPI_Waitsome and every blocking wrapper drive them; MPI_Test, MPI_Testall, MPI_Testany and
// MPI_Testsome call progress() once; a blocking collective on an alias first finishes that alias's
// operations (finish_all), as MPI orders collectives on a communicator.
//
// Order: the program starts collectives on a communicator in the same order on every rank, so the alias's
// call number (Alias::next_call) names an operation uniformly. Only the oldest unfinished operation of an
// alias (its *turn*) moves: it posts, tests, confirms, agrees or shrinks; the next one is posted once it
// is done. So every survivor posts an alias's operations and their confirmation barriers in the same order
// on the same substitute, and runs their agreements in start order. (Several in flight on one alias thus
// progress one after the other; each still overlaps the program's computation and point-to-point.)
//
// Buffers: the program's buffers belong to the operation until its request completes (as MPI says). What
// the posts give MPI (saved inputs, positional layouts) is owned by the operation, one PostScratch per
// attempt; if a request was ever abandoned, all of it is leaked, never freed, as MPI may still read it.
//
// MPI_Request_free on such a request: the operation goes on (the survivors still need this rank in its
// confirmation or agreement) and its generalized request is freed when it is done.
//
// Thread-safety: all functions are thread-safe; one thread at a time drives the operations (others return
// from progress() at once), and a thread already inside progress() (a nested poll) does not re-enter it.
#pragma once
#include <mpi.h>

#include <atomic>
#include <functional>
#include <memory>

#include "wrap/core/alias.hpp"
#include "wrap/core/call_desc.hpp"
#include "wrap/core/op_adapter.hpp"
#include "wrap/core/progress.hpp"

namespace cohort::wrap::nbc {

/// What a post function keeps alive for a nonblocking collective's posts (owned by the operation).
struct OpState {
  virtual ~OpState() = default;
  /// Called once, when the operation is done, with the collective's outcome in *rc (an MPI code): may
  /// replace it (an error of this rank's own part of the call) and set *bytes, the count of MPI_BYTE that the
  /// request's status reports (0 unless set).
  virtual void finish(int *rc, MPI_Count *bytes) {
    (void)rc;
    (void)bytes;
  }
};

/// Posts one attempt on a substitute (as PostFn), owning what it captures.
using OwnedPostFn = std::function<int(const Substitute &sub, int sub_root, MPI_Request *req)>;

/// Starts the nonblocking collective `call` on alias (call.request: where the program's request goes):
/// posts it (if no earlier one of the alias is unfinished) and returns
/// MPI_SUCCESS with *call.request set, or an MPI error code (MPI_Grequest_start failed). state: what post
/// captures by reference; kept until the operation is done.
int start(Alias &alias, const CallDesc &call, std::unique_ptr<OpState> state, OwnedPostFn post);

/// A nonblocking operation that needs no confirmation or agreement (point-to-point messages of its own, as a
/// neighbourhood collective's): step(&rc) advances it without waiting and returns true once it is done, with
/// its MPI code in rc. No turn: it moves on every pass, beside the collectives of any alias.
using LocalStep = std::function<bool(int *rc)>;

/// Starts a local operation: *request becomes its generalized request, completed through the same wait and test
/// calls as the collectives'. Returns MPI_SUCCESS, or MPI_Grequest_start's error code.
int start_local(LocalStep step, MPI_Request *request);

/// Operations not yet done (any alias). One relaxed load: the per-call check of the wait/test wrappers.
inline bool any_in_flight() { return g_ops_in_flight.load(std::memory_order_relaxed) != 0; }

/// Advances every operation as far as it goes without waiting (in order on each alias; agreements and
/// shrinks, which are collective, run to their end). Returns at once when another thread is driving them or
/// when called from inside progress() itself.
void progress();

/// Drives every operation on alias to its end (waiting): before a blocking collective on alias.
void finish_all(Alias &alias);

/// For MPI_Wait on *req: when *req is a nonblocking collective's request, drives operations until it is
/// done, so that the caller's PMPI_Wait returns at once. Returns false (nothing done) for other requests.
bool drive_until_done(MPI_Request req);

/// For MPI_Request_free: when *req is a nonblocking collective's request, the operation goes on and its
/// request is freed when it is done; *req becomes MPI_REQUEST_NULL and true is returned. Else false.
bool release(MPI_Request *req);

/// Operations not yet done; for tests and leak checks.
int in_flight();

}  // namespace cohort::wrap::nbc
