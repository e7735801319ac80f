// A blocking MPI call that may wait on a rank that dies meanwhile, made abandonable: the call runs on a
// helper thread while the calling thread polls the failure detector (wrap/core/progress.hpp, wait_until).
//
// Why: MPI has no nonblocking MPI_Win_flush, MPI_Win_unlock or MPI_Win_free. Measured here (Open MPI
// 4.1.4 osc/pt2pt and osc/rdma over MPI_Win_create, MPICH 4.0.2 ch4:ucx): a lock, flush or unlock whose
// target is dead never returns in either MPI, and neither does an MPI_Win_fence with a dead member. A
// call whose target dies while it waits is left to its helper thread, which stays blocked inside MPI for
// good (it is never joined; the process exits past it, as MPI_Finalize does after failures), and the next
// guarded call starts a new helper.
//
// Thread-safety: guarded calls are serialised (one helper thread runs one call at a time).
#pragma once
#include <functional>

namespace cohort::wrap::win {

/// Runs call() on the helper thread and waits for it, polling `dead` (evaluated at the start and each time
/// the detector's failure epoch changes). Returns call()'s result, or sets *abandoned (true) and returns
/// MPI_SUCCESS when `dead` became true first: call() may then never return, and everything it uses (the
/// window) must be left to it. `stalled` (if given) is evaluated at every poll, for a condition that time
/// alone makes true; it abandons the call as `dead` does.
int guarded(const std::function<bool()> &dead, const std::function<int()> &call, bool *abandoned,
            const std::function<bool()> *stalled = nullptr);

}  // namespace cohort::wrap::win
