#include "wrap/core/small_coll.hpp"

#include <cstring>
#include <mutex>
#include <utility>

#include "detector/env.hpp"
#include "detector/inject.hpp"
#include "detector/log.hpp"
#include "wrap/core/alias.hpp"
#include "wrap/core/settings.hpp"
#include "wrap/core/ulfm_mode.hpp"
#include "wrap/core/reduce_local.hpp"

namespace cohort::wrap::small {
namespace {

// Tags 0 .. 2 x kCallsPerTagCycle - 1 of a substitute are the schedules': two per call number (the call, its
// confirmation), the numbers taken modulo kCallsPerTagCycle.
// Nothing else sends point-to-point messages on a substitute cohort made.
constexpr unsigned long long kCallsPerTagCycle = 16000;

std::mutex g_lost_mu;
std::vector<std::unique_ptr<Op>> g_lost;  // guarded by g_lost_mu

thread_local std::unique_ptr<Op> t_spare[4];  // one per topology::CollKind, so each keeps its schedule

}  // namespace

long max_bytes() {
  static const long b = read_setting(setting::COHORT_P2P_COLL_MAX_BYTES);
  return b;
}

bool confirm_by_messages() {
  static const bool on = read_setting(setting::COHORT_P2P_CONFIRM) == 1;
  return on;
}

void check_settings() {
  max_bytes();
  confirm_by_messages();
}

int tag(unsigned long long call_no, bool confirm) {
  return static_cast<int>((call_no % kCallsPerTagCycle) * 2 + (confirm ? 1 : 0));
}

// NOTE: not under the ulfm backend: there MPI itself fails a request to a dead rank, which the schedules
// would have to tell apart from a message's own error; its substitutes keep MPI's collectives.
#if defined(COHORT_USE_ULFM)
constexpr bool kBackendAllows = false;
#else
constexpr bool kBackendAllows = true;
#endif

bool confirm_eligible(const Alias &alias, const Substitute &sub) {
  return kBackendAllows && confirm_by_messages() && sub.comm != alias.handle() && !ulfm::active(alias.handle());
}

bool eligible(const Alias &alias, const Substitute &sub, const Call &call, Layout *layout) {
  if (!kBackendAllows || max_bytes() <= 0 || sub.comm == alias.handle() || ulfm::active(alias.handle())) {
    return false;
  }
  if (call.kind == topology::CollKind::barrier) return true;
  int size = 0;
  if (PMPI_Type_size(call.type, &size) != MPI_SUCCESS || call.count < 0) return false;
  if (static_cast<long long>(size) * call.count > max_bytes()) return false;
  // Only data without holes: the schedule copies the whole span in and out, holes included.
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  PMPI_Type_get_extent(call.type, &lb, &extent);
  PMPI_Type_get_true_extent(call.type, &true_lb, &true_extent);
  if (call.count > 0 && (call.count - 1) * extent + true_extent != static_cast<MPI_Aint>(size) * call.count) return false;
  if (layout != nullptr) *layout = Layout{extent, true_lb, true_extent, true};
  if (call.kind == topology::CollKind::reduce || call.kind == topology::CollKind::allreduce) {
    int commutative = 0;
    if (call.op == MPI_OP_NULL || PMPI_Op_commutative(call.op, &commutative) != MPI_SUCCESS || !commutative) {
      return false;
    }
    // (otherwise MPI's nonblocking collective reduces: the Sessions model alone under Open MPI, user's op)
    if (!reduce_local_covers(call.type, call.op)) return false;
  }
  return true;
}

int Op::start(const Call &call, MPI_Comm comm, int n, int me, int root, int tag, const Layout *layout) {
  call_ = call;
  comm_ = comm;
  tag_ = tag;
  me_ = me;
  root_ = root;
  pos_ = 0;
  pending_ = 0;
  failed_ = false;
  combine_ = false;
  error_ = MPI_SUCCESS;
  // (the same schedule as last time, mostly: this Op is the thread's spare for call.kind)
  if (call.kind != kind_ || n != n_ || me != me_of_steps_ || root != root_of_steps_) {
    topology::coll_schedule(call.kind, n, me, root, &steps_);
    kind_ = call.kind, n_ = n, me_of_steps_ = me, root_of_steps_ = root;
  }
  if (call.kind != topology::CollKind::barrier) {
    MPI_Aint lb = 0, extent = 0, true_extent = 0;
    if (layout != nullptr && layout->known) {
      extent = layout->extent, true_lb_ = layout->true_lb, true_extent = layout->true_extent;
    } else {
      PMPI_Type_get_extent(call.type, &lb, &extent);
      PMPI_Type_get_true_extent(call.type, &true_lb_, &true_extent);
    }
    span_ = call.count > 0 ? static_cast<std::size_t>((call.count - 1) * extent + true_extent) : 0;
    // (one element more than the data: see post_round; and a buffer's address is never null)
    const std::size_t room = span_ + static_cast<std::size_t>(extent > 0 ? extent : 0) + 1;
    acc_.resize(room);
    acc_base_ = acc_.data() - true_lb_;
    if (call.kind != topology::CollKind::bcast) {
      tmp_.resize(room);
      tmp_base_ = tmp_.data() - true_lb_;
    }
    const bool has_input = call.kind != topology::CollKind::bcast || me == root;
    if (has_input && span_ > 0) std::memcpy(acc_.data(), static_cast<const char *>(call.in) + true_lb_, span_);
  } else {
    span_ = 0;
    acc_.resize(1);
    acc_base_ = acc_.data();
  }
  return post_round();
}

// Posts the steps up to the next end_round. Once a message of this schedule completed in error (error_),
// the sends carry one element more than the count, so that their receivers complete with MPI_ERR_TRUNCATE
// too: every rank after a truncated one in the schedule returns the error, as with MPI's own collectives.
int Op::post_round() {
  const bool data = call_.kind != topology::CollKind::barrier;
  const int count = data ? call_.count : 0;
  const int send_count = data && error_ != MPI_SUCCESS ? count + 1 : count;
  const MPI_Datatype type = data ? call_.type : MPI_BYTE;
  for (; pos_ < steps_.size(); ++pos_) {
    const topology::CollStep &s = steps_[pos_];
    int rc = MPI_SUCCESS;
    switch (s.op) {
      case topology::CollStep::end_round: ++pos_; return MPI_SUCCESS;
      case topology::CollStep::send:
        rc = PMPI_Isend(acc_base_, send_count, type, s.peer, tag_, comm_, &reqs_[pending_]);
        break;
      case topology::CollStep::recv:
        rc = PMPI_Irecv(acc_base_, count, type, s.peer, tag_, comm_, &reqs_[pending_]);
        break;
      case topology::CollStep::recv_combine:
        rc = PMPI_Irecv(tmp_base_, count, type, s.peer, tag_, comm_, &reqs_[pending_]);
        combine_ = true;
        break;
    }
    if (rc != MPI_SUCCESS) {
      failed_ = true;  // (the requests posted so far stay with MPI)
      return rc;
    }
    ++pending_;
  }
  return MPI_SUCCESS;
}

void Op::finish() {
  const bool copy = (call_.kind == topology::CollKind::bcast && me_ != root_) ||
                    (call_.kind == topology::CollKind::reduce && me_ == root_) ||
                    call_.kind == topology::CollKind::allreduce;
  if (!copy || span_ == 0) return;
  std::memcpy(static_cast<char *>(call_.out) + true_lb_, acc_.data(), span_);
}

// NOTE: a message that completes in error (MPI_ERR_TRUNCATE: a receiver passed a smaller count than the root
// of a Bcast) does not stop the schedule: this rank still forwards what it has, so that the ranks after it in
// the tree are not left waiting, and reports the first such error once the schedule is done (MPI's own
// collectives behave alike). An error of a post ends it.
bool Op::test(int *rc) {
  for (;;) {
    if (failed_) {
      *rc = error_ != MPI_SUCCESS ? error_ : MPI_ERR_INTERN;
      return true;
    }
    if (pending_ > 0) {
      // (one MPI_Test per request, so that each error is known by its request: raise_p2p_test_error)
      int done = 1;
      for (int i = 0; i < pending_; ++i) {
        if (reqs_[i] == MPI_REQUEST_NULL) continue;
        int flag = 0;
        const int r = PMPI_Test(&reqs_[i], &flag, MPI_STATUS_IGNORE);
        if (r != MPI_SUCCESS) {
          if (error_ == MPI_SUCCESS) error_ = r;
          reqs_[i] = MPI_REQUEST_NULL;  // (completed in error: MPI has freed it)
        } else if (!flag) {
          done = 0;
        }
      }
      if (!done) return false;
      pending_ = 0;
      if (combine_) {
        combine_ = false;
        int r2 = reduce_local(tmp_base_, acc_base_, call_.count, call_.type, call_.op, "small collective");
        if (r2 != MPI_SUCCESS && error_ == MPI_SUCCESS) error_ = r2;
      }
    }
    if (pos_ >= steps_.size()) {
      finish();
      *rc = error_;
      return true;
    }
    // (tests: COHORT_INJECT_FAILURE=...,at=coll.round kills a rank between two rounds of a schedule)
    inject::point("coll.round");
    int r = post_round();
    if (r != MPI_SUCCESS) {
      error_ = r;
      *rc = r;
      return true;
    }
  }
}

std::unique_ptr<Op> acquire(topology::CollKind kind) {
  std::unique_ptr<Op> &spare = t_spare[static_cast<int>(kind)];
  if (spare) return std::move(spare);
  return std::make_unique<Op>();
}

void release(std::unique_ptr<Op> op) {
  if (!op) return;
  if (op->active()) return lose(std::move(op));
  t_spare[static_cast<int>(op->kind())] = std::move(op);
}

void lose(std::unique_ptr<Op> op) {
  if (!op) return;
  std::lock_guard<std::mutex> lock(g_lost_mu);
  g_lost.push_back(std::move(op));
}

}  // namespace cohort::wrap::small
