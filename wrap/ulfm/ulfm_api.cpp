// ULFM's API (wrap/core/ulfm_mode.hpp): the mode of each communicator, the acknowledgements, and the MPIX_Comm_*
// entry points over repair/repair.hpp.
#include "wrap/core/stop_job.hpp"
#include "wrap/core/ulfm_mode.hpp"

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cohort/cohort.h"
#include "detector/env.hpp"
#include "detector/log.hpp"
#include "detector/runtime.hpp"
#include "repair/repair.hpp"
#include "wrap/calls.h"
#include "wrap/core/driver.hpp"
#include "wrap/core/errors.hpp"
#include "wrap/comm/intercomm.hpp"
#include "wrap/core/policy.hpp"

namespace cohort::wrap::ulfm {
namespace {

enum class Setting : int { automatic, on, off };
std::atomic<int> g_setting{static_cast<int>(Setting::automatic)};
std::atomic<bool> g_all{false};  // the program included <cohort/mpi-ext.h>
std::atomic<bool> g_any{false};  // some communicator may be in ULFM mode (the fast exit of active())

std::mutex g_mu;
std::unordered_set<MPI_Comm> g_marked;               // guarded by g_mu
std::unordered_map<MPI_Comm, std::size_t> g_acked;  // guarded by g_mu: how many of failed_members are acked

Setting setting() { return static_cast<Setting>(g_setting.load(std::memory_order_relaxed)); }

}  // namespace

// Helpers of the entry points below (not in the header).
namespace detail {

// The members of a known dead here, as ranks of a's communicator, in the order this rank learned of them.
// NOTE: the detector's list only grows at its end, so "the first k" stays the same set as it grows; an
// acknowledgement is kept as that count.
std::vector<int> failed_members(const Alias &a) {
  const RankMap &m = a.current().map;
  std::vector<int> out;
  for (int w : detector::failed_ranks()) {
    int r = m.world_to_alias(w);
    if (r >= 0) out.push_back(r);
  }
  return out;
}

std::size_t acked(MPI_Comm comm) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_acked.find(comm);
  return it == g_acked.end() ? 0 : it->second;
}

// Acknowledges the first n failed members of comm (never fewer than before); returns how many are.
std::size_t ack(MPI_Comm comm, std::size_t n) {
  std::lock_guard<std::mutex> lock(g_mu);
  std::size_t &k = g_acked[comm];
  k = std::max(k, n);
  return k;
}

// The group of comm's ranks[0..n).
int group(MPI_Comm comm, const std::vector<int> &ranks, std::size_t n, MPI_Group *out) {
  MPI_Group all;
  int rc = PMPI_Comm_group(comm, &all);
  if (rc != MPI_SUCCESS) return rc;
  rc = PMPI_Group_incl(all, static_cast<int>(n), ranks.data(), out);
  PMPI_Group_free(&all);
  return rc;
}

// The alias of comm for an MPIX_* call, or nullptr after one error line (comm not known to cohort).
Alias *alias_or_null(MPI_Comm comm, const char *call) {
  Alias *a = comm == MPI_COMM_NULL ? nullptr : find_alias(comm);
  if (a == nullptr) {
    log::write(log::Level::error,
               "%s: the communicator is not one cohort knows (MPI_COMM_WORLD, or one made by MPI_Comm_dup, "
               "MPI_Comm_split, MPI_Comm_create_group or MPIX_Comm_shrink), or MPI is not initialized",
               call);
  }
  return a;
}

// The start of every MPIX_* call on comm: its alias (nullptr: not known, one line logged). `collective`:
// the call is collective over comm (agree, iagree, shrink), so every member marks comm for ULFM mode at
// the same point of its sequence of calls on comm; a local call (revoke, the acknowledgement calls) marks
// nothing, or the members would run different protocols for the same collective.
Alias *enter(MPI_Comm comm, const char *call, bool collective) {
  Alias *a = alias_or_null(comm, call);
  if (a != nullptr && collective) mark(comm);
  return a;
}

}  // namespace detail

void select_all() {
  g_all.store(true);
  g_any.store(true);
}

void read_setting() {
  int i = -1;
  std::string err = env::read_word("COHORT_ULFM_API", {"auto", "on", "off"}, &i);
  if (!err.empty()) log::fatal(2, "MPI_Init: %s", err.c_str());
  if (i < 0) return;
  Setting s = i == 0 ? Setting::automatic : i == 1 ? Setting::on : Setting::off;
#if defined(COHORT_USE_ULFM)
  if (s != Setting::automatic) COHORT_LOG_WARN("MPI_Init: COHORT_ULFM_API is ignored by the ulfm build (MPI's own MPIX_*)");
  return;
#endif
  g_setting.store(static_cast<int>(s));
  if (s == Setting::on) g_any.store(true);
}

void mark(MPI_Comm comm) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_marked.insert(comm);
  g_any.store(true);
}

void inherit(MPI_Comm parent, MPI_Comm child) {
  if (!g_any.load(std::memory_order_relaxed) || child == MPI_COMM_NULL) return;
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_marked.count(parent) != 0) g_marked.insert(child);
}

bool selected(MPI_Comm comm) {
  if (!g_any.load(std::memory_order_relaxed)) return false;
  Setting s = setting();
  if (s == Setting::off || comm == MPI_COMM_NULL) return false;
  if (s == Setting::automatic && !g_all.load()) {
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_marked.count(comm) == 0) return false;
  }
  return find_alias(comm) != nullptr;
}

MPI_Comm revocation_comm(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL || find_alias(comm) != nullptr) return comm;
  MPI_Comm u = inter::union_of(comm);
  return u != MPI_COMM_NULL ? u : comm;
}

bool revoked(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return false;
  // NOTE: a revoke is the program's order to every member, whatever its mode (ULFM 17.3.1): a
  // communicator of no ULFM mode is revoked too once the notice arrived. The notice's own flag keeps
  // this an atomic load while nothing was revoked.
  if (!repair::revoke_seen() && !selected(comm)) return false;
  return repair::is_revoked(revocation_comm(comm));
}

bool active(MPI_Comm comm) {
  // NOTE: every collective asks this several times: two atomic loads while no communicator is in ULFM mode
  // and nothing was revoked (selected and revoked would each load them again).
  if (!g_any.load(std::memory_order_relaxed) && !repair::revoke_seen()) return false;
  return selected(comm) || revoked(comm);
}

bool unacknowledged_failure(MPI_Comm comm) {
  if (!active(comm)) return false;
  Alias *a = find_alias(comm);
  return a != nullptr && detail::failed_members(*a).size() > detail::acked(comm);
}

int code(Failure f) {
  switch (f) {
    case Failure::proc_failed: return err_proc_failed_code();
    case Failure::pending: return err_proc_failed_pending_code();
    case Failure::revoked: return err_revoked_code();
  }
  return MPI_ERR_OTHER;
}

int raise(MPI_Comm comm, Failure f, const char *call) {
  static const char *const what[] = {"a rank it needs has failed", "a failure is not acknowledged",
                                     "the communicator is revoked"};
  static const char *const name[] = {"MPIX_ERR_PROC_FAILED", "MPIX_ERR_PROC_FAILED_PENDING", "MPIX_ERR_REVOKED"};
  int c = code(f);
  // NOTE: MPI's own fatal handler would end this process only (Open MPI's recovery mode keeps the others
  // waiting for it); the job stops as under the abort policy, with the line naming the call.
  MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
  bool fatal = PMPI_Comm_get_errhandler(comm, &eh) == MPI_SUCCESS && eh == MPI_ERRORS_ARE_FATAL;
  if (eh != MPI_ERRHANDLER_NULL) PMPI_Errhandler_free(&eh);
  if (fatal) {
    log::write(log::Level::error, "%s: %s (%s) on a communicator whose error handler is MPI_ERRORS_ARE_FATAL",
               call, what[static_cast<int>(f)], name[static_cast<int>(f)]);
    stop_job(1);
  }
  COHORT_LOG_INFO("%s: %s (ULFM mode, %s, code %d)", call, what[static_cast<int>(f)], name[static_cast<int>(f)], c);
  call_errhandler(comm, c);
  return c;
}

}  // namespace cohort::wrap::ulfm

// NOTE: the ulfm build leaves MPIX_* and their errors to the MPI (as it ignores COHORT_ULFM_API): nothing
// to select.
extern "C" void cohort_ulfm_api_select(void) {
#if !defined(COHORT_USE_ULFM)
  cohort::wrap::ulfm::select_all();
#endif
}
extern "C" int cohort_err_proc_failed_pending(void) { return cohort::wrap::err_proc_failed_pending(); }
extern "C" int cohort_err_revoked(void) { return cohort::wrap::err_revoked(); }

#if !defined(COHORT_USE_ULFM)
// ---- the MPIX_Comm_* entry points (the ulfm build leaves them to the MPI) ----
namespace {
using cohort::wrap::Alias;
namespace ulfm = cohort::wrap::ulfm;

struct IagreeJob {
  MPI_Comm comm;
  int *flag;
  int rc = MPI_SUCCESS;
  MPI_Request greq = MPI_REQUEST_NULL;
};

// NOTE: no MPI call in the generalized request's callbacks: MPICH runs them inside PMPI_Test.
int iagree_query(void *job, MPI_Status *status) {
  int rc = static_cast<IagreeJob *>(job)->rc;
  status->MPI_SOURCE = MPI_UNDEFINED;
  status->MPI_TAG = MPI_UNDEFINED;
  status->MPI_ERROR = rc;
  return rc;
}
int iagree_free(void *job) {
  delete static_cast<IagreeJob *>(job);
  return MPI_SUCCESS;
}
int iagree_cancel(void *, int) { return MPI_SUCCESS; }

// The agreement and ULFM's verdict on it, the same at every survivor (ULFM 17.3.1: agree raises
// MPIX_ERR_PROC_FAILED uniformly): a second agreement ANDs whether each survivor had acknowledged every
// member in the first one's failed set; a member failed between the two also fails the call everywhere.
// The flag is agreed either way. Calls no error handler.
int agree_quietly(Alias &a, int *flag) {
  std::vector<int> failed;
  int rc = cohort::repair::agree(a.handle(), flag, &failed);
  if (rc != MPI_SUCCESS) return rc;
  std::vector<int> known = ulfm::detail::failed_members(a);
  const auto acked_end = known.begin() + static_cast<std::ptrdiff_t>(std::min(known.size(), ulfm::detail::acked(a.handle())));
  int all_acked = std::all_of(failed.begin(), failed.end(),
                              [&](int r) { return std::find(known.begin(), acked_end, r) != acked_end; });
  std::vector<int> failed_since;
  rc = cohort::repair::agree(a.handle(), &all_acked, &failed_since);
  if (rc != MPI_SUCCESS) return rc;
  if (!all_acked || failed_since.size() > failed.size()) return ulfm::code(ulfm::Failure::proc_failed);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

// NOTE: an intercommunicator's revocation is its union's (wrap/comm/intercomm.hpp): both groups' operations
// on it run on the union or check it.
int __wrap_MPIX_Comm_revoke(MPI_Comm comm) {
  Alias *a = ulfm::detail::enter(ulfm::revocation_comm(comm), "MPIX_Comm_revoke", false);
  if (a == nullptr) return MPI_ERR_COMM;
  return cohort::repair::revoke(a->handle());
}

int __wrap_MPIX_Comm_is_revoked(MPI_Comm comm, int *flag) {
  Alias *a = ulfm::detail::enter(ulfm::revocation_comm(comm), "MPIX_Comm_is_revoked", false);
  if (a == nullptr) return MPI_ERR_COMM;
  if (flag == nullptr) return MPI_ERR_ARG;
  *flag = cohort::repair::is_revoked(a->handle()) ? 1 : 0;
  return MPI_SUCCESS;
}

int __wrap_MPIX_Comm_shrink(MPI_Comm comm, MPI_Comm *newcomm) {
  if (cohort::wrap::inter::union_side(comm) >= 0) {
    if (newcomm == nullptr) return MPI_ERR_ARG;
    ulfm::detail::enter(ulfm::revocation_comm(comm), "MPIX_Comm_shrink", true);
    int rc = cohort::wrap::inter::shrink(comm, newcomm);
    if (rc != MPI_SUCCESS) {
      COHORT_LOG_ERROR("MPIX_Comm_shrink: shrinking the intercommunicator failed (code %d)", rc);
      cohort::wrap::call_errhandler(comm, rc);
    }
    return rc;
  }
  Alias *a = ulfm::detail::enter(comm, "MPIX_Comm_shrink", true);
  if (a == nullptr) return MPI_ERR_COMM;
  if (newcomm == nullptr) return MPI_ERR_ARG;
  *newcomm = MPI_COMM_NULL;
  MPI_Comm next = MPI_COMM_NULL;
  int rc = cohort::repair::shrink(a->handle(), &next);
  if (rc != MPI_SUCCESS) {
    COHORT_LOG_ERROR("MPIX_Comm_shrink: shrinking failed (code %d)", rc);
    cohort::wrap::call_errhandler(comm, rc);
    return rc;
  }
  cohort::wrap::copy_errhandler(comm, next);
  cohort::wrap::register_alias(next);
  ulfm::inherit(comm, next);
  *newcomm = next;
  return MPI_SUCCESS;
}

int __wrap_MPIX_Comm_agree(MPI_Comm comm, int *flag) {
  if (flag == nullptr) return MPI_ERR_ARG;
  // An intercommunicator's agreement gives each group the AND of the other group's flags (ULFM 17.3.1):
  // two agreements on its union, each over one group's flags (the other group contributes all ones).
  if (int side = cohort::wrap::inter::union_side(comm); side >= 0) {
    Alias *u = ulfm::detail::enter(ulfm::revocation_comm(comm), "MPIX_Comm_agree", true);
    if (u == nullptr) return MPI_ERR_COMM;
    int of_side[2] = {side == 0 ? *flag : ~0, side == 1 ? *flag : ~0};
    int rc = agree_quietly(*u, &of_side[0]);
    int rc1 = agree_quietly(*u, &of_side[1]);
    if (rc == MPI_SUCCESS) rc = rc1;
    *flag = of_side[1 - side];
    if (rc == ulfm::code(ulfm::Failure::proc_failed)) return ulfm::raise(comm, ulfm::Failure::proc_failed, "MPIX_Comm_agree");
    if (rc != MPI_SUCCESS) cohort::wrap::call_errhandler(comm, rc);
    return rc;
  }
  Alias *a = ulfm::detail::enter(comm, "MPIX_Comm_agree", true);
  if (a == nullptr) return MPI_ERR_COMM;
  int rc = agree_quietly(*a, flag);
  if (rc == ulfm::code(ulfm::Failure::proc_failed)) return ulfm::raise(comm, ulfm::Failure::proc_failed, "MPIX_Comm_agree");
  if (rc != MPI_SUCCESS) cohort::wrap::call_errhandler(comm, rc);
  return rc;
}

int __wrap_MPIX_Comm_iagree(MPI_Comm comm, int *flag, MPI_Request *request) {
  Alias *a = ulfm::detail::enter(comm, "MPIX_Comm_iagree", true);
  if (a == nullptr) return MPI_ERR_COMM;
  if (flag == nullptr || request == nullptr) return MPI_ERR_ARG;
  auto *job = new IagreeJob{comm, flag};
  int rc = PMPI_Grequest_start(iagree_query, iagree_free, iagree_cancel, job, &job->greq);
  if (rc != MPI_SUCCESS) {
    delete job;
    return rc;
  }
  *request = job->greq;
  // NOTE: the agreement runs on a helper thread (repair is thread-safe); its request completes when the
  // agreement does. MPI frees the job (iagree_free) once the program completed the request.
  std::thread([job, a] {
    job->rc = agree_quietly(*a, job->flag);
    PMPI_Grequest_complete(job->greq);
  }).detach();
  return MPI_SUCCESS;
}

int __wrap_MPIX_Comm_failure_ack(MPI_Comm comm) {
  Alias *a = ulfm::detail::enter(comm, "MPIX_Comm_failure_ack", false);
  if (a == nullptr) return MPI_ERR_COMM;
  ulfm::detail::ack(comm, ulfm::detail::failed_members(*a).size());
  return MPI_SUCCESS;
}

int __wrap_MPIX_Comm_failure_get_acked(MPI_Comm comm, MPI_Group *failedgrp) {
  Alias *a = ulfm::detail::enter(comm, "MPIX_Comm_failure_get_acked", false);
  if (a == nullptr) return MPI_ERR_COMM;
  if (failedgrp == nullptr) return MPI_ERR_ARG;
  std::vector<int> known = ulfm::detail::failed_members(*a);
  return ulfm::detail::group(comm, known, std::min(known.size(), ulfm::detail::acked(comm)), failedgrp);
}

int __wrap_MPIX_Comm_ack_failed(MPI_Comm comm, int num_to_ack, int *num_acked) {
  Alias *a = ulfm::detail::enter(comm, "MPIX_Comm_ack_failed", false);
  if (a == nullptr) return MPI_ERR_COMM;
  if (num_acked == nullptr || num_to_ack < 0) return MPI_ERR_ARG;
  std::size_t known = ulfm::detail::failed_members(*a).size();
  std::size_t n = ulfm::detail::ack(comm, std::min(known, static_cast<std::size_t>(num_to_ack)));
  *num_acked = static_cast<int>(n);
  return MPI_SUCCESS;
}

int __wrap_MPIX_Comm_get_failed(MPI_Comm comm, MPI_Group *failedgrp) {
  Alias *a = ulfm::detail::enter(comm, "MPIX_Comm_get_failed", false);
  if (a == nullptr) return MPI_ERR_COMM;
  if (failedgrp == nullptr) return MPI_ERR_ARG;
  std::vector<int> known = ulfm::detail::failed_members(*a);
  return ulfm::detail::group(comm, known, known.size(), failedgrp);
}

}  // extern "C"
#endif
