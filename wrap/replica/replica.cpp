// The MPI side of replication: moves the mirror protocol's wire messages (replica/protocol.hpp) over a
// communicator of cohort's own, matches logical messages to the program's receives and probes, and runs
// the calls on them (see replica.hpp for what is handled, docs/design/replication.md for why).
#include "wrap/replica/replica.hpp"

#include <fcntl.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "detector/inject.hpp"
#include "detector/log.hpp"
#include "detector/runtime.hpp"
#include "detector/world.hpp"
#include "replica/comms.hpp"
#include "replica/placement.hpp"
#include "replica/protocol.hpp"
#include "wrap/replica/sdc_check.hpp"
#include "wrap/core/policy.hpp"
#include "wrap/core/settings.hpp"
#include "wrap/core/stop_job.hpp"

namespace cohort::wrap::replica {
namespace {

using cohort::replica::Bytes;
using cohort::replica::Channel;
using cohort::replica::CommTable;
using cohort::replica::Contribution;
using cohort::replica::LogicalComm;
using cohort::replica::Delivery;
using cohort::replica::Endpoint;
using cohort::replica::Placement;
using cohort::replica::Wire;

// (Channel contexts: each communicator's, replica/comms.hpp.)
constexpr int kWireTag = 1;  // on cohort's own communicator, which carries nothing else

// An MPI_ANY_SOURCE outcome: the source logical rank and the sequence number of the matched message.
std::int64_t encode_match(int src, std::uint64_t seq) { return (static_cast<std::int64_t>(seq) << 16) | src; }
int match_src(std::int64_t o) { return static_cast<int>(o & 0xffff); }
std::uint64_t match_seq(std::int64_t o) { return static_cast<std::uint64_t>(o) >> 16; }

// ---- the wire format: a fixed header, then the payload ----
struct Header {
  std::int32_t kind, context, src, dst, tag, epoch, synchronous, call;
  std::uint64_t seq, event;
  std::int64_t outcome;
  std::uint64_t digest;
};

Bytes encode(const Wire &w) {
  Header h{w.kind, w.channel.context, w.channel.src, w.channel.dst, w.tag, w.epoch, w.synchronous ? 1 : 0, w.call,
           w.seq,  w.event, w.outcome, w.digest};
  Bytes b(sizeof h + w.payload.size());
  std::memcpy(b.data(), &h, sizeof h);
  if (!w.payload.empty()) std::memcpy(b.data() + sizeof h, w.payload.data(), w.payload.size());
  return b;
}

bool decode(const Bytes &b, int from, int to, Wire *w) {
  Header h;
  if (b.size() < sizeof h) return false;
  std::memcpy(&h, b.data(), sizeof h);
  w->kind = static_cast<Wire::Kind>(h.kind);
  w->from = from;
  w->to = to;
  w->channel = Channel{h.context, h.src, h.dst};
  w->tag = h.tag;
  w->epoch = h.epoch;
  w->synchronous = h.synchronous != 0;
  w->seq = h.seq;
  w->event = h.event;
  w->outcome = h.outcome;
  w->call = h.call;
  w->digest = h.digest;
  w->payload.assign(b.begin() + sizeof h, b.end());
  return true;
}

// A receive the program (or a collective's schedule) posted, in post order until it matched.
struct Recv {
  std::shared_ptr<const LogicalComm> comm;
  int context = 0;  // comm's point-to-point or collectives' channel context
  int source = 0;   // logical world rank or MPI_ANY_SOURCE
  int tag = 0;     // or MPI_ANY_TAG
  void *buf = nullptr;
  int count = 0;
  MPI_Datatype type = MPI_BYTE;
  Bytes *into = nullptr;  // a schedule's receive: the packed payload, not unpacked
  std::uint64_t event = 0;  // MPI_ANY_SOURCE: its decision event
  bool candidate_given = false;
  bool done = false;
  MPI_Status status{};
  int rc = MPI_SUCCESS;
};

// Unpacks logical message d into the program's buffer and fills *status (communicator c's numbering);
// MPI_ERR_TRUNCATE when it does not fit.
int unpack_message(const Delivery &d, void *buf, int count, MPI_Datatype type, const LogicalComm &c,
                   MPI_Status *status) {
  int rc = MPI_SUCCESS;
  int tsize = 0;
  PMPI_Type_size(type, &tsize);
  int n = tsize > 0 ? static_cast<int>(d.payload.size() / static_cast<std::size_t>(tsize)) : 0;
  if (n > count) {
    rc = MPI_ERR_TRUNCATE;
    n = count;
  }
  if (n > 0) {
    int pos = 0;
    PMPI_Unpack(d.payload.data(), static_cast<int>(d.payload.size()), &pos, buf, n, type, MPI_COMM_WORLD);
  }
  if (status == MPI_STATUS_IGNORE) return rc;
  status->MPI_SOURCE = c.rank_of(d.channel.src);
  status->MPI_TAG = d.tag;
  status->MPI_ERROR = rc;
  PMPI_Status_set_elements(status, type, n);
  return rc;
}

struct Request {
  std::shared_ptr<Recv> recv;  // null: a send (complete once its copies were handed to MPI)
  bool synchronous = false;    // a synchronous send: complete once the receiver matched it
  Channel channel;
  std::uint64_t seq = 0;
};

// A wire message being received (MPI_Imrecv after MPI_Improbe), from world rank `from`.
struct Arriving {
  MPI_Request req = MPI_REQUEST_NULL;
  std::unique_ptr<Bytes> buf;
  int from = -1;
};

struct InFlight {
  MPI_Request req;
  std::unique_ptr<Bytes> buf;
  int to;
};

// NOTE: the job stops when a logical rank loses its last replica (the cut is not integrated yet), so the
// copies the cut would relay are not kept: keeping them costs a copy of every delivered message.
cohort::replica::Limits endpoint_limits() {
  cohort::replica::Limits l;
  l.kept_delivered = 0;
  l.lanes = sdc_check::on();
  return l;
}

class Engine {
 public:
  Engine(int n, int r, const std::vector<int> &hosts, std::vector<std::string> host_names, MPI_Comm comm)
      : placement_(n, r, hosts), ep_(&placement_, detector::world_rank(), endpoint_limits()), comms_(n, ep_.logical()),
        comm_(comm),
        host_names_(std::move(host_names)) {}

  const Placement &placement() const { return placement_; }
  Endpoint &endpoint() { return ep_; }
  CommTable &comms() { return comms_; }
  int logical() const { return ep_.logical(); }
  int size() const { return placement_.logical_size(); }

  // ---- progress ----
  /// One round: deaths, incoming wire messages, outgoing ones, deliveries, matching. Returns true when
  /// something moved.
  bool poll() {
    detector::note_progress();
    bool moved = check_deaths();
    moved |= drain();
    flush();
    retire_sends();
    moved |= pull_deliveries();
    moved |= match();
    flush();
    if (sdc_check::on()) sdc_check::poll(ep_);
    return moved;
  }
  /// Polls until done() holds, yielding the core between idle rounds.
  template <class Done>
  void until(Done done) {
    int idle = 0;
    while (!done()) {
      if (poll()) {
        idle = 0;
        continue;
      }
      if (++idle < 64) {
        sched_yield();
      } else {
        struct timespec ts{0, 50000};
        nanosleep(&ts, nullptr);
      }
    }
  }

  // ---- messages ----
  std::uint64_t send_packed(int context, int dst, int tag, const Bytes &payload, bool synchronous = false) {
    if (sdc_check::on()) return send_checked(context, dst, tag, payload, synchronous);
    std::uint64_t seq = ep_.send(context, dst, tag, payload, &out_, synchronous);
    flush();
    return seq;
  }
  // A send whose copies carry the digest (and the call) that the receivers compare (sdc_check.hpp).
  std::uint64_t send_checked(int context, int dst, int tag, const Bytes &payload, bool synchronous) {
    Bytes scratch;
    std::uint64_t digest = 0;
    int call = -1;
    const Bytes &p = sdc_check::outgoing(payload, &scratch, &digest, &call);
    const std::size_t first = out_.size();
    std::uint64_t seq = ep_.send(context, dst, tag, p, &out_, synchronous);
    for (std::size_t i = first; i < out_.size(); ++i) {
      out_[i].digest = digest;
      out_[i].call = call;
    }
    sdc_check::sent(Channel{context, logical(), dst}, seq);
    flush();
    return seq;
  }
  std::shared_ptr<Recv> post_recv(std::shared_ptr<Recv> r) {
    if (r->source == MPI_ANY_SOURCE) r->event = next_event_++;
    posted_.push_back(r);
    poll();
    return r;
  }
  void wait_recv(const std::shared_ptr<Recv> &r) {
    until([&] { return r->done; });
  }

  // ---- decisions ----
  /// A decision event of the program (numbered in program order): the leader's candidate becomes the
  /// outcome of every replica.
  std::int64_t decide(std::int64_t candidate) {
    return decide_when([&](std::int64_t *c) {
      *c = candidate;
      return true;
    });
  }
  /// As decide(), when this replica's candidate is not known yet: polls until candidate() gives one (a
  /// replica proposes, or keeps for a takeover, only an outcome that is valid for it).
  template <class Candidate>
  std::int64_t decide_when(Candidate candidate) {
    std::uint64_t event = next_event_++;
    std::int64_t mine = 0;
    until([&] { return candidate(&mine); });
    ep_.decide(event, mine, &out_);
    flush();
    std::int64_t outcome = 0;
    until([&] { return ep_.decided(event, &outcome); });
    used(event);
    return outcome;
  }

  /// Before MPI_Finalize: this replica's copies in flight are complete, and every live replica of a
  /// sender has delivered here its copy of each logical message this replica used (the duplicates are
  /// taken off the wire: MPICH's UCX warns at finalize about messages nobody received).
  void finish() {
    until([&] { return sends_.empty() && all_copies_in() && sdc_check::idle(); });
    if (!log::enabled(log::Level::info) || !ep_.is_leader() || logical() != first_live_logical()) return;
    std::string left;
    for (int l = 0; l < size(); ++l)
      left += (l ? ", " : "") + std::to_string(ep_.liveness().live_replicas(l));
    COHORT_LOG_INFO("replication: live replicas of logical ranks 0..%d at MPI_Finalize: %s (of %d each)", size() - 1,
                    left.c_str(), placement_.replicas());
  }

  std::vector<int> lost_logical() const { return lost_logical_; }

  /// At MPI_Finalize, after cohort's survivors-only barrier (which every survivor passes only once it
  /// learned each death): the deaths this replica had not learned yet, logged as during the run. A leader
  /// that finished before learning of its twin's death learns of it here.
  void deaths_at_exit() {
    at_exit_ = true;
    check_deaths();
    out_.clear();
  }

 private:
  bool check_deaths() {
    std::uint64_t epoch = detector::failure_epoch();
    if (epoch == seen_epoch_) return false;
    seen_epoch_ = epoch;
    std::vector<int> failed = detector::failed_ranks();
    bool moved = false;
    for (int w : failed) {
      if (w < 0 || w >= placement_.world_size() || !ep_.liveness().alive(w)) continue;
      moved = true;
      const bool was_leader = ep_.is_leader();
      cohort::replica::Death d = ep_.replica_died(w, &out_);
      if (sdc_check::on()) sdc_check::replica_died(w, ep_);
      if (!was_leader && ep_.is_leader()) become_leader();
      const char *host = host_names_[static_cast<std::size_t>(w)].c_str();
      const int left = ep_.liveness().live_replicas(d.logical);
      if (!d.logical_dead) {
        if (ep_.is_leader() && d.logical == logical())
          COHORT_LOG_WARN("replica %d of logical rank %d (world rank %d, host %s) died; %d of %d replicas left",
                          d.replica, d.logical, w, host, left, placement_.replicas());
        continue;
      }
      lost_logical_.push_back(d.logical);
      if (at_exit_) continue;
      // NOTE: the cut of a dead logical sender's channels is not built (docs/design/replication.md): a
      // receive from it could wait forever or differ between replicas, so the job stops.
      if (ep_.is_leader() && first_live_logical() == logical())
        COHORT_LOG_ERROR("replica %d of logical rank %d (world rank %d, host %s) died; logical rank %d lost every "
                         "replica, which replication does not handle yet: stopping the job",
                         d.replica, d.logical, w, host, d.logical);
      std::fflush(nullptr);
      stop_job(1);
    }
    return moved;
  }

  int first_live_logical() const {
    for (int l = 0; l < size(); ++l)
      if (ep_.liveness().logical_alive(l)) return l;
    return -1;
  }

  void become_leader() {
    // NOTE: what the program wrote while a twin is output its leader wrote: flushed to /dev/null first.
    std::fflush(stdout);
    std::fflush(stderr);
    if (saved_out_ >= 0) dup2(saved_out_, 1);
    if (saved_err_ >= 0) dup2(saved_err_, 2);
  }

 public:
  /// The standard error this process had at MPI_Init (a twin's fd 2 is /dev/null until it leads).
  int stderr_at_init() const { return saved_err_ >= 0 ? saved_err_ : 2; }
  void silence_if_twin() {
    if (ep_.is_leader()) return;
    std::fflush(stdout);
    std::fflush(stderr);
    saved_out_ = dup(1);
    saved_err_ = dup(2);
    int null = open("/dev/null", O_WRONLY);
    if (null < 0) return;
    dup2(null, 1);
    dup2(null, 2);
    close(null);
  }

 private:
  // NOTE: a receive never blocks: a large message whose sender dies mid-transfer never completes (Open MPI's
  // vader reads it from the sender's memory: "Read -1, expected N, errno = 3"), so it is received with
  // MPI_Imrecv and, once its sender is known dead, abandoned with its buffer. Messages are taken in the
  // order MPI matched them.
  bool drain() {
    bool moved = false;
    for (int i = 0; i < 64; ++i) {
      int flag = 0;
      MPI_Message msg;
      MPI_Status st;
      if (PMPI_Improbe(MPI_ANY_SOURCE, kWireTag, comm_, &flag, &msg, &st) != MPI_SUCCESS || !flag) break;
      int n = 0;
      PMPI_Get_count(&st, MPI_BYTE, &n);
      Arriving a;
      a.buf = std::make_unique<Bytes>(static_cast<std::size_t>(n));
      a.from = st.MPI_SOURCE;
      if (PMPI_Imrecv(a.buf->data(), n, MPI_BYTE, &msg, &a.req) != MPI_SUCCESS) continue;
      arriving_.push_back(std::move(a));
    }
    while (!arriving_.empty()) {
      Arriving &a = arriving_.front();
      int flag = 0;
      const bool failed = PMPI_Test(&a.req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS;
      if (!flag && !failed) {
        if (ep_.liveness().alive(a.from)) break;
        abandoned_.push_back(std::move(a.buf));  // (MPI may still write into it)
        arriving_.pop_front();
        continue;
      }
      std::unique_ptr<Bytes> buf = std::move(a.buf);
      const int from = a.from;
      arriving_.pop_front();
      if (failed) continue;
      const Bytes &b = *buf;
      Wire w;
      if (!decode(b, from, ep_.self(), &w)) continue;
      if (w.kind == Wire::data) {
        std::uint64_t &n = copies_from_[{w.from, w.channel}];
        if (w.seq + 1 > n) n = w.seq + 1;
      }
      const bool kept = ep_.receive(w, &out_);
      if (w.kind == Wire::data && sdc_check::on()) sdc_check::arrived(w, kept, ep_);
      moved = true;
    }
    return moved;
  }

  void flush() {
    for (Wire &w : out_) {
      if (!ep_.liveness().alive(w.to)) continue;
      auto buf = std::make_unique<Bytes>(encode(w));
      MPI_Request req;
      // NOTE: an error (MPICH: a peer whose connection failed, e.g. across a cut link) abandons the copy:
      // the detector decides whether that replica is dead, and the protocol needs no copy to a dead one.
      if (PMPI_Isend(buf->data(), static_cast<int>(buf->size()), MPI_BYTE, w.to, kWireTag, comm_, &req) != MPI_SUCCESS) {
        abandoned_.push_back(std::move(buf));
        continue;
      }
      sends_.push_back(InFlight{req, std::move(buf), w.to});
    }
    out_.clear();
  }

  void retire_sends() {
    for (auto it = sends_.begin(); it != sends_.end();) {
      int flag = 0;
      bool failed = PMPI_Test(&it->req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS;
      if (flag && !failed) {
        it = sends_.erase(it);
      } else if (failed || !ep_.liveness().alive(it->to)) {
        // NOTE: MPI may still read a copy that failed or goes to a dead replica: request and buffer are
        // abandoned.
        abandoned_.push_back(std::move(it->buf));
        it = sends_.erase(it);
      } else {
        ++it;
      }
    }
  }

  bool pull_deliveries() {
    bool moved = false;
    // NOTE: at the bound of pending comparisons a message whose comparison is pending waits until copies
    // complete comparisons; one whose comparison is complete goes on. Holding that one back too can
    // deadlock: a receiver whose pending comparisons all await a sender replica would hold back the copies
    // that replica's own progress waits for.
    for (const Channel &c : ep_.ready_channels()) {
      Delivery d;
      while (!(sdc_check::on() && sdc_check::full() && sdc_check::pending(c, delivered_[c])) && ep_.deliver(c, &d)) {
        ++delivered_[c];
        arrived_[c].push_back(std::move(d));
        moved = true;
      }
    }
    return moved;
  }

  static bool tag_matches(int want, int got) { return want == MPI_ANY_TAG || want == got; }

  // The first unmatched logical message of channel c that a receive of `tag` takes (MPI's order).
  std::deque<Delivery>::iterator first_match(const Channel &c, int tag) {
    auto &q = arrived_[c];
    for (auto it = q.begin(); it != q.end(); ++it)
      if (tag_matches(tag, it->tag)) return it;
    return q.end();
  }

  void complete(Recv &r, std::deque<Delivery> &q, std::deque<Delivery>::iterator it) {
    Delivery d = std::move(*it);
    q.erase(it);
    r.done = true;
    ep_.matched(d, &out_);
    if (r.into != nullptr) {
      *r.into = std::move(d.payload);
      return;
    }
    r.rc = unpack_message(d, r.buf, r.count, r.type, *r.comm, &r.status);
  }

 public:
  // ---- probes: the arrived logical messages a receive posted now would match ----
  /// The first arrived, unmatched message of channel c that a receive of `tag` takes; null if none.
  const Delivery *peek(const Channel &c, int tag) {
    auto m = first_match(c, tag);
    return m == arrived_[c].end() ? nullptr : &*m;
  }
  /// The arrived message of channel c with sequence number seq; null if it has not arrived.
  const Delivery *peek_seq(const Channel &c, std::uint64_t seq) {
    for (const Delivery &d : arrived_[c])
      if (d.seq == seq) return &d;
    return nullptr;
  }
  /// Takes the arrived message of channel c with sequence number seq out of matching (MPI_Mprobe).
  Delivery take(const Channel &c, std::uint64_t seq) {
    auto &q = arrived_[c];
    for (auto it = q.begin(); it != q.end(); ++it)
      if (it->seq == seq) {
        Delivery d = std::move(*it);
        q.erase(it);
        ep_.matched(d, &out_);
        flush();
        return d;
      }
    return {};
  }
  /// The leader's choice for an MPI_ANY_SOURCE match of `tag` on communicator c's channels `context`:
  /// the first source, round robin after the last one chosen, with a message of a matching tag.
  bool any_candidate(const LogicalComm &c, int context, int tag, std::int64_t *cand) {
    const int n = c.size();
    const int last = c.rank_of(last_any_src_);
    for (int k = 1; k <= n; ++k) {
      int src = c.members[static_cast<std::size_t>((last + k) % n)];
      Channel ch{context, src, logical()};
      auto m = first_match(ch, tag);
      if (m == arrived_[ch].end()) continue;
      last_any_src_ = src;
      *cand = encode_match(src, m->seq);
      return true;
    }
    return false;
  }
  /// After a probe matched logical world rank src: a receive that follows it with MPI_ANY_SOURCE is
  /// offered src first (MPI 4.0, 3.8.1: it receives the probed message).
  void prefer_source(const LogicalComm &c, int src) {
    const int n = c.size();
    last_any_src_ = c.members[static_cast<std::size_t>((c.rank_of(src) + n - 1) % n)];
  }

 private:

  // Matches posted receives in post order. A receive with a named source takes the first message of its
  // channel with a matching tag, unless an earlier MPI_ANY_SOURCE receive of the same communicator that
  // could take it is not matched yet. An MPI_ANY_SOURCE receive takes the message the leader decided.
  bool match() {
    bool moved = false;
    std::map<int, std::vector<int>> open_any;  // context -> tags of earlier unmatched ANY_SOURCE receives
    for (auto it = posted_.begin(); it != posted_.end();) {
      Recv &r = **it;
      auto blocked = [&](int ctx, int tag) {
        auto f = open_any.find(ctx);
        if (f == open_any.end()) return false;
        for (int t : f->second)
          if (t == MPI_ANY_TAG || tag == MPI_ANY_TAG || t == tag) return true;
        return false;
      };
      if (r.source != MPI_ANY_SOURCE) {
        if (!blocked(r.context, r.tag)) {
          Channel c{r.context, r.source, logical()};
          auto m = first_match(c, r.tag);
          if (m != arrived_[c].end()) {
            complete(r, arrived_[c], m);
            it = posted_.erase(it);
            moved = true;
            continue;
          }
        }
        ++it;
        continue;
      }
      // MPI_ANY_SOURCE: the first unmatched one of its communicator is decided; later ones wait.
      if (open_any.count(r.context) == 0) {
        std::int64_t outcome = 0;
        if (ep_.decided(r.event, &outcome)) {
          Channel c{r.context, match_src(outcome), logical()};
          auto &q = arrived_[c];
          for (auto m = q.begin(); m != q.end(); ++m) {
            if (m->seq != match_seq(outcome)) continue;
            complete(r, q, m);
            used(r.event);
            break;
          }
        } else if (!r.candidate_given) {
          std::int64_t cand = 0;
          if (any_candidate(r, &cand)) {
            ep_.decide(r.event, cand, &out_);
            r.candidate_given = true;
            moved = true;
          }
        }
      }
      if (r.done) {
        it = posted_.erase(it);
        moved = true;
        continue;
      }
      open_any[r.context].push_back(r.tag);
      ++it;
    }
    return moved;
  }

  bool any_candidate(const Recv &r, std::int64_t *cand) { return any_candidate(*r.comm, r.context, r.tag, cand); }

  bool all_copies_in() const {
    for (const auto &[c, n] : delivered_)
      for (int w : ep_.liveness().live(c.src)) {
        auto f = copies_from_.find({w, c});
        if (f == copies_from_.end() || f->second < n) return false;
      }
    return true;
  }

  // Events are freed in program order: the protocol forgets what is below the last consumed one.
  void used(std::uint64_t event) {
    used_.insert(event);
    while (used_.count(consumed_below_) != 0) {
      ep_.consumed(consumed_below_);
      used_.erase(consumed_below_);
      ++consumed_below_;
    }
  }

  Placement placement_;
  Endpoint ep_;
  CommTable comms_;
  MPI_Comm comm_;
  std::vector<std::string> host_names_;
  std::vector<Wire> out_;
  std::list<InFlight> sends_;
  std::vector<std::unique_ptr<Bytes>> abandoned_;
  std::deque<Arriving> arriving_;
  std::map<Channel, std::deque<Delivery>> arrived_;
  std::map<Channel, std::uint64_t> delivered_;                         // logical messages delivered
  std::map<std::pair<int, Channel>, std::uint64_t> copies_from_;      // (world rank, channel) -> seqs seen
  std::list<std::shared_ptr<Recv>> posted_;
  std::uint64_t seen_epoch_ = 0;
  std::uint64_t next_event_ = 0;
  std::uint64_t consumed_below_ = 0;
  std::set<std::uint64_t> used_;
  int last_any_src_ = -1;
  int saved_out_ = -1, saved_err_ = -1;
  bool at_exit_ = false;
  std::vector<int> lost_logical_;
};

Engine *g_engine = nullptr;
int g_replicas = 1;
bool g_finished = false;  // finish() ran: the wire is quiet, no more decisions

// ---- requests: handles of cohort's own, never passed to MPI ----
std::map<std::uintptr_t, Request> g_requests;
std::uintptr_t g_next_request = 0;

// NOTE: MPI_Request is a pointer in Open MPI and an int in MPICH; the handle carries the table's key.
template <class H>
H to_handle(std::uintptr_t id) {
  if constexpr (std::is_pointer_v<H>)
    return reinterpret_cast<H>(id);
  else
    return static_cast<H>(id);
}
template <class H>
std::uintptr_t from_handle(H h) {
  if constexpr (std::is_pointer_v<H>)
    return reinterpret_cast<std::uintptr_t>(h);
  else
    return static_cast<std::uintptr_t>(h);
}

// Keys cycle through [kFirstRequest, kLastRequest): below INT_MAX, for MPICH's int handles.
constexpr std::uintptr_t kFirstRequest = 0x5EED0000u, kLastRequest = 0x7EED0000u;

MPI_Request new_request(Request r) {
  std::uintptr_t id = g_next_request;
  do {
    id = id < kFirstRequest || id + 8 >= kLastRequest ? kFirstRequest : id + 8;
  } while (g_requests.count(id) != 0);
  g_next_request = id;
  g_requests.emplace(id, std::move(r));
  return to_handle<MPI_Request>(id);
}

std::uintptr_t request_id(MPI_Request r) { return from_handle(r); }

// ---- the program's communicators ----
// Each has a real handle of its own (a duplicate of MPI_COMM_SELF: local, so no replica waits on another;
// calls cohort does not wrap, such as MPI_Comm_set_name, work on it), mapped to its logical communicator.
std::map<MPI_Comm, std::shared_ptr<const LogicalComm>> g_comms;
// This replica's view of the world as a group: replica k (this one's index) of every logical rank, in
// logical order, so that group ranks are logical ranks and the MPI_Group_* calls (not wrapped) work.
MPI_Group g_slice = MPI_GROUP_NULL;

const std::shared_ptr<const LogicalComm> &comm_of(MPI_Comm comm, const char *call) {
  if (comm == MPI_COMM_WORLD) return g_engine->comms().world();
  if (comm == MPI_COMM_SELF) return g_engine->comms().self_comm();
  auto it = g_comms.find(comm);
  if (it == g_comms.end())
    log::fatal(1, "%s: under replication (COHORT_REPLICAS=%d) a communicator must be MPI_COMM_WORLD, MPI_COMM_SELF "
               "or made from them by the calls replication handles; stopping", call, g_replicas);
  return it->second;
}

// The logical world rank of communicator rank `rank`.
int world_of(const LogicalComm &c, int rank, const char *what, const char *call) {
  if (rank < 0 || rank >= c.size())
    log::fatal(1, "%s: %s %d is not a rank of the communicator (size %d)", call, what, rank, c.size());
  return c.members[static_cast<std::size_t>(rank)];
}

Bytes pack(const void *buf, int count, MPI_Datatype type) {
  int size = 0;
  PMPI_Pack_size(count, type, MPI_COMM_WORLD, &size);
  Bytes b(static_cast<std::size_t>(size));
  int pos = 0;
  if (count > 0) PMPI_Pack(buf, count, type, b.data(), size, &pos, MPI_COMM_WORLD);
  b.resize(static_cast<std::size_t>(pos));
  if (sdc_check::on()) sdc_check::packed(buf, count, type, &b);
  return b;
}

void unpack(const Bytes &b, void *buf, int count, MPI_Datatype type) {
  int pos = 0;
  if (count > 0 && !b.empty())
    PMPI_Unpack(b.data(), static_cast<int>(b.size()), &pos, buf, count, type, MPI_COMM_WORLD);
}

// A schedule's blocking receive of communicator rank src's next message on c's collectives' channel.
Bytes coll_recv(const std::shared_ptr<const LogicalComm> &c, int src) {
  auto r = std::make_shared<Recv>();
  r->comm = c;
  r->context = c->coll_context();
  r->source = c->members[static_cast<std::size_t>(src)];
  r->tag = MPI_ANY_TAG;
  Bytes b;
  r->into = &b;
  g_engine->post_recv(r);
  g_engine->wait_recv(r);
  return b;
}

void coll_send(const LogicalComm &c, int dst, const Bytes &b) {
  g_engine->send_packed(c.coll_context(), c.members[static_cast<std::size_t>(dst)], 0, b);
}

// Every member's contribution to a creation, in c's rank order (gathered to rank 0, then broadcast, on
// c's collectives' channels: a collective like any other of c).
std::vector<Contribution> exchange(const std::shared_ptr<const LogicalComm> &c, Contribution mine) {
  const int n = c->size();
  std::vector<Contribution> all(static_cast<std::size_t>(n));
  const std::size_t bytes = all.size() * sizeof(Contribution);
  if (c->rank == 0) {
    all[0] = mine;
    for (int i = 1; i < n; ++i) std::memcpy(&all[static_cast<std::size_t>(i)], coll_recv(c, i).data(), sizeof mine);
    Bytes whole(bytes);
    std::memcpy(whole.data(), all.data(), bytes);
    for (int i = 1; i < n; ++i) coll_send(*c, i, whole);
  } else {
    Bytes b(sizeof mine);
    std::memcpy(b.data(), &mine, sizeof mine);
    coll_send(*c, 0, b);
    Bytes whole = coll_recv(c, 0);
    std::memcpy(all.data(), whole.data(), bytes);
  }
  return all;
}

// The program's handle of a new logical communicator (MPI_COMM_NULL for none).
MPI_Comm new_comm(std::shared_ptr<const LogicalComm> c) {
  if (!c) return MPI_COMM_NULL;
  MPI_Comm h;
  PMPI_Comm_dup(MPI_COMM_SELF, &h);
  g_comms[h] = std::move(c);
  return h;
}

// The logical world ranks of a group the program made from a replicated communicator's group.
std::vector<int> logical_members(MPI_Group group, const char *call) {
  int n = 0;
  PMPI_Group_size(group, &n);
  std::vector<int> ranks(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) ranks[static_cast<std::size_t>(i)] = i;
  PMPI_Group_translate_ranks(group, n, ranks.data(), g_slice, out.data());
  for (int w : out)
    if (w == MPI_UNDEFINED)
      log::fatal(1, "%s: under replication (COHORT_REPLICAS=%d) a group must come from MPI_Comm_group of a "
                 "communicator; stopping", call, g_replicas);
  return out;
}

void set_empty_status(MPI_Status *status) {
  if (status == MPI_STATUS_IGNORE) return;
  status->MPI_SOURCE = MPI_PROC_NULL;
  status->MPI_TAG = MPI_ANY_TAG;
  status->MPI_ERROR = MPI_SUCCESS;
  PMPI_Status_set_elements(status, MPI_BYTE, 0);
}

// Reduces the contributions of logical ranks 0..N-1 in that order: ((c0 op c1) op c2) ..., with the
// program's operation applied as MPI_Reduce_local(in, inout) = in op inout, from the last one down; every
// replica of the root combines the same bytes in the same order.
void combine(std::vector<Bytes> &parts, void *recvbuf, int count, MPI_Datatype type, MPI_Op op) {
  MPI_Aint lb = 0, extent = 0;
  PMPI_Type_get_extent(type, &lb, &extent);
  const std::size_t span = static_cast<std::size_t>(extent) * static_cast<std::size_t>(count);
  std::vector<unsigned char> acc(span), in(span);
  unpack(parts.back(), acc.data() - lb, count, type);
  for (int i = static_cast<int>(parts.size()) - 2; i >= 0; --i) {
    unpack(parts[static_cast<std::size_t>(i)], in.data() - lb, count, type);
    PMPI_Reduce_local(in.data() - lb, acc.data() - lb, count, type, op);
  }
  Bytes packed = pack(acc.data() - lb, count, type);
  unpack(packed, recvbuf, count, type);
}

}  // namespace

// ---- start and stop ----

void start() {
  g_replicas = static_cast<int>(read_setting(setting::COHORT_REPLICAS));
  int world_size = 0, world_rank = 0;
  PMPI_Comm_size(cohort::world(), &world_size);
  PMPI_Comm_rank(cohort::world(), &world_rank);
  if (world_size % g_replicas != 0)
    log::fatal(2, "COHORT_REPLICAS=%d: the job has %d processes, not a multiple of %d (cohort-run --replicas R -n N "
               "starts R x N)", g_replicas, world_size, g_replicas);
  sdc_check::configure(g_replicas, world_size / g_replicas);
  if (g_replicas == 1) return;
  if (cohort::world_from_session())
    log::fatal(2, "COHORT_REPLICAS=%d: replication needs MPI_Init (the Sessions model is not supported yet)",
               g_replicas);
  MPI_Comm comm;
  PMPI_Comm_dup(cohort::world(), &comm);
  // The wire communicator returns errors: MPI's default handler would abort the job from inside the
  // progress of a replica that lost a peer's connection (MPICH: in PMI, holding MPI's lock, so that the
  // detector thread could not even fence a cut-off minority).
  PMPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  // Host of every world rank, for the placement rule and the warn lines.
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  PMPI_Get_processor_name(name, &len);
  std::vector<char> all(static_cast<std::size_t>(world_size) * MPI_MAX_PROCESSOR_NAME);
  PMPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, comm);
  std::vector<std::string> names;
  std::vector<int> hosts;
  std::map<std::string, int> index;
  for (int w = 0; w < world_size; ++w) {
    names.emplace_back(&all[static_cast<std::size_t>(w) * MPI_MAX_PROCESSOR_NAME]);
    hosts.push_back(index.emplace(names.back(), static_cast<int>(index.size())).first->second);
  }
  g_engine = new Engine(world_size / g_replicas, g_replicas, hosts, std::move(names), comm);
  if (world_rank == 0) {
    COHORT_LOG_INFO("replication: %d logical ranks x %d replicas; %d logical ranks with two replicas on one host",
                    g_engine->size(), g_replicas, g_engine->placement().shared_host_ranks());
    if (log::enabled(log::Level::info)) {
      std::string d = g_engine->placement().describe();
      std::size_t at = 0;
      while (at < d.size()) {
        std::size_t nl = d.find('\n', at);
        if (nl == std::string::npos) nl = d.size();
        COHORT_LOG_INFO("replication: %s", d.substr(at, nl - at).c_str());
        at = nl + 1;
      }
    }
  }
  MPI_Group all_group;
  PMPI_Comm_group(cohort::world(), &all_group);
  std::vector<int> slice;
  const int k = g_engine->placement().replica(world_rank);
  for (int l = 0; l < g_engine->size(); ++l) slice.push_back(g_engine->placement().world(l, k));
  PMPI_Group_incl(all_group, g_engine->size(), slice.data(), &g_slice);
  PMPI_Group_free(&all_group);
  g_engine->silence_if_twin();
  if (sdc_check::on()) sdc_check::attach(&g_engine->placement(), g_engine->stderr_at_init());
  replica_mode::g_on.store(true);
}

void finish() {
  if (g_engine == nullptr) return;
  g_engine->finish();
  g_finished = true;
}

void deaths_at_exit() {
  if (g_engine != nullptr) g_engine->deaths_at_exit();
}

void stop_unsupported(const char *call) {
  log::fatal(1, "%s is not supported under replication (COHORT_REPLICAS=%d) yet; stopping at the call", call,
             g_replicas);
}

int failed_logical(int *ranks, int max) {
  std::vector<int> lost = g_engine->lost_logical();
  int n = 0;
  for (int l : lost) {
    if (n == max) break;
    ranks[n++] = l;
  }
  return n;
}

int failed_logical_count() { return static_cast<int>(g_engine->lost_logical().size()); }

int logical_alive(int rank) {
  if (rank < 0 || rank >= g_engine->size()) return -1;
  for (int l : g_engine->lost_logical())
    if (l == rank) return 0;
  return 1;
}

bool decide(std::int64_t candidate, std::int64_t *outcome) {
  if (g_engine == nullptr || g_finished) return false;
  *outcome = g_engine->decide(candidate);
  return true;
}

// ---- the calls ----

int comm_rank(MPI_Comm comm, int *rank) {
  *rank = comm_of(comm, "MPI_Comm_rank")->rank;
  return MPI_SUCCESS;
}

int comm_size(MPI_Comm comm, int *size) {
  *size = comm_of(comm, "MPI_Comm_size")->size();
  return MPI_SUCCESS;
}

// ---- communicators (MPI 4.0, 7.4) ----

int comm_dup(MPI_Comm comm, MPI_Comm *newcomm) {
  auto c = comm_of(comm, "MPI_Comm_dup");
  inject::point(posted_hook(CallId::MPI_Comm_dup));
  auto all = exchange(c, Contribution{0, c->rank, g_engine->comms().counter()});
  *newcomm = new_comm(g_engine->comms().split(*c, all));
  return MPI_SUCCESS;
}

int comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm, const char *call) {
  auto c = comm_of(comm, call);
  inject::point(posted_hook(CallId::MPI_Comm_split));
  if (color == MPI_UNDEFINED) color = CommTable::kUndefined;
  else if (color < 0) log::fatal(1, "%s: color %d is negative (MPI_UNDEFINED or >= 0)", call, color);
  auto all = exchange(c, Contribution{color, key, g_engine->comms().counter()});
  *newcomm = new_comm(g_engine->comms().split(*c, all));
  return MPI_SUCCESS;
}

// NOTE: the logical ranks whose replicas 0 share a host form one communicator, the same on every replica
// and as without replication on the same hosts. Whether they can share memory does not matter: the
// calls that would (MPI_Win_allocate_shared) stop under replication.
int comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info, MPI_Comm *newcomm) {
  if (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED)
    log::fatal(1, "MPI_Comm_split_type: split type %d is not supported under replication (COHORT_REPLICAS=%d) yet, "
               "only MPI_COMM_TYPE_SHARED; stopping at the call", split_type, g_replicas);
  const Placement &p = g_engine->placement();
  int color = split_type == MPI_UNDEFINED ? MPI_UNDEFINED : p.host(p.world(g_engine->logical(), 0));
  return comm_split(comm, color, key, newcomm, "MPI_Comm_split_type");
}

// A split whose color is the group's first member and whose key is the position in it (MPI allows
// disjoint groups on different ranks).
int comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm) {
  int position = MPI_UNDEFINED, color = MPI_UNDEFINED;
  PMPI_Group_rank(group, &position);
  if (position != MPI_UNDEFINED) color = logical_members(group, "MPI_Comm_create").front();
  return comm_split(comm, color, position, newcomm, "MPI_Comm_create");
}

// Only the group's members take part: they exchange their counters on the parent's collectives'
// channels among themselves (the order of a pair's collectives is the program's on both sides).
int comm_create_group(MPI_Comm comm, MPI_Group group, int, MPI_Comm *newcomm) {
  auto parent = comm_of(comm, "MPI_Comm_create_group");
  std::vector<int> members = logical_members(group, "MPI_Comm_create_group");
  auto among = std::make_shared<LogicalComm>();
  among->context = parent->context;
  among->members = members;
  among->rank = among->rank_of(g_engine->logical());
  if (among->rank < 0) log::fatal(1, "MPI_Comm_create_group: the calling rank is not in the group");
  for (int w : members)
    if (parent->rank_of(w) < 0) log::fatal(1, "MPI_Comm_create_group: the group is not a subset of the communicator");
  auto all = exchange(among, Contribution{0, 0, g_engine->comms().counter()});
  std::vector<int> counters;
  for (const Contribution &x : all) counters.push_back(x.counter);
  *newcomm = new_comm(g_engine->comms().create(members, counters));
  return MPI_SUCCESS;
}

int comm_free(MPI_Comm *comm) {
  auto it = g_comms.find(*comm);
  if (it == g_comms.end()) return PMPI_Comm_free(comm);  // MPI's own error for MPI_COMM_WORLD, ...
  g_comms.erase(it);
  return PMPI_Comm_free(comm);
}

int comm_group(MPI_Comm comm, MPI_Group *group) {
  const LogicalComm &c = *comm_of(comm, "MPI_Comm_group");
  return PMPI_Group_incl(g_slice, c.size(), c.members.data(), group);
}

int comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result) {
  if (comm1 == comm2) {
    *result = MPI_IDENT;
    return MPI_SUCCESS;
  }
  switch (CommTable::compare(*comm_of(comm1, "MPI_Comm_compare"), *comm_of(comm2, "MPI_Comm_compare"))) {
    case cohort::replica::Similarity::ident: *result = MPI_IDENT; break;
    case cohort::replica::Similarity::congruent: *result = MPI_CONGRUENT; break;
    case cohort::replica::Similarity::similar: *result = MPI_SIMILAR; break;
    case cohort::replica::Similarity::unequal: *result = MPI_UNEQUAL; break;
  }
  return MPI_SUCCESS;
}

// ---- point-to-point ----

namespace {
// Hands a send to the protocol; the request a synchronous send completes with.
Request post_send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, bool synchronous,
                  const char *call) {
  const LogicalComm &c = *comm_of(comm, call);
  Request q;
  if (dest == MPI_PROC_NULL) return q;
  const int to = world_of(c, dest, "destination", call);
  q.synchronous = synchronous;
  q.channel = Channel{c.p2p_context(), c.members[static_cast<std::size_t>(c.rank)], to};
  q.seq = g_engine->send_packed(c.p2p_context(), to, tag, pack(buf, count, type), synchronous);
  // NOTE: the hook of cohort's own sends: a test kills a replica here, after its copies went to MPI.
  inject::point("send.posted");
  return q;
}

bool send_done(const Request &q) { return !q.synchronous || g_engine->endpoint().synced(q.channel, q.seq); }
}  // namespace

int send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, const char *call) {
  post_send(buf, count, type, dest, tag, comm, false, call);
  return MPI_SUCCESS;
}

int ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  Request q = post_send(buf, count, type, dest, tag, comm, true, "MPI_Ssend");
  g_engine->until([&] { return send_done(q); });
  return MPI_SUCCESS;
}

namespace {
std::shared_ptr<Recv> post(void *buf, int count, MPI_Datatype type, int source, int tag,
                           const std::shared_ptr<const LogicalComm> &c, const char *call) {
  auto r = std::make_shared<Recv>();
  r->comm = c;
  r->context = c->p2p_context();
  r->source = source == MPI_ANY_SOURCE ? source : world_of(*c, source, "source", call);
  r->tag = tag;
  r->buf = buf;
  r->count = count;
  r->type = type;
  return g_engine->post_recv(r);
}
}  // namespace

int recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status *status) {
  auto c = comm_of(comm, "MPI_Recv");
  if (source == MPI_PROC_NULL) {
    set_empty_status(status);
    return MPI_SUCCESS;
  }
  auto r = post(buf, count, type, source, tag, c, "MPI_Recv");
  inject::point("recv.posted");
  g_engine->wait_recv(r);
  if (status != MPI_STATUS_IGNORE) *status = r->status;
  return r->rc;
}

int isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *request,
          const char *call) {
  *request = new_request(post_send(buf, count, type, dest, tag, comm, false, call));
  return MPI_SUCCESS;
}

int issend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *request) {
  *request = new_request(post_send(buf, count, type, dest, tag, comm, true, "MPI_Issend"));
  return MPI_SUCCESS;
}

int irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request *request) {
  auto c = comm_of(comm, "MPI_Irecv");
  Request q;
  if (source != MPI_PROC_NULL) q.recv = post(buf, count, type, source, tag, c, "MPI_Irecv");
  *request = new_request(std::move(q));
  return MPI_SUCCESS;
}

// ---- probes (MPI 4.0, 3.8): what a probe finds is what a receive posted at its place would match ----

namespace {
// Finds the message a probe of (source, tag) on c matches: its channel and sequence number. A probe
// with a named source needs no decision (its channel's order is the same on every replica) unless it
// is nonblocking (whether the message arrived yet differs); with MPI_ANY_SOURCE the leader's match is
// everyone's, as for a receive. False: a nonblocking probe found nothing (the leader's flag 0).
bool probe_match(int source, int tag, const LogicalComm &c, bool blocking, const char *call, Channel *ch,
                 std::uint64_t *seq) {
  Engine &e = *g_engine;
  const int me = e.logical();
  if (source != MPI_ANY_SOURCE) {
    *ch = Channel{c.p2p_context(), world_of(c, source, "source", call), me};
    if (!blocking) {
      e.poll();
      if (e.decide(e.peek(*ch, tag) != nullptr ? 1 : 0) == 0) return false;
    }
    e.until([&] { return e.peek(*ch, tag) != nullptr; });
    *seq = e.peek(*ch, tag)->seq;
    return true;
  }
  std::int64_t outcome = -1;
  if (blocking) {
    outcome = e.decide_when([&](std::int64_t *cand) { return e.any_candidate(c, c.p2p_context(), tag, cand); });
  } else {
    e.poll();
    std::int64_t cand = -1;
    e.any_candidate(c, c.p2p_context(), tag, &cand);
    outcome = e.decide(cand);
    if (outcome < 0) return false;
  }
  *ch = Channel{c.p2p_context(), match_src(outcome), me};
  *seq = match_seq(outcome);
  e.until([&] { return e.peek_seq(*ch, *seq) != nullptr; });
  e.prefer_source(c, match_src(outcome));
  return true;
}

void probe_status(const Delivery &d, const LogicalComm &c, MPI_Status *status) {
  if (status == MPI_STATUS_IGNORE) return;
  status->MPI_SOURCE = c.rank_of(d.channel.src);
  status->MPI_TAG = d.tag;
  status->MPI_ERROR = MPI_SUCCESS;
  PMPI_Status_set_elements(status, MPI_BYTE, static_cast<int>(d.payload.size()));
}

// A matched message (MPI_Mprobe), taken out of matching until MPI_Mrecv; handles of cohort's own.
struct Matched {
  Delivery d;
  std::shared_ptr<const LogicalComm> comm;
};
std::map<std::uintptr_t, Matched> g_matched;
std::uintptr_t g_next_matched = 0;

// Keys cycle as the requests' do (below INT_MAX, for MPICH's int handles; not MPI_MESSAGE_NO_PROC's).
MPI_Message new_message(Matched m) {
  std::uintptr_t id = g_next_matched;
  do {
    id = id < kFirstRequest || id + 8 >= kLastRequest ? kFirstRequest : id + 8;
  } while (g_matched.count(id) != 0 || to_handle<MPI_Message>(id) == MPI_MESSAGE_NO_PROC);
  g_next_matched = id;
  g_matched.emplace(id, std::move(m));
  return to_handle<MPI_Message>(id);
}

int probe_any(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status,
              const char *call) {
  auto c = comm_of(comm, call);
  const bool blocking = flag == nullptr;
  if (flag != nullptr) *flag = 1;
  if (source == MPI_PROC_NULL) {
    set_empty_status(status);
    if (message != nullptr) *message = MPI_MESSAGE_NO_PROC;
    return MPI_SUCCESS;
  }
  Channel ch;
  std::uint64_t seq = 0;
  if (!probe_match(source, tag, *c, blocking, call, &ch, &seq)) {
    *flag = 0;
    return MPI_SUCCESS;
  }
  probe_status(*g_engine->peek_seq(ch, seq), *c, status);
  if (message != nullptr) {
    *message = new_message(Matched{g_engine->take(ch, seq), c});
  }
  return MPI_SUCCESS;
}
}  // namespace

int probe(int source, int tag, MPI_Comm comm, MPI_Status *status) {
  return probe_any(source, tag, comm, nullptr, nullptr, status, "MPI_Probe");
}
int iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status) {
  return probe_any(source, tag, comm, flag, nullptr, status, "MPI_Iprobe");
}
int mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status) {
  return probe_any(source, tag, comm, nullptr, message, status, "MPI_Mprobe");
}
int improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status) {
  return probe_any(source, tag, comm, flag, message, status, "MPI_Improbe");
}

int mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Status *status) {
  if (*message == MPI_MESSAGE_NO_PROC) {
    set_empty_status(status);
    *message = MPI_MESSAGE_NULL;
    return MPI_SUCCESS;
  }
  auto it = g_matched.find(from_handle(*message));
  if (it == g_matched.end()) log::fatal(1, "MPI_Mrecv: a message that MPI_Mprobe/MPI_Improbe did not return");
  int rc = unpack_message(it->second.d, buf, count, type, *it->second.comm, status);
  g_matched.erase(it);
  *message = MPI_MESSAGE_NULL;
  return rc;
}

int imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Request *request) {
  auto r = std::make_shared<Recv>();
  r->rc = mrecv(buf, count, type, message, &r->status);
  r->done = true;
  *request = new_request(Request{r});
  return MPI_SUCCESS;
}

namespace {
// Completes a request known complete: its status, and the handle freed.
int finish_request(MPI_Request *request, MPI_Status *status) {
  auto it = g_requests.find(request_id(*request));
  int rc = MPI_SUCCESS;
  if (it->second.recv) {
    if (status != MPI_STATUS_IGNORE) *status = it->second.recv->status;
    rc = it->second.recv->rc;
  } else {
    set_empty_status(status);
  }
  g_requests.erase(it);
  *request = MPI_REQUEST_NULL;
  return rc;
}

Request *find_request(MPI_Request request, const char *call) {
  auto it = g_requests.find(request_id(request));
  if (it == g_requests.end())
    log::fatal(1, "%s: a request that was not made under replication (or was freed already)", call);
  return &it->second;
}
}  // namespace

namespace {
bool request_done(MPI_Request r) {
  if (r == MPI_REQUEST_NULL) return false;
  const Request *q = find_request(r, "MPI_Waitany");
  return q->recv ? q->recv->done : send_done(*q);
}
}  // namespace

int wait(MPI_Request *request, MPI_Status *status) {
  if (*request == MPI_REQUEST_NULL) {
    set_empty_status(status);
    return MPI_SUCCESS;
  }
  Request *q = find_request(*request, "MPI_Wait");
  if (q->recv) g_engine->wait_recv(q->recv);
  if (q->synchronous) g_engine->until([&] { return send_done(*q); });
  return finish_request(request, status);
}

int waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  bool failed = false;
  for (int i = 0; i < count; ++i) {
    MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
    if (wait(&requests[i], st) != MPI_SUCCESS) failed = true;
  }
  return failed ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

int test(MPI_Request *request, int *flag, MPI_Status *status) {
  if (*request == MPI_REQUEST_NULL) {
    *flag = 1;
    set_empty_status(status);
    return MPI_SUCCESS;
  }
  Request *q = find_request(*request, "MPI_Test");
  if (q->recv || q->synchronous) {
    // NOTE: whether a receive (or a synchronous send) has completed differs between replicas; the
    // leader's answer is everyone's.
    g_engine->poll();
    if (g_engine->decide(request_done(*request) ? 1 : 0) == 0) {
      *flag = 0;
      return MPI_SUCCESS;
    }
    return wait(request, status);
  }
  *flag = 1;
  return finish_request(request, status);
}

namespace {
bool any_active(int count, const MPI_Request requests[]) {
  for (int i = 0; i < count; ++i)
    if (requests[i] != MPI_REQUEST_NULL) return true;
  return false;
}
// The lowest index of a request complete on this replica; -1 if none.
int first_done(int count, const MPI_Request requests[]) {
  for (int i = 0; i < count; ++i)
    if (request_done(requests[i])) return i;
  return -1;
}
}  // namespace

int waitany(int count, MPI_Request requests[], int *index, MPI_Status *status) {
  if (!any_active(count, requests)) {
    *index = MPI_UNDEFINED;
    set_empty_status(status);
    return MPI_SUCCESS;
  }
  // NOTE: which request completes first differs between replicas: the leader's index is everyone's.
  std::int64_t i = g_engine->decide_when([&](std::int64_t *c) {
    *c = first_done(count, requests);
    return *c >= 0;
  });
  *index = static_cast<int>(i);
  return wait(&requests[i], status);
}

int testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status) {
  if (!any_active(count, requests)) {
    *flag = 1;
    *index = MPI_UNDEFINED;
    set_empty_status(status);
    return MPI_SUCCESS;
  }
  g_engine->poll();
  std::int64_t i = g_engine->decide(first_done(count, requests));
  if (i < 0) {
    *flag = 0;
    *index = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  *flag = 1;
  *index = static_cast<int>(i);
  return wait(&requests[i], status);
}

int testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]) {
  g_engine->poll();
  bool all = true;
  for (int i = 0; i < count; ++i)
    if (requests[i] != MPI_REQUEST_NULL && !request_done(requests[i])) all = false;
  if (g_engine->decide(all ? 1 : 0) == 0) {
    *flag = 0;
    return MPI_SUCCESS;
  }
  *flag = 1;
  return waitall(count, requests, statuses);
}

namespace {
// MPI_Waitsome/MPI_Testsome: the set of indices is the leader's, as a bit mask (one decision event).
constexpr int kMaxSome = 62;

int some(int count, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[], bool blocking,
         const char *call) {
  if (!any_active(count, requests)) {
    *outcount = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  if (count > kMaxSome)
    log::fatal(1, "%s: more than %d requests are not supported under replication (COHORT_REPLICAS=%d) yet; "
               "stopping at the call", call, kMaxSome, g_replicas);
  auto done_mask = [&] {
    std::int64_t m = 0;
    for (int i = 0; i < count; ++i)
      if (request_done(requests[i])) m |= std::int64_t{1} << i;
    return m;
  };
  std::int64_t mask = 0;
  if (blocking) {
    // NOTE: a replica proposes (or keeps for a takeover) only a set that is complete on it and not empty.
    mask = g_engine->decide_when([&](std::int64_t *cand) {
      *cand = done_mask();
      return *cand != 0;
    });
  } else {
    g_engine->poll();
    mask = g_engine->decide(done_mask());
  }
  bool failed = false;
  *outcount = 0;
  for (int i = 0; i < count; ++i) {
    if ((mask & (std::int64_t{1} << i)) == 0) continue;
    MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[*outcount];
    if (wait(&requests[i], st) != MPI_SUCCESS) failed = true;
    indices[(*outcount)++] = i;
  }
  return failed ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}
}  // namespace

int waitsome(int count, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[]) {
  return some(count, requests, outcount, indices, statuses, true, "MPI_Waitsome");
}

int testsome(int count, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[]) {
  return some(count, requests, outcount, indices, statuses, false, "MPI_Testsome");
}

// ---- collectives: linear schedules over the logical ranks on the collectives' channels ----

int barrier(MPI_Comm comm) {
  auto c = comm_of(comm, "MPI_Barrier");
  inject::point(posted_hook(CallId::MPI_Barrier));
  const int me = c->rank, n = c->size();
  if (me == 0) {
    for (int i = 1; i < n; ++i) coll_recv(c, i);
    for (int i = 1; i < n; ++i) coll_send(*c, i, {});
  } else {
    coll_send(*c, 0, {});
    coll_recv(c, 0);
  }
  return MPI_SUCCESS;
}

int bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  auto c = comm_of(comm, "MPI_Bcast");
  world_of(*c, root, "root", "MPI_Bcast");
  inject::point(posted_hook(CallId::MPI_Bcast));
  const int me = c->rank, n = c->size();
  if (me == root) {
    Bytes b = pack(buf, count, type);
    for (int i = 0; i < n; ++i)
      if (i != root) coll_send(*c, i, b);
  } else {
    unpack(coll_recv(c, root), buf, count, type);
  }
  return MPI_SUCCESS;
}

int reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
  auto c = comm_of(comm, "MPI_Reduce");
  world_of(*c, root, "root", "MPI_Reduce");
  inject::point(posted_hook(CallId::MPI_Reduce));
  const int me = c->rank, n = c->size();
  if (me != root) {
    coll_send(*c, root, pack(sendbuf, count, type));
    return MPI_SUCCESS;
  }
  std::vector<Bytes> parts(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    parts[static_cast<std::size_t>(i)] =
        i == root ? pack(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, count, type) : coll_recv(c, i);
  combine(parts, recvbuf, count, type, op);
  return MPI_SUCCESS;
}

int allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  comm_of(comm, "MPI_Allreduce");
  inject::point(posted_hook(CallId::MPI_Allreduce));
  reduce(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, recvbuf, count, type, op, 0, comm);
  return bcast(recvbuf, count, type, 0, comm);
}

int gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, int root, MPI_Comm comm) {
  auto c = comm_of(comm, "MPI_Gather");
  world_of(*c, root, "root", "MPI_Gather");
  inject::point(posted_hook(CallId::MPI_Gather));
  const int me = c->rank, n = c->size();
  if (me != root) {
    coll_send(*c, root, pack(sendbuf, sendcount, sendtype));
    return MPI_SUCCESS;
  }
  MPI_Aint lb = 0, extent = 0;
  PMPI_Type_get_extent(recvtype, &lb, &extent);
  for (int i = 0; i < n; ++i) {
    char *slot = static_cast<char *>(recvbuf) + static_cast<MPI_Aint>(i) * recvcount * extent;
    if (i == root) {
      if (sendbuf != MPI_IN_PLACE) unpack(pack(sendbuf, sendcount, sendtype), slot, recvcount, recvtype);
    } else {
      unpack(coll_recv(c, i), slot, recvcount, recvtype);
    }
  }
  return MPI_SUCCESS;
}

int allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
               MPI_Datatype recvtype, MPI_Comm comm) {
  auto c = comm_of(comm, "MPI_Allgather");
  inject::point(posted_hook(CallId::MPI_Allgather));
  const int me = c->rank, n = c->size();
  if (sendbuf == MPI_IN_PLACE) {
    // NOTE: the contribution is in place in recvbuf: sent from a copy, as Gather's root would read it.
    MPI_Aint lb = 0, extent = 0;
    PMPI_Type_get_extent(recvtype, &lb, &extent);
    Bytes mine = pack(static_cast<char *>(recvbuf) + static_cast<MPI_Aint>(me) * recvcount * extent, recvcount,
                      recvtype);
    if (me != 0) coll_send(*c, 0, mine);
    if (me == 0) gather(MPI_IN_PLACE, 0, recvtype, recvbuf, recvcount, recvtype, 0, comm);
  } else if (me != 0) {
    coll_send(*c, 0, pack(sendbuf, sendcount, sendtype));
  } else {
    gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 0, comm);
  }
  return bcast(recvbuf, recvcount * n, recvtype, 0, comm);
}

// ---- the other blocking collectives: linear schedules of the same kind (MPI 4.0, 6.5-6.11) ----

namespace {

// Byte address of element `disp` (in extents of type) of buf.
char *at(void *buf, MPI_Aint disp, MPI_Datatype type) {
  MPI_Aint lb = 0, extent = 0;
  PMPI_Type_get_extent(type, &lb, &extent);
  return static_cast<char *>(buf) + disp * extent;
}
const char *at(const void *buf, MPI_Aint disp, MPI_Datatype type) {
  return at(const_cast<void *>(buf), disp, type);
}

// A buffer for count elements of type, as MPI lays them out (its lower bound honoured).
struct TypedBuffer {
  std::vector<unsigned char> bytes;
  MPI_Aint lb = 0;
  TypedBuffer(int count, MPI_Datatype type) {
    MPI_Aint extent = 0, true_lb = 0, true_extent = 0;
    PMPI_Type_get_extent(type, &lb, &extent);
    PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
    const MPI_Aint span = count > 0 ? extent * (count - 1) + true_extent + (true_lb - lb) : 0;
    bytes.resize(static_cast<std::size_t>(span > 0 ? span : 0));
  }
  void *data() { return bytes.data() - lb; }
};

// Several packed parts as one message: each part's length (8 bytes), then its bytes.
Bytes join(const std::vector<Bytes> &parts) {
  std::size_t total = 0;
  for (const Bytes &b : parts) total += sizeof(std::uint64_t) + b.size();
  Bytes out;
  out.reserve(total);
  for (const Bytes &b : parts) {
    const std::uint64_t n = b.size();
    const auto *p = reinterpret_cast<const unsigned char *>(&n);
    out.insert(out.end(), p, p + sizeof n);
    out.insert(out.end(), b.begin(), b.end());
  }
  return out;
}

std::vector<Bytes> split_parts(const Bytes &whole, int n, const char *call) {
  std::vector<Bytes> parts;
  std::size_t pos = 0;
  for (int i = 0; i < n; ++i) {
    std::uint64_t len = 0;
    if (whole.size() - pos < sizeof len) break;
    std::memcpy(&len, whole.data() + pos, sizeof len);
    pos += sizeof len;
    if (whole.size() - pos < len) break;
    parts.emplace_back(whole.begin() + static_cast<std::ptrdiff_t>(pos),
                       whole.begin() + static_cast<std::ptrdiff_t>(pos + len));
    pos += len;
  }
  if (static_cast<int>(parts.size()) != n || pos != whole.size())
    log::fatal(1, "%s: a malformed message from the root under replication (%zu bytes, %d parts expected); stopping",
               call, whole.size(), n);
  return parts;
}

// Every member's part gathered to communicator rank 0 and the whole sent back to each (Allgatherv's and
// Alltoall's staging); `mine` is this rank's part. Returns the parts in rank order.
std::vector<Bytes> all_parts(const std::shared_ptr<const LogicalComm> &c, Bytes mine, const char *call) {
  const int me = c->rank, n = c->size();
  if (me != 0) {
    coll_send(*c, 0, mine);
    return split_parts(coll_recv(c, 0), n, call);
  }
  std::vector<Bytes> parts(static_cast<std::size_t>(n));
  parts[0] = std::move(mine);
  for (int i = 1; i < n; ++i) parts[static_cast<std::size_t>(i)] = coll_recv(c, i);
  Bytes whole = join(parts);
  for (int i = 1; i < n; ++i) coll_send(*c, i, whole);
  return parts;
}

// The contributions of a reduction, in rank order, combined at communicator rank 0 into out (count
// elements of type): Reduce's schedule with a caller's buffer.
void reduce_to_zero(const std::shared_ptr<const LogicalComm> &c, const void *in, void *out, int count,
                    MPI_Datatype type, MPI_Op op) {
  const int me = c->rank, n = c->size();
  if (me != 0) {
    coll_send(*c, 0, pack(in, count, type));
    return;
  }
  std::vector<Bytes> parts(static_cast<std::size_t>(n));
  parts[0] = pack(in, count, type);
  for (int i = 1; i < n; ++i) parts[static_cast<std::size_t>(i)] = coll_recv(c, i);
  combine(parts, out, count, type, op);
}

}  // namespace

int gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
            const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  auto c = comm_of(comm, "MPI_Gatherv");
  world_of(*c, root, "root", "MPI_Gatherv");
  inject::point(posted_hook(CallId::MPI_Gatherv));
  const int me = c->rank, n = c->size();
  if (me != root) {
    coll_send(*c, root, pack(sendbuf, sendcount, sendtype));
    return MPI_SUCCESS;
  }
  for (int i = 0; i < n; ++i) {
    char *slot = at(recvbuf, displs[i], recvtype);
    if (i == root) {
      if (sendbuf != MPI_IN_PLACE) unpack(pack(sendbuf, sendcount, sendtype), slot, recvcounts[i], recvtype);
    } else {
      unpack(coll_recv(c, i), slot, recvcounts[i], recvtype);
    }
  }
  return MPI_SUCCESS;
}

int scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
            MPI_Datatype recvtype, int root, MPI_Comm comm) {
  auto c = comm_of(comm, "MPI_Scatter");
  world_of(*c, root, "root", "MPI_Scatter");
  inject::point(posted_hook(CallId::MPI_Scatter));
  const int me = c->rank, n = c->size();
  if (me != root) {
    unpack(coll_recv(c, root), recvbuf, recvcount, recvtype);
    return MPI_SUCCESS;
  }
  for (int i = 0; i < n; ++i) {
    const char *block = at(sendbuf, static_cast<MPI_Aint>(i) * sendcount, sendtype);
    if (i != root) coll_send(*c, i, pack(block, sendcount, sendtype));
    else if (recvbuf != MPI_IN_PLACE) unpack(pack(block, sendcount, sendtype), recvbuf, recvcount, recvtype);
  }
  return MPI_SUCCESS;
}

int scatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void *recvbuf,
             int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  auto c = comm_of(comm, "MPI_Scatterv");
  world_of(*c, root, "root", "MPI_Scatterv");
  inject::point(posted_hook(CallId::MPI_Scatterv));
  const int me = c->rank, n = c->size();
  if (me != root) {
    unpack(coll_recv(c, root), recvbuf, recvcount, recvtype);
    return MPI_SUCCESS;
  }
  for (int i = 0; i < n; ++i) {
    const char *block = at(sendbuf, displs[i], sendtype);
    if (i != root) coll_send(*c, i, pack(block, sendcounts[i], sendtype));
    else if (recvbuf != MPI_IN_PLACE) unpack(pack(block, sendcounts[i], sendtype), recvbuf, recvcount, recvtype);
  }
  return MPI_SUCCESS;
}

int allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
               const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  auto c = comm_of(comm, "MPI_Allgatherv");
  inject::point(posted_hook(CallId::MPI_Allgatherv));
  const int me = c->rank, n = c->size();
  Bytes mine = sendbuf == MPI_IN_PLACE ? pack(at(recvbuf, displs[me], recvtype), recvcounts[me], recvtype)
                                       : pack(sendbuf, sendcount, sendtype);
  std::vector<Bytes> parts = all_parts(c, std::move(mine), "MPI_Allgatherv");
  for (int i = 0; i < n; ++i)
    unpack(parts[static_cast<std::size_t>(i)], at(recvbuf, displs[i], recvtype), recvcounts[i], recvtype);
  return MPI_SUCCESS;
}

namespace {

// Alltoall's and Alltoallv's exchange: block i of this rank goes to rank i (sent first: a send completes
// once cohort holds its copies), then block i of the result comes from rank i. `out` packs the block for
// rank i, `in` unpacks the one from rank i.
template <class Out, class In>
void exchange_blocks(const std::shared_ptr<const LogicalComm> &c, Out out, In in) {
  const int me = c->rank, n = c->size();
  std::vector<Bytes> blocks(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) blocks[static_cast<std::size_t>(i)] = out(i);  // (all read before any is written: MPI_IN_PLACE)
  for (int i = 0; i < n; ++i)
    if (i != me) coll_send(*c, i, blocks[static_cast<std::size_t>(i)]);
  for (int i = 0; i < n; ++i) in(i, i == me ? blocks[static_cast<std::size_t>(i)] : coll_recv(c, i));
}

}  // namespace

int alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
             MPI_Datatype recvtype, MPI_Comm comm) {
  auto c = comm_of(comm, "MPI_Alltoall");
  inject::point(posted_hook(CallId::MPI_Alltoall));
  const bool in_place = sendbuf == MPI_IN_PLACE;
  exchange_blocks(
      c,
      [&](int i) {
        return in_place ? pack(at(recvbuf, static_cast<MPI_Aint>(i) * recvcount, recvtype), recvcount, recvtype)
                        : pack(at(sendbuf, static_cast<MPI_Aint>(i) * sendcount, sendtype), sendcount, sendtype);
      },
      [&](int i, const Bytes &b) {
        unpack(b, at(recvbuf, static_cast<MPI_Aint>(i) * recvcount, recvtype), recvcount, recvtype);
      });
  return MPI_SUCCESS;
}

int alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
              const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  auto c = comm_of(comm, "MPI_Alltoallv");
  inject::point(posted_hook(CallId::MPI_Alltoallv));
  const bool in_place = sendbuf == MPI_IN_PLACE;
  exchange_blocks(
      c,
      [&](int i) {
        return in_place ? pack(at(recvbuf, rdispls[i], recvtype), recvcounts[i], recvtype)
                        : pack(at(sendbuf, sdispls[i], sendtype), sendcounts[i], sendtype);
      },
      [&](int i, const Bytes &b) { unpack(b, at(recvbuf, rdispls[i], recvtype), recvcounts[i], recvtype); });
  return MPI_SUCCESS;
}

int reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm, CallId id) {
  const char *call = info(id).name;
  auto c = comm_of(comm, call);
  inject::point(posted_hook(id));
  const int me = c->rank, n = c->size();
  std::vector<int> displs(static_cast<std::size_t>(n));
  int total = 0;
  for (int i = 0; i < n; ++i) {
    displs[static_cast<std::size_t>(i)] = total;
    total += recvcounts[i];
  }
  // MPI_IN_PLACE: the whole input is in recvbuf (MPI 4.0, 6.10.1).
  const void *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  TypedBuffer whole(me == 0 ? total : 0, type);
  reduce_to_zero(c, in, whole.data(), total, type, op);
  if (me != 0) {
    unpack(coll_recv(c, 0), recvbuf, recvcounts[me], type);
    return MPI_SUCCESS;
  }
  for (int i = 1; i < n; ++i)
    coll_send(*c, i, pack(at(whole.data(), displs[static_cast<std::size_t>(i)], type), recvcounts[i], type));
  unpack(pack(whole.data(), recvcounts[0], type), recvbuf, recvcounts[0], type);
  return MPI_SUCCESS;
}

int reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
                         MPI_Comm comm) {
  const int n = comm_of(comm, "MPI_Reduce_scatter_block")->size();
  std::vector<int> counts(static_cast<std::size_t>(n), recvcount);
  return reduce_scatter(sendbuf, recvbuf, counts.data(), type, op, comm, CallId::MPI_Reduce_scatter_block);
}

// Scan and Exscan: a chain in rank order, rank i receiving the prefix c0 op ... op c(i-1) from rank i-1
// and sending the prefix through its own contribution to rank i+1 (MPI 4.0, 6.11); the operation applied
// as in_prefix op mine, so a non-commutative one keeps the rank order.
int scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm, bool exclusive) {
  const CallId id = exclusive ? CallId::MPI_Exscan : CallId::MPI_Scan;
  auto c = comm_of(comm, info(id).name);
  inject::point(posted_hook(id));
  const int me = c->rank, n = c->size();
  TypedBuffer mine(count, type);
  unpack(pack(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, count, type), mine.data(), count, type);
  if (me > 0) {
    TypedBuffer prefix(count, type);
    unpack(coll_recv(c, me - 1), prefix.data(), count, type);
    if (exclusive) unpack(pack(prefix.data(), count, type), recvbuf, count, type);
    PMPI_Reduce_local(prefix.data(), mine.data(), count, type, op);
  }
  if (me + 1 < n) coll_send(*c, me + 1, pack(mine.data(), count, type));
  if (!exclusive) unpack(pack(mine.data(), count, type), recvbuf, count, type);
  return MPI_SUCCESS;
}

// ---- communicator calls made of the ones above ----

int comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm) {
  comm_dup(comm, newcomm);
  return info == MPI_INFO_NULL ? MPI_SUCCESS : PMPI_Comm_set_info(*newcomm, info);
}

// NOTE: the duplicate is made at once and the request given complete (as without replication).
int comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request) {
  comm_dup(comm, newcomm);
  *request = new_request(Request{});
  return MPI_SUCCESS;
}

// Its pending communication is complete when a barrier over it is (every send is held by cohort already).
int comm_disconnect(MPI_Comm *comm) {
  barrier(*comm);
  return comm_free(comm);
}

}  // namespace cohort::wrap::replica
