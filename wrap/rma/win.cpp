// One-sided communication that survives failures (Legio, Rocco et al. 2021, sections 3.7 and
// 4.2.6: windows as aliases of substitutes).
//
// The plan, built around what hangs on these MPIs (wrap/rma/helper_thread.hpp): any RMA synchronisation whose
// target is dead, and MPI_Win_fence or MPI_Win_free with a dead member.
//   - The program's MPI_Win is the first window cohort made (the alias), with a record of its memory and of
//     the substitute window where RMA goes (wrap/rma/window_registry.hpp).
//   - Creation is collective over the survivors: MPI_Win_create on the current substitute communicator, on a
//     thread of its own whose completion the driver polls and confirms like a collective's request
//     (wrap/rma/fence.hpp, create_window): a member that dies during it never holds the survivors there.
//     MPI_Win_free: a confirmation through the driver first, then MPI's call. A window with a dead member
//     is never freed (MPI_Win_free would wait on it): it is left to MPI, like an abandoned request.
//   - RMA calls go to the substitute window with the target's substitute rank. To a dead target nothing
//     is posted: the point-to-point policy applies (COHORT_ON_DEAD_PEER_SEND, default skip, for Put,
//     Rput, Accumulate; COHORT_ON_DEAD_PEER_RECV, default abort, for the calls that return data).
//   - Fence epochs travel as two-sided messages (wrap/rma/fence_exchange.hpp); the window is made again over
//     the survivors at a fence (wrap/rma/fence.hpp).
//   - Lock, unlock, flush and MPI_Win_lock_all/unlock_all: MPI's calls, each abandonable
//     (win::guarded); to a dead target they do nothing. MPI_Win_lock_all is taken with MPI_MODE_NOCHECK.
//   - Every MPI call that may wait on a target runs on the helper thread, in one batch per synchronisation
//     (wrap/rma/helper_batch.hpp).
//   - MPI_Rput and MPI_Rget complete before they return (the operation, then a guarded flush of its
//     target), with an already completed generalized request: a wait on it never waits on a dead rank.
//
// Thread-safety: the registry is thread-safe; calls on one window follow MPI's rules.
#include <mpi.h>

#include <initializer_list>
#include <memory>
#include <vector>

#include "detector/inject.hpp"
#include "wrap/calls.h"
#include "wrap/rma/fence.hpp"
#include "wrap/rma/fence_exchange.hpp"
#include "wrap/rma/helper_batch.hpp"
#include "wrap/rma/rma_log.hpp"
#include "wrap/rma/window_registry.hpp"

namespace cohort::wrap::win {
namespace {

// Creation (MPI_Win_create and MPI_Win_allocate): collective over the survivors of comm.
int create(Alias &a, CallId id, void *base, MPI_Aint size, int disp_unit, MPI_Info info, bool owns, MPI_Win *out) {
  auto w = std::make_unique<WinRecord>();
  w->alias = &a;
  w->base = base;
  w->size = size;
  w->disp_unit = disp_unit;
  w->owns_memory = owns;
  if (info != MPI_INFO_NULL) PMPI_Info_dup(info, &w->info);
  int rc = create_window(*w, id);
  if (rc != MPI_SUCCESS) {
    if (w->info != MPI_INFO_NULL) PMPI_Info_free(&w->info);
    if (owns) PMPI_Free_mem(base);
    *out = MPI_WIN_NULL;
    return rc;
  }
  *out = w->handle;
  add_window(std::move(w));
  return MPI_SUCCESS;
}

// Looks up the program's window; for the RMA entry points below.
#define COHORT_WIN_OR_PASS(passthrough) \
  WinRecord *w = find_win(win);         \
  if (w == nullptr) return passthrough;

// True when every datatype given is predefined: an operation on them may be deferred (a derived datatype
// may be freed by the program before the synchronisation that would issue it).
bool predefined(std::initializer_list<MPI_Datatype> types) {
  for (MPI_Datatype t : types) {
    int ints = 0, addrs = 0, dts = 0, combiner = 0;
    if (PMPI_Type_get_envelope(t, &ints, &addrs, &dts, &combiner) != MPI_SUCCESS || combiner != MPI_COMBINER_NAMED)
      return false;
  }
  return true;
}

bool accumulate_family(CallId id) {
  return id == CallId::MPI_Accumulate || id == CallId::MPI_Get_accumulate || id == CallId::MPI_Fetch_and_op ||
         id == CallId::MPI_Compare_and_swap || id == CallId::MPI_Raccumulate || id == CallId::MPI_Rget_accumulate;
}

// An RMA call to target: to a dead one the policy; otherwise `post` with the substitute rank.
// Inside an epoch that covers target, a put or get on predefined datatypes (`deferrable`) is deferred: it is issued by
// the helper thread at the epoch's next synchronisation (fence, flush, unlock), in the same batch as that
// synchronisation, as MPI allows (an operation completes only at a synchronisation, and the program may
// not touch its buffers before). So a put and its fence cost one handoff to the helper, not one each.
// Otherwise the call is issued now, after the deferred operations (accumulates keep their order).
// NOTE: issued on the helper thread either way: Open MPI's osc/rdma emulates atomics over the
// shared-memory BTL with a message that the target must answer, so MPI_Accumulate to a target that has
// just died waits inside the call. For the same reason the accumulate family is never deferred: issued
// at the fence, where deaths cluster (a rank dies in its fence), an accumulate waiting inside MPI on a
// target that died there wedged Open MPI 4.1's progress for the issuer's later flushes to live targets
// (3 of 30 runs of win.fault.fence.before_then_during hung; 2 of 30 issued at the call, 1 of 30 before
// batching; the rate follows the load, see README, Windows).
// post must capture by value (it may outlive the call: win::guarded).
template <typename F>
int rma(WinRecord &w, MPI_Win handle, CallId id, bool send, int target, bool deferrable, F post) {
  int sub = sub_target(w, target);
  if (sub == kDeadTarget) return dead_target(w, handle, send, info(id).name, target);
  if (sub == MPI_PROC_NULL) return post(sub, w.win);
  bool in_epoch = w.fence_open || w.lock_all || w.locked.count(target) != 0;
  WinStep step = target_step(w, target, sub, post);
  step.call = info(id).name;
  step.returns_data = !send;
  step.lock_wait = accumulate_family(id);
  w.dirty.insert(target);
  int rc = MPI_SUCCESS;
  if (deferrable && in_epoch) {
    w.pending.push_back(std::move(step));
  } else {
    std::vector<WinStep> steps = take_pending(w);
    steps.push_back(std::move(step));
    rc = run_steps(w, std::move(steps));
  }
  cohort::inject::point(posted_hook(id));
  return rc;
}

// A completed generalized request, for MPI_Rput/MPI_Rget, which complete before they return.
int completed_request(MPI_Request *request) {
  int rc = start_request(request);
  return rc != MPI_SUCCESS ? rc : PMPI_Grequest_complete(*request);
}

// A request-based call: the deferred operations, the operation and a flush of its target, one batch
// (local completion for a put, the data for a get).
template <typename F>
int rma_now(WinRecord &w, MPI_Win handle, CallId id, bool send, int target, MPI_Request *request, F post) {
  int rc = rma(w, handle, id, send, target, false, [post](int sub, MPI_Win win) {
    int r = post(sub, win);
    return r != MPI_SUCCESS || sub == MPI_PROC_NULL ? r : PMPI_Win_flush(sub, win);
  });
  if (rc != MPI_SUCCESS) {
    *request = MPI_REQUEST_NULL;
    return rc;
  }
  return completed_request(request);
}

}  // namespace
}  // namespace cohort::wrap::win

using namespace cohort::wrap;
using namespace cohort::wrap::win;

extern "C" int __wrap_MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win) {
  count_call(CallId::MPI_Win_create);
  Alias *a = find_alias(comm);
  if (a == nullptr) return PMPI_Win_create(base, size, disp_unit, info, comm, win);
  return create(*a, CallId::MPI_Win_create, base, size, disp_unit, info, false, win);
}

extern "C" int __wrap_MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win) {
  count_call(CallId::MPI_Win_allocate);
  Alias *a = find_alias(comm);
  if (a == nullptr) return PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win);
  void *base = nullptr;
  int rc = PMPI_Alloc_mem(size > 0 ? size : 1, MPI_INFO_NULL, &base);
  if (rc != MPI_SUCCESS) return rc;
  rc = create(*a, CallId::MPI_Win_allocate, base, size, disp_unit, info, true, win);
  if (rc == MPI_SUCCESS) *static_cast<void **>(baseptr) = base;
  return rc;
}

extern "C" int __wrap_MPI_Win_free(MPI_Win *win) {
  count_call(CallId::MPI_Win_free);
  WinRecord *w = win != nullptr ? find_win(*win) : nullptr;
  if (w == nullptr) return PMPI_Win_free(win);
  int rc = MPI_SUCCESS;
  if (w->fence_open || w->lock_all) rc = complete_epoch(*w);
  if (rc == MPI_SUCCESS) rc = close_fence_epoch(*w);
  int confirmed = confirm(*w, CallId::MPI_Win_free);
  // NOTE: only a window whose members all live is freed (MPI_Win_free synchronises with each member): the
  // current one when no shrink was agreed since it was made (the program's own only if never recreated;
  // a member that died since, not yet agreed, makes the free abandoned, as any synchronisation).
  // Windows replaced by a recreation had a dead member; they keep the memory, which is then not freed.
  bool whole = confirmed == MPI_SUCCESS && &w->alias->current() == w->made_on && !w->left_to_mpi;
  if (whole) {
    rc = sync_call(*w, -1, [](MPI_Win sub) { return PMPI_Win_free(&sub); });
    whole = !w->left_to_mpi;
  }
  if (whole && !w->xabandoned && w->xcomm != MPI_COMM_NULL) PMPI_Comm_free(&w->xcomm);
  if (whole && w->owns_memory && w->retired.empty()) PMPI_Free_mem(w->base);
  if (w->info != MPI_INFO_NULL) PMPI_Info_free(&w->info);
  remove_window(*win);
  *win = MPI_WIN_NULL;
  return rc != MPI_SUCCESS ? rc : confirmed;
}

extern "C" int __wrap_MPI_Win_fence(int assert, MPI_Win win) {
  count_call(CallId::MPI_Win_fence);
  COHORT_WIN_OR_PASS(PMPI_Win_fence(assert, win))
  return fence(*w, win, assert);
}

extern "C" int __wrap_MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win) {
  count_call(CallId::MPI_Win_lock);
  COHORT_WIN_OR_PASS(PMPI_Win_lock(lock_type, rank, assert, win))
  int rc = close_fence_epoch(*w);
  int sub = sub_target(*w, rank);
  if (rc != MPI_SUCCESS || sub == kDeadTarget || rank == MPI_PROC_NULL) return rc;  // dead: the policy at each operation
  rc = sync_call(*w, rank, [lock_type, sub, assert](MPI_Win s) { return PMPI_Win_lock(lock_type, sub, assert, s); });
  if (rc == MPI_SUCCESS) w->locked.insert(rank);
  return rc;
}

extern "C" int __wrap_MPI_Win_unlock(int rank, MPI_Win win) {
  count_call(CallId::MPI_Win_unlock);
  COHORT_WIN_OR_PASS(PMPI_Win_unlock(rank, win))
  if (w->locked.erase(rank) == 0) return MPI_SUCCESS;  // a dead target's lock was never taken
  int sub = w->made_on->map.to_sub(rank);
  w->dirty.erase(rank);
  int rc = sync_call(*w, rank, [sub](MPI_Win s) { return PMPI_Win_unlock(sub, s); });
  cohort::inject::point(posted_hook(CallId::MPI_Win_unlock));  // between epochs: this rank holds no lock
  return rc;
}

extern "C" int __wrap_MPI_Win_lock_all(int assert, MPI_Win win) {
  count_call(CallId::MPI_Win_lock_all);
  COHORT_WIN_OR_PASS(PMPI_Win_lock_all(assert, win))
  int rc = close_fence_epoch(*w);
  if (rc != MPI_SUCCESS) return rc;
  // NOTE: without NOCHECK MPI may ask each target for its lock, a dead one included.
  rc = PMPI_Win_lock_all(assert | MPI_MODE_NOCHECK, w->win);
  w->lock_all = rc == MPI_SUCCESS;
  return rc;
}

extern "C" int __wrap_MPI_Win_unlock_all(MPI_Win win) {
  count_call(CallId::MPI_Win_unlock_all);
  COHORT_WIN_OR_PASS(PMPI_Win_unlock_all(win))
  if (!w->lock_all) return PMPI_Win_unlock_all(w->win);  // MPI's error for an epoch never opened
  // One batch: the deferred operations, a flush of each live target sent operations, the unlock.
  WinStep unlock = member_step([](MPI_Win s) { return PMPI_Win_unlock_all(s); });
  int rc = complete_epoch(*w, &unlock);
  w->lock_all = false;
  cohort::inject::point(posted_hook(CallId::MPI_Win_unlock_all));
  return rc;
}

extern "C" int __wrap_MPI_Win_flush(int rank, MPI_Win win) {
  count_call(CallId::MPI_Win_flush);
  COHORT_WIN_OR_PASS(PMPI_Win_flush(rank, win))
  return flush_target(*w, rank, true, [](int sub, MPI_Win s) { return PMPI_Win_flush(sub, s); });
}

extern "C" int __wrap_MPI_Win_flush_all(MPI_Win win) {
  count_call(CallId::MPI_Win_flush_all);
  COHORT_WIN_OR_PASS(PMPI_Win_flush_all(win))
  return complete_epoch(*w);
}

extern "C" int __wrap_MPI_Win_flush_local(int rank, MPI_Win win) {
  count_call(CallId::MPI_Win_flush_local);
  COHORT_WIN_OR_PASS(PMPI_Win_flush_local(rank, win))
  return flush_target(*w, rank, false, [](int sub, MPI_Win s) { return PMPI_Win_flush_local(sub, s); });
}

extern "C" int __wrap_MPI_Win_flush_local_all(MPI_Win win) {
  count_call(CallId::MPI_Win_flush_local_all);
  COHORT_WIN_OR_PASS(PMPI_Win_flush_local_all(win))
  return run_steps(*w, pending_and_dirty_flushes(*w, [](int s, MPI_Win x) { return PMPI_Win_flush_local(s, x); }));
}

extern "C" int __wrap_MPI_Win_get_group(MPI_Win win, MPI_Group *group) {
  count_call(CallId::MPI_Win_get_group);
  COHORT_WIN_OR_PASS(PMPI_Win_get_group(win, group))
  return PMPI_Comm_group(w->alias->handle(), group);  // dead ranks included, like the communicator's size
}

extern "C" int __wrap_MPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
  count_call(CallId::MPI_Put);
  COHORT_WIN_OR_PASS(PMPI_Put(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                              target_datatype, win))
  if (exchanged(*w)) {
    int ot = xtype(origin_datatype), tt = xtype(target_datatype);
    std::size_t bytes = static_cast<std::size_t>(origin_count) * xsize(ot);
    if (ot >= 0 && tt >= 0 && origin_count >= 0 && target_count >= 0 &&
        bytes == static_cast<std::size_t>(target_count) * xsize(tt))
      return bytes >= kBulkBytes ? log_bulk_put(*w, win, target_rank, tt, target_count, target_disp, origin_addr, bytes)
                                 : log_op(*w, win, CallId::MPI_Put, true, target_rank, rma_log::Kind::put, tt, 0,
                                          target_count, target_disp, origin_addr, bytes, nullptr, 0, nullptr, 0);
  }
  int rc = rma(*w, win, CallId::MPI_Put, true, target_rank, predefined({origin_datatype, target_datatype}), [=](int sub, MPI_Win s) {
    return PMPI_Put(origin_addr, origin_count, origin_datatype, sub, target_disp, target_count, target_datatype, s);
  });
  return rc;
}

extern "C" int __wrap_MPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
  count_call(CallId::MPI_Get);
  COHORT_WIN_OR_PASS(PMPI_Get(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                              target_datatype, win))
  if (exchanged(*w)) {
    int ot = xtype(origin_datatype), tt = xtype(target_datatype);
    std::size_t bytes = static_cast<std::size_t>(origin_count) * xsize(ot);
    if (ot >= 0 && tt >= 0 && origin_count >= 0 && target_count >= 0 &&
        bytes == static_cast<std::size_t>(target_count) * xsize(tt))
      return log_op(*w, win, CallId::MPI_Get, false, target_rank, rma_log::Kind::get, tt, 0, target_count, target_disp,
                    nullptr, 0, nullptr, 0, origin_addr, bytes);
  }
  return rma(*w, win, CallId::MPI_Get, false, target_rank, predefined({origin_datatype, target_datatype}), [=](int sub, MPI_Win s) {
    return PMPI_Get(origin_addr, origin_count, origin_datatype, sub, target_disp, target_count, target_datatype, s);
  });
}

extern "C" int __wrap_MPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                                     int target_rank, MPI_Aint target_disp, int target_count,
                                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  count_call(CallId::MPI_Accumulate);
  COHORT_WIN_OR_PASS(PMPI_Accumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                                     target_count, target_datatype, op, win))
  if (exchanged(*w)) {
    int tt = xtype(target_datatype), code = xop(op);
    bool none = code == rma_log::kOpNoOp;
    if (tt >= 0 && code >= 0 && target_count >= 0 && (none || (origin_datatype == target_datatype && origin_count == target_count))) {
      std::size_t bytes = none ? 0 : static_cast<std::size_t>(target_count) * xsize(tt);
      return log_op(*w, win, CallId::MPI_Accumulate, true, target_rank, rma_log::Kind::accumulate, tt, code, target_count,
                    target_disp, origin_addr, bytes, nullptr, 0, nullptr, 0);
    }
  }
  return rma(*w, win, CallId::MPI_Accumulate, true, target_rank, false, [=](int sub, MPI_Win s) {
    return PMPI_Accumulate(origin_addr, origin_count, origin_datatype, sub, target_disp, target_count,
                           target_datatype, op, s);
  });
}

extern "C" int __wrap_MPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                                         void *result_addr, int result_count, MPI_Datatype result_datatype,
                                         int target_rank, MPI_Aint target_disp, int target_count,
                                         MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  count_call(CallId::MPI_Get_accumulate);
  COHORT_WIN_OR_PASS(PMPI_Get_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                                         result_datatype, target_rank, target_disp, target_count, target_datatype,
                                         op, win))
  if (exchanged(*w)) {
    int tt = xtype(target_datatype), code = xop(op);
    bool none = code == rma_log::kOpNoOp;
    if (tt >= 0 && code >= 0 && target_count >= 0 && result_datatype == target_datatype && result_count == target_count &&
        (none || (origin_datatype == target_datatype && origin_count == target_count))) {
      std::size_t span = static_cast<std::size_t>(target_count) * xsize(tt);
      return log_op(*w, win, CallId::MPI_Get_accumulate, false, target_rank, rma_log::Kind::get_accumulate, tt, code,
                    target_count, target_disp, origin_addr, none ? 0 : span, nullptr, 0, result_addr, span);
    }
  }
  return rma(*w, win, CallId::MPI_Get_accumulate, false, target_rank, false, [=](int sub, MPI_Win s) {
    return PMPI_Get_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                               result_datatype, sub, target_disp, target_count, target_datatype, op, s);
  });
}

extern "C" int __wrap_MPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                                       int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
  count_call(CallId::MPI_Fetch_and_op);
  COHORT_WIN_OR_PASS(PMPI_Fetch_and_op(origin_addr, result_addr, datatype, target_rank, target_disp, op, win))
  if (exchanged(*w)) {
    int tt = xtype(datatype), code = xop(op);
    if (tt >= 0 && code >= 0) {
      std::size_t span = xsize(tt);
      return log_op(*w, win, CallId::MPI_Fetch_and_op, false, target_rank, rma_log::Kind::get_accumulate, tt, code, 1,
                    target_disp, origin_addr, code == rma_log::kOpNoOp ? 0 : span, nullptr, 0, result_addr, span);
    }
  }
  return rma(*w, win, CallId::MPI_Fetch_and_op, false, target_rank, false, [=](int sub, MPI_Win s) {
    return PMPI_Fetch_and_op(origin_addr, result_addr, datatype, sub, target_disp, op, s);
  });
}

extern "C" int __wrap_MPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                                           MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                                           MPI_Win win) {
  count_call(CallId::MPI_Compare_and_swap);
  COHORT_WIN_OR_PASS(PMPI_Compare_and_swap(origin_addr, compare_addr, result_addr, datatype, target_rank,
                                           target_disp, win))
  if (exchanged(*w)) {
    int tt = xtype(datatype);
    if (tt >= 0) {
      std::size_t span = xsize(tt);
      return log_op(*w, win, CallId::MPI_Compare_and_swap, false, target_rank, rma_log::Kind::compare_and_swap, tt, 0, 1,
                    target_disp, origin_addr, span, compare_addr, span, result_addr, span);
    }
  }
  return rma(*w, win, CallId::MPI_Compare_and_swap, false, target_rank, false, [=](int sub, MPI_Win s) {
    return PMPI_Compare_and_swap(origin_addr, compare_addr, result_addr, datatype, sub, target_disp, s);
  });
}

extern "C" int __wrap_MPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                               int target_rank, MPI_Aint target_disp, int target_count,
                               MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request) {
  count_call(CallId::MPI_Rput);
  COHORT_WIN_OR_PASS(PMPI_Rput(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                               target_datatype, win, request))
  return rma_now(*w, win, CallId::MPI_Rput, true, target_rank, request, [=](int sub, MPI_Win s) {
    return PMPI_Put(origin_addr, origin_count, origin_datatype, sub, target_disp, target_count, target_datatype, s);
  });
}

extern "C" int __wrap_MPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                               MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
                               MPI_Request *request) {
  count_call(CallId::MPI_Rget);
  COHORT_WIN_OR_PASS(PMPI_Rget(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                               target_datatype, win, request))
  return rma_now(*w, win, CallId::MPI_Rget, false, target_rank, request, [=](int sub, MPI_Win s) {
    return PMPI_Get(origin_addr, origin_count, origin_datatype, sub, target_disp, target_count, target_datatype, s);
  });
}

extern "C" int __wrap_MPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                                      int target_rank, MPI_Aint target_disp, int target_count,
                                      MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request) {
  count_call(CallId::MPI_Raccumulate);
  COHORT_WIN_OR_PASS(PMPI_Raccumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                                      target_count, target_datatype, op, win, request))
  return rma_now(*w, win, CallId::MPI_Raccumulate, true, target_rank, request, [=](int sub, MPI_Win s) {
    return PMPI_Accumulate(origin_addr, origin_count, origin_datatype, sub, target_disp, target_count,
                           target_datatype, op, s);
  });
}

extern "C" int __wrap_MPI_Rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                                          void *result_addr, int result_count, MPI_Datatype result_datatype,
                                          int target_rank, MPI_Aint target_disp, int target_count,
                                          MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                                          MPI_Request *request) {
  count_call(CallId::MPI_Rget_accumulate);
  COHORT_WIN_OR_PASS(PMPI_Rget_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                                          result_datatype, target_rank, target_disp, target_count, target_datatype,
                                          op, win, request))
  return rma_now(*w, win, CallId::MPI_Rget_accumulate, false, target_rank, request, [=](int sub, MPI_Win s) {
    return PMPI_Get_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                               result_datatype, sub, target_disp, target_count, target_datatype, op, s);
  });
}

extern "C" int cohort_win_state(MPI_Win win, int *members, int *recreations) {
  WinRecord *w = find_win(win);
  if (w == nullptr) return 0;
  if (members != nullptr) *members = w->made_on->map.sub_size();
  if (recreations != nullptr) *recreations = w->recreations;
  return 1;
}
