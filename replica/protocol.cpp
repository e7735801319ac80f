#include "replica/protocol.hpp"

namespace cohort::replica {

Endpoint::Endpoint(const Placement *placement, int self, Limits limits)
    : p_(placement), self_(self), limits_(limits), live_(placement) {}

std::vector<int> Endpoint::live_twins() const {
  std::vector<int> out;
  for (int w : live_.live(logical()))
    if (w != self_) out.push_back(w);
  return out;
}

std::uint64_t Endpoint::send(int context, int dst, int tag, const Bytes &payload, std::vector<Wire> *out,
                            bool synchronous) {
  Channel c{context, logical(), dst};
  std::uint64_t seq = channels_[c].next_send++;
  if (synchronous && early_acks_.erase({c, seq}) == 0) unsynced_.insert({c, seq});
  for (int w : live_.live(dst)) {
    Wire m;
    m.kind = Wire::data;
    m.from = self_;
    m.to = w;
    m.channel = c;
    m.seq = seq;
    m.tag = tag;
    m.synchronous = synchronous;
    m.payload = payload;
    out->push_back(std::move(m));
    ++counters_.copies_sent;
  }
  return seq;
}

bool Endpoint::keep(ChannelState &cs, const Wire &w) {
  cs.spare.erase(w.seq);
  cs.held.emplace(w.seq, Delivery{w.channel, w.seq, w.tag, w.payload, w.synchronous, w.from});
  ++held_count_;
  if (w.seq == cs.next_deliver) ready_.insert(w.channel);
  return true;
}

int Endpoint::kept_from(const Channel &c, std::uint64_t seq) const {
  auto it = channels_.find(c);
  if (it == channels_.end()) return -1;
  auto h = it->second.held.find(seq);
  return h == it->second.held.end() ? -1 : h->second.from;
}

// The lane's replica w died: the copies its twins sent meanwhile are kept in its place.
void Endpoint::promote_spares(int w) {
  const int a = p_->logical(w);
  if (p_->replica(w) != p_->replica(self_)) return;
  for (auto &[c, cs] : channels_) {
    if (c.src != a || cs.spare.empty()) continue;
    std::map<std::uint64_t, Delivery> spares;
    spares.swap(cs.spare);
    for (auto &[seq, d] : spares) {
      if (seq < cs.next_deliver || cs.held.count(seq)) continue;
      cs.held.emplace(seq, std::move(d));
      ++held_count_;
      if (seq == cs.next_deliver) ready_.insert(c);
    }
  }
}

bool Endpoint::receive(const Wire &w, std::vector<Wire> *out) {
  switch (w.kind) {
    case Wire::data: {
      if (w.channel.dst != logical()) return false;
      ++counters_.copies_received;
      ChannelState &cs = channels_[w.channel];
      // NOTE: a copy is a duplicate when its sequence number was delivered or is held: the first copy
      // of each (channel, seq) wins, whichever replica of the sender it came from (with lanes: the
      // lane's copy, or the first one once the lane's replica is dead).
      if (w.seq < cs.next_deliver || cs.held.count(w.seq)) {
        ++counters_.duplicates;
        return false;
      }
      if (limits_.lanes) {
        const int lane = p_->world(w.channel.src, p_->replica(self_));
        if (w.from != lane && live_.alive(lane)) {
          if (!cs.spare.count(w.seq)) cs.spare.emplace(w.seq, Delivery{w.channel, w.seq, w.tag, w.payload, w.synchronous, w.from});
          else ++counters_.duplicates;
          return false;
        }
      }
      return keep(cs, w);
    }
    case Wire::propose: {
      auto it = decisions_.find(w.event);
      if (it == decisions_.end() && w.event < consumed_below_) {
        // Used and forgotten here; a new leader re-proposing it must not wait for this replica.
      } else {
        Decision &d = decisions_[w.event];
        if (d.committed) {
          // A lower epoch's proposal is a dead leader's, late: it may differ (nobody committed it).
          if (w.epoch >= d.epoch && d.outcome != w.outcome) ++counters_.conflicts;
          if (w.epoch > d.epoch) d.epoch = w.epoch;
        } else if (w.epoch >= d.epoch) {
          d.epoch = w.epoch;
          d.outcome = w.outcome;
          d.proposed_by_me = false;
          d.acks.clear();
        } else {
          return false;  // a dead leader's stale proposal: a later leader's stands
        }
      }
      Wire a;
      a.kind = Wire::ack;
      a.from = self_;
      a.to = w.from;
      a.event = w.event;
      a.epoch = w.epoch;
      out->push_back(a);
      ++counters_.acks_sent;
      return false;
    }
    case Wire::ack: {
      auto it = decisions_.find(w.event);
      if (it == decisions_.end()) return false;
      Decision &d = it->second;
      if (!d.proposed_by_me || d.epoch != w.epoch) return false;
      d.acks.insert(w.from);
      try_commit(w.event, d, out);
      return false;
    }
    case Wire::matched: {
      if (w.channel.src != logical()) return false;
      // NOTE: the first acknowledgement completes the send; the receiver's other replicas' are dropped,
      // unless this replica has not made the send yet (a twin of it was ahead): kept until it does.
      auto it = channels_.find(w.channel);
      if (it != channels_.end() && w.seq < it->second.next_send) {
        counters_.match_acks_used += unsynced_.erase({w.channel, w.seq});
      } else {
        early_acks_.insert({w.channel, w.seq});
      }
      return false;
    }
    case Wire::relay_done: {
      relays_from_[w.channel.src].insert(w.from);
      try_cut(w.channel.src, out);
      return false;
    }
    case Wire::commit: {
      auto it = decisions_.find(w.event);
      if (it == decisions_.end()) {
        if (w.event < consumed_below_) return false;
        it = decisions_.emplace(w.event, Decision{}).first;
        it->second.epoch = w.epoch;
        it->second.outcome = w.outcome;
      }
      Decision &d = it->second;
      if (d.outcome != w.outcome) {
        ++counters_.conflicts;
        return false;
      }
      d.committed = true;
      return false;
    }
  }
  return false;  // a kind no replica sends: dropped
}

void Endpoint::propose(std::uint64_t event, Decision &d, std::vector<Wire> *out) {
  d.epoch = p_->replica(self_);
  d.proposed_by_me = true;
  d.commit_sent = false;
  d.acks.clear();
  std::vector<int> twins = live_twins();
  to_twins(Wire::propose, event, d, twins, out);
  counters_.proposals_sent += twins.size();
  try_commit(event, d, out);
}

// One message of this kind about this decision to each of the twins.
void Endpoint::to_twins(Wire::Kind kind, std::uint64_t event, const Decision &d, const std::vector<int> &twins,
                        std::vector<Wire> *out) const {
  for (int t : twins) {
    Wire m;
    m.kind = kind;
    m.from = self_;
    m.to = t;
    m.event = event;
    m.epoch = d.epoch;
    m.outcome = d.outcome;
    out->push_back(m);
  }
}

void Endpoint::try_commit(std::uint64_t event, Decision &d, std::vector<Wire> *out) {
  if (!d.proposed_by_me || d.commit_sent) return;
  std::vector<int> twins = live_twins();
  for (int t : twins)
    if (!d.acks.count(t)) return;  // never waits for a dead twin: replica_died re-checks
  d.committed = true;
  d.commit_sent = true;
  to_twins(Wire::commit, event, d, twins, out);
  counters_.commits_sent += twins.size();
}

Death Endpoint::replica_died(int w, std::vector<Wire> *out) {
  Death dd = live_.mark_dead(w);
  if (dd.was_alive && limits_.lanes) promote_spares(w);
  if (dd.was_alive && dd.logical_dead && dd.logical != logical()) relay(dd.logical, out);
  if (!dd.was_alive || dd.logical != logical()) return dd;
  if (dd.leader_changed && dd.new_leader == self_) {
    // Takeover: stored outcomes are re-proposed unchanged (one of them may have been used by a twin);
    // events this program reached with nothing stored are decided afresh.
    ++counters_.takeovers;
    for (auto &[event, d] : decisions_) {
      if (event >= cut_event(Channel{0, 0, 0})) continue;  // try_cut forwards the copies first
      if (d.epoch >= 0) {
        propose(event, d, out);
      } else if (d.reached) {
        d.outcome = d.candidate;
        propose(event, d, out);
      }
    }
    for (int a : relayed_) try_cut(a, out);
  } else if (is_leader()) {
    for (auto &[event, d] : decisions_) try_commit(event, d, out);
    for (int a : relayed_) try_cut(a, out);
  }
  return dd;
}

bool Endpoint::deliver(const Channel &c, Delivery *d) {
  auto it = channels_.find(c);
  if (it == channels_.end()) return false;
  ChannelState &cs = it->second;
  auto h = cs.held.find(cs.next_deliver);
  if (h == cs.held.end() || blocked_by_cut(c, cs)) return false;
  if (limits_.kept_delivered > 0) {
    // NOTE: a copy of each delivered message, for the cut of its sender should every replica of it die.
    if (cs.kept.size() == limits_.kept_delivered) cs.kept.erase(cs.kept.begin());
    cs.kept.push_back(h->second);
  }
  *d = std::move(h->second);
  cs.held.erase(h);
  --held_count_;
  ++cs.next_deliver;
  ++counters_.delivered;
  if (!cs.held.count(cs.next_deliver)) ready_.erase(c);
  return true;
}

void Endpoint::matched(const Delivery &d, std::vector<Wire> *out) {
  if (!d.synchronous) return;
  for (int w : live_.live(d.channel.src)) {
    Wire m;
    m.kind = Wire::matched;
    m.from = self_;
    m.to = w;
    m.channel = d.channel;
    m.seq = d.seq;
    out->push_back(m);
    ++counters_.match_acks_sent;
  }
}

bool Endpoint::ready(const Channel &c) const {
  auto it = channels_.find(c);
  return ready_.count(c) != 0 && !blocked_by_cut(c, it->second);
}

std::vector<Channel> Endpoint::ready_channels() const {
  std::vector<Channel> out;
  for (const Channel &c : ready_)
    if (ready(c)) out.push_back(c);
  return out;
}

// ---- the cut of a dead sender ----

std::uint64_t Endpoint::cut_event(const Channel &c) {
  return (std::uint64_t{1} << 62) + (static_cast<std::uint64_t>(c.src) << 32) + static_cast<std::uint32_t>(c.context);
}

std::uint64_t Endpoint::settle_event(int a) {
  return (std::uint64_t{1} << 62) + (static_cast<std::uint64_t>(a) << 32) + 0xffffffffu;
}

// A channel from a logical rank with no replica left delivers only below its committed cut.
bool Endpoint::blocked_by_cut(const Channel &c, const ChannelState &cs) const {
  if (live_.logical_alive(c.src)) return false;
  std::uint64_t end = 0;
  return !cut(c, &end) || cs.next_deliver >= end;
}

bool Endpoint::cut(const Channel &c, std::uint64_t *end) const {
  std::int64_t o = 0;
  if (!decided(cut_event(c), &o)) return false;
  *end = static_cast<std::uint64_t>(o);
  return true;
}

bool Endpoint::cut_settled(int a) const {
  std::int64_t o = 0;
  return decided(settle_event(a), &o);
}

// Data copies of channel c's kept and held messages below end, to every live twin.
void Endpoint::copies_to_twins(const Channel &c, const ChannelState &cs, std::uint64_t end, std::vector<Wire> *out) {
  std::vector<const Delivery *> have;
  for (const Delivery &d : cs.kept) have.push_back(&d);
  for (const auto &[seq, d] : cs.held) have.push_back(&d);
  for (int t : live_twins())
    for (const Delivery *d : have) {
      if (d->seq >= end) continue;
      Wire m;
      m.kind = Wire::data;
      m.from = self_;
      m.to = t;
      m.channel = c;
      m.seq = d->seq;
      m.tag = d->tag;
      m.synchronous = d->synchronous;
      m.payload = d->payload;
      out->push_back(std::move(m));
      ++counters_.copies_sent;
    }
}

void Endpoint::relay(int a, std::vector<Wire> *out) {
  for (const auto &[c, cs] : channels_)
    if (c.src == a && c.dst == logical()) copies_to_twins(c, cs, ~std::uint64_t{0}, out);
  for (int t : live_twins()) {
    Wire m;
    m.kind = Wire::relay_done;
    m.from = self_;
    m.to = t;
    m.channel = Channel{0, a, logical()};
    out->push_back(m);
  }
  relayed_.insert(a);
  try_cut(a, out);
}

// The leader, once every live twin relayed: forwards what it has and proposes each channel's cut, then
// that a's cuts are settled. A stored outcome (from a dead leader) is proposed unchanged.
void Endpoint::try_cut(int a, std::vector<Wire> *out) {
  if (!is_leader() || !relayed_.count(a)) return;
  const std::set<int> &from = relays_from_[a];
  for (int t : live_twins())
    if (!from.count(t)) return;
  std::int64_t channels = 0;
  for (auto &[c, cs] : channels_) {
    if (c.src != a || c.dst != logical()) continue;
    ++channels;
    Decision &d = decisions_[cut_event(c)];
    if (d.proposed_by_me) continue;
    if (d.epoch < 0) {
      std::uint64_t end = cs.next_deliver;
      while (cs.held.count(end)) ++end;
      d.outcome = static_cast<std::int64_t>(end);
    }
    copies_to_twins(c, cs, static_cast<std::uint64_t>(d.outcome), out);
    propose(cut_event(c), d, out);
  }
  Decision &s = decisions_[settle_event(a)];
  if (s.proposed_by_me) return;
  if (s.epoch < 0) s.outcome = channels;
  propose(settle_event(a), s, out);
}

void Endpoint::decide(std::uint64_t event, std::int64_t candidate, std::vector<Wire> *out) {
  if (event < consumed_below_) return;
  Decision &d = decisions_[event];
  d.reached = true;
  d.candidate = candidate;
  if (!is_leader() || d.proposed_by_me || d.committed) return;
  // A leader adopts an outcome stored from a dead leader; decides its own candidate otherwise.
  if (d.epoch < 0) d.outcome = candidate;
  propose(event, d, out);
}

bool Endpoint::decided(std::uint64_t event, std::int64_t *outcome) const {
  auto it = decisions_.find(event);
  if (it == decisions_.end() || !it->second.committed) return false;
  *outcome = it->second.outcome;
  return true;
}

void Endpoint::consumed(std::uint64_t event) {
  if (event + 1 > consumed_below_) consumed_below_ = event + 1;
  // Keep the last kept_decisions used events: a new leader re-proposes them for twins that missed a
  // commit from the dead leader.
  while (!decisions_.empty()) {
    auto it = decisions_.begin();
    if (it->first + limits_.kept_decisions >= consumed_below_ ||
        (it->second.proposed_by_me && !it->second.commit_sent))
      break;
    decisions_.erase(it);
  }
}

}  // namespace cohort::replica
