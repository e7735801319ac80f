// The failure detector's protocol, sans-IO: a heartbeat ring with failure-notice broadcast.
//
// One RingDetector per rank. It is fed the time (tick) and the messages it receives (on_message), and
// answers with messages to send and events (a rank failed; this rank was fenced). It holds no MPI, no
// thread and no clock, so unit tests drive it with a fake clock and a fake network and bench/ simulates
// 65,536 of them. Not thread-safe: one caller at a time.
//
// Protocol (after OCFTL, Rosso and Francesquini, section 4.1, and the ULFM detector of Bosilca et al.,
// "A failure detector for HPC platforms", IJHPCA 32(1) 2018: its observation ring and its propagation
// by flooding over a binomial graph):
//  - Ring: the ranks in ring order (topology::Ring). Each rank *emits* a heartbeat to its *observer*, the
//    next live position, every *period*, and *observes* its *emitter*, the previous live position.
//  - Suspicion: no message from the emitter for *timeout* -> the emitter is marked failed, a failure
//    notice goes to the broadcast targets (topology::bcast_offsets, counted in live positions), and the
//    next live predecessor becomes the emitter: it is sent an emit request (naming the absent ranks
//    between the two) and gets timeout + grace before it can be suspected in turn. Until it is heard,
//    the request is repeated every period (it may not know yet that it must emit to us).
//  - Broadcast: every rank sends a notice to its own targets once, on first learning of a failure
//    (whatever told it), so the notice floods the overlay and survives dead forwarders.
//  - Anti-entropy: every heartbeat carries a digest (count and an order-free hash) of the sender's failed
//    set. An observer that sees two heartbeats in a row whose digest differs from its own sends its whole
//    failed set (sync); the emitter merges it and answers with what the observer lacks. Notices that were
//    lost, or sent to a rank that died on receipt, are therefore always recovered along the ring.
//  - Self-fencing: a message naming this rank as failed (notice, sync or emit request) fences it (event
//    self_fenced; the runtime exits). A message from a rank known failed is answered with a sync, which
//    names that rank and so fences it: a rank that was paused past the timeout can never rejoin.
//  - Stall guard: a tick that comes more than timeout/2 after the previous one means this rank itself
//    was not running (paused, descheduled): it restarts its emitter's timeout instead of suspecting it.
//  - Alone after a stall: a rank that was not running for longer than the timeout (stopped, starved) may
//    have been declared dead while nobody was left to tell it (the survivors finished and exited). If it
//    then finds every other rank failed or departed, it fences itself (event self_fenced, how alone)
//    instead of carrying on alone: it cannot tell "everyone else died" from "everyone else dropped me".
//  - Partitions (a multi-host ring only, Config::host): a rank that loses contact with more than half of
//    its *view* fences itself (event self_fenced, how minority), so that at most one side of a network
//    partition carries on. The view is the set of ranks live at the last quiet moment: failures of ranks on
//    this rank's own host (no partition can part a host from itself) and departures leave it at once;
//    failures of other hosts' ranks leave it only after `quiet` without another such failure. A rank
//    fences when the view's ranks it still reaches are fewer than half of the view, or exactly half
//    without the view's lowest rank (equal sides: the side of the lowest rank carries on). The rule of
//    dynamic-quorum replicated systems (Jajodia and Mutchler, "Dynamic voting algorithms for maintaining
//    the consistency of a replicated database", ACM TODS 15(2), 1990: majority of the last view, a
//    distinguished site breaking ties). Its price: a whole host that truly died with half of the view
//    and the lowest rank stops the other half too.
//  - Lost hosts (a multi-host ring only): when an observer suspects an emitter of another host by its
//    timeout (not by a process exit), it also asks every other live rank of that host to answer (an emit
//    request naming nobody, sent twice, a period apart). If none of them answers within 2 x period, the
//    host is lost: all of them are suspected at once (How::host_silent) instead of one timeout + grace
//    after the other as each becomes the emitter. One answer from any of them clears the whole host:
//    the rest are judged by their own timeout as before, so a single stopped or slow process is never
//    suspected because of its host, and a rank is suspected this way only when its host was silent for
//    the emitter's whole timeout and then answered none of 2 requests in 2 x period. (A host whose every
//    rank is stalled for longer than timeout + 2 x period is declared lost where today its ranks would
//    go one timeout + grace after the other.)
//  - Process exit: where the runtime can watch its emitter's process (same host: Linux pidfd), it reports
//    the exit (on_emitter_exited) and the emitter is suspected at once, without waiting for the timeout;
//    the notice, re-targeting and fencing are those of a suspicion. Heartbeats still run: they cover
//    lost hosts, partitions and stopped processes, which no process watch sees. On a multi-host ring the
//    last live rank of each host has its observer on the next host, which cannot watch it: the host's
//    first live rank (whose own emitter is on another host) watches it too (host_tail,
//    on_host_tail_exited), so a crash of any rank is seen on its host.
//  - Leaving: a rank that stops its detector (MPI_Finalize) tells its observer and emitter, with the
//    departures it knows; they close the ring around it without suspecting it. A departed rank is not a
//    failed one (event rank_left, not rank_failed). Once a failure is known, a leaving rank also sends a
//    departure notice to its broadcast targets: a survivor still repairing with a rank that finished
//    (MPI_Finalize's survivors barrier, whose retry met a death) must learn that it will never answer.
//    Departure notices are not forwarded: at MPI_Finalize every rank departs, and a flood per departure
//    costs O(n^2 log n) messages (bench/detector_sim: 98 million at 4,096 ranks, against 49,000 unforwarded,
//    which still told the last survivor every departure as it happened when ranks leave 100 us apart). Ranks
//    that all leave at the same instant reach the last one only through its ring: it may take one of them
//    for failed (a timeout, or at once where it watches the process). Without a known failure no rank waits
//    on a departed one and no notice is sent: every detector message of a fault-free job is matched before
//    MPI finalizes.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "topology/ring.hpp"

namespace cohort::detector {

/// Time in microseconds since any fixed origin (monotonic).
using Time = std::int64_t;

struct Config {
  int rank = 0;                                  ///< this rank (MPI_COMM_WORLD rank)
  std::shared_ptr<const topology::Ring> ring;    ///< the same ring on every rank
  Time period = 100000;                          ///< heartbeat period, µs
  Time timeout = 1000000;                        ///< silence before suspicion, µs (>= 2 * period)
  Time grace = 100000;                           ///< extra time granted to a new emitter, µs
  topology::Bcast bcast = topology::Bcast::chord;
  bool resync = true;                            ///< digest anti-entropy on heartbeats
  /// Host index per rank (topology::host_indices; shape: host[rank]). Null or a single host: no partition
  /// rule (a host cannot be partitioned from itself).
  std::shared_ptr<const std::vector<int>> host;
  Time quiet = 0;                                ///< partition rule: silence before the view shrinks, µs (0: 2 * timeout)
};

enum class MsgType : std::int32_t { heartbeat = 1, notice = 2, sync = 3, emit_request = 4, leaving = 5, departure = 6 };

struct Message {
  MsgType type = MsgType::heartbeat;
  int subject = -1;             ///< notice: the failed rank; departure: the departed rank
  int hops = 0;                 ///< notice: hops from the rank that learned it first-hand (it sends 1); departure: 1
  std::uint32_t count = 0;      ///< heartbeat: size of the sender's failed set
  std::uint64_t digest = 0;     ///< heartbeat: order-free hash of the sender's failed set
  bool reply = false;           ///< sync: answer with a sync if you know failures that this one lacks
  std::vector<int> failed;      ///< sync: the sender's failed set; emit_request: failed ranks in between
  std::vector<int> left;        ///< emit_request: departed ranks in between; leaving: the departures the sender knows
};

struct Outgoing {
  int to;  ///< destination rank
  Message msg;
};

/// How a rank learned of a failure.
// reported: by MPI (ULFM); exited: this rank saw its emitter's process exit (on_emitter_exited)
// minority: this rank's side of a partition holds less than half of the view (or half, without its lowest rank)
// host_silent: its host answered none of the requests sent after another of its ranks was suspected (lost host)
enum class How { suspected, notice, sync, emit_request, declared, alone, reported, exited, minority, host_silent };
const char *how_name(How how);

struct Event {
  /// rank_left: `rank` stopped its detector (MPI_Finalize), learned from its leaving note (how: declared),
  /// from its departure notice (how: notice) or from a list of departures (how: emit_request).
  enum Kind { rank_failed, self_fenced, rank_left } kind;
  int rank;       ///< the failed or departed rank (self_fenced: this rank)
  How how;        ///< how this rank learned it
  int from;       ///< the rank whose message told it (suspected/declared: this rank)
  int hops;       ///< notice: the notice's hop count; otherwise 0
  Time silent;    ///< suspected, exited: µs since the emitter was last heard (-1: an exit seen as the host's
                  ///< tail, see host_tail); host_silent: µs since its host
                  ///< was asked to answer; alone: the longest stall, µs;
                  ///< minority: (ranks of the view still reached) * 2^32 + (ranks in the view); otherwise 0
};

/// What one call produced; callers append-and-drain (the machine only appends).
struct Output {
  std::vector<Outgoing> messages;
  std::vector<Event> events;
  void clear() {
    messages.clear();
    events.clear();
  }
};

/// The order-free digest of a failed set (sum of a 64-bit mix of each rank).
std::uint64_t digest_of(const std::vector<int> &ranks);

class RingDetector {
 public:
  /// Starts watching at time now: the first emitter gets timeout + grace.
  RingDetector(Config config, Time now, Output *out);

  /// Advances the clock: sends due heartbeats and suspects a silent emitter.
  void tick(Time now, Output *out);
  /// A message from rank `from` arrived at time now.
  void on_message(int from, const Message &msg, Time now, Output *out);
  /// Another part of cohort learned that `rank` is dead: record and broadcast it as if suspected here.
  void declare_failed(int rank, Time now, Output *out);
  /// The process of `rank` has exited (seen by the runtime's watch of a same-host emitter, e.g. a pidfd
  /// that became readable). If `rank` is this rank's current emitter, it is suspected at once (event
  /// rank_failed, How::exited, silent = µs since it was last heard), broadcast and re-targeted past, as
  /// after a timeout. Otherwise ignored: a watch that fired after re-targeting, a departed or unknown rank.
  void on_emitter_exited(int rank, Time now, Output *out);
  /// Multi-host rings: when this rank is the first live rank of its host in ring order (its emitter is on
  /// another host), the last live rank of its host (whose observer is on another host and cannot watch
  /// its process); -1 otherwise (a single host, this rank alone on its host, or stopped). The runtime
  /// watches that process too. O(ranks of this host).
  int host_tail() const;
  /// The process of `rank` has exited, seen by the runtime's watch of host_tail(). If `rank` is still
  /// this rank's host tail, it is marked failed at once (event rank_failed, How::exited, silent = -1),
  /// broadcast (its observer learns it by notice and re-targets); otherwise ignored.
  void on_host_tail_exited(int rank, Time now, Output *out);
  /// This rank stops (MPI_Finalize): tells its observer and emitter (and, once a failure is known, its
  /// broadcast targets, by a departure notice); afterwards the machine is inert.
  void leave(Time now, Output *out);

  /// The earliest time at which tick() has something to do (a heartbeat, a suspicion, a repeated emit
  /// request); a caller may sleep until then if no message arrives. -1 when stopped.
  Time next_wakeup() const;

  bool fenced() const { return fenced_; }
  bool stopped() const { return stopped_ || fenced_; }
  bool is_failed(int rank) const;
  bool has_left(int rank) const;
  /// Failed ranks in the order this rank learned them.
  const std::vector<int> &failed_order() const { return failed_order_; }
  int emitter() const { return emitter_; }
  int observer() const { return observer_; }
  int live() const { return live_.live(); }
  /// Partition rule: ranks in the view (see the protocol notes), and those of them this rank still reaches.
  int view_size() const { return cfg_.ring->size() - static_cast<int>(view_out_.size()); }
  int view_reached() const { return view_size() - static_cast<int>(unsettled_.size()); }
  std::uint64_t digest() const { return digest_; }
  const Config &config() const { return cfg_; }

 private:
  int pos_of(int rank) const { return cfg_.ring->position_of[rank]; }
  int rank_at(int pos) const { return pos < 0 ? -1 : cfg_.ring->rank_at[pos]; }
  void learn(int rank, How how, int from, int hops, Time silent, Time now, Output *out);
  void mark_left(int rank, How how, int from, int hops, Time now, Output *out);
  void send_notices(MsgType type, int rank, int hops, Output *out);
  void retarget(Time now, Output *out);
  void broadcast(int rank, int hops, Output *out);
  void send_heartbeat(Time now, Output *out);
  void send_sync(int to, bool reply, Output *out);
  void send_emit_request(Time now, Output *out);
  void fence(int from, How how, Output *out);
  bool partition_rule() const;
  void leave_view(int rank);
  bool check_quorum(Time now, Output *out);
  bool contains_failed(const std::vector<int> &sorted, int rank) const;
  void probe_host(int suspected, Time now, Output *out);
  void send_probe(int to, Output *out);
  bool check_probes(Time now, Output *out);

  Config cfg_;
  int me_pos_;
  topology::LiveRing live_;          // absent = failed or departed positions
  std::vector<int> failed_sorted_;
  std::vector<int> failed_order_;
  std::vector<int> left_sorted_;
  std::uint64_t digest_ = 0;
  int emitter_ = -1, observer_ = -1;
  Time last_heard_ = 0, deadline_ = 0, next_hb_ = 0, last_tick_ = -1;
  Time next_emit_request_ = -1;  // >= 0 while a re-targeted emitter has not been heard
  int mismatch_from_ = -1, mismatch_streak_ = 0;
  bool fenced_ = false, stopped_ = false;
  Time longest_stall_ = 0;  // the longest gap between two ticks (this rank not running), µs
  // Partition rule: ranks out of the view (sorted), and failures of other hosts' ranks not yet settled
  // into it (since the last quiet moment, the latest at last_unsettled_).
  bool multi_host_ = false;  // Config::host names more than one host
  std::vector<int> view_out_;
  std::vector<int> unsettled_;
  Time last_unsettled_ = 0;
  // Lost hosts: per host asked to answer after one of its ranks was suspected by timeout, the live ranks
  // asked (farthest from this rank first), when they are asked again, and when they are suspected.
  struct Probe {
    int host;
    std::vector<int> ranks;
    Time started, resend, deadline;
  };
  std::vector<Probe> probes_;
  // bcast_offsets for the current live count (recomputed when it changes).
  int offsets_live_ = -1;
  std::vector<int> offsets_;
};

/// Wire format: a message as 32-bit integers (header then the rank lists). decode returns false on a
/// malformed buffer (wrong magic, lengths that do not add up, ranks outside [0, n)).
std::vector<std::int32_t> encode(const Message &msg);
bool decode(const std::int32_t *data, int len, int n, Message *out);
/// Upper bound of an encoded message's length for a job of n ranks.
int max_encoded_len(int n);

}  // namespace cohort::detector
