#include "detector/ring_detector.hpp"

#include <algorithm>

namespace cohort::detector {
namespace {

std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

bool sorted_insert(std::vector<int> *v, int x) {
  auto it = std::lower_bound(v->begin(), v->end(), x);
  if (it != v->end() && *it == x) return false;
  v->insert(it, x);
  return true;
}

bool sorted_has(const std::vector<int> &v, int x) { return std::binary_search(v.begin(), v.end(), x); }

}  // namespace

const char *how_name(How how) {
  switch (how) {
    case How::suspected: return "suspected";
    case How::notice: return "notice";
    case How::sync: return "sync";
    case How::emit_request: return "emit-request";
    case How::declared: return "declared";
    case How::alone: return "alone after a stall";
    case How::reported: return "reported by MPI";
    case How::exited: return "process exited";
    case How::minority: return "minority side of a partition";
    case How::host_silent: return "its host is silent";
  }
  return "?";
}

std::uint64_t digest_of(const std::vector<int> &ranks) {
  std::uint64_t d = 0;
  for (int r : ranks) d += mix(static_cast<std::uint64_t>(r));
  return d;
}

RingDetector::RingDetector(Config config, Time now, Output *out)
    : cfg_(std::move(config)), me_pos_(pos_of(cfg_.rank)), live_(cfg_.ring->size()) {
  last_tick_ = now;
  const auto &h = cfg_.host;
  multi_host_ = h && h->size() == static_cast<size_t>(cfg_.ring->size()) &&
                std::any_of(h->begin(), h->end(), [&](int x) { return x != h->front(); });
  retarget(now, out);
}

bool RingDetector::is_failed(int rank) const { return sorted_has(failed_sorted_, rank); }
bool RingDetector::has_left(int rank) const { return sorted_has(left_sorted_, rank); }
bool RingDetector::contains_failed(const std::vector<int> &sorted, int rank) const { return sorted_has(sorted, rank); }

void RingDetector::tick(Time now, Output *out) {
  if (stopped()) return;
  longest_stall_ = std::max(longest_stall_, now - last_tick_);
  if (now - last_tick_ > cfg_.timeout / 2) {
    // NOTE: this rank was not running (paused or descheduled): its emitter's silence proves nothing.
    if (emitter_ >= 0) deadline_ = std::max(deadline_, now + cfg_.timeout);
    for (Probe &p : probes_) p.deadline = std::max(p.deadline, now + 2 * cfg_.period);
    next_hb_ = now;
  }
  last_tick_ = now;
  Time quiet = cfg_.quiet > 0 ? cfg_.quiet : 2 * cfg_.timeout;
  if (!unsettled_.empty() && now - last_unsettled_ >= quiet) {
    // NOTE: quiet since the last failure of another host's rank: the view is what this rank reaches now.
    for (int r : unsettled_) sorted_insert(&view_out_, r);
    unsettled_.clear();
  }
  while (emitter_ >= 0 && now >= deadline_ && !stopped()) {
    learn(emitter_, How::suspected, cfg_.rank, 0, now - last_heard_, now, out);
  }
  if (stopped() || check_probes(now, out)) return;
  if (observer_ >= 0 && now >= next_hb_) send_heartbeat(now, out);
  if (next_emit_request_ >= 0 && now >= next_emit_request_) send_emit_request(now, out);
}

Time RingDetector::next_wakeup() const {
  if (stopped()) return -1;
  Time t = last_tick_ + cfg_.timeout / 2;  // never sleep into the stall guard
  if (observer_ >= 0) t = std::min(t, next_hb_);
  if (emitter_ >= 0) t = std::min(t, deadline_);
  if (next_emit_request_ >= 0) t = std::min(t, next_emit_request_);
  for (const Probe &p : probes_) t = std::min(t, std::min(p.resend, p.deadline));
  return t;
}

void RingDetector::send_emit_request(Time now, Output *out) {
  Message m;
  m.type = MsgType::emit_request;
  for (int p : live_.absent_between(pos_of(emitter_), me_pos_)) {
    int r = rank_at(p);
    (is_failed(r) ? m.failed : m.left).push_back(r);
  }
  out->messages.push_back({emitter_, std::move(m)});
  next_emit_request_ = now + cfg_.period;
}

void RingDetector::send_heartbeat(Time now, Output *out) {
  Message m;
  m.type = MsgType::heartbeat;
  m.count = static_cast<std::uint32_t>(failed_sorted_.size());
  m.digest = digest_;
  out->messages.push_back({observer_, std::move(m)});
  next_hb_ = now + cfg_.period;
}

void RingDetector::send_sync(int to, bool reply, Output *out) {
  Message m;
  m.type = MsgType::sync;
  m.reply = reply;
  m.failed = failed_sorted_;
  out->messages.push_back({to, std::move(m)});
}

void RingDetector::on_message(int from, const Message &msg, Time now, Output *out) {
  if (stopped() || from < 0 || from >= cfg_.ring->size() || from == cfg_.rank) return;
  if (is_failed(from)) {
    // A rank declared failed is still talking: tell it (the sync names it, which fences it).
    if (msg.type != MsgType::leaving) send_sync(from, false, out);
    return;
  }
  // (a leaving note from a rank already known departed still brings the departures it knew)
  if (sorted_has(left_sorted_, from) && msg.type != MsgType::leaving) return;
  if (!probes_.empty() && multi_host_) {
    // NOTE: any message from a rank of a probed host shows the host alive: its ranks go back to their
    // own timeouts.
    int h = (*cfg_.host)[from];
    probes_.erase(std::remove_if(probes_.begin(), probes_.end(), [h](const Probe &p) { return p.host == h; }),
                  probes_.end());
  }
  if (from == emitter_) {
    last_heard_ = now;
    deadline_ = now + cfg_.timeout;
    next_emit_request_ = -1;
  }
  switch (msg.type) {
    case MsgType::heartbeat: {
      bool same = msg.count == failed_sorted_.size() && msg.digest == digest_;
      if (same || !cfg_.resync) {
        if (from == mismatch_from_) mismatch_streak_ = 0;
        break;
      }
      // NOTE: one mismatch is normal while a notice is in flight; two in a row mean a lost one.
      if (from != mismatch_from_) {
        mismatch_from_ = from;
        mismatch_streak_ = 0;
      }
      if (++mismatch_streak_ >= 2) {
        mismatch_streak_ = 0;
        send_sync(from, true, out);
      }
      break;
    }
    case MsgType::notice:
      if (msg.subject >= 0 && msg.subject < cfg_.ring->size())
        learn(msg.subject, How::notice, from, msg.hops, 0, now, out);
      break;
    case MsgType::sync: {
      for (int r : msg.failed) {
        learn(r, How::sync, from, 0, 0, now, out);
        if (stopped()) return;
      }
      if (msg.reply) {
        std::vector<int> theirs(msg.failed);
        std::sort(theirs.begin(), theirs.end());
        for (int r : failed_sorted_) {
          if (!sorted_has(theirs, r)) {
            send_sync(from, false, out);
            break;
          }
        }
      }
      break;
    }
    case MsgType::emit_request: {
      for (int r : msg.failed) {
        learn(r, How::emit_request, from, 0, 0, now, out);
        if (stopped()) return;
      }
      for (int r : msg.left) mark_left(r, How::emit_request, from, 0, now, out);
      // NOTE: answer at once, whoever we think our observer is: the requester is waiting for us.
      if (observer_ != from) {
        Message m;
        m.type = MsgType::heartbeat;
        m.count = static_cast<std::uint32_t>(failed_sorted_.size());
        m.digest = digest_;
        out->messages.push_back({from, std::move(m)});
      }
      break;
    }
    case MsgType::leaving:
      mark_left(from, How::declared, from, 0, now, out);
      for (int r : msg.left) mark_left(r, How::emit_request, from, 0, now, out);
      break;
    case MsgType::departure:
      if (msg.subject >= 0 && msg.subject < cfg_.ring->size())
        mark_left(msg.subject, How::notice, from, msg.hops, now, out);
      break;
  }
}

void RingDetector::declare_failed(int rank, Time now, Output *out) {
  // (a departed rank named dead by another part of cohort, e.g. an agreement's view: it finished, it did not fail)
  if (stopped() || rank < 0 || rank >= cfg_.ring->size() || has_left(rank)) return;
  learn(rank, How::declared, cfg_.rank, 0, 0, now, out);
}

void RingDetector::on_emitter_exited(int rank, Time now, Output *out) {
  if (stopped() || rank < 0 || rank != emitter_) return;
  learn(rank, How::exited, cfg_.rank, 0, now - last_heard_, now, out);
}

int RingDetector::host_tail() const {
  if (!multi_host_ || stopped() || emitter_ < 0) return -1;
  const std::vector<int> &host = *cfg_.host;
  int h = host[cfg_.rank];
  if (host[emitter_] == h) return -1;
  int tail = -1;
  for (int p = me_pos_, i = 0; i < cfg_.ring->size(); ++i) {
    int q = live_.step(p, +1);
    if (q < 0 || q == me_pos_ || host[rank_at(q)] != h) break;
    tail = rank_at(q);
    p = q;
  }
  return tail;
}

void RingDetector::on_host_tail_exited(int rank, Time now, Output *out) {
  if (stopped() || rank < 0 || rank != host_tail()) return;
  learn(rank, How::exited, cfg_.rank, 0, -1, now, out);
}

void RingDetector::leave(Time now, Output *out) {
  (void)now;
  if (stopped()) return;
  Message m;
  m.type = MsgType::leaving;
  m.left = left_sorted_;
  if (!failed_sorted_.empty()) send_notices(MsgType::departure, cfg_.rank, 1, out);
  // NOTE: the leaving notes go last: each is the last detector message this rank sends its neighbour,
  // which the runtime's shutdown relies on (MPI keeps the order of messages between two ranks).
  if (observer_ >= 0) out->messages.push_back({observer_, m});
  if (emitter_ >= 0 && emitter_ != observer_) out->messages.push_back({emitter_, m});
  stopped_ = true;
}

void RingDetector::fence(int from, How how, Output *out) {
  fenced_ = true;
  out->events.push_back({Event::self_fenced, cfg_.rank, how, from, 0, 0});
}

void RingDetector::learn(int rank, How how, int from, int hops, Time silent, Time now, Output *out) {
  if (rank < 0 || rank >= cfg_.ring->size()) return;
  if (rank == cfg_.rank) {
    if (how != How::declared) fence(from, how, out);
    return;
  }
  if (!sorted_insert(&failed_sorted_, rank)) return;
  if (longest_stall_ > cfg_.timeout && live_.live() == 2) {
    // NOTE: this failure would leave this rank alone after it was not running for longer than the
    // timeout: most likely the others declared it dead and finished; never compute on alone.
    fenced_ = true;
    out->events.push_back({Event::self_fenced, cfg_.rank, How::alone, cfg_.rank, 0, longest_stall_});
    return;
  }
  failed_order_.push_back(rank);
  if (partition_rule() && (*cfg_.host)[rank] != (*cfg_.host)[cfg_.rank] && !sorted_has(view_out_, rank)) {
    unsettled_.push_back(rank);
    last_unsettled_ = now;
    if (check_quorum(now, out)) return;
  } else {
    leave_view(rank);
  }
  digest_ += mix(static_cast<std::uint64_t>(rank));
  live_.remove(pos_of(rank));
  out->events.push_back({Event::rank_failed, rank, how, from, how == How::notice ? hops : 0, silent});
  broadcast(rank, how == How::notice ? hops + 1 : 1, out);
  retarget(now, out);
  if (how == How::suspected && multi_host_) probe_host(rank, now, out);
}

// Lost hosts (see the header): `suspected` (another host's rank) was suspected by its timeout; ask the
// other live ranks of its host to answer within 2 x period.
void RingDetector::probe_host(int suspected, Time now, Output *out) {
  const std::vector<int> &host = *cfg_.host;
  int h = host[suspected];
  if (h == host[cfg_.rank]) return;  // this rank's own host is not lost
  for (const Probe &p : probes_)
    if (p.host == h) return;
  Probe p{h, {}, now, now + cfg_.period, now + 2 * cfg_.period};
  int n = cfg_.ring->size();
  for (int r = 0; r < n; ++r)
    if (host[r] == h && r != suspected && !is_failed(r) && !sorted_has(left_sorted_, r)) p.ranks.push_back(r);
  if (p.ranks.empty()) return;
  // NOTE: farthest back along the ring first: suspecting them in this order re-targets only once, past
  // the whole host, instead of sending an emit request to each of them on the way.
  auto back = [&](int r) { return ((me_pos_ - pos_of(r)) % n + n) % n; };
  std::sort(p.ranks.begin(), p.ranks.end(), [&](int a, int b) { return back(a) > back(b); });
  for (int r : p.ranks)
    if (r != emitter_) send_probe(r, out);  // the new emitter got its emit request from retarget()
  probes_.push_back(std::move(p));
}

void RingDetector::send_probe(int to, Output *out) {
  Message m;
  m.type = MsgType::emit_request;  // names nobody: the receiver only answers with a heartbeat
  out->messages.push_back({to, std::move(m)});
}

// Repeats due probe requests and suspects the ranks of a host that answered none in time. True when this
// rank stopped (fenced) meanwhile.
bool RingDetector::check_probes(Time now, Output *out) {
  for (size_t i = 0; i < probes_.size();) {
    Probe &p = probes_[i];
    if (now >= p.deadline) {
      Probe due = std::move(p);
      probes_.erase(probes_.begin() + static_cast<std::ptrdiff_t>(i));
      for (int r : due.ranks) {
        if (is_failed(r) || sorted_has(left_sorted_, r)) continue;
        learn(r, How::host_silent, cfg_.rank, 0, now - due.started, now, out);
        if (stopped()) return true;
      }
      i = 0;  // learn() may have added or removed probes
      continue;
    }
    if (now >= p.resend) {
      for (int r : p.ranks)
        if (r != emitter_ && !is_failed(r)) send_probe(r, out);
      p.resend = p.deadline;
    }
    ++i;
  }
  return false;
}

bool RingDetector::partition_rule() const { return multi_host_; }

void RingDetector::leave_view(int rank) {
  auto it = std::find(unsettled_.begin(), unsettled_.end(), rank);
  if (it != unsettled_.end()) unsettled_.erase(it);
  sorted_insert(&view_out_, rank);
}

// The partition rule (see the header): true when this rank fenced itself.
bool RingDetector::check_quorum(Time now, Output *out) {
  (void)now;
  int view = view_size(), reached = view_reached();
  if (2 * reached > view) return false;
  if (2 * reached == view) {
    int lowest = 0;  // the view's lowest rank: view_out_ is sorted
    for (int r : view_out_) {
      if (r != lowest) break;
      ++lowest;
    }
    if (std::find(unsettled_.begin(), unsettled_.end(), lowest) == unsettled_.end()) return false;
  }
  fenced_ = true;
  out->events.push_back({Event::self_fenced, cfg_.rank, How::minority, cfg_.rank, 0,
                         (static_cast<Time>(reached) << 32) + view});
  return true;
}

void RingDetector::mark_left(int rank, How how, int from, int hops, Time now, Output *out) {
  if (rank < 0 || rank >= cfg_.ring->size() || rank == cfg_.rank || is_failed(rank)) return;
  if (!sorted_insert(&left_sorted_, rank)) return;
  leave_view(rank);
  live_.remove(pos_of(rank));
  out->events.push_back({Event::rank_left, rank, how, from, how == How::notice ? hops : 0, 0});
  retarget(now, out);
}

void RingDetector::broadcast(int rank, int hops, Output *out) { send_notices(MsgType::notice, rank, hops, out); }

void RingDetector::send_notices(MsgType type, int rank, int hops, Output *out) {
  int live_n = live_.live();
  if (live_n != offsets_live_) {
    offsets_ = topology::bcast_offsets(cfg_.bcast, live_n);
    offsets_live_ = live_n;
  }
  for (int off : offsets_) {
    int to = rank_at(live_.step(me_pos_, off));
    if (to < 0 || to == cfg_.rank) continue;
    Message m;
    m.type = type;
    m.subject = rank;
    m.hops = hops;
    out->messages.push_back({to, std::move(m)});
  }
}

void RingDetector::retarget(Time now, Output *out) {
  int obs = rank_at(live_.step(me_pos_, +1));
  int emi = rank_at(live_.step(me_pos_, -1));
  if (obs != observer_) {
    observer_ = obs;
    if (obs >= 0) send_heartbeat(now, out);
  }
  if (emi != emitter_) {
    bool first = emitter_ < 0 && failed_sorted_.empty() && left_sorted_.empty();
    emitter_ = emi;
    last_heard_ = now;
    deadline_ = now + cfg_.timeout + cfg_.grace;
    next_emit_request_ = -1;
    if (emi >= 0 && !first) send_emit_request(now, out);
  }
}

// ---- wire format ----
namespace {
constexpr std::int32_t kMagic = 0x43480000;  // "CH" << 16, low bits: type
constexpr int kHeader = 9;
}  // namespace

int max_encoded_len(int n) { return kHeader + 2 * n; }

std::vector<std::int32_t> encode(const Message &m) {
  std::vector<std::int32_t> w;
  w.reserve(kHeader + m.failed.size() + m.left.size());
  w.push_back(kMagic | static_cast<std::int32_t>(m.type));
  w.push_back(m.subject);
  w.push_back(m.hops);
  w.push_back(static_cast<std::int32_t>(m.count));
  w.push_back(static_cast<std::int32_t>(m.digest & 0xffffffffu));
  w.push_back(static_cast<std::int32_t>(m.digest >> 32));
  w.push_back(m.reply ? 1 : 0);
  w.push_back(static_cast<std::int32_t>(m.failed.size()));
  w.push_back(static_cast<std::int32_t>(m.left.size()));
  w.insert(w.end(), m.failed.begin(), m.failed.end());
  w.insert(w.end(), m.left.begin(), m.left.end());
  return w;
}

bool decode(const std::int32_t *w, int len, int n, Message *m) {
  if (len < kHeader || (w[0] & 0xffff0000) != kMagic) return false;
  int type = w[0] & 0xffff;
  if (type < 1 || type > 6) return false;
  int nf = w[7], nl = w[8];
  if (nf < 0 || nl < 0 || nf > n || nl > n || len != kHeader + nf + nl) return false;
  m->type = static_cast<MsgType>(type);
  m->subject = w[1];
  m->hops = w[2];
  m->count = static_cast<std::uint32_t>(w[3]);
  m->digest = static_cast<std::uint32_t>(w[4]) | (static_cast<std::uint64_t>(static_cast<std::uint32_t>(w[5])) << 32);
  m->reply = w[6] != 0;
  m->failed.assign(w + kHeader, w + kHeader + nf);
  m->left.assign(w + kHeader + nf, w + kHeader + nf + nl);
  for (int r : m->failed)
    if (r < 0 || r >= n) return false;
  for (int r : m->left)
    if (r < 0 || r >= n) return false;
  return true;
}

}  // namespace cohort::detector
