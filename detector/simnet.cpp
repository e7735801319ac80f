#include "detector/simnet.hpp"

#include <algorithm>

namespace cohort::detector {

SimNet::SimNet(SimConfig config)
    : cfg_(std::move(config)),
      ring_(cfg_.host.empty() ? std::make_shared<topology::Ring>(cfg_.n, cfg_.shuffle, cfg_.ring_seed)
                              : std::make_shared<topology::Ring>(cfg_.host, cfg_.shuffle, cfg_.ring_seed)),
      state_(static_cast<size_t>(cfg_.n), State::running),
      exited_(static_cast<size_t>(cfg_.n), false),
      held_(static_cast<size_t>(cfg_.n)),
      tick_at_(static_cast<size_t>(cfg_.n), -1),
      rng_(cfg_.rng_seed) {
  learned.resize(static_cast<size_t>(cfg_.n));
  departed.resize(static_cast<size_t>(cfg_.n));
  fenced_at.assign(static_cast<size_t>(cfg_.n), -1);
  nodes_.reserve(static_cast<size_t>(cfg_.n));
  auto hosts = std::make_shared<const std::vector<int>>(cfg_.host);
  for (int r = 0; r < cfg_.n; ++r) {
    Config c;
    c.rank = r;
    c.ring = ring_;
    c.period = cfg_.period;
    c.timeout = cfg_.timeout;
    c.grace = cfg_.grace;
    c.bcast = cfg_.bcast;
    c.resync = cfg_.resync;
    if (!cfg_.host.empty()) c.host = hosts;
    out_.clear();
    nodes_.push_back(std::make_unique<RingDetector>(c, 0, &out_));
    absorb(r, out_);
    if (cfg_.tick > 0) {
      // Spread the ticks over one tick interval, as real ranks are not in phase.
      std::uniform_int_distribution<Time> phase(0, cfg_.tick - 1);
      push({phase(rng_), 0, 0, r, r, {}});
    } else {
      // Event-driven: each rank starts at a random phase of one period.
      std::uniform_int_distribution<Time> phase(0, cfg_.period - 1);
      tick_at_[r] = phase(rng_);
      push({tick_at_[r], 0, 0, r, r, {}});
    }
  }
}

void SimNet::schedule_tick(int rank) {
  if (cfg_.tick > 0) return;
  Time t = nodes_[rank]->next_wakeup();
  if (t < 0) return;
  t = std::max(t, now_);
  if (tick_at_[rank] >= 0 && tick_at_[rank] <= t && tick_at_[rank] >= now_) return;  // an earlier one is due
  tick_at_[rank] = t;
  push({t, 0, 0, rank, rank, {}});
}

void SimNet::push(Ev ev) {
  ev.seq = seq_++;
  std::uint32_t slot;
  if (free_.empty()) {
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.push_back(std::move(ev));
  } else {
    slot = free_.back();
    free_.pop_back();
    slots_[slot] = std::move(ev);
  }
  q_.push_back({slots_[slot].at, slots_[slot].seq, slot});
  std::push_heap(q_.begin(), q_.end(), std::greater<Key>());
}

void SimNet::absorb(int rank, Output &out) {
  for (const Event &e : out.events) {
    if (e.kind == Event::self_fenced) {
      if (fenced_at[rank] < 0) fenced_at[rank] = now_;
    } else if (e.kind == Event::rank_left) {
      departed[rank].push_back(e.rank);
    } else {
      learned[rank].push_back({e.rank, now_, e.how, e.hops});
      if (on_learned) on_learned(rank, learned[rank].back());
    }
  }
  for (Outgoing &o : out.messages) {
    int copies = filter ? filter(rank, o) : 1;
    for (int i = 0; i < copies; ++i) {
      ++sent[static_cast<int>(o.msg.type)];
      Time lat = cfg_.latency ? cfg_.latency(rng_) : 50;
      push({now_ + std::max<Time>(lat, 1), 0, 1, rank, o.to, i + 1 < copies ? o.msg : std::move(o.msg)});
    }
  }
  out.clear();
}

void SimNet::resume(int rank) {
  if (state_[rank] != State::paused) return;
  state_[rank] = State::running;
  for (Ev &ev : held_[rank]) {
    ev.at = now_;
    push(std::move(ev));
  }
  held_[rank].clear();
  tick_at_[rank] = now_;
  push({now_, 0, 0, rank, rank, {}});
}

void SimNet::leave(int rank) {
  nodes_[rank]->leave(now_, &out_);
  absorb(rank, out_);
  state_[rank] = State::dead;
}

void SimNet::declare(int rank, int dead) {
  nodes_[rank]->declare_failed(dead, now_, &out_);
  absorb(rank, out_);
  schedule_tick(rank);
}

void SimNet::watch_exit(int rank) {
  // NOTE: loops because re-targeting may land on an emitter that has exited too (the runtime's
  // pidfd_open then fails with ESRCH, which it reports as an exit).
  // NOTE: a process can be watched on its own host only (the runtime's pidfd).
  auto same_host = [&](int r) { return cfg_.host.empty() || cfg_.host[r] == cfg_.host[rank]; };
  for (int e = nodes_[rank]->emitter();
       cfg_.watch_exits && e >= 0 && exited_[e] && same_host(e) && !nodes_[rank]->stopped();
       e = nodes_[rank]->emitter()) {
    nodes_[rank]->on_emitter_exited(e, now_, &out_);
    absorb(rank, out_);
  }
  for (int t = nodes_[rank]->host_tail(); cfg_.watch_exits && t >= 0 && exited_[t] && !nodes_[rank]->stopped();
       t = nodes_[rank]->host_tail()) {
    nodes_[rank]->on_host_tail_exited(t, now_, &out_);
    absorb(rank, out_);
  }
}

bool SimNet::step() {
  if (q_.empty()) return false;
  std::pop_heap(q_.begin(), q_.end(), std::greater<Key>());
  std::uint32_t slot = q_.back().slot;
  q_.pop_back();
  Ev ev = std::move(slots_[slot]);
  free_.push_back(slot);
  now_ = std::max(now_, ev.at);
  int r = ev.to;
  if (state_[r] == State::dead || nodes_[r]->stopped()) return true;
  if (ev.kind == 0) {
    if (state_[r] == State::paused) return true;  // resume() schedules the next tick
    watch_exit(r);
    if (cfg_.tick > 0) {
      nodes_[r]->tick(now_, &out_);
      absorb(r, out_);
      push({now_ + cfg_.tick, 0, 0, r, r, {}});
      return true;
    }
    if (ev.at != tick_at_[r]) return true;  // superseded
    tick_at_[r] = -1;
    nodes_[r]->tick(now_, &out_);
    absorb(r, out_);
    schedule_tick(r);
    return true;
  }
  if (state_[r] == State::paused) {
    held_[r].push_back(std::move(ev));
    return true;
  }
  if (on_deliver && !on_deliver(ev.from, r, ev.msg)) return true;
  if (state_[r] == State::dead) return true;
  nodes_[r]->on_message(ev.from, ev.msg, now_, &out_);
  absorb(r, out_);
  schedule_tick(r);
  return true;
}

void SimNet::run_until(Time t) {
  while (!q_.empty() && q_.front().at <= t) step();
  now_ = std::max(now_, t);
}

bool SimNet::run_until(const std::function<bool()> &pred, Time limit) {
  if (pred()) return true;
  while (!q_.empty() && q_.front().at <= limit) {
    step();
    if (pred()) return true;
  }
  return pred();
}

bool SimNet::all_survivors_know_exactly(std::vector<int> dead) const {
  std::sort(dead.begin(), dead.end());
  for (int r = 0; r < cfg_.n; ++r) {
    if (!survivor(r)) continue;
    std::vector<int> f = nodes_[r]->failed_order();
    std::sort(f.begin(), f.end());
    if (f != dead) return false;
  }
  return true;
}

}  // namespace cohort::detector
