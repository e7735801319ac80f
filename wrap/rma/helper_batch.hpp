// Batches: the window's MPI calls that may wait on a target, run on the helper thread
// (wrap/rma/helper_thread.hpp) as one guarded call per synchronisation.
//
// Every MPI call that may wait on a target runs on the helper thread, and a handoff to it
// costs more than a small put (4 µs at 2 ranks on 2 cores, ~70 µs at 4). So inside an epoch an RMA
// put or get on predefined datatypes is deferred to the epoch's next synchronisation, and the
// synchronisation runs the deferred operations, then a flush of each target sent operations since
// its last flush (w.dirty; other targets have nothing to complete), as one batch: one handoff per
// fence, unlock or flush. MPI allows it: an operation completes only at a synchronisation, and the
// program may not touch its buffers before (MPI_Win_flush_local is a synchronisation too, wrapped).
//
// Thread-safety: none; calls on one window follow MPI's rules (the helper thread runs one batch at a time).
#pragma once
#include <mpi.h>

#include <utility>
#include <vector>

#include "wrap/rma/window_registry.hpp"

namespace cohort::wrap::win {

// Runs `steps` in order on the helper thread, as one guarded call (one handoff for the whole batch,
// however many operations and flushes it holds). A step whose target is known dead when its turn comes
// is skipped; a step whose target dies while it runs is abandoned (the helper stays in MPI with it) and
// the steps after it run again on a new helper. The step abandoned is not run again: an operation might
// apply twice, and its target is dead. Returns the first error of a step that ran, else MPI_SUCCESS (at
// once, with no handoff, when there are no steps).
int run_steps(WinRecord &w, std::vector<WinStep> steps);

// A step for target (a program rank, alive, substitute rank sub) running call(sub, win).
template <typename F>
WinStep target_step(const WinRecord &w, int target, int sub, F call) {
  WinStep s;
  s.target = target;
  s.world = w.made_on->map.to_world(target);
  s.run = [call, sub](MPI_Win win) { return call(sub, win); };
  return s;
}

// A step that needs every member of w.win (MPI_Win_unlock_all, MPI_Win_free).
template <typename F>
WinStep member_step(F call) {
  WinStep s;
  s.every_member = true;
  s.run = [call](MPI_Win win) { return call(win); };
  return s;
}

// Takes w's deferred operations (the first steps of the next batch).
std::vector<WinStep> take_pending(WinRecord &w);

// Runs one synchronisation of w.win that needs target (a program rank; -1: every member), after the
// deferred operations.
template <typename F>
int sync_call(WinRecord &w, int target, F call) {
  std::vector<WinStep> steps = take_pending(w);
  if (target >= 0) {
    steps.push_back(target_step(w, target, w.made_on->map.to_sub(target),
                                [call](int, MPI_Win win) { return call(win); }));
  } else {
    steps.push_back(member_step(call));
  }
  return run_steps(w, std::move(steps));
}

// The deferred operations, then flush(substitute rank, win) of each live target this rank sent operations
// to since its last flush (w.dirty).
template <typename F>
std::vector<WinStep> pending_and_dirty_flushes(WinRecord &w, F flush) {
  std::vector<WinStep> steps = take_pending(w);
  for (int r : w.dirty) {
    int sub = sub_target(w, r);
    if (sub == kDeadTarget || sub == MPI_PROC_NULL) continue;
    steps.push_back(target_step(w, r, sub, flush));
  }
  return steps;
}

// The deferred operations, then a flush of each live target this rank sent operations to since its last
// flush (w.dirty), then `last` (if any): one batch. Afterwards this rank's operations are complete at
// every live target. NOTE: a target without operations is not flushed: MPI's flush would return at once
// there, and it is one handoff less per target.
int complete_epoch(WinRecord &w, WinStep *last = nullptr);

// MPI_Win_flush or MPI_Win_flush_local of rank (a program rank): the deferred operations, then
// flush(substitute rank, win), one batch; `remote`: a remote completion (rank is then clean).
// NOTE: without a deferred operation, nor one sent to rank since its last flush, MPI's flush would
// return at once: no handoff to the helper.
template <typename F>
int flush_target(WinRecord &w, int rank, bool remote, F flush) {
  if (w.pending.empty() && w.dirty.count(rank) == 0) return MPI_SUCCESS;
  int sub = sub_target(w, rank);
  if (sub == kDeadTarget || sub == MPI_PROC_NULL) return run_steps(w, take_pending(w));
  if (remote) w.dirty.erase(rank);
  return sync_call(w, rank, [flush, sub](MPI_Win s) { return flush(sub, s); });
}

// Ends cohort's fence epoch on w.win (all operations flushed already).
int close_fence_epoch(WinRecord &w);

}  // namespace cohort::wrap::win
