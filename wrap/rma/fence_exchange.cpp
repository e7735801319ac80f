// The fence exchange (wrap/rma/fence_exchange.hpp).
#include "wrap/rma/fence_exchange.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>

#include "detector/inject.hpp"
#include "detector/log.hpp"
#include "wrap/core/progress.hpp"
#include "wrap/core/reduce_local.hpp"

namespace cohort::wrap::win {
namespace {

// A log message starts with its length in bytes (this prefix included); the first kLogInline bytes travel
// in one message whose receive every member posts at the start of the fence, the rest (rare: a few hundred
// small operations to one target) in a second one posted once the first told its length.
constexpr std::size_t kLogPrefix = sizeof(std::uint64_t);
constexpr std::size_t kLogInline = 8192;

// The datatypes that the exchange carries (xtype); a code is an index here.
struct XType {
  MPI_Datatype type;
  std::size_t size;
};
const std::vector<XType> &xtypes() {
  static const std::vector<XType> table = [] {
    const MPI_Datatype all[] = {
        MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE, MPI_WCHAR, MPI_SHORT, MPI_UNSIGNED_SHORT, MPI_INT,
        MPI_UNSIGNED, MPI_LONG, MPI_UNSIGNED_LONG, MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG, MPI_FLOAT, MPI_DOUBLE,
        MPI_LONG_DOUBLE, MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T, MPI_UINT16_T,
        MPI_UINT32_T, MPI_UINT64_T, MPI_C_BOOL, MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX, MPI_AINT, MPI_OFFSET,
        MPI_COUNT, MPI_2INT, MPI_FLOAT_INT};
    std::vector<XType> t;
    for (MPI_Datatype d : all) {
      int size = 0;
      MPI_Aint lb = 0, extent = 0;
      if (d == MPI_DATATYPE_NULL || PMPI_Type_size(d, &size) != MPI_SUCCESS ||
          PMPI_Type_get_extent(d, &lb, &extent) != MPI_SUCCESS || size <= 0 || lb != 0 || extent != size)
        continue;
      t.push_back(XType{d, static_cast<std::size_t>(size)});
    }
    return t;
  }();
  return table;
}

// The predefined operations, by code (rma_log::kOpReplace and rma_log::kOpNoOp first).
const std::vector<MPI_Op> &xops() {
  static const std::vector<MPI_Op> ops = {MPI_REPLACE, MPI_NO_OP, MPI_SUM,  MPI_PROD, MPI_MAX,    MPI_MIN,   MPI_LAND,
                                          MPI_LOR,     MPI_LXOR,  MPI_BAND, MPI_BOR,  MPI_BXOR,   MPI_MAXLOC, MPI_MINLOC};
  return ops;
}

const rma_log::Apply &xapply() {
  static const rma_log::Apply fx = [] {
    rma_log::Apply a;
    a.elem_size = [](int type) { return xsize(type); };
    a.accumulate = [](int type, int op, const void *in, void *inout, int count) {
      if (xsize(type) == 0 || op < 0 || static_cast<std::size_t>(op) >= xops().size()) return false;
      return reduce_local(in, inout, count, xtypes()[static_cast<std::size_t>(type)].type,
                          xops()[static_cast<std::size_t>(op)], "MPI_Win_fence") == MPI_SUCCESS;
    };
    return a;
  }();
  return fx;
}

// A call logged for the next fence: to a dead target, the policy; to MPI_PROC_NULL, nothing; else
// add(substitute rank) logs it.
template <typename Add>
int log_call(WinRecord &w, MPI_Win handle, CallId id, bool send, int target, Add add) {
  int sub = sub_target(w, target);
  if (sub == kDeadTarget) return dead_target(w, handle, send, info(id).name, target);
  if (sub == MPI_PROC_NULL) return MPI_SUCCESS;
  add(static_cast<std::size_t>(sub));
  cohort::inject::point(posted_hook(id));
  return MPI_SUCCESS;
}

std::mutex g_lost_mu;
std::vector<std::shared_ptr<Exchange>> g_lost_exchanges;  // guarded by g_lost_mu

constexpr int kLogTag = 1;
constexpr int kLogRestTag = 4;
constexpr int kBulkTag = 2;
constexpr int kReplyTag = 3;

}  // namespace

int make_exchange_comm(MPI_Comm comm, MPI_Comm *xcomm) {
  int rc = PMPI_Comm_dup(comm, xcomm);
  if (rc == MPI_SUCCESS) PMPI_Comm_set_errhandler(*xcomm, MPI_ERRORS_RETURN);
  return rc;
}

void reset_logs(WinRecord &w) {
  std::size_t n = static_cast<std::size_t>(w.made_on->map.sub_size());
  if (!w.x) w.x = std::make_shared<Exchange>();
  Exchange &x = *w.x;
  auto fit = [n](auto &v) {
    v.resize(n);
    for (auto &e : v) e.clear();
  };
  fit(x.out);
  for (auto &log : x.out) log.resize(kLogPrefix);  // the message's length, written at the fence
  fit(x.bulk);
  fit(x.fetch);
  fit(x.reply);
  fit(x.got);
  fit(x.more);
  fit(x.rmore);
  x.in.resize(n);
  x.in_len.assign(n, 0);
  x.in_cap.resize(n, 0);
  x.scratch.resize(n);
  x.recv.assign(n, MPI_REQUEST_NULL);
  x.rrecv.assign(n, MPI_REQUEST_NULL);
}

int xtype(MPI_Datatype d) {
  const std::vector<XType> &t = xtypes();
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i].type == d) return static_cast<int>(i);
  }
  return -1;
}

std::size_t xsize(int code) {
  const std::vector<XType> &t = xtypes();
  return code >= 0 && static_cast<std::size_t>(code) < t.size() ? t[static_cast<std::size_t>(code)].size : 0;
}

int xop(MPI_Op op) {
  const std::vector<MPI_Op> &t = xops();
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i] == op) return static_cast<int>(i);
  }
  return -1;
}

bool exchanged(const WinRecord &w) {
  return w.fence_open && !w.lock_all && w.locked.empty() && w.xcomm != MPI_COMM_NULL;
}

int log_op(WinRecord &w, MPI_Win handle, CallId id, bool send, int target, rma_log::Kind kind, int type, int op, int count,
           MPI_Aint disp, const void *payload, std::size_t bytes, const void *payload2, std::size_t bytes2,
           void *result, std::size_t result_bytes) {
  return log_call(w, handle, id, send, target, [&](std::size_t sub) {
    rma_log::append(&w.x->out[sub], kind, type, op, count, static_cast<std::int64_t>(disp), payload, bytes, payload2,
                    bytes2);
    if (result_bytes > 0) w.x->fetch[sub].push_back(Fetch{result, result_bytes, id, target});
  });
}

int log_bulk_put(WinRecord &w, MPI_Win handle, int target, int type, int count, MPI_Aint disp, const void *data,
                 std::size_t bytes) {
  return log_call(w, handle, CallId::MPI_Put, true, target, [&](std::size_t sub) {
    rma_log::append_bulk_put(&w.x->out[sub], type, count, static_cast<std::int64_t>(disp));
    w.x->bulk[sub].push_back(Bulk{data, bytes});
  });
}

FenceExchange::FenceExchange(WinRecord &w, MPI_Win handle)
    : w_(w), handle_(handle), map_(w.made_on->map), n_(map_.sub_size()), me_(w.made_on->rank), x_(*w.x),
      mem_{static_cast<char *>(w.base), static_cast<std::int64_t>(w.size), w.disp_unit} {
  state_.assign(static_cast<std::size_t>(n_), Peer::received);
  settled_.assign(static_cast<std::size_t>(n_), false);
  for (int s = 0; s < n_; ++s) {
    if (s == me_) continue;  // (received: its own log is at hand)
    if (w_.alias->known_failed(map_.to_alias(s))) {
      state_[s] = Peer::lost;
      continue;
    }
    if (x_.in_cap[s] < kLogInline) {
      x_.in[s].reset(new char[kLogInline]);
      x_.in_cap[s] = kLogInline;
    }
    int rc = PMPI_Irecv(x_.in[s].get(), static_cast<int>(kLogInline), MPI_BYTE, s, kLogTag, w_.xcomm, &x_.recv[s]);
    if (rc != MPI_SUCCESS) {
      state_[s] = Peer::lost;
      continue;
    }
    state_[s] = Peer::receiving;
  }
  for (int s = 0; s < n_; ++s) {
    if (s == me_ || state_[s] == Peer::lost) continue;
    std::vector<char> &log = x_.out[s];
    std::uint64_t total = log.size();
    std::memcpy(log.data(), &total, kLogPrefix);
    std::size_t first = std::min<std::size_t>(log.size(), kLogInline);
    x_.more[s].push_back(MPI_REQUEST_NULL);
    int rc = PMPI_Isend(log.data(), static_cast<int>(first), MPI_BYTE, s, kLogTag, w_.xcomm, &x_.more[s].back());
    if (rc == MPI_SUCCESS && log.size() > first) {
      x_.more[s].push_back(MPI_REQUEST_NULL);
      rc = PMPI_Isend(log.data() + first, static_cast<int>(log.size() - first), MPI_BYTE, s, kLogRestTag, w_.xcomm,
                      &x_.more[s].back());
    }
    for (const Bulk &b : x_.bulk[s]) {
      if (rc != MPI_SUCCESS) break;
      x_.more[s].push_back(MPI_REQUEST_NULL);
      rc = PMPI_Isend(b.addr, static_cast<int>(b.bytes), MPI_BYTE, s, kBulkTag, w_.xcomm, &x_.more[s].back());
    }
    if (rc != MPI_SUCCESS) {
      state_[s] = Peer::lost;  // (MPI failed a call with it, as ULFM does for a dead peer)
      abandoned_ = true;       // its receive, perhaps a send, stay with MPI
    }
    cohort::inject::point("fence.sent");  // (a test kills a rank whose log reached some members only)
  }
}

/// A self-confirming fence's request (fence()): a generalized request that progress() completes once
/// every member's log and data arrived, every member being alive: each member sends its log only once it
/// entered this fence and completed its epoch's other operations, so this rank's completion proves that
/// every member entered the fence, as the confirming barrier would. With a member lost it never completes
/// here (the driver sees the death; finish() completes and frees it).
int FenceExchange::start(MPI_Request *req) {
  if (request_ != MPI_REQUEST_NULL) return MPI_ERR_INTERN;
  int rc = start_request(&request_);
  if (rc == MPI_SUCCESS) *req = request_;
  return rc;
}

void FenceExchange::progress() {
  if (!pass(true) || request_ == MPI_REQUEST_NULL || request_completed_) return;
  if (std::find(state_.begin(), state_.end(), Peer::lost) != state_.end()) return;
  request_completed_ = true;
  PMPI_Grequest_complete(request_);  // (the driver's test frees it)
}

int FenceExchange::finish() {
  if (request_ != MPI_REQUEST_NULL && !request_completed_) {
    // The driver gave it up (a member died): nothing else refers to it.
    PMPI_Grequest_complete(request_);
    PMPI_Request_free(&request_);
  }
  wait([this] { return pass(true); });
  apply_logs();
  int rc = replies();
  if (abandoned_) {
    w_.xabandoned = true;
    std::lock_guard<std::mutex> lock(g_lost_mu);
    g_lost_exchanges.push_back(std::move(w_.x));  // (w_.x is then empty: reset_logs makes a new one)
  }
  reset_logs(w_);
  return rc;
}

// One pass over the members of the current round (round 1 when `logs`): true when every one is settled:
// its receive completed and every request in more[s] (sends, bulk receives) too, or it is lost (known dead
// after the failure grace, or MPI failed a call with it, as under ULFM: its requests are then left to MPI).
bool FenceExchange::pass(bool logs) {
  std::vector<MPI_Request> &recv = logs ? x_.recv : x_.rrecv;
  std::vector<std::vector<MPI_Request>> &more = logs ? x_.more : x_.rmore;
  bool all = true;
  for (int s = 0; s < n_; ++s) {
    if (settled_[s]) continue;
    int rc = MPI_SUCCESS;
    if (state_[s] == Peer::receiving || state_[s] == Peer::receiving_rest) {
      int flag = 0;
      bool rest = state_[s] == Peer::receiving_rest;
      rc = PMPI_Test(&recv[s], &flag, MPI_STATUS_IGNORE);
      if (rc == MPI_SUCCESS && flag) {
        state_[s] = Peer::received;
        if (logs && !rest) rc = receive_rest(s);
        if (rc == MPI_SUCCESS && state_[s] == Peer::received && logs) rc = post_bulk(s);
      }
    }
    int flag = 1;
    if (rc == MPI_SUCCESS && !more[s].empty()) {
      rc = PMPI_Testall(static_cast<int>(more[s].size()), more[s].data(), &flag, MPI_STATUSES_IGNORE);
    }
    bool lost = rc != MPI_SUCCESS;
    if (lost) {
      COHORT_LOG_INFO("MPI_Win_fence: MPI failed the exchange with rank %d (code %d): taken as dead",
                      map_.to_alias(s), rc);
    } else if (state_[s] == Peer::received && flag) {
      settled_[s] = true;
      continue;
    } else {
      lost = state_[s] == Peer::lost || (w_.alias->known_failed(map_.to_alias(s)) && failure_grace_over());
    }
    if (lost) {
      if (state_[s] == Peer::receiving || state_[s] == Peer::receiving_rest || !flag || rc != MPI_SUCCESS)
        abandoned_ = true;
      state_[s] = Peer::lost;
      settled_[s] = true;
      continue;
    }
    all = false;
  }
  return all;
}

template <typename Done>
void FenceExchange::wait(Done done) {
  Watch watch;
  watch.join_repairs = true;  // a survivor one fence behind may wait for this rank in its repair
  wait_until(done, watch);
}

// Round 1: member s's log arrived (its first kLogInline bytes): its length, and the receive of the rest.
int FenceExchange::receive_rest(int s) {
  std::uint64_t total = 0;
  std::memcpy(&total, x_.in[s].get(), kLogPrefix);
  if (total < kLogPrefix) total = kLogPrefix;  // (malformed: an empty log)
  x_.in_len[s] = static_cast<std::size_t>(total);
  if (total <= kLogInline) return MPI_SUCCESS;
  if (x_.in_cap[s] < total) {
    std::unique_ptr<char[]> bigger(new char[total]);
    std::memcpy(bigger.get(), x_.in[s].get(), kLogInline);
    x_.in[s] = std::move(bigger);
    x_.in_cap[s] = static_cast<std::size_t>(total);
  }
  int rc = PMPI_Irecv(x_.in[s].get() + kLogInline, static_cast<int>(total - kLogInline), MPI_BYTE, s, kLogRestTag,
                      w_.xcomm, &x_.recv[s]);
  if (rc == MPI_SUCCESS) state_[s] = Peer::receiving_rest;
  return rc;
}

// Round 1: the bulk puts' data of member s's log, straight into this rank's memory (in log order: MPI
// keeps the order of messages between two ranks with the same tag).
int FenceExchange::post_bulk(int s) {
  for (const rma_log::Region &r :
       rma_log::bulk_regions(x_.in[s].get() + kLogPrefix, x_.in_len[s] - kLogPrefix, mem_, xapply())) {
    char *to = nullptr;
    if (r.offset >= 0) {
      to = mem_.base + r.offset;
    } else {
      x_.scratch[s].resize(std::max(x_.scratch[s].size(), r.bytes));
      to = x_.scratch[s].data();
    }
    x_.more[s].push_back(MPI_REQUEST_NULL);
    int rc = PMPI_Irecv(to, static_cast<int>(r.bytes), MPI_BYTE, s, kBulkTag, w_.xcomm, &x_.more[s].back());
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

// Every received log, in member order (this rank's own to itself at its place; its bulk puts too).
void FenceExchange::apply_logs() {
  for (int s = 0; s < n_; ++s) {
    if (state_[s] != Peer::received) continue;
    const char *log = (s == me_ ? x_.out[s].data() : x_.in[s].get()) + kLogPrefix;
    std::size_t len = (s == me_ ? x_.out[s].size() : x_.in_len[s]) - kLogPrefix;
    if (s == me_ && !x_.bulk[s].empty()) {
      std::size_t i = 0;
      for (const rma_log::Region &r : rma_log::bulk_regions(log, len, mem_, xapply())) {
        if (r.offset >= 0 && i < x_.bulk[s].size()) std::memmove(mem_.base + r.offset, x_.bulk[s][i].addr, r.bytes);
        ++i;
      }
    }
    std::string error = rma_log::apply(log, len, mem_, xapply(), &x_.reply[s]);
    if (!error.empty())
      COHORT_LOG_ERROR("MPI_Win_fence: an RMA operation from rank %d: %s; skipped", map_.to_alias(s), error.c_str());
  }
}

// Round 2: the replies, only between an origin that fetched and its target (both know); then the fetched
// data into the program's buffers.
int FenceExchange::replies() {
  std::vector<Peer> logs_state = state_;
  bool round2 = false;
  for (int s = 0; s < n_; ++s) {
    std::size_t expected = 0;
    for (const Fetch &f : x_.fetch[s]) expected += f.bytes;
    state_[s] = Peer::received;
    settled_[s] = false;
    if (s == me_) {
      x_.got[s] = x_.reply[s];
      continue;
    }
    if (logs_state[s] == Peer::lost) {
      if (expected > 0) state_[s] = Peer::lost;
      continue;
    }
    if (!x_.reply[s].empty()) {
      round2 = true;
      x_.rmore[s].push_back(MPI_REQUEST_NULL);
      PMPI_Isend(x_.reply[s].data(), static_cast<int>(x_.reply[s].size()), MPI_BYTE, s, kReplyTag, w_.xcomm,
                 &x_.rmore[s].back());
    }
    if (expected > 0) {
      round2 = true;
      x_.got[s].resize(expected);
      state_[s] = PMPI_Irecv(x_.got[s].data(), static_cast<int>(expected), MPI_BYTE, s, kReplyTag, w_.xcomm,
                             &x_.rrecv[s]) == MPI_SUCCESS
                      ? Peer::receiving
                      : Peer::lost;
    }
  }
  if (round2) wait([this] { return pass(false); });
  int rc = MPI_SUCCESS;
  for (int s = 0; s < n_; ++s) {
    if (x_.fetch[s].empty()) continue;
    if (state_[s] != Peer::received) {
      // The target died before its reply came: what the call would have returned is lost.
      const Fetch &f = x_.fetch[s].front();
      int r = dead_target(w_, handle_, false, info(f.id).name, f.target);
      if (rc == MPI_SUCCESS) rc = r;
      continue;
    }
    std::size_t at = 0;
    for (const Fetch &f : x_.fetch[s]) {
      std::memcpy(f.addr, x_.got[s].data() + at, f.bytes);
      at += f.bytes;
    }
  }
  return rc;
}

}  // namespace cohort::wrap::win
