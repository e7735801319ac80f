// The registry of windows and the helpers every part of the window code shares
// (wrap/rma/window_registry.hpp).
#include "wrap/rma/window_registry.hpp"

#include <cstdio>
#include <mutex>
#include <unordered_map>

#include "detector/log.hpp"
#include "wrap/core/driver.hpp"
#include "wrap/core/errors.hpp"
#include "wrap/core/policy.hpp"
#include "wrap/core/stop_job.hpp"

namespace cohort::wrap::win {
namespace {

std::mutex g_wins_mu;
std::unordered_map<MPI_Win, std::unique_ptr<WinRecord>> g_wins;  // guarded by g_wins_mu

}  // namespace

WinRecord *find_win(MPI_Win win) {
  std::lock_guard<std::mutex> lock(g_wins_mu);
  auto it = g_wins.find(win);
  return it == g_wins.end() ? nullptr : it->second.get();
}

void add_window(std::unique_ptr<WinRecord> w) {
  std::lock_guard<std::mutex> lock(g_wins_mu);
  MPI_Win handle = w->handle;
  g_wins[handle] = std::move(w);
}

void remove_window(MPI_Win win) {
  std::lock_guard<std::mutex> lock(g_wins_mu);
  g_wins.erase(win);
}

int dead_target(const WinRecord &w, MPI_Win handle, bool send, const char *call, int target) {
  Policy p = dead_peer_policy(send, send ? Policy::skip : Policy::abort);
  char what[64];
  std::snprintf(what, sizeof what, "target %d is dead", target);
  if (p == Policy::abort) abort_job(call, what);
  if (p == Policy::skip) return MPI_SUCCESS;
  int code = err_proc_failed_code();
  COHORT_LOG_INFO("%s: %s (policy error, code %d)", call, what, code);
  (void)w;
  PMPI_Win_call_errhandler(handle, code);
  return code;
}

int sub_target(const WinRecord &w, int target) {
  if (target == MPI_PROC_NULL) return MPI_PROC_NULL;
  int sub = w.made_on->map.to_sub(target);
  if (sub < 0 || w.alias->known_failed(target)) return kDeadTarget;
  return sub;
}

int confirm(WinRecord &w, CallId id) {
  return run(*w.alias, describe(id), [](const Substitute &, int, MPI_Request *req) {
    *req = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
  });
}

int start_request(MPI_Request *request) {
  auto query = [](void *, MPI_Status *st) {
    PMPI_Status_set_elements(st, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
  };
  auto nothing = [](void *) { return MPI_SUCCESS; };
  auto no_cancel = [](void *, int) { return MPI_SUCCESS; };
  return PMPI_Grequest_start(query, nothing, no_cancel, nullptr, request);
}

}  // namespace cohort::wrap::win
