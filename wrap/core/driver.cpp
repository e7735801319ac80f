#include "wrap/core/driver.hpp"

#include <cstring>

#include "detector/inject.hpp"
#include "repair/repair.hpp"
#include "wrap/core/deferred.hpp"
#include "wrap/core/nbc.hpp"
#include "wrap/core/progress.hpp"
#include "wrap/core/ulfm_mode.hpp"

namespace cohort::wrap {
namespace {

// ULFM mode (wrap/core/ulfm_mode.hpp): one attempt on the current substitute, no confirmation, no repair. A
// member known dead (before the post or while waiting) gives MPIX_ERR_PROC_FAILED, a revoke
// MPIX_ERR_REVOKED; the request is then abandoned with its substitute, which the program replaces by
// MPIX_Comm_shrink.
int run_ulfm(Alias &alias, const CallDesc &call, PostFn post) {
  alias.next_call();
  const MPI_Comm h = alias.handle();
  const Substitute &sub = alias.current();
  if (repair::is_revoked(h)) return ulfm::raise(h, ulfm::Failure::revoked, call.name);
  int sub_root = -1;
  if (call.root >= 0) sub_root = call.root >= sub.map.alias_size() ? call.root : sub.map.to_sub(call.root);
  if (sub_root == -1 && call.root >= 0) return ulfm::raise(h, ulfm::Failure::proc_failed, call.name);
  if (sub.any_member_failed()) return ulfm::raise(h, ulfm::Failure::proc_failed, call.name);
  MPI_Request req = MPI_REQUEST_NULL;
  int rc = post(sub, sub_root, &req);
  if (rc != MPI_SUCCESS) return alias.return_error(rc, sub);
  if (call.posted_hook != nullptr) inject::point(call.posted_hook);
  Watch watch;
  watch.broken = [&sub] { return sub.any_member_failed(); };
  watch.revocable = h;
  switch (wait(&req, MPI_STATUS_IGNORE, watch, &rc)) {
    case WaitResult::completed: return MPI_SUCCESS;
    case WaitResult::failed: return raise_test_error(h, rc);
    case WaitResult::broken: break;
    case WaitResult::revoked:
      sub.abandoned.store(true);
      return ulfm::raise(h, ulfm::Failure::revoked, call.name);
  }
  sub.abandoned.store(true);
  return ulfm::raise(h, ulfm::Failure::proc_failed, call.name);
}

}  // namespace

void register_world(const char *call) {
  set_join_hook(join_repairs);
  register_world_alias(call);
}

// The blocking form: the adapter driven to the end (nonblocking collectives on the alias finish first).
int run(Alias &alias, const CallDesc &call, PostFn post) {
  nbc::finish_all(alias);
  if (ulfm::active(alias.handle())) return run_ulfm(alias, call, post);
  if (deferred::window() > 1) {
    // Deferred confirmation: a small Barrier, Bcast, Reduce or Allreduce may return unconfirmed; any other
    // collective first completes every pending confirmation (a settle point, wrap/core/deferred.hpp).
    if (call.defer != nullptr) return deferred::run(alias, call, post);
    deferred::settle_all(nullptr);
  }
  return run_numbered(alias, call, post, alias.next_call());
}

SavedInput::SavedInput(const void *buf, int count, MPI_Datatype type, std::vector<char> *own) {
  thread_local std::vector<char> per_thread;
  std::vector<char> &storage = own != nullptr ? *own : per_thread;
  MPI_Aint lb = 0;
  PMPI_Type_get_extent(type, &lb, &extent_);
  PMPI_Type_get_true_extent(type, &true_lb_, &true_extent_);
  std::size_t span = count > 0 ? static_cast<std::size_t>((count - 1) * extent_ + true_extent_) : 0;
  if (storage.size() < span + 1) storage.resize(span + 1);
  if (span > 0) std::memcpy(storage.data(), static_cast<const char *>(buf) + true_lb_, span);
  data_ = storage.data() - true_lb_;
}

void SavedInput::restore(void *buf, int first, int count) const {
  if (count <= 0) return;
  MPI_Aint offset = first * extent_ + true_lb_;
  std::memcpy(static_cast<char *>(buf) + offset, data_ + offset, (count - 1) * extent_ + true_extent_);
}

}  // namespace cohort::wrap
