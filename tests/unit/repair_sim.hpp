// A deterministic in-process simulation of one agreement instance (repair/agreement.hpp) over a fake
// network and a fake detector, driven by a seeded random scheduler: any pending event (a message, a
// failure notice, a rank's call to agree, a fencing notice) may happen next, so messages overtake each
// other (or keep MPI's per-pair order with `fifo`), notices arrive late and in any order, and ranks call
// agree at different times. Ranks crash at a chosen step of their own (after sending only some of that
// step's messages) or at random, and live ranks may be falsely suspected (the detector then fences them).
//
// check() verifies, after the run went quiet: termination (every survivor decided), uniform agreement
// (every survivor decided the same flag and failed set), validity (the failed set holds no survivor and
// only declared ranks; the flag is exactly the AND of the inputs of the members outside it, every one of
// which took part).
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "repair/agreement.hpp"

namespace cohort::repair::sim {

struct Crash {
  int node;
  int step;   ///< the node's step (0 = its call to agree, then one per input it handles) at which it dies
  int sends;  ///< how many of that step's messages leave before it dies
};

struct Options {
  int n = 4;
  int radix = kDefaultRadix;  ///< the tree's fan-in
  std::uint64_t seed = 1;
  bool fifo = false;
  std::vector<Crash> crashes;
  int random_crashes = 0;      ///< more crashes at random events
  int false_suspicions = 0;    ///< live ranks declared dead at random events
  int detect_weight = 1;       ///< weight of failure notices in the scheduler (messages weigh 4)
  long max_events = 2000000;
};

struct Node {
  std::unique_ptr<Agreement> a;
  int input = 0;
  int steps = 0;
  bool started = false, dead = false, fenced = false;
  std::set<int> known;  // failures learned before starting
};

struct Result {
  std::vector<Node> nodes;
  std::set<int> declared;
  long events = 0, messages = 0;
  int max_steps = 0, max_outbox = 0;
  bool quiet = true;  ///< false if max_events was hit (a livelock)
};

class Sim {
 public:
  explicit Sim(Options o) : o_(std::move(o)), rng_(o_.seed) {}

  Result run() {
    r_.nodes.resize(o_.n);
    for (int i = 0; i < o_.n; ++i) {
      r_.nodes[i].input = static_cast<int>(rng_() % 8);
      push(Event{Event::kStart, i});
    }
    int crashes_left = o_.random_crashes, suspicions_left = o_.false_suspicions;
    while (!pool_.empty()) {
      if (++r_.events > o_.max_events) {
        r_.quiet = false;
        break;
      }
      if (crashes_left > 0 && rng_() % 8 == 0) {
        int v = static_cast<int>(rng_() % o_.n);
        if (!r_.nodes[v].dead) {
          --crashes_left;
          die(v);
        }
      }
      if (suspicions_left > 0 && rng_() % 8 == 0) {
        int v = static_cast<int>(rng_() % o_.n);
        --suspicions_left;
        declare(v);
      }
      step(pick());
    }
    return std::move(r_);
  }

 private:
  struct Event {
    enum Kind { kStart, kMsg, kLearn, kFence } kind;
    int node;  // receiver
    int from = -1;
    int about = -1;  // kLearn: the dead rank
    AgreeMsg msg;
  };

  void push(Event e) { pool_.push_back(std::move(e)); }

  Event pick() {
    long total = 0;
    for (const Event &e : pool_) total += weight(e);
    long x = static_cast<long>(rng_() % static_cast<std::uint64_t>(total));
    std::size_t i = 0;
    for (; i < pool_.size(); ++i) {
      x -= weight(pool_[i]);
      if (x < 0) break;
    }
    if (o_.fifo && pool_[i].kind == Event::kMsg) {
      for (std::size_t j = 0; j < i; ++j) {
        if (pool_[j].kind == Event::kMsg && pool_[j].node == pool_[i].node && pool_[j].from == pool_[i].from) {
          i = j;
          break;
        }
      }
    }
    Event e = std::move(pool_[i]);
    pool_.erase(pool_.begin() + static_cast<long>(i));
    return e;
  }

  int weight(const Event &e) const { return e.kind == Event::kLearn ? o_.detect_weight : 4; }

  void step(const Event &e) {
    Node &nd = r_.nodes[e.node];
    if (nd.dead) return;
    if (e.kind == Event::kFence) {
      nd.fenced = true;
      die(e.node);
      return;
    }
    if (e.kind == Event::kStart) {
      std::vector<int> known(nd.known.begin(), nd.known.end());
      nd.a = std::make_unique<Agreement>(o_.n, e.node, nd.input, known, o_.radix);
      nd.started = true;
    } else if (!nd.started) {
      if (e.kind == Event::kLearn) {
        nd.known.insert(e.about);
      } else {
        push(e);  // the rank has not called agree yet: the message waits (the engine buffers it)
      }
      return;
    } else if (e.kind == Event::kLearn) {
      nd.a->on_failure(e.about);
    } else {
      nd.a->on_message(e.from, e.msg);
    }
    after_step(e.node);
  }

  void after_step(int v) {
    Node &nd = r_.nodes[v];
    int this_step = nd.steps++;
    r_.max_steps = std::max(r_.max_steps, nd.steps);
    std::vector<Outgoing> out = nd.a->take_outbox();
    r_.max_outbox = std::max(r_.max_outbox, static_cast<int>(out.size()));
    int limit = static_cast<int>(out.size());
    bool crash = false;
    for (const Crash &c : o_.crashes) {
      if (c.node == v && c.step == this_step) {
        limit = std::min(limit, c.sends);
        crash = true;
      }
    }
    for (int i = 0; i < limit; ++i) {
      ++r_.messages;
      push(Event{Event::kMsg, out[i].to, v, -1, std::move(out[i].msg)});
    }
    for (int w : nd.a->take_learned()) declare(w);
    if (crash) {
      die(v);
    } else if (nd.a->fenced()) {
      nd.fenced = true;
      die(v);
    }
  }

  // The fake detector: a dead or declared rank is announced to every rank, each at its own later time;
  // a live rank that is declared dead gets a fencing notice.
  void declare(int v) {
    if (!r_.declared.insert(v).second) return;
    for (int i = 0; i < o_.n; ++i) {
      if (i != v) push(Event{Event::kLearn, i, -1, v, {}});
    }
    if (!r_.nodes[v].dead) push(Event{Event::kFence, v});
  }

  void die(int v) {
    if (r_.nodes[v].dead) return;
    r_.nodes[v].dead = true;
    declare(v);
  }

  Options o_;
  std::mt19937_64 rng_;
  std::vector<Event> pool_;
  Result r_;
};

/// Empty if the three properties hold, else what went wrong.
inline std::string check(const Options &o, const Result &r) {
  std::ostringstream err;
  if (!r.quiet) err << "no quiescence after " << r.events << " events; ";
  int ref = -1;
  for (int i = 0; i < o.n; ++i) {
    const Node &nd = r.nodes[i];
    if (nd.dead) continue;
    if (!nd.started || !nd.a->decided()) {
      err << "survivor " << i << " did not decide; ";
      continue;
    }
    if (ref < 0) {
      ref = i;
      continue;
    }
    const Agreement &a = *nd.a, &b = *r.nodes[ref].a;
    if (a.decided_flag() != b.decided_flag() || a.decided_failed() != b.decided_failed()) {
      err << "survivors " << ref << " and " << i << " decided differently; ";
    }
  }
  if (ref >= 0) {
    const Agreement &a = *r.nodes[ref].a;
    int want = ~0;
    for (int i = 0; i < o.n; ++i) {
      bool failed = contains(a.decided_failed(), i);
      if (failed && !r.declared.count(i)) err << "rank " << i << " in the failed set was never declared; ";
      if (failed && !r.nodes[i].dead) err << "survivor " << i << " in the failed set; ";
      if (!failed) {
        want &= r.nodes[i].input;
        if (!r.nodes[i].started) err << "rank " << i << " outside the failed set never took part; ";
      }
    }
    if (a.decided_flag() != want) err << "flag " << a.decided_flag() << " is not the AND " << want << "; ";
  }
  return err.str();
}

}  // namespace cohort::repair::sim
