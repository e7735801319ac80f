#include "detector/simnet.hpp"

#include <algorithm>

namespace cohort::detector {

SimNet::SimNet(SimConfig config)
    : cfg_(std::move(config)),
      ring_(std::make_shared<topology::Ring>(cfg_.n, cfg_.shuffle, cfg_.ring_seed)),
      state_(static_cast<size_t>(cfg_.n), State::running),
      held_(static_cast<size_t>(cfg_.n)),
      rng_(cfg_.rng_seed) {
  learned.resize(static_cast<size_t>(cfg_.n));
  fenced_at.assign(static_cast<size_t>(cfg_.n), -1);
  nodes_.reserve(static_cast<size_t>(cfg_.n));
  for (int r = 0; r < cfg_.n; ++r) {
    Config c;
    c.rank = r;
    c.ring = ring_;
    c.period = cfg_.period;
    c.timeout = cfg_.timeout;
    c.grace = cfg_.grace;
    c.bcast = cfg_.bcast;
    c.resync = cfg_.resync;
    out_.clear();
    nodes_.push_back(std::make_unique<RingDetector>(c, 0, &out_));
    absorb(r, out_);
    // Spread the ticks over one tick interval, as real ranks are not in phase.
    std::uniform_int_distribution<Time> phase(0, cfg_.tick - 1);
    push({phase(rng_), 0, 0, r, r, nullptr});
  }
}

void SimNet::push(Ev ev) {
  ev.seq = seq_++;
  q_.push(std::move(ev));
}

void SimNet::absorb(int rank, Output &out) {
  for (const Event &e : out.events) {
    if (e.kind == Event::self_fenced) {
      if (fenced_at[rank] < 0) fenced_at[rank] = now_;
    } else {
      learned[rank].push_back({e.rank, now_, e.how, e.hops});
    }
  }
  for (Outgoing &o : out.messages) {
    int copies = filter ? filter(rank, o) : 1;
    auto msg = std::make_shared<const Message>(std::move(o.msg));
    for (int i = 0; i < copies; ++i) {
      ++sent[static_cast<int>(msg->type)];
      Time lat = cfg_.latency ? cfg_.latency(rng_) : 50;
      push({now_ + std::max<Time>(lat, 1), 0, 1, rank, o.to, msg});
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
  push({now_, 0, 0, rank, rank, nullptr});
}

void SimNet::leave(int rank) {
  nodes_[rank]->leave(now_, &out_);
  absorb(rank, out_);
  state_[rank] = State::dead;
}

void SimNet::declare(int rank, int dead) {
  nodes_[rank]->declare_failed(dead, now_, &out_);
  absorb(rank, out_);
}

bool SimNet::step() {
  if (q_.empty()) return false;
  Ev ev = q_.top();
  q_.pop();
  now_ = std::max(now_, ev.at);
  int r = ev.to;
  if (state_[r] == State::dead || nodes_[r]->stopped()) return true;
  if (ev.kind == 0) {
    if (state_[r] == State::paused) return true;  // resume() schedules the next tick
    nodes_[r]->tick(now_, &out_);
    absorb(r, out_);
    push({now_ + cfg_.tick, 0, 0, r, r, nullptr});
    return true;
  }
  if (state_[r] == State::paused) {
    held_[r].push_back(std::move(ev));
    return true;
  }
  if (on_deliver && !on_deliver(ev.from, r, *ev.msg)) return true;
  if (state_[r] == State::dead) return true;
  nodes_[r]->on_message(ev.from, *ev.msg, now_, &out_);
  absorb(r, out_);
  return true;
}

void SimNet::run_until(Time t) {
  while (!q_.empty() && q_.top().at <= t) step();
  now_ = std::max(now_, t);
}

bool SimNet::run_until(const std::function<bool()> &pred, Time limit) {
  if (pred()) return true;
  while (!q_.empty() && q_.top().at <= limit) {
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
