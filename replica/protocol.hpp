// The replication protocol of one replica, sans-IO: it is fed events (the program sends a logical
// message, a wire message arrives, a replica died) and produces wire messages to send and logical
// messages to deliver. It performs no I/O, keeps no clock and starts no thread; the MPI integration (and
// the unit tests' fake network) moves its wire messages.
//
// Data: the mirror protocol (Ferreira et al., "Evaluating the Viability of Process Replication
// Reliability for Exascale Systems", SC'11, the rMPI section: mirror protocol; the same fan-out as
// RedMPI's all-to-all method, C. Ford, "Lazy Fault Detection for Redundant MPI", Cal Poly MS thesis 2016,
// chapter 2). Every live replica of logical rank a sends each logical message to every live replica of
// the destination b, tagged with its channel (communicator context, a, b) and its sequence number on that
// channel. The replicas of a number their sends identically because they run the same program and
// follow the same decisions. A receiver keeps the first copy of each (channel, sequence number),
// discards every later copy, and delivers each channel in sequence order, exactly once. A sender
// replica's death needs no action: its twins send the same messages. A receiver never waits for a
// particular replica: any live replica of the sender supplies each message.
//
// Decisions: whatever one replica could observe differently from its twins (the source an
// MPI_ANY_SOURCE receive matched, the index of Waitany/Testany, the flag of Test/Iprobe, MPI_Wtime) is a
// *decision event*, numbered in program order on every replica. The leader (the live replica of lowest
// index) decides it in two phases: it sends a proposal to its live twins, which store it and acknowledge;
// once every live twin acknowledged, the leader commits (the outcome becomes visible to its program)
// and sends a commit to its twins, whose programs may then use the outcome. A twin's program waits for
// the commit; the leader waits only for live twins. Epoch = the proposer's replica index. (One replica
// resolving MPI_ANY_SOURCE for its twins is rMPI's; the two phases and the takeover rule are cohort's.)
//
// Leader death (the rule): a twin that becomes leader re-proposes, under its own epoch, every decision
// it has stored (committed or not, within the last kept_decisions committed ones) with the outcome it
// stored, and decides afresh only events for which it stored nothing. A replica replaces a stored
// uncommitted outcome only by one of a higher epoch. Why this is consistent: an outcome is used by a
// program only after a commit, a commit happens only after every then-live twin stored the outcome, and
// the next leader was one of them; so any outcome some replica used (and any message it sent that depends
// on it) is the outcome every later leader re-proposes. An outcome no replica committed may be replaced,
// but nobody acted on it: no message under any sequence number depends on it.
//
// Bounds: held copies (first copies received and not yet delivered) are at most max_held per replica;
// at the bound, full() is true and the integration stops taking copies off the wire (they stay in MPI,
// whose flow control then holds the senders back), as MPI itself does with unexpected messages, except
// copies of a channel that a receive with a named source waits on.
// Duplicates are never held: per channel the state is the next sequence number to deliver and the held
// copies. Committed decisions are kept for re-proposal after a takeover: the last kept_decisions of them.
//
// Synchronous sends (MPI_Ssend, MPI_Issend; MPI 4.0, 3.4): complete only once the receiver matched the
// message. A copy carries the synchronous flag; each receiver replica, when its program matches the
// message, sends a match acknowledgement to every live replica of the sender; the first to reach a sender
// replica completes the send there, later ones are dropped. A receiver replica that dies is masked by its
// twins, which match the same message and acknowledge it too. An acknowledgement may reach a sender
// replica before it sent the message (a twin of it was ahead): it is kept until then.
//
// The cut of a dead sender (docs/design/replication.md): when logical rank a lost every replica, its last
// messages may have reached some replicas of receiver b and not others. Each replica of b keeps its last
// kept_delivered delivered copies per channel; on learning that a is dead it stops delivering from a,
// relays to its live twins every copy it holds or keeps of each channel from a, then a relay-done marker.
// The leader, once it has its live twins' markers, forwards the copies it has and decides each channel's
// cut (the end of what it holds without a gap) and then that a's cuts are settled (the number of
// channels), as decision events of their own keys (the takeover rule above applies; a new leader
// forwards again before it re-proposes). A channel then delivers up to its cut and is closed.
//
// Thread-safety: none; one Endpoint belongs to one thread (the integration's progress engine).
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "replica/placement.hpp"

namespace cohort::replica {

/// A logical point-to-point channel: messages of one communicator (its context id) from logical rank
/// src to logical rank dst. Sequence numbers count per channel from 0.
struct Channel {
  int context = 0;
  int src = -1;
  int dst = -1;
  bool operator<(const Channel &o) const {
    return std::tie(context, src, dst) < std::tie(o.context, o.src, o.dst);
  }
  bool operator==(const Channel &o) const {
    return context == o.context && src == o.src && dst == o.dst;
  }
};

using Bytes = std::vector<unsigned char>;

/// One message between two world ranks.
struct Wire {
  enum Kind : std::uint8_t {
    data,     ///< a copy of a logical message: channel, seq, tag, payload
    propose,  ///< leader -> twin: event, epoch, outcome
    ack,      ///< twin -> leader: event, epoch
    commit,   ///< leader -> twin: event, epoch, outcome
    matched,  ///< receiver replica -> sender replica: its program matched (channel, seq), a synchronous send
    relay_done,  ///< receiver replica -> twin: it relayed every copy it had from dead logical rank channel.src
  };
  Kind kind = data;
  int from = -1;  ///< world rank
  int to = -1;    ///< world rank
  Channel channel;
  std::uint64_t seq = 0;
  int tag = 0;
  bool synchronous = false;  ///< data: the receiver acknowledges the match
  Bytes payload;
  std::uint64_t digest = 0;  ///< data: the sender's hash of the payload (SDC checking, replica/sdc_compare.hpp)
  int call = -1;             ///< data: what made the message on the sender (the integration's call number)
  std::uint64_t event = 0;
  int epoch = 0;
  std::int64_t outcome = 0;
};

/// A logical message ready for the program.
struct Delivery {
  Channel channel;
  std::uint64_t seq = 0;
  int tag = 0;
  Bytes payload;
  bool synchronous = false;  ///< call Endpoint::matched when the program matches it
  int from = -1;             ///< world rank of the sender replica whose copy this is
};

struct Limits {
  std::size_t max_held = 1u << 16;   ///< held first copies per replica (see Bounds above)
  std::size_t kept_decisions = 256;  ///< committed decisions kept for re-proposal after a takeover
  std::size_t kept_delivered = 16;   ///< delivered copies kept per channel, for the cut of a dead sender
  /// Lanes (SDC checking, docs/design/sdc.md): replica k keeps the copy of sender replica k while that
  /// replica lives; a twin's copy that comes first waits as a spare until the lane's arrives (then it is
  /// a duplicate) or the lane's replica dies (then it is kept). So a corrupted sender replica reaches
  /// only the receiver replicas of its own lane. Off: the first copy is kept, whichever replica sent it.
  bool lanes = false;
};

/// Counters, for tests and the integration's summary.
struct Counters {
  std::uint64_t copies_sent = 0, copies_received = 0, duplicates = 0, delivered = 0;
  std::uint64_t proposals_sent = 0, acks_sent = 0, commits_sent = 0, takeovers = 0;
  std::uint64_t conflicts = 0;  ///< a proposal contradicting a committed outcome (must stay 0)
  std::uint64_t match_acks_sent = 0, match_acks_used = 0;
};

/// The protocol state of one replica (world rank `self`).
class Endpoint {
 public:
  /// placement must outlive the endpoint.
  Endpoint(const Placement *placement, int self, Limits limits = {});

  int self() const { return self_; }
  int logical() const { return p_->logical(self_); }
  bool is_leader() const { return live_.leader(logical()) == self_; }
  const Liveness &liveness() const { return live_; }

  /// The program sends a logical message to logical rank dst on communicator `context`: appends one
  /// data copy per live replica of dst to *out, numbered with the channel's next sequence number.
  /// Returns that sequence number.
  /// A synchronous send completes (synced()) once the receiver matched it.
  std::uint64_t send(int context, int dst, int tag, const Bytes &payload, std::vector<Wire> *out,
                     bool synchronous = false);
  /// Whether synchronous send (channel from this logical rank, seq) is complete: a replica of the
  /// receiver matched it. True for a send that was not synchronous.
  bool synced(const Channel &c, std::uint64_t seq) const { return !unsynced_.count({c, seq}); }
  /// The program matched delivered message d (a receive or MPI_Mprobe took it): when it was sent
  /// synchronously, appends the match acknowledgements to every live replica of its sender.
  void matched(const Delivery &d, std::vector<Wire> *out);

  /// A wire message addressed to this replica arrived. Appends replies to *out. Messages from a replica
  /// known dead are still used (their content is the same as its twins'). Returns true when w is a data
  /// copy that this replica keeps for its program (not a duplicate, not a spare).
  bool receive(const Wire &w, std::vector<Wire> *out);
  /// The world rank of the sender replica whose copy of (c, seq) is held for the program; -1 when none is
  /// held (not arrived, a spare only, or delivered already).
  int kept_from(const Channel &c, std::uint64_t seq) const;

  /// World rank w died (the failure detector says so; once per rank is enough, repeats are ignored).
  /// Appends what the death makes necessary (commits no longer waiting on w; a new leader's proposals).
  Death replica_died(int w, std::vector<Wire> *out);

  /// The next logical message of a channel, in sequence order, if its first copy arrived: moves it into
  /// *d and returns true (exactly once per sequence number).
  bool deliver(const Channel &c, Delivery *d);
  /// True when the next logical message of c has arrived (what a probe of that channel sees).
  bool ready(const Channel &c) const;
  /// Channels whose next message has arrived, in channel order (the candidates of an MPI_ANY_SOURCE
  /// match; the leader's choice among them becomes a decision).
  std::vector<Channel> ready_channels() const;
  /// Held copies at the bound: stop taking data copies off the wire.
  bool full() const { return held_count_ >= limits_.max_held; }
  std::size_t held() const { return held_count_; }

  /// The program reached decision event `event` (numbered 0, 1, 2, ... in program order, the same on
  /// every replica) with its own candidate outcome. On the leader the candidate is proposed (unless an
  /// outcome is stored already: a takeover's rule); on a twin it is ignored. Appends proposals to *out.
  void decide(std::uint64_t event, std::int64_t candidate, std::vector<Wire> *out);
  /// The committed outcome of `event`, if committed: true and *outcome set.
  bool decided(std::uint64_t event, std::int64_t *outcome) const;
  /// The program used the outcome of `event`; call in increasing event order. Frees what is no longer
  /// needed beyond the last kept_decisions committed events.
  void consumed(std::uint64_t event);

  /// The cut of channel c, whose sender logical rank lost every replica: once committed, true and *end
  /// set (the channel delivers sequence numbers below *end, then is closed).
  bool cut(const Channel &c, std::uint64_t *end) const;
  /// Whether the cut of every channel from dead logical rank a to this one is committed; a channel from a
  /// with no cut then has none because no live replica had a message of it (its cut is 0).
  bool cut_settled(int a) const;

  const Counters &counters() const { return counters_; }

 private:
  struct Decision {
    int epoch = -1;
    std::int64_t outcome = 0;
    bool committed = false;
    bool proposed_by_me = false;
    bool commit_sent = false;
    bool reached = false;        ///< this replica's program called decide()
    std::int64_t candidate = 0;  ///< its candidate outcome
    std::set<int> acks;  ///< world ranks of twins that acknowledged this epoch's proposal
  };
  struct ChannelState {
    std::uint64_t next_send = 0;
    std::uint64_t next_deliver = 0;
    std::map<std::uint64_t, Delivery> held;
    std::map<std::uint64_t, Delivery> spare;  ///< lanes: a twin's copy waiting for the lane's
    std::vector<Delivery> kept;  ///< the last kept_delivered delivered, oldest first
  };
  static std::uint64_t cut_event(const Channel &c);
  bool keep(ChannelState &cs, const Wire &w);
  void promote_spares(int w);
  static std::uint64_t settle_event(int a);
  bool blocked_by_cut(const Channel &c, const ChannelState &cs) const;
  void relay(int a, std::vector<Wire> *out);
  void try_cut(int a, std::vector<Wire> *out);
  void copies_to_twins(const Channel &c, const ChannelState &cs, std::uint64_t end, std::vector<Wire> *out);
  void propose(std::uint64_t event, Decision &d, std::vector<Wire> *out);
  void try_commit(std::uint64_t event, Decision &d, std::vector<Wire> *out);
  void to_twins(Wire::Kind kind, std::uint64_t event, const Decision &d, const std::vector<int> &twins,
                std::vector<Wire> *out) const;
  std::vector<int> live_twins() const;

  const Placement *p_;
  int self_;
  Limits limits_;
  Liveness live_;
  std::map<Channel, ChannelState> channels_;
  std::set<Channel> ready_;  ///< channels whose next message is held
  std::set<std::pair<Channel, std::uint64_t>> unsynced_;    ///< synchronous sends not acknowledged yet
  std::set<std::pair<Channel, std::uint64_t>> early_acks_;  ///< acknowledgements of sends not made yet
  std::set<int> relayed_;                     ///< dead logical ranks whose copies this replica relayed
  std::map<int, std::set<int>> relays_from_;  ///< dead logical rank -> twins whose relay-done arrived
  std::size_t held_count_ = 0;
  std::map<std::uint64_t, Decision> decisions_;
  std::uint64_t consumed_below_ = 0;  ///< events < this were used by the program
  Counters counters_;
};

}  // namespace cohort::replica
