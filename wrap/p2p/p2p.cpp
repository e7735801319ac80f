// The point-to-point wrappers: MPI_Send (and its modes Ssend, Rsend, Bsend), MPI_Recv, MPI_Sendrecv(_replace),
// MPI_Isend (Issend, Irsend, Ibsend), MPI_Irecv, MPI_Wait, MPI_Waitall, MPI_Waitany, MPI_Test, MPI_Testall,
// MPI_Request_free, MPI_Probe, MPI_Iprobe; MPI_Request_get_status, MPI_Cancel; MPI_Mprobe, MPI_Improbe,
// MPI_Mrecv, MPI_Imrecv; the persistent requests (MPI_Send_init, MPI_Bsend_init, MPI_Ssend_init,
// MPI_Rsend_init, MPI_Recv_init, MPI_Start, MPI_Startall).
// Each one describes its operation (direction, peer, tag, communicator) and hands it to wrap/p2p/request.hpp,
// which polls it together with the detector and applies the dead-peer policy. Blocking calls run on their
// nonblocking variants; peers keep the program's own numbering (no renumbering, no repair).
#include <mpi.h>

#include <functional>
#include <optional>
#include <vector>

#include "detector/inject.hpp"
#include "detector/log.hpp"
#include "detector/runtime.hpp"
#include "repair/repair.hpp"
#include "wrap/calls.h"
#include "wrap/core/driver.hpp"
#include "wrap/core/errors.hpp"
#include "wrap/core/nbc.hpp"
#include "wrap/p2p/p2p_peers.hpp"
#include "wrap/core/progress.hpp"
#include "wrap/p2p/request.hpp"
#include "wrap/core/ulfm_mode.hpp"
#include "wrap/replica/replica.hpp"

using cohort::wrap::CallId;
using cohort::wrap::count_call;
namespace p2p = cohort::wrap::p2p;
namespace replica = cohort::wrap::replica;
using p2p::Dir;
using p2p::Op;

namespace {

// The per-kind hook for nonblocking collectives (wrap/core/nbc.hpp) at the top of the wait and test wrappers:
// req (MPI_Wait) is driven until done if it is a collective's; otherwise (tests) every one in flight moves
// once. The Waitall/any/some family drives them in cohort's poll loop. One relaxed load when none is.
inline void nbc_turn(const MPI_Request *req) {
  if (!cohort::wrap::nbc::any_in_flight()) return;
  if (req == nullptr || !cohort::wrap::nbc::drive_until_done(*req)) cohort::wrap::nbc::progress();
}

// For the length of one wait, test, status or cancel call: the program's handles of persistent requests
// (p2p::Persistent) in reqs[0..n) stand swapped for their started operation, or for MPI_REQUEST_NULL while
// inactive (MPI completes both at once, with an empty status); the call then runs as on nonblocking
// requests. On return each handle goes back, inactive if its operation completed (MPI_REQUEST_NULL now).
class PersistentView {
 public:
  PersistentView(int n, MPI_Request *reqs) : reqs_(reqs) {
    if (!p2p::any_persistent()) return;  // NOTE: no lookup, no allocation until a program makes one
    for (int i = 0; i < n; ++i) {
      auto rec = reqs[i] == MPI_REQUEST_NULL ? std::nullopt : p2p::lookup_persistent(reqs[i]);
      if (!rec) continue;
      swapped_.push_back(Swapped{i, reqs[i], *rec});
      reqs[i] = rec->active;
    }
  }
  PersistentView(const PersistentView &) = delete;
  PersistentView &operator=(const PersistentView &) = delete;
  ~PersistentView() {
    for (Swapped &s : swapped_) {
      s.rec.active = reqs_[s.index];
      reqs_[s.index] = s.handle;
      p2p::track_persistent(s.handle, s.rec);
    }
  }

 private:
  struct Swapped {
    int index;
    MPI_Request handle;  // the program's
    p2p::Persistent rec;
  };
  MPI_Request *reqs_;
  std::vector<Swapped> swapped_;
};

// Records of the requests reqs[0..n) (Dir::none for those cohort did not start), for a call named `call`.
std::vector<Op> ops_of(int n, const MPI_Request *reqs, const char *call, bool take) {
  std::vector<Op> ops(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    if (reqs[i] == MPI_REQUEST_NULL) continue;
    auto op = take ? p2p::untrack(reqs[i]) : p2p::lookup(reqs[i]);
    if (op) ops[static_cast<std::size_t>(i)] = *op;
    ops[static_cast<std::size_t>(i)].call = call;
  }
  return ops;
}

// Puts back the records of requests that are still active after a call (not complete yet, or MPI failed
// them and left them active). NOTE: every request cohort records is a nonblocking one (a persistent
// request's start too, see p2p::Persistent): once complete its handle is MPI_REQUEST_NULL.
void retrack(int n, const MPI_Request *reqs, const std::vector<Op> &ops) {
  for (int i = 0; i < n; ++i) {
    const Op &op = ops[static_cast<std::size_t>(i)];
    if (reqs[i] != MPI_REQUEST_NULL && op.dir != Dir::none) p2p::track(reqs[i], op);
  }
}

// A blocking send of any mode: posted with `isend` (p2p::post_send) and completed under the dead-peer
// policy. NOTE: Legio re-posts a send that MPI failed (transient trouble); MPI only returns such errors
// under MPI_ERRORS_RETURN. A dead peer is not retried here: the request layer re-tests its send instead.
// first: attempts already made (MPI_Send's fast path).
int blocking_send(const char *call, p2p::IsendFn isend, int first, const void *buf, int count, MPI_Datatype type,
                  int dest, int tag, MPI_Comm comm) {
  for (int attempt = first;; ++attempt) {
    Op op = p2p::make_op(Dir::send, dest, tag, comm, call);
    MPI_Request req;
    int rc = p2p::post_send(buf, count, type, op, &req, isend);
    if (rc == MPI_SUCCESS) rc = p2p::complete(&req, op, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS || cohort::wrap::is_failure_code(rc) || attempt >= p2p::send_retries()) return rc;
    COHORT_LOG_INFO("%s: MPI returned error %d; retrying (%d of %d)", call, rc, attempt + 1, p2p::send_retries());
  }
}

// MPI_Sendrecv's body (also MPI_Sendrecv_replace's, which sends from a copy).
int sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
             int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status,
             const char *call) {
  Op ops[2] = {p2p::make_op(Dir::recv, source, recvtag, comm, call),
               p2p::make_op(Dir::send, dest, sendtag, comm, call)};
  MPI_Request reqs[2];
  int rc = p2p::post_recv(recvbuf, recvcount, recvtype, ops[0], &reqs[0]);
  if (rc != MPI_SUCCESS) return rc;
  rc = p2p::post_send(sendbuf, sendcount, sendtype, ops[1], &reqs[1]);
  if (rc != MPI_SUCCESS) {
    PMPI_Cancel(&reqs[0]);
    PMPI_Request_free(&reqs[0]);
    return rc;
  }
  MPI_Status st[2];
  rc = p2p::complete_all(2, reqs, ops, st);
  if (status != MPI_STATUS_IGNORE) *status = st[0];
  if (rc == MPI_ERR_IN_STATUS) return st[0].MPI_ERROR != MPI_SUCCESS ? st[0].MPI_ERROR : st[1].MPI_ERROR;
  return rc;
}

// MPI_Isend's kin: a nonblocking send of one mode, recorded in the request table.
int isend_tracked(const char *call, p2p::IsendFn isend, const void *buf, int count, MPI_Datatype type, int dest,
                  int tag, MPI_Comm comm, MPI_Request *req) {
  if (dest == MPI_PROC_NULL) return isend(buf, count, type, dest, tag, comm, req);
  Op op = p2p::make_op(Dir::send, dest, tag, comm, call);
  return p2p::tracked(p2p::post_send(buf, count, type, op, req, isend), req, op);
}

// One p2p::test on reqs[i] (MPI_Test semantics, per policy for a dead peer), keeping the request table
// in step: the record goes when the request completed, and is updated when its withdrawal advanced.
int test_one(MPI_Request *reqs, int i, int *flag, MPI_Status *status, const char *call) {
  MPI_Request key = reqs[i];
  auto rec = p2p::lookup(key);
  Op op = rec ? *rec : Op{};
  op.call = call;
  int rc = p2p::test(&reqs[i], op, flag, status);
  if (reqs[i] == MPI_REQUEST_NULL) {
    p2p::untrack(key);
  } else if (rec && rec->stage != op.stage) {
    p2p::track(key, op);
  }
  return rc;
}

// The end of MPI_Waitany (also MPI_Waitsome's): the record of the request completed at index.
void after_wait_any(MPI_Request key, MPI_Request now, const Op &op) {
  if (now != MPI_REQUEST_NULL) {
    if (op.dir != Dir::none) p2p::track(now, op);
  } else {
    p2p::untrack(key);
  }
}

// MPI_Testsome semantics over p2p::test: every active request tested once; those that completed (or
// whose peer is dead, per policy) are reported. MPI_ERR_IN_STATUS when one of them failed.
int test_some(int count, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[], const char *call) {
  bool active = false, failed = false;
  *outcount = 0;
  for (int i = 0; i < count; ++i) {
    if (reqs[i] == MPI_REQUEST_NULL) continue;
    active = true;
    int flag = 0;
    MPI_Status st;
    int rc = test_one(reqs, i, &flag, &st, call);
    if (!flag && rc == MPI_SUCCESS) continue;
    st.MPI_ERROR = rc;
    failed = failed || rc != MPI_SUCCESS;
    if (statuses != MPI_STATUSES_IGNORE) statuses[*outcount] = st;
    indices[(*outcount)++] = i;
  }
  if (!active) *outcount = MPI_UNDEFINED;
  return failed ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

}  // namespace

extern "C" int __wrap_MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  count_call(CallId::MPI_Send);
  if (replica::on()) return replica::send(buf, count, type, dest, tag, comm, "MPI_Send");
  if (dest == MPI_PROC_NULL) return PMPI_Send(buf, count, type, dest, tag, comm);
  int first = 0;
  if (cohort::detector::failure_epoch() == 0 && !cohort::wrap::ulfm::revoked(comm)) {
    // NOTE: the fast path while no rank is known dead (no peer can be): post, spin, and only build the
    // record and the watch if the send does not complete at once. An MPI error falls into the loop below.
    // It duplicates the start of post_send + complete on purpose: without these fast paths (here, in
    // MPI_Recv and MPI_Wait) MPICH's 8 B ping-pong measured 1.11-1.16x, with them 1.02-1.06x.
    MPI_Request req;
    int rc = PMPI_Isend(buf, count, type, dest, tag, comm, &req);
    if (rc == MPI_SUCCESS) {
      cohort::inject::point("send.posted");
      if (!p2p::spin(&req, MPI_STATUS_IGNORE, &rc)) {
        Op op = p2p::make_op(Dir::send, dest, tag, comm, "MPI_Send");
        rc = p2p::complete(&req, op, MPI_STATUS_IGNORE);
      }
    }
    if (rc == MPI_SUCCESS || cohort::wrap::is_failure_code(rc) || p2p::send_retries() == 0) return rc;
    first = 1;
  }
  return blocking_send("MPI_Send", PMPI_Isend, first, buf, count, type, dest, tag, comm);
}

extern "C" int __wrap_MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  count_call(CallId::MPI_Ssend);
  if (replica::on()) return replica::ssend(buf, count, type, dest, tag, comm);
  if (dest == MPI_PROC_NULL) return PMPI_Ssend(buf, count, type, dest, tag, comm);
  return blocking_send("MPI_Ssend", PMPI_Issend, 0, buf, count, type, dest, tag, comm);
}

extern "C" int __wrap_MPI_Rsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  count_call(CallId::MPI_Rsend);
  if (replica::on()) return replica::send(buf, count, type, dest, tag, comm, "MPI_Rsend");
  if (dest == MPI_PROC_NULL) return PMPI_Rsend(buf, count, type, dest, tag, comm);
  return blocking_send("MPI_Rsend", PMPI_Irsend, 0, buf, count, type, dest, tag, comm);
}

extern "C" int __wrap_MPI_Bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  count_call(CallId::MPI_Bsend);
  if (replica::on()) return replica::send(buf, count, type, dest, tag, comm, "MPI_Bsend");
  if (dest == MPI_PROC_NULL) return PMPI_Bsend(buf, count, type, dest, tag, comm);
  return blocking_send("MPI_Bsend", PMPI_Ibsend, 0, buf, count, type, dest, tag, comm);
}

extern "C" int __wrap_MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                               MPI_Status *status) {
  count_call(CallId::MPI_Recv);
  if (replica::on()) return replica::recv(buf, count, type, source, tag, comm, status);
  if (source == MPI_PROC_NULL) return PMPI_Recv(buf, count, type, source, tag, comm, status);
  Op op = p2p::make_op(Dir::recv, source, tag, comm, "MPI_Recv");
  MPI_Request req;
  int rc = p2p::post_recv(buf, count, type, op, &req);
  if (rc != MPI_SUCCESS) return rc;
  // NOTE: a short spin with the caller's status first (the fast path while no rank is known dead).
  if (cohort::detector::failure_epoch() == 0 && p2p::spin(&req, status, &rc)) return rc;
  return p2p::complete(&req, op, status);
}

extern "C" int __wrap_MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                                   void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                                   MPI_Comm comm, MPI_Status *status) {
  count_call(CallId::MPI_Sendrecv);
  if (replica::on()) {
    int rc = replica::send(sendbuf, sendcount, sendtype, dest, sendtag, comm, "MPI_Sendrecv");
    return rc != MPI_SUCCESS ? rc : replica::recv(recvbuf, recvcount, recvtype, source, recvtag, comm, status);
  }
  return sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm,
                  status, "MPI_Sendrecv");
}

extern "C" int __wrap_MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int sendtag, int source,
                                           int recvtag, MPI_Comm comm, MPI_Status *status) {
  count_call(CallId::MPI_Sendrecv_replace);
  // NOTE: sent from a copy and received into buf, so that a withdrawn receive leaves buf as it was.
  cohort::wrap::SavedInput copy(buf, count, type);
  return sendrecv(copy.data(), count, type, dest, sendtag, buf, count, type, source, recvtag, comm, status,
                  "MPI_Sendrecv_replace");
}

extern "C" int __wrap_MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                                MPI_Request *req) {
  count_call(CallId::MPI_Isend);
  if (replica::on()) return replica::isend(buf, count, type, dest, tag, comm, req, "MPI_Isend");
  return isend_tracked("MPI_Isend", PMPI_Isend, buf, count, type, dest, tag, comm, req);
}

extern "C" int __wrap_MPI_Issend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                                 MPI_Request *req) {
  count_call(CallId::MPI_Issend);
  if (replica::on()) return replica::issend(buf, count, type, dest, tag, comm, req);
  return isend_tracked("MPI_Issend", PMPI_Issend, buf, count, type, dest, tag, comm, req);
}

extern "C" int __wrap_MPI_Irsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                                 MPI_Request *req) {
  count_call(CallId::MPI_Irsend);
  if (replica::on()) return replica::isend(buf, count, type, dest, tag, comm, req, "MPI_Irsend");
  return isend_tracked("MPI_Irsend", PMPI_Irsend, buf, count, type, dest, tag, comm, req);
}

extern "C" int __wrap_MPI_Ibsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                                 MPI_Request *req) {
  count_call(CallId::MPI_Ibsend);
  if (replica::on()) return replica::isend(buf, count, type, dest, tag, comm, req, "MPI_Ibsend");
  return isend_tracked("MPI_Ibsend", PMPI_Ibsend, buf, count, type, dest, tag, comm, req);
}

extern "C" int __wrap_MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                                MPI_Request *req) {
  count_call(CallId::MPI_Irecv);
  if (replica::on()) return replica::irecv(buf, count, type, source, tag, comm, req);
  if (source == MPI_PROC_NULL) return PMPI_Irecv(buf, count, type, source, tag, comm, req);
  Op op = p2p::make_op(Dir::recv, source, tag, comm, "MPI_Irecv");
  return p2p::tracked(p2p::post_recv(buf, count, type, op, req), req, op);
}

extern "C" int __wrap_MPI_Wait(MPI_Request *req, MPI_Status *status) {
  count_call(CallId::MPI_Wait);
  if (replica::on()) return replica::wait(req, status);
  PersistentView view(1, req);
  if (*req == MPI_REQUEST_NULL) return PMPI_Wait(req, status);
  nbc_turn(req);
  auto rec = p2p::untrack(*req);
  int rc = MPI_SUCCESS;
  // NOTE: the fast path while no rank is known dead: a short spin with the caller's status.
  if (cohort::detector::failure_epoch() == 0 && p2p::spin(req, status, &rc)) {
    if (rec && *req != MPI_REQUEST_NULL) p2p::track(*req, *rec);  // MPI failed it and left it active
    return rc;
  }
  Op op = rec ? *rec : Op{};
  op.call = "MPI_Wait";
  rc = p2p::complete(req, op, status, true);
  if (rec && *req != MPI_REQUEST_NULL) p2p::track(*req, op);
  return rc;
}

extern "C" int __wrap_MPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[]) {
  count_call(CallId::MPI_Waitall);
  if (replica::on()) return replica::waitall(count, reqs, statuses);
  PersistentView view(count, reqs);
  std::vector<Op> ops = ops_of(count, reqs, "MPI_Waitall", true);
  int rc = p2p::complete_all(count, reqs, ops.data(), statuses);
  retrack(count, reqs, ops);
  return rc;
}

extern "C" int __wrap_MPI_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status) {
  count_call(CallId::MPI_Waitany);
  if (replica::on()) return replica::waitany(count, reqs, index, status);
  PersistentView view(count, reqs);
  std::vector<MPI_Request> keys(reqs, reqs + count);
  std::vector<Op> ops = ops_of(count, reqs, "MPI_Waitany", false);
  int rc = p2p::complete_any(count, reqs, ops.data(), index, status);
  if (*index != MPI_UNDEFINED) after_wait_any(keys[static_cast<std::size_t>(*index)], reqs[*index], ops[static_cast<std::size_t>(*index)]);
  return rc;
}

// The test calls' fast path: no rank has died and no revoke notice arrived (the detector thread receives
// them every period, repair::revoke_seen), so no request has a dead peer or was withdrawn by a revoke.
static bool no_failure_nor_revoke() {
  return cohort::detector::failure_epoch() == 0 && !cohort::repair::revoke_seen();
}

extern "C" int __wrap_MPI_Test(MPI_Request *req, int *flag, MPI_Status *status) {
  count_call(CallId::MPI_Test);
  if (replica::on()) return replica::test(req, flag, status);
  PersistentView view(1, req);
  nbc_turn(nullptr);
  MPI_Request key = *req;
  if (key == MPI_REQUEST_NULL) return PMPI_Test(req, flag, status);
  // NOTE: until a first rank dies no request can have a dead peer, and until a revoke notice arrives
  // (repair::revoke_seen) none was withdrawn: MPI's own test, no lookup.
  if (no_failure_nor_revoke()) {
    int rc = PMPI_Test(req, flag, status);
    if (*flag) p2p::untrack(key);
    return rc;
  }
  return test_one(req, 0, flag, status, "MPI_Test");
}

extern "C" int __wrap_MPI_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[]) {
  count_call(CallId::MPI_Testall);
  if (replica::on()) return replica::testall(count, reqs, flag, statuses);
  PersistentView view(count, reqs);
  nbc_turn(nullptr);
  std::vector<MPI_Request> keys(reqs, reqs + count);
  std::vector<Op> ops;
  int rc;
  if (no_failure_nor_revoke()) {
    rc = PMPI_Testall(count, reqs, flag, statuses);
  } else {
    ops = ops_of(count, reqs, "MPI_Testall", false);
    rc = p2p::test_all(count, reqs, ops.data(), flag, statuses);
    retrack(count, reqs, ops);  // keeps what the dead ones' withdrawal did (op.stage)
  }
  for (int i = 0; i < count; ++i) {
    const MPI_Request key = keys[static_cast<std::size_t>(i)];
    if (key == MPI_REQUEST_NULL) continue;
    if (reqs[i] == MPI_REQUEST_NULL) p2p::untrack(key);
  }
  return rc;
}

extern "C" int __wrap_MPI_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status) {
  count_call(CallId::MPI_Testany);
  if (replica::on()) return replica::testany(count, reqs, index, flag, status);
  PersistentView view(count, reqs);
  nbc_turn(nullptr);
  *flag = 0;
  *index = MPI_UNDEFINED;
  // NOTE: until a first rank dies no request can have a dead peer: MPI's own test, then the records.
  if (no_failure_nor_revoke()) {
    std::vector<MPI_Request> keys(reqs, reqs + count);
    int rc = PMPI_Testany(count, reqs, index, flag, status);
    if (*flag && *index != MPI_UNDEFINED) p2p::untrack(keys[static_cast<std::size_t>(*index)]);
    return rc;
  }
  for (int i = 0; i < count; ++i) {
    if (reqs[i] == MPI_REQUEST_NULL) continue;
    int rc = test_one(reqs, i, flag, status, "MPI_Testany");
    if (*flag || rc != MPI_SUCCESS) {
      *index = i;
      return rc;
    }
  }
  for (int i = 0; i < count; ++i) {
    if (reqs[i] != MPI_REQUEST_NULL) return MPI_SUCCESS;
  }
  return PMPI_Testany(count, reqs, index, flag, status);  // every request null: flag 1, an empty status
}

extern "C" int __wrap_MPI_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
                                   MPI_Status statuses[]) {
  count_call(CallId::MPI_Testsome);
  if (replica::on()) return replica::testsome(incount, reqs, outcount, indices, statuses);
  PersistentView view(incount, reqs);
  nbc_turn(nullptr);
  if (no_failure_nor_revoke()) {
    std::vector<MPI_Request> keys(reqs, reqs + incount);
    int rc = PMPI_Testsome(incount, reqs, outcount, indices, statuses);
    // NOTE: completed, also a persistent request (inactive now, not null)
    for (int k = 0; *outcount != MPI_UNDEFINED && k < *outcount; ++k) p2p::untrack(keys[static_cast<std::size_t>(indices[k])]);
    return rc;
  }
  return test_some(incount, reqs, outcount, indices, statuses, "MPI_Testsome");
}

extern "C" int __wrap_MPI_Waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
                                   MPI_Status statuses[]) {
  count_call(CallId::MPI_Waitsome);
  if (replica::on()) return replica::waitsome(incount, reqs, outcount, indices, statuses);
  PersistentView view(incount, reqs);
  // Those complete now; if none, one through MPI_Waitany's completion (never waits on a dead rank), then
  // any others that completed meanwhile.
  int rc = test_some(incount, reqs, outcount, indices, statuses, "MPI_Waitsome");
  if (*outcount != 0) return rc;
  std::vector<MPI_Request> keys(reqs, reqs + incount);
  std::vector<Op> ops = ops_of(incount, reqs, "MPI_Waitsome", false);
  int index = MPI_UNDEFINED;
  MPI_Status st;
  rc = p2p::complete_any(incount, reqs, ops.data(), &index, &st);
  if (index == MPI_UNDEFINED) {
    *outcount = MPI_UNDEFINED;
    return rc;
  }
  after_wait_any(keys[static_cast<std::size_t>(index)], reqs[index], ops[static_cast<std::size_t>(index)]);
  st.MPI_ERROR = rc;
  int more = 0;
  int rc2 = test_some(incount, reqs, &more, indices + 1, statuses == MPI_STATUSES_IGNORE ? statuses : statuses + 1,
                      "MPI_Waitsome");
  indices[0] = index;
  if (statuses != MPI_STATUSES_IGNORE) statuses[0] = st;
  *outcount = 1 + (more == MPI_UNDEFINED ? 0 : more);
  return rc != MPI_SUCCESS || rc2 != MPI_SUCCESS ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

namespace {

// MPI_Request_free of a request that is not a persistent one's handle: its record goes. NOTE: a receive
// from a dead rank would stay posted forever: it is withdrawn (a cancelled request that is freed is legal
// MPI and lets MPI release it).
int free_request(MPI_Request *req) {
  if (*req != MPI_REQUEST_NULL) {
    auto rec = p2p::untrack(*req);
    if (rec && rec->dir == Dir::recv && rec->stage == p2p::Stage::posted && p2p::dead(*rec)) PMPI_Cancel(req);
  }
  return PMPI_Request_free(req);
}

}  // namespace

extern "C" int __wrap_MPI_Request_free(MPI_Request *req) {
  count_call(CallId::MPI_Request_free);
  if (cohort::wrap::nbc::any_in_flight() && cohort::wrap::nbc::release(req)) return MPI_SUCCESS;
  if (p2p::any_persistent() && *req != MPI_REQUEST_NULL) {
    if (auto rec = p2p::untrack_persistent(*req)) {
      // NOTE: freeing an active persistent request is legal MPI: its started operation completes unseen
      // (a collective's too: the survivors need this rank in it, wrap/core/nbc.hpp).
      if (rec->active != MPI_REQUEST_NULL && !(rec->start_coll && cohort::wrap::nbc::release(&rec->active)))
        free_request(&rec->active);
    }
  }
  return free_request(req);
}

extern "C" int __wrap_MPI_Request_get_status(MPI_Request req, int *flag, MPI_Status *status) {
  count_call(CallId::MPI_Request_get_status);
  PersistentView view(1, &req);
  // NOTE: until a first rank dies no request can have a dead peer: MPI's own, no lookup.
  if (req == MPI_REQUEST_NULL || no_failure_nor_revoke()) return PMPI_Request_get_status(req, flag, status);
  auto rec = p2p::lookup(req);
  if (!rec) return PMPI_Request_get_status(req, flag, status);
  Op op = *rec;
  op.call = "MPI_Request_get_status";
  int rc = p2p::peek(req, op, flag, status);
  if (op.stage != rec->stage) p2p::track(req, op);  // what the withdrawal did, for the later completion
  return rc;
}

extern "C" int __wrap_MPI_Cancel(MPI_Request *req) {
  count_call(CallId::MPI_Cancel);
  const bool given = *req != MPI_REQUEST_NULL;
  PersistentView view(1, req);
  if (given && *req == MPI_REQUEST_NULL) return MPI_SUCCESS;  // an inactive persistent request: nothing to cancel
  if (*req != MPI_REQUEST_NULL) {
    auto rec = p2p::lookup(*req);
    if (rec && !rec->cancelled) {
      Op op = *rec;
      op.cancelled = true;
      p2p::track(*req, op);
    }
  }
  return PMPI_Cancel(req);
}

// ---- persistent requests: cohort's own (p2p::Persistent); MPI_X_init records the operation, and each
// MPI_Start(all) posts it as a nonblocking one

namespace {

using InitFn = int (*)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);

// MPI_X_init (`init`, whose start runs as `isend`; nullptr: MPI_Recv_init): MPI's own init call makes the
// program's handle *req, which cohort records and never starts. To or from MPI_PROC_NULL MPI's request runs.
int persistent_init(const char *call, InitFn init, p2p::IsendFn isend, const void *buf, int count, MPI_Datatype type,
                    int peer, int tag, MPI_Comm comm, MPI_Request *req) {
  // (a hole of a communicator with holes: MPI's handle names no process; cohort's starts apply the policy)
  const int mpi_peer = p2p::handle_rank(comm, peer);
  int rc = init(buf, count, type, mpi_peer == cohort::wrap::Alias::kHole ? MPI_PROC_NULL : mpi_peer, tag, comm, req);
  if (rc != MPI_SUCCESS || peer == MPI_PROC_NULL) return rc;
  p2p::Persistent p;
  p.op = p2p::make_op(isend != nullptr ? Dir::send : Dir::recv, peer, tag, comm, call);
  p.buf = const_cast<void *>(buf);
  p.count = count;
  p.type = cohort::wrap::hold_type(type);  // (the program may free a derived datatype once the init call returned)
  p.isend = isend;
  p2p::track_persistent(*req, p);
  return rc;
}

// PMPI_Recv_init as an InitFn: buf is the program's receive buffer (MPI_Recv_init's, not const).
int recv_init(const void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request *req) {
  return PMPI_Recv_init(const_cast<void *>(buf), count, type, source, tag, comm, req);
}

// MPI_Start of one request: a persistent one that cohort keeps posts a fresh nonblocking operation, recorded
// as an MPI_Isend's/MPI_Irecv's would be; any other is MPI's to start.
int start(MPI_Request *req, const char *call) {
  auto p = *req == MPI_REQUEST_NULL || !p2p::any_persistent() ? std::nullopt : p2p::lookup_persistent(*req);
  if (!p) return PMPI_Start(req);
  if (p->active != MPI_REQUEST_NULL) {  // erroneous in MPI: reported as MPI would, on the communicator
    COHORT_LOG_ERROR("%s: the persistent request is active (started, not completed yet); MPI_ERR_REQUEST", call);
    cohort::wrap::call_errhandler(p->op.comm, MPI_ERR_REQUEST);
    return MPI_ERR_REQUEST;
  }
  if (p->start_coll) {  // a persistent collective: its nonblocking twin, as cohort runs it
    MPI_Request active = MPI_REQUEST_NULL;
    int rc = (*p->start_coll)(&active);
    if (rc != MPI_SUCCESS) return rc;
    p->active = active;
    p2p::track_persistent(*req, *p);
    return MPI_SUCCESS;
  }
  Op op = p->op;
  op.call = call;
  MPI_Request active = MPI_REQUEST_NULL;
  int rc = op.dir == Dir::send ? p2p::post_send(p->buf, p->count, p->type->get(), op, &active, p->isend)
                               : p2p::post_recv(p->buf, p->count, p->type->get(), op, &active);
  if (rc != MPI_SUCCESS) return rc;
  p2p::track(active, op);
  p->active = active;
  p2p::track_persistent(*req, *p);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int __wrap_MPI_Send_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                                    MPI_Request *req) {
  count_call(CallId::MPI_Send_init);
  return persistent_init("MPI_Send_init", PMPI_Send_init, PMPI_Isend, buf, count, type, dest, tag, comm, req);
}

extern "C" int __wrap_MPI_Bsend_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                                     MPI_Request *req) {
  count_call(CallId::MPI_Bsend_init);
  return persistent_init("MPI_Bsend_init", PMPI_Bsend_init, PMPI_Ibsend, buf, count, type, dest, tag, comm, req);
}

extern "C" int __wrap_MPI_Ssend_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                                     MPI_Request *req) {
  count_call(CallId::MPI_Ssend_init);
  return persistent_init("MPI_Ssend_init", PMPI_Ssend_init, PMPI_Issend, buf, count, type, dest, tag, comm, req);
}

extern "C" int __wrap_MPI_Rsend_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                                     MPI_Request *req) {
  count_call(CallId::MPI_Rsend_init);
  return persistent_init("MPI_Rsend_init", PMPI_Rsend_init, PMPI_Irsend, buf, count, type, dest, tag, comm, req);
}

extern "C" int __wrap_MPI_Recv_init(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                                    MPI_Request *req) {
  count_call(CallId::MPI_Recv_init);
  return persistent_init("MPI_Recv_init", recv_init, nullptr, buf, count, type, source, tag, comm, req);
}

extern "C" int __wrap_MPI_Start(MPI_Request *req) {
  count_call(CallId::MPI_Start);
  return start(req, "MPI_Start");
}

extern "C" int __wrap_MPI_Startall(int count, MPI_Request reqs[]) {
  count_call(CallId::MPI_Startall);
  // NOTE: MPI_Startall is MPI_Start of each request in some order (MPI 4.0, section 3.9)
  for (int i = 0; i < count; ++i) {
    int rc = start(&reqs[i], "MPI_Startall");
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

// ---- probes ----

namespace {

// A blocking probe (MPI_Probe, MPI_Mprobe) of op's peer polled on its nonblocking variant (iprobe(&flag)
// makes one PMPI_Iprobe or PMPI_Improbe) together with the detector. True when it found a message or MPI
// failed (*rc); false when the peer is dead with no message left for it: the receive policy applies.
template <typename Iprobe>
bool probe_blocking(Op &op, Iprobe iprobe, int *rc) {
  namespace ulfm = cohort::wrap::ulfm;
  if (ulfm::revoked(op.comm)) {
    *rc = ulfm::raise(op.comm, ulfm::Failure::revoked, op.call);
    return true;
  }
  int flag = 0;
  *rc = iprobe(&flag);
  if (p2p::mpi_reported_dead_probe(rc, op)) return false;
  if (flag || *rc != MPI_SUCCESS) return true;
  auto poll = [&] {
    *rc = iprobe(&flag);
    return p2p::mpi_reported_dead_probe(rc, op) || flag || *rc != MPI_SUCCESS;
  };
  cohort::wrap::Watch watch;
  watch.broken = [&op] { return p2p::dead(op); };
  watch.join_repairs = true;
  watch.revocable = ulfm::revocation_comm(op.comm);
  watch.revoke_lazily = !ulfm::selected(op.comm);
  const cohort::wrap::WaitResult waited = cohort::wrap::wait_until(std::ref(poll), watch);
  if (waited == cohort::wrap::WaitResult::revoked) {
    *rc = ulfm::raise(op.comm, ulfm::Failure::revoked, op.call);
    return true;
  }
  if (waited == cohort::wrap::WaitResult::completed && op.stage == p2p::Stage::posted) return true;
  // NOTE: a message that arrived before its sender died is still there to be received.
  return op.stage == p2p::Stage::posted && poll() && op.stage == p2p::Stage::posted;
}

// A nonblocking probe (MPI_Iprobe, MPI_Improbe: iprobe(flag) makes the PMPI call) of op's peer. True when
// the peer is dead with no message left: *flag = 1 and the receive policy applies (the caller returns
// p2p::apply_policy); false otherwise, with MPI's *rc and *flag.
template <typename Iprobe>
bool iprobe_found_dead(Op &op, Iprobe iprobe, int *flag, int *rc) {
  namespace ulfm = cohort::wrap::ulfm;
  if (ulfm::revoked(op.comm)) {  // (ULFM 17.3.1: a probe on a revoked communicator is interrupted too)
    *flag = 0;
    *rc = ulfm::raise(op.comm, ulfm::Failure::revoked, op.call);
    return false;
  }
  *rc = iprobe(flag);
  if (*rc != MPI_SUCCESS) {
    if (p2p::mpi_reported_dead_probe(rc, op)) {
      *flag = 1;
      return true;
    }
    if (*rc == MPI_SUCCESS) *flag = 0;  // resumed: no message yet
  }
  if (*flag || *rc != MPI_SUCCESS || cohort::detector::failure_epoch() == 0 || !p2p::dead(op)) return false;
  // NOTE: like a receive, a probe of a dead rank completes per policy: skip makes it find an empty
  // message from MPI_PROC_NULL, which a following receive of status.MPI_SOURCE completes at once.
  *flag = 1;
  return true;
}

// One PMPI_Iprobe of the program's source on comm, whose handle may lack holes (wrap/core/driver.hpp): the source
// in the handle's numbering, the status's in the program's; of a hole, no message (its death applies the policy).
int probe_in_handle(int (*iprobe)(int, int, MPI_Comm, int *, MPI_Status *), int source, int tag, MPI_Comm comm,
                    int *flag, MPI_Status *status) {
  const int from = p2p::handle_rank(comm, source);
  if (from == cohort::wrap::Alias::kHole) {
    *flag = 0;
    return MPI_SUCCESS;
  }
  int rc = iprobe(from, tag, comm, flag, status);
  if (*flag) p2p::program_source(comm, status);
  return rc;
}
// The same with PMPI_Improbe.
int mprobe_in_handle(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *msg, MPI_Status *status) {
  const int from = p2p::handle_rank(comm, source);
  if (from == cohort::wrap::Alias::kHole) {
    *flag = 0;
    return MPI_SUCCESS;
  }
  int rc = PMPI_Improbe(from, tag, comm, flag, msg, status);
  if (*flag) p2p::program_source(comm, status);
  return rc;
}

// The message an MPI_Mprobe/MPI_Improbe of op matched (its source and tag in st) is recorded for
// MPI_Mrecv/MPI_Imrecv, which then never wait on that sender once it is dead.
void matched(MPI_Message msg, Op op, const MPI_Status &st) {
  op.peer = st.MPI_SOURCE;
  op.tag = st.MPI_TAG;
  p2p::track_message(msg, op);
}

// The receive policy's outcome for a matched probe: skip finds MPI_MESSAGE_NO_PROC (which MPI_Mrecv
// completes at once, as from MPI_PROC_NULL); error leaves MPI_MESSAGE_NULL.
int no_message(const Op &op, MPI_Message *msg, MPI_Status *status) {
  int rc = p2p::apply_policy(op, status);
  *msg = rc == MPI_SUCCESS ? MPI_MESSAGE_NO_PROC : MPI_MESSAGE_NULL;
  return rc;
}

// MPI_Mrecv/MPI_Imrecv's record of *msg: the sender that the probe matched (Dir::none for a message
// cohort did not see matched: completed as MPI would).
Op message_op(MPI_Message msg, const char *call) {
  auto rec = p2p::untrack_message(msg);
  Op op = rec ? *rec : Op{};
  op.call = call;
  return op;
}

}  // namespace

extern "C" int __wrap_MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status) {
  count_call(CallId::MPI_Probe);
  if (replica::on()) return replica::probe(source, tag, comm, status);
  if (source == MPI_PROC_NULL) return PMPI_Probe(source, tag, comm, status);
  Op op = p2p::make_op(Dir::recv, source, tag, comm, "MPI_Probe");
  int rc = MPI_SUCCESS;
  auto iprobe = [&](int *flag) { return probe_in_handle(PMPI_Iprobe, source, tag, comm, flag, status); };
  if (probe_blocking(op, iprobe, &rc)) return rc;
  return p2p::apply_policy(op, status);
}

extern "C" int __wrap_MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status) {
  count_call(CallId::MPI_Iprobe);
  if (replica::on()) return replica::iprobe(source, tag, comm, flag, status);
  Op op = p2p::make_op(Dir::recv, source, tag, comm, "MPI_Iprobe");
  int rc = MPI_SUCCESS;
  auto iprobe = [&](int *f) { return probe_in_handle(PMPI_Iprobe, source, tag, comm, f, status); };
  if (iprobe_found_dead(op, iprobe, flag, &rc)) return p2p::apply_policy(op, status);
  return rc;
}

extern "C" int __wrap_MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *msg, MPI_Status *status) {
  count_call(CallId::MPI_Mprobe);
  if (replica::on()) return replica::mprobe(source, tag, comm, msg, status);
  if (source == MPI_PROC_NULL) return PMPI_Mprobe(source, tag, comm, msg, status);
  Op op = p2p::make_op(Dir::recv, source, tag, comm, "MPI_Mprobe");
  MPI_Status local;
  MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
  int rc = MPI_SUCCESS;
  auto improbe = [&](int *flag) { return mprobe_in_handle(source, tag, comm, flag, msg, st); };
  if (!probe_blocking(op, improbe, &rc)) return no_message(op, msg, status);
  if (rc == MPI_SUCCESS) matched(*msg, op, *st);
  return rc;
}

extern "C" int __wrap_MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *msg,
                                  MPI_Status *status) {
  count_call(CallId::MPI_Improbe);
  if (replica::on()) return replica::improbe(source, tag, comm, flag, msg, status);
  if (source == MPI_PROC_NULL) return PMPI_Improbe(source, tag, comm, flag, msg, status);
  Op op = p2p::make_op(Dir::recv, source, tag, comm, "MPI_Improbe");
  MPI_Status local;
  MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
  int rc = MPI_SUCCESS;
  auto improbe = [&](int *f) { return mprobe_in_handle(source, tag, comm, f, msg, st); };
  if (iprobe_found_dead(op, improbe, flag, &rc)) return no_message(op, msg, status);
  if (*flag && rc == MPI_SUCCESS) matched(*msg, op, *st);
  return rc;
}

extern "C" int __wrap_MPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *msg, MPI_Status *status) {
  count_call(CallId::MPI_Mrecv);
  if (replica::on()) return replica::mrecv(buf, count, type, msg, status);
  if (*msg == MPI_MESSAGE_NULL || *msg == MPI_MESSAGE_NO_PROC) return PMPI_Mrecv(buf, count, type, msg, status);
  Op op = message_op(*msg, "MPI_Mrecv");
  MPI_Request req;
  int rc = p2p::post_mrecv(buf, count, type, msg, op, &req);
  if (rc != MPI_SUCCESS) return rc;
  return p2p::complete(&req, op, status);
}

extern "C" int __wrap_MPI_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *msg, MPI_Request *req) {
  count_call(CallId::MPI_Imrecv);
  if (replica::on()) return replica::imrecv(buf, count, type, msg, req);
  if (*msg == MPI_MESSAGE_NULL || *msg == MPI_MESSAGE_NO_PROC) return PMPI_Imrecv(buf, count, type, msg, req);
  Op op = message_op(*msg, "MPI_Imrecv");
  int rc = p2p::post_mrecv(buf, count, type, msg, op, req);
  return op.dir == Dir::none ? rc : p2p::tracked(rc, req, op);
}
