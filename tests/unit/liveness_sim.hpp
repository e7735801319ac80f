// A deterministic in-process simulation of the non-collective creation (repair/liveness.hpp) over a
// fake network, a fake detector and a fake MPI_Comm_create_group, driven by a seeded random scheduler
// (any pending event may happen next). Every member runs a GroupCreation and, for each attempt, its
// confirming Agreement over the group's members only. A creation over a set S completes once every
// member of S has called it; a member that learns a member of S dead before its completion arrives
// abandons it ("not made"), as the MPI adapter does. Members crash at a chosen step of their own (after
// only some of that step's outputs: its messages, then its call to create) or at random.
//
// check() verifies after quiescence: termination (every survivor done), uniformity (every survivor holds
// the same member set, from the same attempt), validity (the set holds every survivor, every member left
// out was declared dead, no member of the set is in the last confirming agreement's failed set, and the
// creation over it completed on every survivor).
#pragma once
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "repair/agreement.hpp"
#include "repair/liveness.hpp"

namespace cohort::repair::lsim {

struct Crash {
  int node;
  int step;   ///< the node's step (0 = its call, then one per input it handles) at which it dies
  int sends;  ///< how many of that step's outputs (messages, then the call to create) happen first
};

struct Options {
  int n = 4;
  int radix = kDefaultRadix;
  std::uint64_t seed = 1;
  std::vector<int> dead_before;  ///< dead (and known to every detector) before the call
  std::vector<Crash> crashes;
  int random_crashes = 0;
  long max_events = 2000000;
};

struct Node {
  std::unique_ptr<GroupCreation> g;
  std::map<int, std::unique_ptr<Agreement>> agreements;          // by attempt
  std::map<int, std::vector<std::pair<int, AgreeMsg>>> early;  // by attempt: (from, msg)
  RankSet known;
  int steps = 0;
  bool started = false, dead = false, fenced = false;
  bool creating = false, made = false;
  RankSet creating_over, result;
  int result_attempt = -1;
};

struct Result {
  std::vector<Node> nodes;
  std::set<int> declared;
  long events = 0, messages = 0, creations = 0;
  int max_attempt = 0;
  bool quiet = true;
};

class Sim {
 public:
  explicit Sim(Options o) : o_(std::move(o)), rng_(o_.seed) {}

  Result run() {
    r_.nodes.resize(static_cast<std::size_t>(o_.n));
    for (int v : o_.dead_before) {
      r_.nodes[v].dead = true;
      r_.declared.insert(v);
      for (Node &nd : r_.nodes) nd.known.push_back(v);
    }
    for (Node &nd : r_.nodes) std::sort(nd.known.begin(), nd.known.end());
    for (int i = 0; i < o_.n; ++i) push(Event{Event::kStart, i});
    int crashes_left = o_.random_crashes;
    while (!pool_.empty()) {
      if (++r_.events > o_.max_events) {
        r_.quiet = false;
        break;
      }
      if (crashes_left > 0 && rng_() % 8 == 0) {
        int v = static_cast<int>(rng_() % static_cast<std::uint64_t>(o_.n));
        if (!r_.nodes[v].dead) {
          --crashes_left;
          die(v);
        }
      }
      step(pick());
    }
    return std::move(r_);
  }

 private:
  struct Event {
    enum Kind { kStart, kMsg, kLearn, kFence, kCreated } kind;
    int node;
    int from = -1;
    int about = -1;    // kLearn: the dead member; kMsg/kCreated: the attempt
    AgreeMsg msg;
    RankSet set;       // kCreated: the set created over
  };
  struct Out {
    std::vector<Event> msgs;
    bool create = false;
  };

  void push(Event e) { pool_.push_back(std::move(e)); }

  Event pick() {
    std::size_t i = static_cast<std::size_t>(rng_() % pool_.size());
    Event e = std::move(pool_[i]);
    pool_[i] = std::move(pool_.back());
    pool_.pop_back();
    return e;
  }

  void step(const Event &e) {
    Node &nd = r_.nodes[e.node];
    if (nd.dead) return;
    Out out;
    switch (e.kind) {
      case Event::kFence:
        nd.fenced = true;
        die(e.node);
        return;
      case Event::kStart:
        nd.started = true;
        nd.g = std::make_unique<GroupCreation>(o_.n, e.node, nd.known);
        act(e.node, nd.g->start(), &out);
        break;
      case Event::kLearn:
        if (!merge_into(&nd.known, {e.about})) return;
        for (auto &[att, a] : nd.agreements) {
          a->on_failure(e.about);
          collect(e.node, att, &out);
        }
        if (nd.creating && contains(nd.creating_over, e.about)) {
          nd.creating = false;  // abandoned: a member of the creation died
          act(e.node, nd.g->on_created(false), &out);
        }
        break;
      case Event::kMsg: {
        auto it = nd.agreements.find(e.about);
        if (it == nd.agreements.end()) {
          nd.early[e.about].emplace_back(e.from, e.msg);
          return;
        }
        it->second->on_message(e.from, e.msg);
        collect(e.node, e.about, &out);
        break;
      }
      case Event::kCreated:
        if (!nd.creating || nd.creating_over != e.set || nd.g->attempt() != e.about) return;
        nd.creating = false;
        nd.made = true;
        act(e.node, nd.g->on_created(true), &out);
        break;
    }
    emit(e.node, &out);
  }

  // Runs the machine's actions until it waits for an outcome.
  void act(int v, GroupCreation::Action a, Out *out) {
    Node &nd = r_.nodes[v];
    switch (a.kind) {
      case GroupCreation::Action::kCreate:
        nd.made = false;
        nd.creating = true;
        nd.creating_over = a.members;
        for (int m : a.members) {
          if (contains(nd.known, m)) {  // the adapter sees a member dead at once: not made
            nd.creating = false;
            act(v, nd.g->on_created(false), out);
            return;
          }
        }
        out->create = true;
        return;
      case GroupCreation::Action::kAgree: {
        int att = nd.g->attempt();
        r_.max_attempt = std::max(r_.max_attempt, att);
        nd.agreements[att] = std::make_unique<Agreement>(o_.n, v, a.flag, nd.known, o_.radix);
        auto early = nd.early.find(att);
        if (early != nd.early.end()) {
          for (auto &m : early->second) nd.agreements[att]->on_message(m.first, m.second);
          nd.early.erase(early);
        }
        collect(v, att, out);
        return;
      }
      case GroupCreation::Action::kDone:
        nd.result = a.members;
        nd.result_attempt = nd.g->attempt();
        return;
      case GroupCreation::Action::kFenced:
        nd.fenced = true;
        return;
    }
  }

  // Moves an agreement's output into `out`; a decision of the current attempt drives the machine.
  void collect(int v, int att, Out *out) {
    Node &nd = r_.nodes[v];
    Agreement &a = *nd.agreements[att];
    for (Outgoing &o : a.take_outbox()) {
      Event e{Event::kMsg, o.to, v, att, std::move(o.msg), {}};
      out->msgs.push_back(std::move(e));
    }
    for (int w : a.take_learned()) declare(w);
    if (a.fenced()) nd.fenced = true;
    if (!nd.fenced && a.decided() && att == nd.g->attempt() && !nd.g->done() && !nd.creating &&
        nd.agreements.rbegin()->first == att && !decided_seen_[v].count(att)) {
      decided_seen_[v].insert(att);
      act(v, nd.g->on_decided(a.decided_flag(), a.decided_failed()), out);
    }
  }

  void emit(int v, Out *out) {
    Node &nd = r_.nodes[v];
    int this_step = nd.steps++;
    int limit = static_cast<int>(out->msgs.size()) + (out->create ? 1 : 0);
    bool crash = false;
    for (const Crash &c : o_.crashes) {
      if (c.node == v && c.step == this_step) {
        limit = std::min(limit, c.sends);
        crash = true;
      }
    }
    for (int i = 0; i < limit && i < static_cast<int>(out->msgs.size()); ++i) {
      ++r_.messages;
      push(std::move(out->msgs[static_cast<std::size_t>(i)]));
    }
    if (out->create && limit > static_cast<int>(out->msgs.size())) call_create(v);
    if (crash || nd.fenced) die(v);
  }

  void call_create(int v) {
    Node &nd = r_.nodes[v];
    ++r_.creations;
    auto key = std::make_pair(nd.g->attempt(), nd.creating_over);
    std::set<int> &callers = creators_[key];
    callers.insert(v);
    for (int m : key.second) {
      if (!callers.count(m)) return;
    }
    for (int m : key.second) push(Event{Event::kCreated, m, -1, key.first, {}, key.second});
  }

  void declare(int v) {
    if (!r_.declared.insert(v).second) return;
    for (int i = 0; i < o_.n; ++i) {
      if (i != v) push(Event{Event::kLearn, i, -1, v, {}, {}});
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
  std::map<std::pair<int, RankSet>, std::set<int>> creators_;
  std::map<int, std::set<int>> decided_seen_;
  Result r_;
};

/// Empty if the properties hold, else what went wrong.
inline std::string check(const Options &o, const Result &r) {
  std::ostringstream err;
  if (!r.quiet) err << "no quiescence after " << r.events << " events; ";
  int ref = -1;
  for (int i = 0; i < o.n; ++i) {
    const Node &nd = r.nodes[i];
    if (nd.dead) continue;
    if (nd.result_attempt < 0) {
      err << "survivor " << i << " did not finish; ";
      continue;
    }
    if (!nd.made) err << "survivor " << i << " finished without the communicator; ";
    if (!contains(nd.result, i)) err << "survivor " << i << " is not in its own communicator; ";
    const Agreement &last = *nd.agreements.at(nd.result_attempt);
    for (int m : last.decided_failed()) {
      if (contains(nd.result, m)) err << "survivor " << i << " kept member " << m << " that the last agreement left out; ";
    }
    if (ref < 0) {
      ref = i;
    } else if (nd.result != r.nodes[ref].result || nd.result_attempt != r.nodes[ref].result_attempt) {
      err << "survivors " << ref << " and " << i << " finished differently; ";
    }
  }
  if (ref >= 0) {
    for (int i = 0; i < o.n; ++i) {
      bool in = contains(r.nodes[ref].result, i);
      if (!in && !r.declared.count(i)) err << "member " << i << " left out but never declared; ";
      if (!in && !r.nodes[i].dead) err << "survivor " << i << " left out; ";
    }
  }
  if (r.max_attempt > o.n + 1) err << "attempt " << r.max_attempt << " exceeds the group size; ";
  return err.str();
}

}  // namespace cohort::repair::lsim
