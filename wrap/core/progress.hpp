// The one poll loop of cohort's wrappers: a request is polled together with the failure detector, so no
// wrapped call ever waits on a dead rank (OCFTL section 4.5: blocking calls rebuilt on nonblocking ones).
#pragma once
#include <mpi.h>

#include <atomic>
#include <functional>

#include "wrap/core/function_ref.hpp"

namespace cohort::wrap {

/// What the loop watches besides the request.
struct Watch {
  /// True when the operation can no longer complete because a rank it needs is dead. Evaluated once at
  /// the start and again each time the detector's failure epoch changes (not on every poll); the wait
  /// ends broken once it is true and failure_grace_over().
  std::function<bool()> broken;
  /// If not MPI_COMM_NULL, a revoke of this communicator (repair::is_revoked) also ends the wait.
  MPI_Comm revocable = MPI_COMM_NULL;
  /// With revocable: look for the revoke only once this rank received some revoke notice
  /// (repair::revoke_seen), for a communicator not in ULFM mode, whose waits must stay as cheap as before.
  bool revoke_lazily = false;
  /// A point-to-point wait (outside any collective): once a failure is known, it also runs the join hook
  /// (set_join_hook), so that a survivor one call ahead takes part in the repair that others one call
  /// behind wait for (repair::asked_to_join) instead of waiting on them for good.
  bool join_repairs = false;
};

/// The grace after a failure (ms of this process's polling since it first saw the detector's newest
/// failure epoch) during which an operation that needs a dead rank is still polled rather than declared
/// broken: what the rank sent before it died (e.g. its last messages of a barrier that it completed) may
/// still be on its way through MPI's progress. Without it, a survivor that learned of the death within
/// milliseconds (pidfd) could find a barrier broken that the dead rank and other survivors completed.
constexpr int kFailureGraceMs = 20;

/// True once kFailureGraceMs have passed since this process first asked about the current failure epoch
/// (the first call for a new epoch starts the grace and returns false). Thread-safe.
bool failure_grace_over();

/// Called on every poll of every wait loop below (any thread); null (the default) for none. wrap/coll/hierarchy.cpp
/// sets it: a rank waiting on one of its communicators may have to take part in another one's repair
/// meanwhile (see the note there). Set once, at MPI_Init.
using WaitHook = void (*)();
void set_wait_hook(WaitHook hook);
/// Called now and then (every 64th poll) by waits with Watch::join_repairs once a failure is known; null
/// (the default) for none. register_world (wrap/core/driver.hpp) sets it to join_repairs. Set once, at MPI_Init.
void set_join_hook(WaitHook hook);
/// Operations in flight that every wait drives on each poll, before its own test: the nonblocking
/// collectives (wrap/core/nbc.hpp keeps the count and installs the function that advances them). So a
/// program blocked in any call keeps taking part in their confirmations and agreements.
extern std::atomic<int> g_ops_in_flight;
void set_in_flight_driver(WaitHook drive);

/// While it lives, every wait loop of this thread (wait, wait_all, wait_until) also calls fn once per poll:
/// a window fence's exchange advances its messages while the fence's confirmation waits (wrap/rma/fence.cpp). An
/// empty fn does nothing. Nested hooks: the inner one replaces the outer until it ends. Not thread-safe
/// across threads by design (a thread-local).
class ThreadPollHook {
 public:
  explicit ThreadPollHook(std::function<void()> fn);
  ~ThreadPollHook();
  ThreadPollHook(const ThreadPollHook &) = delete;
  ThreadPollHook &operator=(const ThreadPollHook &) = delete;

 private:
  std::function<void()> fn_;
  const std::function<void()> *prev_;
};

/// failed: MPI's test returned an error code (the request completed in error); wait and wait_all store
/// it in *error.
enum class WaitResult { completed, broken, revoked, failed };

/// Polls *req (PMPI_Test) until it completes (returns completed, *req is MPI_REQUEST_NULL, *status is
/// filled if not MPI_STATUS_IGNORE) or the watch fires (returns broken or revoked; *req is left active:
/// the caller cancels it, frees it, or abandons it). Spins for 20 µs, then calls sched_yield every 8th
/// poll up to 1 ms, then sleeps 50 µs between polls, so that the detector thread keeps running on
/// oversubscribed cores. Handles EINTR.
/// When PMPI_Test returns an error code, returns failed and stores the code in *error (if not null): the
/// caller passes it to the program's error handler (never swallows it).
/// Thread-safe for distinct requests.
WaitResult wait(MPI_Request *req, MPI_Status *status, const Watch &watch, int *error = nullptr);

/// Like wait, over several requests: returns completed when all completed, failed (the code of
/// PMPI_Testall, e.g. MPI_ERR_IN_STATUS, in *error) when MPI reports an error.
WaitResult wait_all(int count, MPI_Request *reqs, MPI_Status *statuses, const Watch &watch, int *error = nullptr);

/// Passes rc, an error that wait or wait_all returned for a collective's request on a substitute, to
/// the error handler of the program's communicator `alias`, once; returns rc.
/// NOTE: Open MPI 4.1 raises the error of a failed nonblocking collective on MPI_COMM_WORLD's handler
/// inside MPI_Test itself (its libnbc requests name no communicator): for the alias MPI_COMM_WORLD the
/// handler has run already, and for another alias Open MPI has also called world's. Open MPI 5 does not.
int raise_test_error(MPI_Comm alias, int rc);

/// The same for an error of a point-to-point request of cohort's (a schedule of wrap/core/small_coll.hpp).
/// NOTE: MPICH 4.0 raises the error of MPI_Test on a point-to-point request on MPI_COMM_WORLD's handler,
/// whatever the request's communicator: for the alias MPI_COMM_WORLD the handler has run already (for
/// another alias MPICH has also called world's). Open MPI raises it on the request's communicator (a
/// substitute, MPI_ERRORS_RETURN).
int raise_p2p_test_error(MPI_Comm alias, int rc);

/// The same loop for a completion that is not one request, or that needs MPI's return code: polls
/// done() (e.g. a PMPI_Iprobe, PMPI_Testany, or a PMPI_Test that keeps its return code) until it returns
/// true (returns completed) or the watch fires.
WaitResult wait_until(FunctionRef<bool()> done, const Watch &watch);

}  // namespace cohort::wrap
