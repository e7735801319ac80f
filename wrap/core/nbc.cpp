#include "wrap/core/nbc.hpp"

#include <algorithm>
#include <mutex>
#include <vector>

#include "detector/log.hpp"
#include "wrap/core/deferred.hpp"
#include "wrap/core/progress.hpp"

namespace cohort::wrap::nbc {
namespace {

// What the program's request reports when it completes: the code, and the bytes its status counts.
struct Outcome {
  int rc = MPI_SUCCESS;
  MPI_Count bytes = 0;
};

// One nonblocking operation in flight: a collective (adapter), or a local one (step).
struct Op {
  Op(Alias &a, const CallDesc &call) : alias(&a), adapter(std::make_unique<OpAdapter>(a, call)) {
    adapter->end_on_revoke();
  }
  explicit Op(LocalStep s) : step(std::move(s)) {}
  Alias *alias = nullptr;               // null for a local operation
  std::unique_ptr<OpAdapter> adapter;   // null for a local operation
  LocalStep step;
  bool step_done = false;
  int step_rc = MPI_SUCCESS;
  bool done() const { return adapter ? adapter->next() == OpAction::done : step_done; }
  std::unique_ptr<OpState> state;
  OwnedPostFn post;
  MPI_Request grequest = MPI_REQUEST_NULL;  // the program's handle
  Outcome *result = nullptr;                // read by query_fn; owned by the generalized request
  bool freed = false;                       // the program called MPI_Request_free
};

std::mutex g_drive;                       // held by the one thread that drives (and changes g_ops)
std::vector<std::unique_ptr<Op>> g_ops;   // in start order; guarded by g_drive
thread_local bool t_inside = false;       // this thread holds g_drive

// NOTE: a collective's request has no source or tag; MPI_ERROR and the return value are the outcome.
int query_fn(void *extra, MPI_Status *st) {
  const Outcome &o = *static_cast<Outcome *>(extra);
  st->MPI_SOURCE = MPI_ANY_SOURCE;
  st->MPI_TAG = MPI_ANY_TAG;
  st->MPI_ERROR = o.rc;
  PMPI_Status_set_elements_x(st, MPI_BYTE, o.bytes);
  PMPI_Status_set_cancelled(st, 0);
  return o.rc;
}
int free_fn(void *extra) {
  delete static_cast<Outcome *>(extra);
  return MPI_SUCCESS;
}
int cancel_fn(void *, int) { return MPI_SUCCESS; }  // a collective cannot be cancelled (MPI 4.0, 3.8.4)

// Holds g_drive and marks this thread as the driver for its scope.
class Driving {
 public:
  Driving() : lock_(g_drive) { t_inside = true; }
  explicit Driving(std::try_to_lock_t) : lock_(g_drive, std::try_to_lock) { t_inside = lock_.owns_lock(); }
  ~Driving() {
    if (lock_.owns_lock()) t_inside = false;
  }
  bool owns() const { return lock_.owns_lock(); }

 private:
  std::unique_lock<std::mutex> lock_;
};

// The operation is done: its request completes with the outcome, and it leaves the table.
void finish(Op &op) {
  op.result->rc = op.adapter ? op.adapter->result() : op.step_rc;
  if (op.state) op.state->finish(&op.result->rc, &op.result->bytes);
  PMPI_Grequest_complete(op.grequest);
  if (op.freed) PMPI_Request_free(&op.grequest);
  // NOTE: an abandoned request may still read what the posts gave MPI: never free it.
  if (op.adapter && op.adapter->abandoned()) (void)op.state.release();
  g_ops_in_flight.fetch_sub(1, std::memory_order_relaxed);
}

// One pass over the operations (g_drive held): the oldest unfinished one of each alias (its turn) takes
// the steps it can without waiting; the others wait for their turn, not even posted.
// NOTE: posting the later ones early would let ranks interleave their posts with the turn's confirmation
// barrier in different orders on one communicator (a rank whose turn completed inside the next start posts
// its barrier first): Open MPI 4.1's libnbc then matches the wrong operations (MPI_ERR_TRUNCATE), MPICH
// would too.
void advance() {
  std::vector<const Alias *> waiting;  // aliases whose turn is taken by an unfinished operation
  bool finished = false;
  for (auto &p : g_ops) {
    Op &op = *p;
    if (!op.adapter) {
      if (!op.step_done) op.step_done = op.step(&op.step_rc);
      if (op.step_done) {
        finish(op);
        finished = true;
      }
      continue;
    }
    if (std::find(waiting.begin(), waiting.end(), op.alias) != waiting.end()) continue;
    while (op.adapter->next() != OpAction::done && op.adapter->step(op.post, false)) {
    }
    if (op.adapter->next() == OpAction::done) {
      finish(op);
      finished = true;
    } else {
      waiting.push_back(op.alias);
    }
  }
  if (finished) {
    g_ops.erase(std::remove_if(g_ops.begin(), g_ops.end(),
                               [](const std::unique_ptr<Op> &p) { return p->done(); }),
                g_ops.end());
  }
}

// Advances the operations (g_drive held) until pred() holds, with the poll loop's backoff.
template <typename Pred>
void advance_until(Pred pred) {
  advance();
  if (pred()) return;
  wait_until(
      [&] {
        advance();
        return pred();
      },
      Watch{});
}

bool holds(const Alias &alias) {
  return std::any_of(g_ops.begin(), g_ops.end(), [&](const std::unique_ptr<Op> &p) { return p->alias == &alias; });
}

Op *find(MPI_Request req) {
  for (auto &p : g_ops) {
    if (p->grequest == req && !p->freed) return p.get();
  }
  return nullptr;
}

// Every wait drives the operations in flight (wrap/core/progress.hpp).
[[maybe_unused]] const bool g_driven = (set_in_flight_driver(&progress), true);

}  // namespace

int start(Alias &alias, const CallDesc &call, std::unique_ptr<OpState> state, OwnedPostFn post) {
  deferred::settle_all(nullptr);  // a settle point (wrap/core/deferred.hpp)
  auto op = std::make_unique<Op>(alias, call);
  op->state = std::move(state);
  op->post = std::move(post);
  op->result = new Outcome;
  int rc = PMPI_Grequest_start(query_fn, free_fn, cancel_fn, op->result, &op->grequest);
  if (rc != MPI_SUCCESS) {
    delete op->result;
    PMPI_Comm_call_errhandler(alias.handle(), rc);
    return rc;
  }
  *call.request = op->grequest;
  Driving d;
  g_ops_in_flight.fetch_add(1, std::memory_order_relaxed);
  g_ops.push_back(std::move(op));
  advance();  // posts it if it is the alias's turn, and moves it as far as it goes
  return MPI_SUCCESS;
}

int start_local(LocalStep step, MPI_Request *request) {
  auto op = std::make_unique<Op>(std::move(step));
  op->result = new Outcome;
  int rc = PMPI_Grequest_start(query_fn, free_fn, cancel_fn, op->result, &op->grequest);
  if (rc != MPI_SUCCESS) {
    delete op->result;
    return rc;
  }
  *request = op->grequest;
  Driving d;
  g_ops_in_flight.fetch_add(1, std::memory_order_relaxed);
  g_ops.push_back(std::move(op));
  advance();
  return MPI_SUCCESS;
}

void progress() {
  if (t_inside || !any_in_flight()) return;
  Driving d(std::try_to_lock);
  if (d.owns()) advance();
}

void finish_all(Alias &alias) {
  if (t_inside || !any_in_flight()) return;
  Driving d;
  advance_until([&] { return !holds(alias); });
}

bool drive_until_done(MPI_Request req) {
  if (t_inside || !any_in_flight()) return false;
  Driving d;
  Op *op = find(req);
  if (op == nullptr) return false;
  if (g_ops.size() == 1 && op->adapter) {
    // NOTE: the only operation in flight: it waits in cohort's poll loop as a blocking call does (no other
    // operation needs this rank to move meanwhile). With others in flight every pass moves all of them.
    while (op->adapter->next() != OpAction::done) op->adapter->step(op->post, true);
    finish(*op);
    g_ops.clear();
    return true;
  }
  advance_until([&] { return find(req) == nullptr; });
  return true;
}

bool release(MPI_Request *req) {
  if (t_inside || !any_in_flight()) return false;
  Driving d;
  Op *op = find(*req);
  if (op == nullptr) return false;
  op->freed = true;
  *req = MPI_REQUEST_NULL;
  advance();
  return true;
}

int in_flight() { return g_ops_in_flight.load(); }

}  // namespace cohort::wrap::nbc
