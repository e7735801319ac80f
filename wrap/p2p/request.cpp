#include "wrap/p2p/request.hpp"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <functional>
#include <mutex>
#include <vector>

#include "detector/env.hpp"
#include "detector/inject.hpp"
#include "detector/log.hpp"
#include "detector/runtime.hpp"
#include "repair/repair.hpp"
#include "wrap/core/errors.hpp"
#include "wrap/p2p/p2p_peers.hpp"
#include "wrap/core/policy.hpp"
#include "wrap/core/stop_job.hpp"
#include "wrap/core/ulfm_mode.hpp"
#include "wrap/core/progress.hpp"
#include "wrap/core/settings.hpp"
#include "wrap/p2p/request_table.hpp"

namespace cohort::wrap::p2p {
namespace {


RequestTable<MPI_Request, Op> g_table;
RequestTable<MPI_Request, Persistent> g_persistent;  // by the program's handle (MPI_Send_init & co.)
std::atomic<bool> g_any_persistent{false};
RequestTable<MPI_Message, Op> g_messages;    // messages matched by MPI_Mprobe/MPI_Improbe

std::mutex g_abandoned_mu;
std::vector<MPI_Request> g_abandoned;

// NOTE: a receive cancelled after its sender died completes at once in both MPIs; one that does not
// within this bound had matched a transfer that the death cut short and never will.
constexpr auto kCancelBound = std::chrono::milliseconds(100);

void pause_us(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
  }
}

// Keeps a request that MPI may still use; drops the ones that MPI completed since (PMPI_Test frees them).
void abandon(MPI_Request *req) {
  std::lock_guard<std::mutex> lock(g_abandoned_mu);
  std::size_t kept = 0;
  for (MPI_Request r : g_abandoned) {
    int done = 0;
    PMPI_Test(&r, &done, MPI_STATUS_IGNORE);
    if (!done) g_abandoned[kept++] = r;
  }
  g_abandoned.resize(kept);
  g_abandoned.push_back(*req);
  *req = MPI_REQUEST_NULL;
}

void fill(MPI_Status *st, int source, int tag, int error) {
  if (st == MPI_STATUS_IGNORE) return;
  st->MPI_SOURCE = source;
  st->MPI_TAG = tag;
  st->MPI_ERROR = error;
  PMPI_Status_set_elements(st, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(st, 0);
}

int grequest_query(void *, MPI_Status *st) {
  fill(st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS);
  return MPI_SUCCESS;
}
int grequest_free(void *) { return MPI_SUCCESS; }
int grequest_cancel(void *, int) { return MPI_SUCCESS; }

void describe(const Op &op, char *out, std::size_t n) {
  if (op.peer == MPI_ANY_SOURCE) {
    std::snprintf(out, n, "receive from MPI_ANY_SOURCE: every rank that could send is dead");
  } else {
    std::snprintf(out, n, "%s rank %d (world rank %d): the rank is dead",
                  op.dir == Dir::send ? "send to" : "receive from", op.peer, world_rank(op.comm, op.peer));
  }
}

// The policy's outcome for a request whose peer died: MPI_SUCCESS (skip) or the proc-failed class
// (error), *st filled; abort does not return. The error handler is left to the caller (once per call).
int outcome(const Op &op, MPI_Status *st) {
  // A request withdrawn because its communicator was revoked (a dead peer's is reported as a failure)
  if (ulfm::revoked(op.comm) && (op.peer < 0 || !peer_dead(op.comm, op.peer))) {
    fill(st, op.peer, op.tag, ulfm::code(ulfm::Failure::revoked));
    return ulfm::code(ulfm::Failure::revoked);
  }
  bool send = op.dir == Dir::send;
  // ULFM mode (wrap/core/ulfm_mode.hpp): a dead peer is always an error, MPIX_ERR_PROC_FAILED.
  Policy p = ulfm::active(op.comm) ? Policy::error : dead_peer_policy(send, send ? Policy::skip : Policy::abort);
  char what[160];
  describe(op, what, sizeof what);
  switch (p) {
    case Policy::abort:
      abort_job(op.call, what);
    case Policy::skip:
      COHORT_LOG_INFO("%s: %s (policy skip)", op.call, what);
      fill(st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS);
      return MPI_SUCCESS;
    case Policy::error:
      break;
  }
  fill(st, op.peer, op.tag, err_proc_failed_code());
  return err_proc_failed_code();
}

// Calls the communicator's error handler when rc is the policy's error outcome (or, in ULFM mode, the
// revoked code).
int raise_if_failed(const Op &op, int rc) {
  if (rc != MPI_SUCCESS && rc == err_proc_failed_code()) return raise_error(op.comm, op.call);
  if (rc != MPI_SUCCESS && rc == err_revoked_code()) return ulfm::raise(op.comm, ulfm::Failure::revoked, op.call);
  return rc;
}

enum class Fate { delivered, withdrawn, stuck };

bool complete_now(MPI_Request req, MPI_Status *st) {
  int done = 0;
  PMPI_Request_get_status(req, &done, st);
  return done != 0;
}

// Withdraws the request of a dead peer without freeing it (PMPI_Request_get_status, not PMPI_Test), so
// that MPI_Testall can leave every handle unchanged. Updates op.stage.
Fate settle(MPI_Request req, Op &op, MPI_Status *st) {
  switch (op.stage) {
    case Stage::not_posted:
      return Fate::withdrawn;
    case Stage::stuck:
      break;
    case Stage::posted:
      if (op.dir == Dir::send && !peer_dead(op.comm, op.peer)) {
        // NOTE: a revoke interrupted a send to a live peer, which may be receiving it right now (a large
        // message moves after the match): MPI may read the buffer until the transfer ends, so the send is
        // given the bound of a cancel to finish. One still pending then was never matched, and the peer
        // withdrew its receive: MPI reads nothing more of it.
        auto deadline = std::chrono::steady_clock::now() + kCancelBound;
        do {
          if (complete_now(req, st)) return Fate::delivered;
          pause_us(50);
        } while (std::chrono::steady_clock::now() < deadline);
        op.stage = Stage::stuck;
        return Fate::stuck;
      }
      if (op.dir == Dir::send) {
        long us = 100;
        for (int i = 0;; ++i) {
          if (complete_now(req, st)) return Fate::delivered;
          if (i == send_retries()) break;
          pause_us(us);
          us *= 2;
        }
        op.stage = Stage::stuck;
        return Fate::stuck;
      }
      if (complete_now(req, st)) return Fate::delivered;
      PMPI_Cancel(&req);
      op.stage = Stage::cancelling;
      [[fallthrough]];
    case Stage::cancelling: {
      auto deadline = std::chrono::steady_clock::now() + kCancelBound;
      do {
        if (complete_now(req, st)) {
          int cancelled = 0;
          PMPI_Test_cancelled(st, &cancelled);
          return cancelled ? Fate::withdrawn : Fate::delivered;
        }
        pause_us(50);
      } while (std::chrono::steady_clock::now() < deadline);
      op.stage = Stage::stuck;
      return Fate::stuck;
    }
  }
  // stuck: MPI may complete it after all
  if (!complete_now(req, st)) return Fate::stuck;
  int cancelled = 0;
  PMPI_Test_cancelled(st, &cancelled);
  return cancelled ? Fate::withdrawn : Fate::delivered;
}

// Frees (completed) or abandons (stuck) a settled request; *req becomes MPI_REQUEST_NULL. True when it was
// delivered after all, or the program cancelled it itself (*rc: MPI's code, whose status says so).
bool drop(MPI_Request *req, const Op &op, Fate fate, MPI_Status *st, int *rc) {
  if (fate == Fate::stuck) {
    abandon(req);
    return false;
  }
  int done = 0;
  *rc = PMPI_Test(req, &done, st);
  // NOTE: under ULFM a request of a dead peer can complete between the watch and settle(): with MPI's
  // failure code it delivered nothing, and the policy decides as for a withdrawn one.
  if (fate == Fate::delivered) return repair::error_kind(*rc) != repair::ErrorKind::proc_failed;
  int cancelled = 0;
  if (op.cancelled) PMPI_Test_cancelled(st, &cancelled);
  return cancelled != 0;
}

// drop, then MPI's code for a delivered (or cancelled) request, else the policy's outcome.
int release(MPI_Request *req, const Op &op, Fate fate, MPI_Status *st) {
  int rc = MPI_SUCCESS;
  return drop(req, op, fate, st, &rc) ? rc : outcome(op, st);
}

// settle + release: completes the request of a dead peer now.
int finish_dead(MPI_Request *req, Op &op, MPI_Status *st) {
  Fate fate = settle(*req, op, st);
  return release(req, op, fate, st);
}

void empty_status(MPI_Status *st) {
  MPI_Request none = MPI_REQUEST_NULL;
  PMPI_Wait(&none, st);
}

// Copies the statuses of a Waitall/Testall out. When a request failed by policy (failed != nullptr):
// every MPI_ERROR is set (the proc-failed class or MPI_SUCCESS), comm's error handler is called once and
// the result is MPI_ERR_IN_STATUS; otherwise rc.
int report_all(const std::vector<MPI_Status> &st, MPI_Status *statuses, const Op *failed, int rc) {
  bool out = statuses != MPI_STATUSES_IGNORE;
  bool revoked = false;
  for (std::size_t i = 0; i < st.size(); ++i) {
    revoked = revoked || st[i].MPI_ERROR == err_revoked_code();
    if (!out) continue;
    statuses[i] = st[i];
    if (failed != nullptr && !is_failure_code(st[i].MPI_ERROR)) statuses[i].MPI_ERROR = MPI_SUCCESS;
  }
  if (failed == nullptr) return rc;
  if (revoked) {
    ulfm::raise(failed->comm, ulfm::Failure::revoked, failed->call);
  } else {
    raise_error(failed->comm, failed->call);
  }
  return MPI_ERR_IN_STATUS;
}

// ---- backend hook (ULFM): MPI itself fails requests whose peer died (the heartbeat backend never) ----
// MPI failed an operation with op's peer (a named rank) for a process failure: that rank is dead.
// NOTE: Open MPI 5 can fail a request before MPIX_Comm_get_failed lists its peer (seen: an MPI_Wait on a
// send to a rank dead for a moment returned per policy while cohort_is_alive still said alive, 1 run in
// 17), so cohort records the death itself rather than wait for the detector thread's next poll.
void mpi_said_dead(const Op &op) {
  if (op.peer >= 0 && !peer_dead(op.comm, op.peer)) detector::declare_failed(world_rank(op.comm, op.peer));
}

// True when MPI completed *req with a failure-class error: the request is over (op.stage not_posted, so
// the dead-peer policy decides as under the heartbeat detector; *req is freed if MPI kept the handle). A
// receive from MPI_ANY_SOURCE that MPI only suspended (..._PENDING: not complete) resumes once the failure
// is acknowledged on its communicator: *rc becomes MPI_SUCCESS and false is returned.
// NOTE: Open MPI 5 frees a request that MPI_Test failed, but not those that MPI_Testall reports failed in
// their statuses: the handle alone does not tell a failed request from a suspended one; the class does.
bool mpi_reported_dead(int *rc, MPI_Request *req, Op &op) {
  if (repair::error_kind(*rc) != repair::ErrorKind::proc_failed) return false;
  if (*req != MPI_REQUEST_NULL) {
    if (repair::failure_pending(*rc)) {
      repair::ack_failed(op.comm);
      *rc = MPI_SUCCESS;
      return false;
    }
    PMPI_Request_free(req);
  }
  mpi_said_dead(op);
  op.stage = Stage::not_posted;
  return true;
}

// mpi_reported_dead over a PMPI_Testall that returned MPI_ERR_IN_STATUS: requests that MPI failed for a
// dead peer go to the policy (stage not_posted); those it completed keep their status in *st. True when
// some request went to the policy; then *rc becomes MPI_SUCCESS unless a status holds another error.
bool mpi_reported_dead_all(const std::vector<int> &live, std::vector<MPI_Request> &lr, std::vector<MPI_Status> &ls, Op *ops,
                           std::vector<MPI_Status> *st, int *rc) {
  bool any = false, other = false;
  for (std::size_t k = 0; k < live.size(); ++k) {
    int e = ls[k].MPI_ERROR;
    if (e == MPI_ERR_PENDING) continue;
    if (e == MPI_SUCCESS) {
      if (lr[k] == MPI_REQUEST_NULL) (*st)[static_cast<std::size_t>(live[k])] = ls[k];
      continue;
    }
    if (mpi_reported_dead(&e, &lr[k], ops[live[k]])) {
      any = true;
    } else if (e != MPI_SUCCESS) {
      other = true;
    }
  }
  if (any && !other) *rc = MPI_SUCCESS;
  return any;
}

Watch watch_for(const std::function<bool()> &broken) {
  Watch w;
  w.broken = broken;
  w.join_repairs = true;
  return w;
}

// ---- ULFM mode (wrap/core/ulfm_mode.hpp) ----
// What interrupts op now: its communicator was revoked, or (a receive from MPI_ANY_SOURCE) a member died
// and this rank has not acknowledged it. None outside ULFM mode.
std::optional<ulfm::Failure> interruption(const Op &op) {
  if (op.dir == Dir::none || !ulfm::active(op.comm)) return std::nullopt;
  if (ulfm::revoked(op.comm)) return ulfm::Failure::revoked;
  if (op.dir == Dir::recv && op.peer == MPI_ANY_SOURCE && ulfm::unacknowledged_failure(op.comm))
    return ulfm::Failure::pending;
  return std::nullopt;
}

// Ends the wait on op for interruption f. pending and keep_pending (a nonblocking receive): *req stays active
// (ULFM: it matches again once the failure is acknowledged). Otherwise the request is withdrawn as for a
// dead peer (a message that had arrived is delivered, with MPI's code), and a blocking receive's pending
// becomes MPIX_ERR_PROC_FAILED (as ULFM specifies). Calls op.comm's error handler; returns the code.
int interrupt(MPI_Request *req, Op &op, MPI_Status *st, ulfm::Failure f, bool keep_pending) {
  if (f == ulfm::Failure::pending && !keep_pending) f = ulfm::Failure::proc_failed;
  int rc = MPI_SUCCESS;
  if (f != ulfm::Failure::pending && *req != MPI_REQUEST_NULL && drop(req, op, settle(*req, op, st), st, &rc)) return rc;
  fill(st, op.peer, op.tag, ulfm::code(f));
  return ulfm::raise(op.comm, f, op.call);
}

}  // namespace

int send_retries() {
  static const int n = static_cast<int>(read_setting(setting::COHORT_SEND_RETRIES));
  return n;
}

bool dead(const Op &op) {
  if (op.dir == Dir::none) return false;
  return op.stage != Stage::posted || peer_dead(op.comm, op.peer);
}

namespace {

// A request that is never posted because its peer is dead: an already complete generalized request, so
// that the program holds a valid handle; stage not_posted, so that the policy decides at completion.
int not_posted(Op &op, MPI_Request *req) {
  op.stage = Stage::not_posted;
  int rc = PMPI_Grequest_start(grequest_query, grequest_free, grequest_cancel, nullptr, req);
  if (rc == MPI_SUCCESS) rc = PMPI_Grequest_complete(*req);
  return rc;
}

// ULFM backend: MPI refuses to post an operation with a peer it knows dead (a failure-class code): then
// the request is not posted, as when cohort knows the peer dead. Heartbeat backend: rc unchanged.
int refused_for_dead_peer(int rc, Op &op, MPI_Request *req) {
  if (rc == MPI_SUCCESS || op.peer == MPI_ANY_SOURCE || repair::error_kind(rc) != repair::ErrorKind::proc_failed)
    return rc;
  mpi_said_dead(op);
  return not_posted(op, req);
}

}  // namespace

// NOTE: a call refused on a revoked communicator leaves no request; the program may still wait on its
// handle (ULFM programs do), so it is MPI_REQUEST_NULL, never left unset.
namespace {
int refuse_revoked(Op &op, MPI_Request *req) {
  *req = MPI_REQUEST_NULL;
  return ulfm::raise(op.comm, ulfm::Failure::revoked, op.call);
}
}  // namespace

int post_send(const void *buf, int count, MPI_Datatype type, Op &op, MPI_Request *req, IsendFn isend) {
  if (ulfm::revoked(op.comm)) return refuse_revoked(op, req);
  if (peer_dead(op.comm, op.peer)) return not_posted(op, req);
  const int to = handle_rank(op.comm, op.peer);
  if (to == Alias::kHole) return not_posted(op, req);  // a hole
  int rc = isend(buf, count, type, to, op.tag, op.comm, req);
  if (rc == MPI_SUCCESS) inject::point("send.posted");
  return refused_for_dead_peer(rc, op, req);
}

int post_recv(void *buf, int count, MPI_Datatype type, Op &op, MPI_Request *req) {
  if (ulfm::revoked(op.comm)) return refuse_revoked(op, req);
  const int from = handle_rank(op.comm, op.peer);
  if (from == Alias::kHole) return not_posted(op, req);  // a hole: no message can come from it
  int rc = PMPI_Irecv(buf, count, type, from, op.tag, op.comm, req);
  if (rc == MPI_SUCCESS) inject::point("recv.posted");
  return refused_for_dead_peer(rc, op, req);
}

int post_mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *msg, Op &op, MPI_Request *req) {
  int rc = PMPI_Imrecv(buf, count, type, msg, req);
  if (rc == MPI_SUCCESS) inject::point("recv.posted");
  return rc;
}

static int complete_in_handle(MPI_Request *req, Op &op, MPI_Status *status, bool keep_pending) {
  MPI_Status local;
  MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
  // ULFM: a posted request that is already MPI_REQUEST_NULL was failed by MPI for its dead peer (spin).
  if (op.stage == Stage::posted && *req == MPI_REQUEST_NULL) op.stage = Stage::not_posted;
  if (auto f = interruption(op)) return interrupt(req, op, st, *f, keep_pending);
  if (op.stage == Stage::posted) {
    int done = 0;
    int rc = MPI_SUCCESS;
    auto test = [&] {
      rc = PMPI_Test(req, &done, st);
      if (rc != MPI_SUCCESS && mpi_reported_dead(&rc, req, op)) return true;
      return done || rc != MPI_SUCCESS;
    };
    // NOTE: a short spin without the watch first (most small-message completions come within it); it
    // stops as soon as the detector learns of any failure, and the watch below then judges the peer.
    if (spin(req, st, &rc)) return rc;
    // NOTE: a request cohort did not start (a nonblocking collective's, completed by wrap/core/nbc with its
    // policy's code) keeps MPI's code: it is the program's, not a dead peer's.
    if (op.dir == Dir::none && rc != MPI_SUCCESS) return rc;
    if (*req == MPI_REQUEST_NULL && rc != MPI_SUCCESS) op.stage = Stage::not_posted;
    Watch watch = watch_for([&op] { return dead(op) || interruption(op).has_value(); });
    watch.revocable = ulfm::revocation_comm(op.comm);
    watch.revoke_lazily = !ulfm::selected(op.comm);
    if (op.stage == Stage::posted && wait_until(std::ref(test), watch) == WaitResult::completed &&
        op.stage == Stage::posted)
      return rc;
    // (the peer's death, when it ended the wait, is reported before a revoke that came meanwhile)
    if (op.stage == Stage::posted && *req != MPI_REQUEST_NULL && !dead(op)) {
      if (auto f = interruption(op)) return interrupt(req, op, st, *f, keep_pending);
    }
  }
  return raise_if_failed(op, finish_dead(req, op, st));
}

static int complete_all_in_handle(int n, MPI_Request *reqs, Op *ops, MPI_Status *statuses) {
  std::vector<MPI_Status> st(static_cast<std::size_t>(n));
  std::vector<int> live, still;
  for (int i = 0; i < n; ++i) {
    if (reqs[i] != MPI_REQUEST_NULL) {
      live.push_back(i);
    } else {
      empty_status(&st[static_cast<std::size_t>(i)]);
    }
  }
  const Op *failed = nullptr;
  std::vector<MPI_Request> lr;
  std::vector<MPI_Status> ls;
  int rc = MPI_SUCCESS;
  for (;;) {
    still.clear();
    for (int i : live) {
      if (!dead(ops[i]) && !ulfm::revoked(ops[i].comm)) {
        still.push_back(i);
        continue;
      }
      MPI_Status *s = &st[static_cast<std::size_t>(i)];
      int e = finish_dead(&reqs[i], ops[i], s);
      s->MPI_ERROR = e;
      if (e != MPI_SUCCESS && failed == nullptr) failed = &ops[i];
    }
    live.swap(still);
    if (live.empty()) break;
    std::size_t m = live.size();
    lr.resize(m);
    ls.resize(m);
    for (std::size_t k = 0; k < m; ++k) lr[k] = reqs[live[k]];
    int done = 0;
    bool reported = false;
    auto test = [&] {
      rc = PMPI_Testall(static_cast<int>(m), lr.data(), &done, ls.data());
      if (rc == MPI_ERR_IN_STATUS) reported = mpi_reported_dead_all(live, lr, ls, ops, &st, &rc);
      return reported || done || rc != MPI_SUCCESS;
    };
    auto broken = [&] {
      for (int i : live) {
        if (dead(ops[i]) || ulfm::revoked(ops[i].comm)) return true;
      }
      return false;
    };
    Watch watch = watch_for(std::ref(broken));
    for (int i : live) {  // a revoke of (the first) communicator with a peer ends the wait too
      if (ops[i].dir != Dir::none) {
        watch.revocable = ulfm::revocation_comm(ops[i].comm);
        watch.revoke_lazily = !ulfm::selected(ops[i].comm);
        break;
      }
    }
    WaitResult r = test() ? WaitResult::completed : wait_until(std::ref(test), watch);
    for (std::size_t k = 0; k < m; ++k) reqs[live[k]] = lr[k];
    if (reported) {  // ULFM: MPI failed some of them for a dead peer: the policy decides; drop the completed
      live.erase(std::remove_if(live.begin(), live.end(),
                                [&](int i) { return reqs[i] == MPI_REQUEST_NULL && ops[i].stage == Stage::posted; }),
                 live.end());
      continue;
    }
    if (r == WaitResult::completed) {
      for (std::size_t k = 0; k < m; ++k) st[static_cast<std::size_t>(live[k])] = ls[k];
      break;
    }
  }
  return report_all(st, statuses, failed, rc);
}

// A point-to-point request that a revoke of its communicator withdrew (ULFM 17.3.1: pending operations on
// a revoked communicator complete with MPIX_ERR_REVOKED). A nonblocking collective's request is ended by
// its own operation (wrap/core/nbc.hpp).
bool withdrawn_by_revoke(const Op &op) { return op.dir != Dir::none && ulfm::revoked(op.comm); }


static int complete_any_in_handle(int n, MPI_Request *reqs, Op *ops, int *index, MPI_Status *status) {
  MPI_Status local;
  MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
  auto first_dead = [&] {
    for (int i = 0; i < n; ++i) {
      if (reqs[i] != MPI_REQUEST_NULL && (dead(ops[i]) || withdrawn_by_revoke(ops[i]))) return i;
    }
    return -1;
  };
  int rc = MPI_SUCCESS, done = 0, idx = MPI_UNDEFINED;
  auto test = [&] {
    rc = PMPI_Testany(n, reqs, &idx, &done, st);
    if (rc != MPI_SUCCESS && idx >= 0 && idx < n && mpi_reported_dead(&rc, &reqs[idx], ops[idx])) return true;
    return done || rc != MPI_SUCCESS;
  };
  Watch watch = watch_for([&first_dead] { return first_dead() >= 0; });
  for (int k = 0; k < n; ++k) {  // a revoke of (the first) communicator with a peer ends the wait too
    if (reqs[k] != MPI_REQUEST_NULL && ops[k].dir != Dir::none) {
      watch.revocable = ulfm::revocation_comm(ops[k].comm);
      watch.revoke_lazily = !ulfm::selected(ops[k].comm);
      break;
    }
  }
  int i = first_dead();
  if (i < 0 && (test() || wait_until(std::ref(test), watch) == WaitResult::completed) &&
      (idx < 0 || idx >= n || ops[idx].stage == Stage::posted)) {
    *index = idx;
    return rc;
  }
  if (i < 0) i = first_dead();
  *index = i;
  return raise_if_failed(ops[i], finish_dead(&reqs[i], ops[i], st));
}

static int test_in_handle(MPI_Request *req, Op &op, int *flag, MPI_Status *status) {
  MPI_Status local;
  MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
  if (op.stage == Stage::posted) {
    int rc = PMPI_Test(req, flag, st);
    if (rc != MPI_SUCCESS && !mpi_reported_dead(&rc, req, op) && rc == MPI_SUCCESS) *flag = 0;  // resumed
    if (op.stage == Stage::posted && (*flag || rc != MPI_SUCCESS || !(dead(op) || withdrawn_by_revoke(op))))
      return rc;
  }
  *flag = 1;
  return raise_if_failed(op, finish_dead(req, op, st));
}

static int test_all_in_handle(int n, MPI_Request *reqs, Op *ops, int *flag, MPI_Status *statuses) {
  std::vector<MPI_Status> st(static_cast<std::size_t>(n));
  std::vector<Fate> fate(static_cast<std::size_t>(n), Fate::delivered);
  std::vector<int> live, gone;
  std::vector<MPI_Request> lr;
  for (int i = 0; i < n; ++i) {
    MPI_Status *s = &st[static_cast<std::size_t>(i)];
    if (reqs[i] == MPI_REQUEST_NULL) {
      empty_status(s);
    } else if (dead(ops[i]) || withdrawn_by_revoke(ops[i])) {
      fate[static_cast<std::size_t>(i)] = settle(reqs[i], ops[i], s);
      gone.push_back(i);
    } else {
      live.push_back(i);
      lr.push_back(reqs[i]);
    }
  }
  std::vector<MPI_Status> ls(lr.size());
  int rc = PMPI_Testall(static_cast<int>(lr.size()), lr.data(), flag, ls.data());
  for (std::size_t k = 0; k < live.size(); ++k) {
    reqs[live[k]] = lr[k];
    st[static_cast<std::size_t>(live[k])] = ls[k];
  }
  if (!*flag || rc != MPI_SUCCESS) {
    if (statuses != MPI_STATUSES_IGNORE && rc == MPI_ERR_IN_STATUS) {
      for (int i : live) statuses[i] = st[static_cast<std::size_t>(i)];
    }
    return rc;
  }
  const Op *failed = nullptr;
  for (int i : gone) {
    MPI_Status *s = &st[static_cast<std::size_t>(i)];
    int e = release(&reqs[i], ops[i], fate[static_cast<std::size_t>(i)], s);
    s->MPI_ERROR = e;
    if (e != MPI_SUCCESS && failed == nullptr) failed = &ops[i];
  }
  return report_all(st, statuses, failed, MPI_SUCCESS);
}

static int peek_in_handle(MPI_Request req, Op &op, int *flag, MPI_Status *status) {
  MPI_Status local;
  MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
  if (op.stage == Stage::posted) {
    int rc = PMPI_Request_get_status(req, flag, st);
    if (*flag || rc != MPI_SUCCESS || !(dead(op) || withdrawn_by_revoke(op))) return rc;
  }
  *flag = 1;
  Fate fate = settle(req, op, st);
  if (fate == Fate::delivered) return MPI_SUCCESS;
  if (fate == Fate::withdrawn && op.cancelled) {
    int cancelled = 0;
    PMPI_Test_cancelled(st, &cancelled);
    if (cancelled) return MPI_SUCCESS;
  }
  return raise_if_failed(op, outcome(op, st));
}

namespace {

// A status MPI gave for op, put in the program's numbering (op's communicator may have holes: wrap/core/driver.hpp).
// One that cohort filled for a dead peer already names op.peer.
void to_program(const Op &op, MPI_Status *st) {
  if (!any_alias_with_holes() || st == MPI_STATUS_IGNORE || op.dir != Dir::recv) return;
  const Alias *a = find_alias(op.comm);
  if (a == nullptr || !a->has_holes()) return;
  if (op.peer == MPI_ANY_SOURCE) st->MPI_SOURCE = a->to_program(st->MPI_SOURCE);
  else if (st->MPI_SOURCE == a->to_handle(op.peer)) st->MPI_SOURCE = op.peer;
}

}  // namespace

int complete(MPI_Request *req, Op &op, MPI_Status *status, bool keep_pending) {
  int rc = complete_in_handle(req, op, status, keep_pending);
  to_program(op, status);
  return rc;
}

int complete_all(int n, MPI_Request *reqs, Op *ops, MPI_Status *statuses) {
  int rc = complete_all_in_handle(n, reqs, ops, statuses);
  for (int i = 0; statuses != MPI_STATUSES_IGNORE && i < n; ++i) to_program(ops[i], &statuses[i]);
  return rc;
}

int complete_any(int n, MPI_Request *reqs, Op *ops, int *index, MPI_Status *status) {
  int rc = complete_any_in_handle(n, reqs, ops, index, status);
  if (*index >= 0 && *index < n) to_program(ops[*index], status);
  return rc;
}

int test(MPI_Request *req, Op &op, int *flag, MPI_Status *status) {
  int rc = test_in_handle(req, op, flag, status);
  if (*flag) to_program(op, status);
  return rc;
}

int test_all(int n, MPI_Request *reqs, Op *ops, int *flag, MPI_Status *statuses) {
  int rc = test_all_in_handle(n, reqs, ops, flag, statuses);
  for (int i = 0; statuses != MPI_STATUSES_IGNORE && i < n; ++i) to_program(ops[i], &statuses[i]);
  return rc;
}

int peek(MPI_Request req, Op &op, int *flag, MPI_Status *status) {
  int rc = peek_in_handle(req, op, flag, status);
  if (*flag) to_program(op, status);
  return rc;
}

int apply_policy(const Op &op, MPI_Status *status) { return raise_if_failed(op, outcome(op, status)); }

bool mpi_reported_dead_probe(int *rc, Op &op) {
  if (*rc == MPI_SUCCESS) return false;
  MPI_Request none = MPI_REQUEST_NULL;
  if (repair::error_kind(*rc) == repair::ErrorKind::proc_failed && op.peer == MPI_ANY_SOURCE) {
    repair::ack_failed(op.comm);  // ..._PENDING: resume
    *rc = MPI_SUCCESS;
    return false;
  }
  return mpi_reported_dead(rc, &none, op);
}

void track(MPI_Request req, const Op &op) {
  if (g_table.put(req, op)) COHORT_LOG_DEBUG("%s: replaced a stale request record", op.call);
}
std::optional<Op> lookup(MPI_Request req) { return g_table.find(req); }
std::optional<Op> untrack(MPI_Request req) { return g_table.take(req); }
void track_persistent(MPI_Request req, const Persistent &p) {
  g_persistent.put(req, p);
  g_any_persistent.store(true, std::memory_order_relaxed);
}
std::optional<Persistent> lookup_persistent(MPI_Request req) { return g_persistent.find(req); }
std::optional<Persistent> untrack_persistent(MPI_Request req) { return g_persistent.take(req); }
bool any_persistent() { return g_any_persistent.load(std::memory_order_relaxed); }
void track_message(MPI_Message msg, const Op &op) { g_messages.put(msg, op); }
std::optional<Op> untrack_message(MPI_Message msg) { return g_messages.take(msg); }

std::size_t tracked_requests() { return g_table.size() + g_persistent.size() + g_messages.size(); }
std::size_t abandoned_requests() {
  std::lock_guard<std::mutex> lock(g_abandoned_mu);
  return g_abandoned.size();
}

}  // namespace cohort::wrap::p2p
