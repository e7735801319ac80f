// Lazy comparison of the replicas' copies of a logical message, sans-IO: silent data corruption (SDC)
// detection on the receiver side of the mirror protocol (replica/protocol.hpp).
//
// Source: C. Ford, "Lazy Fault Detection for Redundant MPI", Cal Poly MS thesis 2016, chapters 3-4
// ("Async": the receive returns the first copy and the copies are compared later; "AsyncHash": the same
// with a hash of each copy instead of its bytes). The thesis stops at detection (its section 7); the
// verdict below (majority, minority, taint) is cohort's.
//
// Under the mirror protocol every live replica of the sender sends each logical message to every live
// replica of the receiver, so a receiver replica gets up to r copies of one (channel, sequence number):
// the first one is the one its program receives (Endpoint keeps it), the later ones were dropped as
// duplicates. The Comparator is fed a digest of every copy as it arrives, in any order, and returns a
// Verdict once it has the copy of every sender replica it waits for. It never delays a delivery: the
// integration hands the first copy to the program at once and feeds the comparator beside it.
//
// Digests. `hash` mode: a 64-bit hash of the copy's bytes (XXH3-64, replica/sdc_digest.hpp), computed
// by the sender over the packed message (the bytes the datatype means, never its holes) and carried in
// the copy's header, so a comparison holds 8 bytes per copy. `full` mode: the bytes themselves; the
// comparator keeps one exemplar of each distinct content (one when the replicas agree) until the verdict.
// Two copies agree when their digests are equal: in `full` mode byte for byte, in `hash` mode by hash
// (a flipped bit escapes only by a 64-bit collision: probability 2^-64 per corrupted message).
//
// Which copies are awaited: the sender replicas alive (as this receiver knows it) when the first copy
// arrived. A sender replica's death removes it from every pending comparison of that logical sender
// (its copy may never come); a copy that arrives anyway while the comparison is pending counts (it is
// what the replica sent before dying). A comparison with a single copy left is `unchecked`.
//
// Verdict rule. The copies are grouped by content. One group: `agree`. More than one: `mismatch`, with
// a majority when one group holds more than half of the copies compared (r = 3: 2 against 1); its members
// are the sound replicas and every other replica is in the minority (to be fenced). No majority (r = 2,
// or three different contents): `majority` false, the policy COHORT_ON_SDC decides.
// Taint rule: this receiver replica is `tainted` when the copy its program received (the first to arrive)
// is not the majority's, or there is no majority: its program may have computed on corrupted bytes, so
// it is fenced with the minority (r = 3) or the policy applies (no majority). A receiver replica whose
// first copy is the majority's is sound even if a corrupted copy arrived later: that copy was dropped.
//
// Bound: at most Limits::max_pending comparisons of delivered messages (and, in `full` mode,
// max_pending_bytes of exemplars) per receiver replica. full() says the bound is reached: the
// integration then delivers no further message to the program until comparisons complete (it keeps
// taking copies off the wire, which completes them), so memory stays bounded and no comparison is ever
// skipped. Comparisons of messages not yet delivered belong to copies the Endpoint holds, bounded by its
// own max_held. Memory per pending comparison in `hash` mode (key, one digest per content, the awaited
// set, map nodes; measured with mallinfo2 over 1024 pending): 352 bytes at r = 2, 398 at r = 3, so
// about 100 KiB at the default bound of 256; in `full` mode the payload of each pending message on top,
// at most max_pending_bytes. The bound also bounds how far a sender's replicas drift apart: a receiver
// stops once it is 256 messages ahead of a slow twin of a sender.
//
// Thread-safety: none; a Comparator belongs to the thread that runs its replica's Endpoint.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "replica/protocol.hpp"

namespace cohort::replica::sdc {

enum class Mode { off, hash, full };

/// Parses a COHORT_SDC value: "off", "hash" or "full". False (and *mode unchanged) otherwise.
bool parse_mode(const std::string &text, Mode *mode);
const char *mode_name(Mode m);

/// One logical message: its channel (communicator context, logical sender, logical receiver) and its
/// sequence number on that channel (replica/protocol.hpp's numbering).
struct Key {
  Channel channel;
  std::uint64_t seq = 0;
  bool operator<(const Key &o) const { return std::tie(channel, seq) < std::tie(o.channel, o.seq); }
  bool operator==(const Key &o) const { return channel == o.channel && seq == o.seq; }
};

/// What one copy is compared by: its hash (both modes) and, in `full` mode, its bytes.
struct Digest {
  std::uint64_t hash = 0;
  Bytes bytes;  ///< empty in `hash` mode
};

struct Verdict {
  enum Kind : std::uint8_t { agree, mismatch, unchecked };
  Kind kind = agree;
  Key key;
  std::vector<int> compared;   ///< sender replica indices (0..r-1) whose copies were compared, ascending
  bool majority = false;       ///< mismatch: one content is held by more than half of `compared`
  std::vector<int> minority;   ///< mismatch with a majority: the replicas outside it, ascending
  int delivered_from = -1;     ///< the sender replica whose copy this receiver's program got
  bool tainted = false;        ///< mismatch: that copy is not the majority's (or there is no majority)
  int content_of_delivered = -1;        ///< mismatch: index into `groups` of the copy the program got
  std::vector<std::vector<int>> groups;  ///< mismatch: the sender replicas by content, largest group first
};

struct Limits {
  std::size_t max_pending = 256;             ///< pending comparisons per receiver replica
  std::size_t max_pending_bytes = 64u << 20;  ///< `full` mode: bytes of exemplars held
  /// Agreed comparisons remembered (their hash), so that a copy arriving after its comparison completed
  /// (from a sender replica that died meanwhile, e.g. one fenced by a twin's verdict) is still compared.
  std::size_t kept_agreed = 256;
};

struct Counters {
  std::uint64_t compared = 0, agreed = 0, mismatches = 0, unchecked = 0;
  std::uint64_t late = 0;  ///< copies arriving after their comparison completed (from a dead replica)
};

class Comparator {
 public:
  /// `replicas`: r, the number of replicas of every logical rank (2 or 3; 1 compares nothing).
  Comparator(Mode mode, int replicas, Limits limits = {});

  Mode mode() const { return mode_; }

  /// A copy of `key` from sender replica `from` (0..r-1) arrived. A copy arriving after its comparison
  /// completed with `agree` (its sender replica died meanwhile) is compared with the agreed content while
  /// that comparison is among the last Limits::kept_agreed: a difference is a mismatch verdict with that
  /// replica as the minority. The first arrival of a key is the copy
  /// the program receives, and `awaited` lists the sender replicas alive now (from included; others
  /// are ignored for a key already pending). Appends the verdict to *out when this copy completes the
  /// comparison. A copy from a replica already compared for this key is ignored (MPI does not duplicate
  /// messages; a confused peer might).
  void arrived(const Key &key, int from, Digest digest, const std::vector<int> &awaited,
               std::vector<Verdict> *out);
  /// As above, when the receiver does not keep the first copy to arrive (the protocol's lanes): `kept`
  /// says whether this copy is the one its program receives. A key whose kept copy is not known yet gets
  /// it from kept() (a spare promoted when the lane's replica died).
  void arrived(const Key &key, int from, Digest digest, const std::vector<int> &awaited, bool kept,
               std::vector<Verdict> *out);
  /// Sender replica `from`'s copy of `key` is the one the program receives (if `key` is pending).
  void kept(const Key &key, int from);
  /// Whether `key` is waiting for copies.
  bool pending(const Key &key) const { return pending_.count(key) != 0; }

  /// Sender replica `replica` of logical rank `logical` died: pending comparisons of that sender stop
  /// waiting for it. Appends the verdicts this completes.
  void sender_replica_died(int logical, int replica, std::vector<Verdict> *out);

  /// The bound is reached: deliver no further message until comparisons complete.
  bool full() const;
  std::size_t pending() const { return pending_.size(); }
  std::size_t pending_bytes() const { return pending_bytes_; }
  /// Keys still waiting for copies (what MPI_Finalize waits on), in key order.
  std::vector<Key> pending_keys() const;

  const Counters &counters() const { return counters_; }

 private:
  struct Pending {
    int delivered_from = -1;
    std::set<int> awaited;                 ///< sender replicas whose copy is still expected
    std::map<int, std::size_t> content;    ///< sender replica -> index into exemplars
    std::vector<Digest> exemplars;         ///< one per distinct content
  };
  struct Agreed {
    std::uint64_t hash = 0;
    std::vector<int> compared;
    int delivered_from = -1;
  };
  void late(const Key &key, int from, const Digest &digest, std::vector<Verdict> *out);
  struct Done {
    std::uint64_t below = 0;               ///< every seq < below completed
    std::set<std::uint64_t> above;         ///< completed seqs >= below
  };
  bool completed(const Key &key) const;
  void mark_completed(const Key &key);
  void finish(std::map<Key, Pending>::iterator it, std::vector<Verdict> *out);
  bool same(const Digest &a, const Digest &b) const;

  Mode mode_;
  int replicas_;
  Limits limits_;
  std::map<Key, Pending> pending_;
  std::map<Channel, Done> done_;
  std::map<Key, Agreed> agreed_;      ///< the last kept_agreed agreed comparisons
  std::vector<Key> agreed_order_;     ///< ring of their keys, oldest at agreed_next_
  std::size_t agreed_next_ = 0;
  std::size_t pending_bytes_ = 0;
  Counters counters_;
};

}  // namespace cohort::replica::sdc
