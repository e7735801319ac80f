// Deferred confirmation: the MPI adapter of wrap/core/confirm_window.hpp (see wrap/core/deferred.hpp).
#include "wrap/core/deferred.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <mutex>
#include <vector>

#include "detector/env.hpp"
#include "detector/inject.hpp"
#include "detector/log.hpp"
#include "detector/runtime.hpp"
#include "repair/repair.hpp"
#include "wrap/core/alias.hpp"
#include "wrap/core/confirm_state.hpp"
#include "wrap/core/op_adapter.hpp"
#include "wrap/core/progress.hpp"
#include "wrap/core/settings.hpp"
#include "wrap/core/small_coll.hpp"
#include "wrap/core/reduce_local.hpp"

namespace cohort::wrap::deferred {
namespace {

// How long (us) a deferred call's own request waits before this rank reports a stale count.
constexpr int kStaleReportUs = 200;

// The predefined datatypes and ops a replay can name by index (a replay may run after the program freed
// its own types and ops, so only predefined ones are deferred).
const std::vector<MPI_Datatype> &types() {
  static const std::vector<MPI_Datatype> t = {
      MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE, MPI_SHORT, MPI_UNSIGNED_SHORT, MPI_INT, MPI_UNSIGNED,
      MPI_LONG, MPI_UNSIGNED_LONG, MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG, MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE,
      MPI_C_BOOL, MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T, MPI_UINT16_T, MPI_UINT32_T,
      MPI_UINT64_T, MPI_AINT, MPI_OFFSET, MPI_COUNT, MPI_WCHAR, MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX,
      MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT};
  return t;
}
const std::vector<MPI_Op> &ops() {
  static const std::vector<MPI_Op> o = {MPI_SUM,  MPI_PROD, MPI_MAX,  MPI_MIN,  MPI_LAND,   MPI_BAND,
                                        MPI_LOR,  MPI_BOR,  MPI_LXOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC};
  return o;
}
template <typename T>
int index_of(const std::vector<T> &v, T x) {
  auto it = std::find(v.begin(), v.end(), x);
  return it == v.end() ? -1 : static_cast<int>(it - v.begin());
}

// A replay's wire record: this header, then the data.
struct Header {
  int flag, reduces, count, type_index, op_index;
};

// "Holder wins": the higher flag wins (2: a result, 1: an input, 0: nothing); two inputs of a reduction
// are reduced with the call's own op. Commutative and associative (predefined ops are commutative).
void pick(void *in, void *inout, int *len, MPI_Datatype *type) {
  int size = 0;
  PMPI_Type_size(*type, &size);
  for (int i = 0; i < *len; ++i) {
    char *a = static_cast<char *>(in) + static_cast<std::size_t>(i) * size;
    char *b = static_cast<char *>(inout) + static_cast<std::size_t>(i) * size;
    Header ha, hb;
    std::memcpy(&ha, a, sizeof ha);
    std::memcpy(&hb, b, sizeof hb);
    if (ha.flag > hb.flag) {
      std::memcpy(b, a, static_cast<std::size_t>(size));
    } else if (ha.flag == 1 && hb.flag == 1 && ha.reduces && ha.count > 0) {
      reduce_local(a + sizeof(Header), b + sizeof(Header), ha.count, types()[ha.type_index], ops()[ha.op_index],
                   "deferred confirmation");
    }
  }
}

MPI_Op pick_op() {
  static MPI_Op op = [] {
    MPI_Op o;
    PMPI_Op_create(&pick, 1, &o);
    return o;
  }();
  return op;
}

int type_bytes(MPI_Datatype type, int count) {
  int size = 0;
  PMPI_Type_size(type, &size);
  return size * count;
}

bool all_entered(Kind k) { return k == Kind::barrier || k == Kind::allreduce; }

void mark_unsettled(State &st) {
  if (!st.counted.load(std::memory_order_relaxed)) {
    st.counted.store(true, std::memory_order_relaxed);
    g_unsettled.fetch_add(1, std::memory_order_relaxed);
  }
}
// Settled: every call confirmed and this rank's count reported (a member may wait for exactly that count
// while this rank goes on to calls that do not report: a settle point precedes them).
void mark_settled(State &st) {
  if (st.counted.load(std::memory_order_relaxed) && st.win.settled() && !st.win.report_stale()) {
    st.counted.store(false, std::memory_order_relaxed);
    g_unsettled.fetch_sub(1, std::memory_order_relaxed);
  }
}

// ---- Count reports (wrap/core/confirm_window.hpp): the MPI side ----

// Retires the reports whose sends completed (oldest first), once a few are kept (each test is an MPI
// call, and the sends of 8 bytes complete quickly).
void retire_sent(State &st) {
  while (st.sent.size() > 2) {
    SentReport &r = *st.sent.front();
    int done = 0;
    if (PMPI_Testall(static_cast<int>(r.reqs.size()), r.reqs.data(), &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS ||
        !done)
      return;
    st.sent.pop_front();
  }
}

// Follows the alias to its current substitute: a fresh table of heard counts and a posted receive.
void on_current(const Alias &alias, State &st) {
  const Substitute &sub = alias.current();
  if (st.report_sub == &sub && st.report_recv != MPI_REQUEST_NULL) return;
  if (st.report_sub != &sub) {
    leave_substitute(st);
    st.heard.assign(static_cast<std::size_t>(sub.map.sub_size()), 0);
    st.report_sub = &sub;
  }
  if (PMPI_Irecv(&st.report_in, 1, MPI_UINT64_T, MPI_ANY_SOURCE, kReportTag, sub.comm, &st.report_recv) !=
      MPI_SUCCESS)
    st.report_recv = MPI_REQUEST_NULL;
}

// Reads the reports that arrived; the lowest count of the other members confirms the calls below it.
// Returns true when MPI reported a failure on the receive of reports (the ulfm backend; the heartbeat
// backend learns it from the detector).
bool poll_reports(const Alias &alias, State &st) {
  bool failure = false;
  on_current(alias, st);
  while (st.report_recv != MPI_REQUEST_NULL) {
    int done = 0;
    MPI_Status status;
    const int t = PMPI_Test(&st.report_recv, &done, &status);
    if (t != MPI_SUCCESS) {
      failure = repair::is_failure(t);
      break;
    }
    if (!done) break;
    const int from = status.MPI_SOURCE;
    if (from >= 0 && from < static_cast<int>(st.heard.size())) st.heard[from] = std::max(st.heard[from], st.report_in);
    st.report_recv = MPI_REQUEST_NULL;
    on_current(alias, st);
  }
  const Substitute &sub = *st.report_sub;
  std::uint64_t low = st.win.completed();
  for (int r = 0; r < static_cast<int>(st.heard.size()); ++r) {
    if (r != sub.rank) low = std::min(low, st.heard[r]);
  }
  st.win.peers_completed(low);
  retire_sent(st);
  return failure;
}

// Set by shutdown(): report_idle() leaves the windows alone (their substitutes are being left).
std::atomic<bool> g_shut{false};

// Tells every other member of the current substitute this rank's completed count. hook: reach the inject
// point "confirm.posted" (the program's thread only: tests count its hits).
void report(const Alias &alias, State &st, bool hook = true) {
  on_current(alias, st);
  const Substitute &sub = *st.report_sub;
  auto r = std::make_unique<SentReport>();
  r->count = st.win.completed();
  r->reqs.reserve(static_cast<std::size_t>(sub.map.sub_size()));
  for (int to = 0; to < sub.map.sub_size(); ++to) {
    if (to == sub.rank) continue;
    MPI_Request q = MPI_REQUEST_NULL;
    if (PMPI_Isend(&r->count, 1, MPI_UINT64_T, to, kReportTag, sub.comm, &q) == MPI_SUCCESS) r->reqs.push_back(q);
  }
  st.win.reported();
  st.sent.push_back(std::move(r));
  retire_sent(st);
  if (hook) inject::point("confirm.posted");
}

// The calls' logged records stay in the State; replays read them from there.
int replay(Alias &alias, std::uint64_t j, const Record &rec, void *result);

// The survivors agree on their counts of completed calls, shrink, and this rank replays, as a holder, the
// calls that others may miss. Returns MPI_SUCCESS or an MPI error of the shrink.
int recover(Alias &alias, State &st, const char *call) {
  const Substitute &sub = alias.current();
  AgreementCode code = st.win.agreement_code();
  std::vector<int> failed;
  agree_code(sub.comm, &code, st.win.code_words(), &failed);
  CompletedSpan span{st.win.completed(), st.win.completed()};
  if (!st.win.read(code, &span)) {
    COHORT_LOG_ERROR("%s: survivors further apart than the confirmation window (agreed code %#x...)", call,
                     static_cast<unsigned>(code.word[0]));
  }
  COHORT_LOG_INFO("%s: survivors completed %llu to %llu calls (this rank %llu); replaying what others miss", call,
                  static_cast<unsigned long long>(span.low), static_cast<unsigned long long>(span.high),
                  static_cast<unsigned long long>(st.win.completed()));
  sub.abandoned.store(true);  // (requests of others may still be pending on it)
  leave_substitute(st);
  int rc = alias.shrink(sub, call);
  if (rc != MPI_SUCCESS) return rc;
  for (auto &e : st.win.recover(span)) {
    int r = replay(alias, e.call, e.payload, nullptr);
    if (r != MPI_SUCCESS) rc = r;
  }
  mark_settled(st);
  return rc;
}

// Waits until the calls below `need` are confirmed (reporting this rank's count first, if stale: the others
// may wait for it); on a failure, recovers. Returns false after a recovery.
bool wait_confirmed(Alias &alias, State &st, std::uint64_t need, const char *call, int *rc) {
  poll_reports(alias, st);
  if (st.win.confirmed() >= need) return true;
  if (st.win.report_stale()) report(alias, st);
  const Substitute *sub = st.report_sub;
  Watch watch;
  watch.broken = [sub] { return sub->any_member_failed(); };
  bool failure = false;
  auto done = [&] {
    failure = poll_reports(alias, st);
    return failure || st.win.confirmed() >= need;
  };
  if (wait_until(done, watch) == WaitResult::completed && !failure) return true;
  *rc = recover(alias, st, call);
  return false;
}

int replay(Alias &alias, std::uint64_t j, const Record &rec, void *result) {
  const char *name = rec.name;
  if (rec.kind == Kind::barrier) return MPI_SUCCESS;  // one survivor's completion: every member entered it
  const std::size_t n = rec.data.size();
  // NOTE: an abandoned attempt may still use the buffers and the type: then they are leaked.
  auto *bufs = new std::vector<char>[2]{std::vector<char>(sizeof(Header) + n), std::vector<char>(sizeof(Header) + n)};
  std::vector<char> &send = bufs[0], &recv = bufs[1];
  Header h{rec.flag, rec.kind != Kind::bcast, rec.count, rec.type_index, rec.op_index};
  std::memcpy(send.data(), &h, sizeof h);
  if (n > 0) std::memcpy(send.data() + sizeof h, rec.data.data(), n);
  MPI_Datatype record;
  PMPI_Type_contiguous(static_cast<int>(send.size()), MPI_BYTE, &record);
  PMPI_Type_commit(&record);
  CallDesc d{name, nullptr, Shape::all_to_all};
  OpAdapter op(alias, d, j);
  auto post = [&](const Substitute &s, int, MPI_Request *req) {
    return PMPI_Iallreduce(send.data(), recv.data(), 1, record, pick_op(), s.comm, req);
  };
  while (op.next() != OpAction::done) op.step(post, true);
  int rc = op.result();
  std::vector<char> out = recv;
  if (!op.abandoned()) {
    PMPI_Type_free(&record);
    delete[] bufs;
  }
  if (rc != MPI_SUCCESS) return rc;
  Header got;
  std::memcpy(&got, out.data(), sizeof got);
  const bool root_member = rec.root < 0 || alias.member(rec.root);
  if (rec.kind == Kind::bcast && (got.flag < 2 || !root_member)) {
    if (got.flag < 2) {
      char what[96];
      std::snprintf(what, sizeof what, "root %d died before any survivor got its data", rec.root);
      return apply_policy(alias, dead_root_policy(name, rec.dead_root), name, what);
    }
  }
  if (rec.kind == Kind::reduce && !root_member) {
    char what[96];
    std::snprintf(what, sizeof what, "root %d died before it had the result", rec.root);
    return apply_policy(alias, dead_root_policy(name, rec.dead_root), name, what);
  }
  if (result != nullptr && got.flag > 0 && n > 0) std::memcpy(result, out.data() + sizeof got, n);
  return MPI_SUCCESS;
}

// This rank in the alias (a survivor is a member of the current substitute).
int alias_rank(const Alias &alias) {
  const Substitute &sub = alias.current();
  return sub.map.to_alias(sub.rank);
}

// Where a replay of a call this rank did not complete writes the result: Bcast's buffer, Allreduce's
// recvbuf, Reduce's recvbuf at the root; nowhere else.
void *output(const Alias &alias, const CallDesc &call, const Buffers &b) {
  switch (b.kind) {
    case Kind::barrier: return nullptr;
    case Kind::reduce: return alias_rank(alias) == call.root ? b.result : nullptr;
    default: return b.result;
  }
}

// A record of the call without data (flag 0).
Record blank_record(const CallDesc &call, const Buffers &b, Kind kind) {
  Record r;
  r.kind = kind;
  r.name = call.name;
  r.dead_root = call.dead_root;
  r.root = call.root;
  r.count = b.count;
  r.type_index = index_of(types(), b.type);
  r.op_index = b.op == MPI_OP_NULL ? -1 : index_of(ops(), b.op);
  return r;
}

// This rank's record of a call it did not complete (its input, or a Bcast root's data).
Record own_record(const Alias &alias, const CallDesc &call, const Buffers &b, Kind kind) {
  Record r = blank_record(call, b, kind);
  const int bytes = kind == Kind::barrier ? 0 : type_bytes(b.type, b.count);
  const bool root = call.root >= 0 && alias_rank(alias) == call.root;
  const void *in = b.input == MPI_IN_PLACE ? b.result : b.input;
  if (kind == Kind::bcast) {
    r.flag = root ? 2 : 0;  // the root holds the data whether or not its request completed
    r.data.resize(static_cast<std::size_t>(bytes));
    if (root && bytes > 0) std::memcpy(r.data.data(), b.input, static_cast<std::size_t>(bytes));
  } else if (kind != Kind::barrier) {
    r.flag = 1;
    r.data.assign(static_cast<const char *>(in), static_cast<const char *>(in) + bytes);
  }
  return r;
}

// Call j as Role::replay on this rank: takes a holder's result (saved: this rank's record taken before an
// abandoned post, else made now). The call's inject hook is reached if `hook`.
int replay_mine(Alias &alias, State &st, const CallDesc &call, const Buffers &b, std::uint64_t j, const Record *saved,
                bool hook) {
  Record own = saved != nullptr && b.kind != Kind::bcast ? *saved : own_record(alias, call, b, b.kind);
  int rc = replay(alias, j, own, output(alias, call, b));
  st.win.replayed(j);
  if (hook && call.posted_hook != nullptr) inject::point(call.posted_hook);
  return rc;
}

// The blocking MPI_Reduce's dead-root policy is `skip` (the one deferred call with a root that only it
// receives at). Read once: its variables do not change while the job runs (checked at MPI_Init).
bool reduce_skips(const CallDesc &call) {
  static const bool skips = dead_root_policy(call.name, call.dead_root) == Policy::skip;
  return skips;
}

bool deferrable(const Alias &alias, const CallDesc &call, const Buffers &b) {
  if (window() <= 1 || b.kind == Kind::other) return false;
  if (b.kind == Kind::barrier) return true;
  if (static_cast<long>(type_bytes(b.type, b.count)) > max_bytes() || index_of(types(), b.type) < 0) return false;
  if (b.kind != Kind::bcast && index_of(ops(), b.op) < 0) return false;
  // NOTE: a non-root returns before the root's fate is known: only `skip` lets a dead root's Reduce pass
  // unnoticed, as it does when W = 1.
  if (b.kind == Kind::reduce && !reduce_skips(call)) return false;
  (void)alias;
  return true;
}


// Waits until this rank's own request of a deferred call completes (a schedule `op`, else MPI's `req`) or a
// member of the call's substitute is known dead (st.watch). True when the call broke (a death, a revoke, or
// a failure MPI itself reported under the ulfm backend); *req_rc is the request's error code, if any.
// A rank kept waiting here reports its count after kStaleReportUs: a member at a settle point may need
// exactly that count before it can go on to this very call (wrap/core/confirm_window.hpp, count reports).
bool wait_own(const Alias &alias, State &st, small::Op *op, MPI_Request *req, int *req_rc) {
  bool mpi_failure = false;
  unsigned polls = 0;
  std::chrono::steady_clock::time_point since{};
  auto done = [&] {
    if (op != nullptr) {
      if (op->test(req_rc)) return true;
    } else {
      int flag = 0;
      int t = PMPI_Test(req, &flag, MPI_STATUS_IGNORE);
      if (repair::is_failure(t)) {
        mpi_failure = true;
      } else if (t != MPI_SUCCESS) {
        *req_rc = t;
      }
      if (t != MPI_SUCCESS || flag) return true;
    }
    if (st.win.report_stale() && ++polls % 16 == 0) {
      auto now = std::chrono::steady_clock::now();
      if (polls == 16) {
        since = now;
      } else if (now - since > std::chrono::microseconds(kStaleReportUs)) {
        report(alias, st);
      }
    }
    return false;
  };
  WaitResult w = wait_until(done, st.watch);
  return mpi_failure || w == WaitResult::broken || w == WaitResult::revoked;
}

// Logs call j, completed here, in the window with what a replay needs: its result where this rank has it
// (Bcast, Allreduce, Reduce at the root), a Reduce's input elsewhere (rec, taken before the post), a
// blank record for a Barrier.
void log_completed(const Alias &alias, State &st, const CallDesc &call, const Buffers &b, std::uint64_t j,
                   Record rec) {
  const Kind kind = b.kind;
  st.win.completed(j, all_entered(kind));
  const bool root = call.root >= 0 && alias_rank(alias) == call.root;
  if (kind == Kind::bcast || kind == Kind::allreduce || (kind == Kind::reduce && root)) {
    const int bytes = type_bytes(b.type, b.count);
    if (rec.flag == 0) rec = blank_record(call, b, kind);  // (else the input's record: its buffer is reused)
    rec.flag = 2;
    const char *out = static_cast<const char *>(b.result);
    rec.data.assign(out, out + bytes);
  } else if (kind == Kind::barrier) {
    rec = blank_record(call, b, kind);
  }
  st.win.log(j, std::move(rec));
  mark_unsettled(st);
}

// After call j was logged: reads the others' reports and sends this rank's count when due, then waits
// until the window allows the call to return (at most W - 1 unconfirmed). *rc: an agreement's error, if a
// recovery failed while waiting.
void keep_window(Alias &alias, State &st, const char *call, std::uint64_t j, int *rc) {
  // Reports are read when they could confirm more than a completed all-to-all call did and the window is
  // one call from full (W - 1 unconfirmed: the next call would wait for them), and every 64th call (to
  // drain stale ones). Each MPI call that finds nothing to do may give up the core when Open MPI runs
  // oversubscribed: a loop of Barriers at 4 ranks on 2 cores took twice as long with one PMPI_Test per
  // call here, and a loop of Bcasts at W = 8 took 5.2 us per call reading whenever 2 or more were
  // unconfirmed, 3.1 us reading at W - 1.
  if ((st.win.unconfirmed() > 1 && st.win.unconfirmed() >= st.win.size() - 1) || (j & 63) == 0)
    poll_reports(alias, st);
  if (st.win.report_due()) report(alias, st);
  while (!st.win.may_return()) {
    const std::uint64_t need = st.win.completed() + 1 - static_cast<std::uint64_t>(st.win.size());
    if (!wait_confirmed(alias, st, need, call, rc)) break;  // recovered: this call completed here
  }
  mark_settled(st);
  if (!st.win.settled()) inject::point("confirm.deferred");
}

// Replays, as a holder, the logged calls that an agreement of run_confirming's call left (State::held), in
// call order, on the shrunk substitute: the survivors that lack them replay them as their programs reach them.
void replay_held(Alias &alias, State &st) {
  std::vector<LogEntryT<Record>> held;
  held.swap(st.held);  // (a failure during these replays agrees again: note_span may fill it anew)
  COHORT_LOG_INFO("replaying %zu calls from %llu that other survivors miss", held.size(),
                  static_cast<unsigned long long>(held.front().call));
  for (auto &e : held) replay(alias, e.call, e.payload, nullptr);
}

// A blocking collective that is not deferred, on an alias with deferred calls pending: it runs as with W = 1
// (confirmed before it returns), and its confirmation confirms the pending calls too (every member posts
// it once its own request completed, so after every call before it). So the pending calls need no settle
// round of count reports first. On a failure its agreement carries counts (use_counts) as every agreement
// on the alias does: this rank replays, after the shrink and before a retry, the calls it holds that
// others miss (note_span), and the calls it misses become replays of its next deferred calls.
int run_confirming(Alias &alias, const CallDesc &call, PostFn post, State &st) {
  std::lock_guard<std::recursive_mutex> lock(st.mu);
  const std::uint64_t j = alias.next_call();
  if (st.win.completed() < j) st.win.replayed(j - 1);  // (the calls since the last deferred one were confirmed)
  st.held.clear();
  // A member at a settle point (before a call on another communicator) may wait for exactly this rank's
  // count while this call waits for that member: reported once the call has waited kStaleReportUs.
  struct Stale {
    Alias &alias;
    State &st;
    unsigned polls = 0;
    std::chrono::steady_clock::time_point since{};
    void operator()() {
      if (!st.win.report_stale() || ++polls % 16 != 0) return;
      const auto now = std::chrono::steady_clock::now();
      if (polls == 16) {
        since = now;
      } else if (now - since > std::chrono::microseconds(kStaleReportUs)) {
        report(alias, st, false);
      }
    }
  } stale{alias, st};
  ThreadPollHook poll_hook([&stale] { stale(); });
  OpAdapter op(alias, call, j);
  op.end_on_revoke();
  bool confirmed = false, agreed = false;
  while (op.next() != OpAction::done) {
    const OpAction a = op.next();
    op.step(post, true);
    if (a == OpAction::agree) agreed = true;
    if (a == OpAction::poll_confirm && op.next() == OpAction::done) confirmed = true;
    if (a == OpAction::shrink && !st.held.empty()) replay_held(alias, st);
  }
  st.held.clear();
  const int rc = op.result();
  if (confirmed) {
    st.win.confirmed_through(j);
  } else if (agreed) {
    st.win.replayed(j);  // (the agreement settled the window: note_span)
  }
  mark_settled(st);
  return rc;
}

}  // namespace

void shutdown() {
  g_shut.store(true);
  for_each_alias([](Alias &a) {
    if (!a.has_deferred_state()) return;
    State &st = a.deferred_state();
    std::lock_guard<std::recursive_mutex> lock(st.mu);
    leave_substitute(st);
  });
}

void check_settings() {
  max_bytes();
  if (window() > 1) detector::add_progress_hook(report_idle);
}

void report_idle() {
  if (g_unsettled.load(std::memory_order_relaxed) == 0 || g_shut.load()) return;
  for_each_alias_locked([](Alias &a) {
    if (!a.has_deferred_state()) return;
    State &st = a.deferred_state();
    std::unique_lock<std::recursive_mutex> lock(st.mu, std::try_to_lock);  // (held: a call is running on it)
    if (!lock.owns_lock() || g_shut.load() || !st.win.report_stale()) return;
    if (st.idle_seen != st.win.completed()) {
      st.idle_seen = st.win.completed();  // (moved since the last look: the program is still calling)
      return;
    }
    report(a, st, false);
    mark_settled(st);
  });
}

void settle(Alias &alias) {
  State &st = alias.deferred_state();
  std::lock_guard<std::recursive_mutex> lock(st.mu);
  int rc = MPI_SUCCESS;
  bool ok = st.win.settled() || wait_confirmed(alias, st, st.win.completed(), "settling confirmations", &rc);
  if (ok && st.win.report_stale()) report(alias, st);  // the others may settle on exactly this count
  mark_settled(st);
}

void settle_all(const Alias *except) {
  const int unsettled = g_unsettled.load(std::memory_order_relaxed);
  if (unsettled == 0) return;
  // The usual case in a loop of deferred calls on one communicator: it is the only one unsettled.
  // (Its own window's flag changes only inside collectives on it, which this thread is in.)
  if (unsettled == 1 && except != nullptr) {
    const State *st = except->deferred_state_if_made();
    if (st != nullptr && st->counted.load(std::memory_order_relaxed)) return;
  }
  for_each_alias([except](Alias &a) {
    if (&a != except && a.has_deferred_state()) settle(a);
  });
}

void settle_before_call() { settle_all(nullptr); }

int run(Alias &alias, const CallDesc &call, PostFn post) {
  const Buffers &b = *call.defer;
  if (!deferrable(alias, call, b)) {
    // Confirmed before it returns. Pending calls of this alias are confirmed with it (run_confirming),
    // unless its root is already known dead (the policy decides without a round that could confirm them).
    settle_all(&alias);
    State *st = alias.has_deferred_state() ? &alias.deferred_state() : nullptr;
    const Substitute &sub = alias.current();
    const bool root_dead = call.root >= 0 && call.root < sub.map.alias_size() && sub.map.to_sub(call.root) < 0;
    if (st != nullptr && !root_dead && window() > 1 && call.shape != Shape::communicator &&
        !call.creates_communicator) {
      if (!st->win.settled()) return run_confirming(alias, call, post, *st);
    }
    if (st != nullptr) settle(alias);
    return run_numbered(alias, call, post, alias.next_call());
  }
  settle_all(&alias);
  State &st = alias.deferred_state();
  std::lock_guard<std::recursive_mutex> lock(st.mu);
  const std::uint64_t j = alias.next_call();
  if (st.win.completed() < j) st.win.replayed(j - 1);  // the calls since the last deferred one were confirmed
  const Kind kind = b.kind;

  if (st.win.role(j) == Role::replay) {
    // A survivor completed this call before a failure: take its result (or, with no holder left, the
    // survivors' reduction).
    return replay_mine(alias, st, call, b, j, nullptr, true);
  }

  // The input of a reduction, before the post may overwrite it (MPI_IN_PLACE): a replay needs it, and so
  // does a post again after a failure.
  Record rec;
  if (kind == Kind::reduce || kind == Kind::allreduce) rec = own_record(alias, call, b, kind);
  const bool in_place = b.input == MPI_IN_PLACE && rec.flag == 1 && !rec.data.empty();
  bool hook = call.posted_hook != nullptr;  // (reached once per call, at the first post)
  int rc = MPI_SUCCESS;
  int req_rc = MPI_SUCCESS;
  bool p2p_error = false;
  for (int attempt = 0;; ++attempt) {
    const Substitute *sub = &alias.current();
    int sub_root = -1;
    if (call.root >= 0) sub_root = call.root >= sub->map.alias_size() ? call.root : sub->map.to_sub(call.root);
    if (sub->any_member_failed()) {
      // A failure known before the post: the survivors agree on what each completed (even with nothing
      // pending here: others may hold this very call). Then the call is posted again, deferred as before:
      // a survivor that joined the same agreement in an earlier call posts it deferred, on the shrunk
      // substitute, and every survivor must run call j the same way.
      rc = recover(alias, st, call.name);
      if (rc != MPI_SUCCESS) return alias.return_error(rc, alias.current());
      if (st.win.role(j) == Role::replay) return replay_mine(alias, st, call, b, j, &rec, hook);
      continue;
    }
    if (in_place && attempt > 0) std::memcpy(b.result, rec.data.data(), rec.data.size());  // (a partial result)
    if (call.root >= 0 && sub_root < 0) {
      // A dead root (agreed): settle, then run the call confirmed, as with W = 1 (its policy decides).
      if (!st.win.settled() && !wait_confirmed(alias, st, st.win.completed(), call.name, &rc)) {
        if (rc != MPI_SUCCESS) return alias.return_error(rc, alias.current());
        if (st.win.role(j) == Role::replay) return replay_mine(alias, st, call, b, j, &rec, hook);
        continue;
      }
      CallDesc once = call;
      if (!hook) once.posted_hook = nullptr;
      rc = run_numbered(alias, once, post, j);
      st.win.replayed(j);
      return rc;
    }

    // The call runs on cohort's schedule where it may (wrap/core/small_coll.hpp), else on MPI's nonblocking call.
    std::unique_ptr<small::Op> op;
    MPI_Request req = MPI_REQUEST_NULL;
    rc = post_call(alias, call, *sub, sub_root, j, post, &op, &req);
    // NOTE: under ULFM, MPI refuses a call on a communicator with a dead member (a failure-class code):
    // that is "not completed here", a failure found while waiting (as the W = 1 driver takes it).
    const bool refused = repair::is_failure(rc);
    if (rc != MPI_SUCCESS && !refused) {
      if (op) small::lose(std::move(op));
      st.win.replayed(j);
      return alias.return_error(rc, *sub);
    }
    if (hook) inject::point(call.posted_hook);
    hook = false;
    if (st.watch_sub != sub) {
      st.watch.broken = [sub] { return sub->any_member_failed(); };
      st.watch_sub = sub;
    }
    req_rc = MPI_SUCCESS;
    const bool broken = refused || wait_own(alias, st, op.get(), &req, &req_rc);
    p2p_error = op != nullptr && req_rc != MPI_SUCCESS;
    if (op && !broken) small::release(std::move(op));
    if (op) small::lose(std::move(op));  // broken: MPI may still use its buffers
    if (!broken) break;
    // A member died before this rank's request completed: the survivors agree on what each completed; a
    // call nobody completed is posted again on the shrunk substitute (deferred, as every survivor does).
    sub->abandoned.store(true);
    rc = recover(alias, st, call.name);
    if (rc != MPI_SUCCESS) return alias.return_error(rc, *sub);
    if (st.win.role(j) == Role::replay) return replay_mine(alias, st, call, b, j, &rec, false);
  }

  // Completed here: log what a replay needs, report the count when due, return if the window allows.
  log_completed(alias, st, call, b, j, std::move(rec));
  keep_window(alias, st, call.name, j, &rc);
  if (req_rc != MPI_SUCCESS) {
    return p2p_error ? raise_p2p_test_error(alias.handle(), req_rc) : raise_test_error(alias.handle(), req_rc);
  }
  return rc == MPI_SUCCESS ? MPI_SUCCESS : alias.return_error(rc, alias.current());
}

}  // namespace cohort::wrap::deferred
