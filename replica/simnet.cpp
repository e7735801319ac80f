#include "replica/simnet.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>

namespace cohort::replica::sim {
namespace {

Bytes payload_of(int src, int round) {
  Bytes b(8);
  std::memcpy(b.data(), &src, 4);
  std::memcpy(b.data() + 4, &round, 4);
  return b;
}

struct Proc {
  explicit Proc(const Placement *p, int w, Limits l) : ep(p, w, l) {}
  Endpoint ep;
  bool dead = false, done = false, queued = false;
  int round = 0, phase = 0, received = 0, pending_src = -1;
  std::vector<char> got;
  std::uint64_t event = 0;
  std::uint64_t asked = ~0ull;     ///< the event this replica called decide() for
  std::vector<std::int64_t> used;  ///< outcomes used, by event
  long actions = 0;
};

// An entry in flight: a wire message, or a death notice (to = the replica told, kind = -1, from = dead).
struct Flight {
  Wire w;
  bool notice = false;
};

class Sim {
 public:
  explicit Sim(const Options &o)
      : o_(o),
        place_(o.host.empty() ? Placement(o.logical, o.replicas) : Placement(o.logical, o.replicas, o.host)),
        rng_(o.seed) {
    int ws = place_.world_size();
    procs_.reserve(static_cast<std::size_t>(ws));
    for (int w = 0; w < ws; ++w) {
      procs_.push_back(std::make_unique<Proc>(&place_, w, o.limits));
      procs_.back()->got.assign(o.pattern == Pattern::alltoall ? static_cast<std::size_t>(o.logical) : 0, 0);
      wake(w);
    }
    live_.assign(static_cast<std::size_t>(o.logical), o.replicas);
  }

  Result run() {
    auto t0 = std::chrono::steady_clock::now();
    // Random kills happen at random points of the run, spread over its expected number of steps.
    long expected = static_cast<long>(place_.world_size()) * o_.rounds *
                    (o_.pattern == Pattern::ring ? 4 : 2 * o_.logical) * o_.replicas;
    std::vector<long> kill_at;
    std::uniform_int_distribution<long> at(0, expected);
    for (int i = 0; i < o_.kills; ++i) kill_at.push_back(at(rng_));
    std::sort(kill_at.begin(), kill_at.end());
    std::size_t next_kill = 0;
    long step = 0;
    while (error_.empty()) {
      while (next_kill < kill_at.size() && kill_at[next_kill] <= step) {
        random_kill();
        ++next_kill;
      }
      ++step;
      bool net = !flight_.empty();
      bool cpu = !runnable_.empty();
      if (!net && !cpu) break;
      if (net && (!cpu || (rng_() & 1))) {
        std::size_t i = rng_() % flight_.size();
        Flight f = std::move(flight_[i]);
        flight_[i] = std::move(flight_.back());
        flight_.pop_back();
        arrive(f);
      } else {
        std::size_t i = rng_() % runnable_.size();
        int w = runnable_[i];
        runnable_[i] = runnable_.back();
        runnable_.pop_back();
        procs_[w]->queued = false;
        if (!procs_[w]->dead) advance(w);
      }
    }
    Result r = check();
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  }

 private:
  void wake(int w) {
    Proc &p = *procs_[w];
    if (p.dead || p.done || p.queued) return;
    p.queued = true;
    runnable_.push_back(w);
  }

  // One action of world rank w; kills it when it is an exact victim at its step. False: w is dead.
  bool act(int w) {
    Proc &p = *procs_[w];
    ++p.actions;
    if ((w == o_.victim && p.actions == o_.victim_after) || (w == o_.victim2 && p.actions == o_.victim2_after)) {
      kill(w);
      return false;
    }
    return true;
  }

  void emit(int w, std::vector<Wire> &out) {
    for (auto &m : out) {
      if (procs_[w]->dead || !act(w)) break;  // a replica dying midway leaves the rest of its fan-out unsent
      ++wires_;
      if (m.kind == Wire::data) ++data_;
      if (m.kind == Wire::data && o_.duplicate > 0 && std::uniform_real_distribution<>(0, 1)(rng_) < o_.duplicate)
        flight_.push_back(Flight{m, false});
      flight_.push_back(Flight{std::move(m), false});
    }
    out.clear();
  }

  void arrive(Flight &f) {
    int to = f.w.to;
    Proc &p = *procs_[to];
    if (p.dead) return;
    // Copies still in flight from a replica that died are its unfinished sends: lost with probability
    // drop_from_dead (decided on arrival, which is the same as deciding at the death).
    if (!f.notice && procs_[f.w.from]->dead && std::uniform_real_distribution<>(0, 1)(rng_) < o_.drop_from_dead)
      return;
    std::vector<Wire> out;
    if (f.notice) {
      p.ep.replica_died(f.w.from, &out);
    } else {
      if (!act(to)) return;
      p.ep.receive(f.w, &out);
    }
    emit(to, out);
    wake(to);
  }

  void kill(int w) {
    Proc &p = *procs_[w];
    if (p.dead) return;
    p.dead = true;
    ++killed_;
    --live_[static_cast<std::size_t>(place_.logical(w))];
    auto notify = [&](int to) {
      if (to == w || procs_[to]->dead) return;
      Flight f;
      f.notice = true;
      f.w.from = w;
      f.w.to = to;
      flight_.push_back(std::move(f));
    };
    if (o_.notify_all) {
      for (int to = 0; to < place_.world_size(); ++to) notify(to);
    } else {
      for (int k = 0; k < place_.replicas(); ++k) notify(place_.world(place_.logical(w), k));
    }
  }

  void random_kill() {
    // A replica whose logical rank keeps another live replica.
    for (int tries = 0; tries < 64; ++tries) {
      int w = static_cast<int>(rng_() % static_cast<std::uint64_t>(place_.world_size()));
      if (!procs_[w]->dead && live_[static_cast<std::size_t>(place_.logical(w))] > 1) {
        kill(w);
        return;
      }
    }
  }

  void fail(int w, const std::string &what) {
    if (!error_.empty()) return;
    std::ostringstream os;
    os << "world " << w << " (logical " << place_.logical(w) << ", replica " << place_.replica(w) << ") round "
       << procs_[w]->round << ": " << what;
    error_ = os.str();
  }

  bool take(int w, int src) {
    Proc &p = *procs_[w];
    Delivery d;
    if (!p.ep.deliver(Channel{0, src, place_.logical(w)}, &d)) return false;
    if (d.payload != payload_of(src, p.round))
      fail(w, "wrong message from logical " + std::to_string(src) + " seq " + std::to_string(d.seq));
    if (d.seq != static_cast<std::uint64_t>(p.round))
      fail(w, "sequence number " + std::to_string(d.seq) + " out of order");
    ++delivered_;
    return true;
  }

  // A decision event: true with *outcome once committed (and used). candidate() -> (have, value) is
  // asked until this replica has one to give, then never again for this event.
  template <class Candidate>
  bool decision(int w, Candidate candidate, std::int64_t *outcome) {
    Proc &p = *procs_[w];
    std::vector<Wire> out;
    if (!p.ep.decided(p.event, outcome)) {
      if (p.asked == p.event) return false;
      auto [have_candidate, value] = candidate();
      if (!have_candidate) return false;
      p.asked = p.event;
      p.ep.decide(p.event, value, &out);
      emit(w, out);
      if (p.dead || !p.ep.decided(p.event, outcome)) return false;
    }
    p.used.push_back(*outcome);
    p.ep.consumed(p.event);
    ++p.event;
    return true;
  }

  void advance(int w) {
    Proc &p = *procs_[w];
    int l = place_.logical(w), n = o_.logical;
    std::vector<Wire> out;
    while (!p.dead && !p.done && error_.empty()) {
      if (p.phase == 0) {  // sends
        if (o_.pattern == Pattern::ring) {
          p.ep.send(0, (l + 1) % n, p.round, payload_of(l, p.round), &out);
          emit(w, out);
        } else {
          for (int d = 1; d < n && !p.dead; ++d) {
            p.ep.send(0, (l + d) % n, p.round, payload_of(l, p.round), &out);
            emit(w, out);
          }
        }
        p.phase = 1;
        p.received = 0;
        std::fill(p.got.begin(), p.got.end(), 0);
      } else if (p.phase == 1) {  // receives
        if (o_.pattern == Pattern::ring) {
          if (!take(w, (l + n - 1) % n)) return;
          p.phase = 2;
        } else {
          if (p.received == n - 1) {
            p.phase = 2;
            continue;
          }
          if (p.pending_src < 0) {
            // MPI_ANY_SOURCE: this replica's candidate is the first ready source not matched this round.
            auto first_ready = [&]() -> std::pair<bool, std::int64_t> {
              for (const Channel &c : p.ep.ready_channels())
                if (c.context == 0 && !p.got[static_cast<std::size_t>(c.src)]) return {true, c.src};
              return {false, 0};
            };
            std::int64_t outcome = 0;
            if (!decision(w, first_ready, &outcome)) return;
            if (outcome < 0 || outcome >= n || outcome == l || p.got[static_cast<std::size_t>(outcome)]) {
              fail(w, "any-source decision chose logical " + std::to_string(outcome));
              return;
            }
            p.pending_src = static_cast<int>(outcome);
          }
          if (!take(w, p.pending_src)) return;
          p.got[static_cast<std::size_t>(p.pending_src)] = 1;
          p.pending_src = -1;
          ++p.received;
        }
      } else {  // the round's Wtime-like decision
        if (o_.wtime_decision) {
          std::int64_t outcome = 0;
          auto clock = [&]() -> std::pair<bool, std::int64_t> {
            return {true, static_cast<std::int64_t>(w) * 1000003 + p.round};
          };
          if (!decision(w, clock, &outcome)) return;
        }
        p.phase = 0;
        if (++p.round == o_.rounds) p.done = true;
      }
    }
  }

  Result check() {
    Result r;
    r.wires = wires_;
    r.data_copies = data_;
    r.delivered = delivered_;
    r.killed = killed_;
    for (int w = 0; w < place_.world_size(); ++w) {
      const Proc &p = *procs_[w];
      r.duplicates += p.ep.counters().duplicates;
      r.takeovers += p.ep.counters().takeovers;
      if (w == o_.victim) r.victim_actions = p.actions;
      if (p.ep.counters().conflicts) fail(w, "conflicting proposal seen");
      if (!p.dead && !p.done) fail(w, "did not finish (phase " + std::to_string(p.phase) + ")");
      if (!p.dead && p.ep.held() != 0) fail(w, "copies left undelivered");
    }
    for (int l = 0; l < o_.logical && error_.empty(); ++l) {
      // Every replica's used outcomes are a prefix of the longest one's.
      const std::vector<std::int64_t> *longest = nullptr;
      for (int k = 0; k < o_.replicas; ++k) {
        const auto &u = procs_[place_.world(l, k)]->used;
        if (!longest || u.size() > longest->size()) longest = &u;
      }
      for (int k = 0; k < o_.replicas; ++k) {
        int w = place_.world(l, k);
        const auto &u = procs_[w]->used;
        for (std::size_t e = 0; e < u.size(); ++e)
          if (u[e] != (*longest)[e]) {
            fail(w, "decision " + std::to_string(e) + " differs from a twin's");
            break;
          }
        if (!procs_[w]->dead) r.decisions += u.size();
      }
    }
    r.error = error_;
    return r;
  }

  Options o_;
  Placement place_;
  std::mt19937_64 rng_;
  std::vector<std::unique_ptr<Proc>> procs_;
  std::vector<int> live_;
  std::vector<Flight> flight_;
  std::vector<int> runnable_;
  std::string error_;
  std::uint64_t wires_ = 0, data_ = 0, delivered_ = 0;
  int killed_ = 0;
};

}  // namespace

Result run(const Options &o) {
  Sim s(o);
  return s.run();
}

}  // namespace cohort::replica::sim
