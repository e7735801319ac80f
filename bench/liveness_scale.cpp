// The non-collective creation (repair/liveness.hpp) at scale, without MPI: a group of n members in one
// process over a synchronous network (every message sent in a round arrives in the next; a creation
// completes in the round after its last member called it). Counts the messages the group's members
// send, which are all the messages there are: ranks outside the group get none.
//
//   liveness_scale [n]      (default 10000) -> rows `csv,liveness,<case>,<n>,<messages>,<rounds>,<attempts>,<ms>`
//
// Cases: `free`; `dead_before`: member n/2 dead and known to all before the call; `dies_creating`:
// member n/2 dies right after calling create in attempt 0 (the others learn it 2 rounds later).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "repair/agreement.hpp"
#include "repair/liveness.hpp"

using cohort::repair::Agreement;
using cohort::repair::AgreeMsg;
using cohort::repair::GroupCreation;
using cohort::repair::Outgoing;
using cohort::repair::RankSet;

namespace {

struct Msg {
  int from, to, attempt;
  AgreeMsg msg;
};

struct Node {
  std::unique_ptr<GroupCreation> g;
  std::map<int, std::unique_ptr<Agreement>> agreements;
  bool dead = false, creating = false, done = false;
  RankSet over;
};

struct Result {
  long messages = 0;
  int rounds = 0, attempts = 0;
  bool ok = true;
};

Result run(int n, int victim, bool known_before) {
  std::vector<Node> nodes(static_cast<std::size_t>(n));
  std::vector<Msg> now, next;
  std::map<std::pair<int, RankSet>, int> callers;  // creations: calls so far
  std::vector<std::pair<int, RankSet>> complete_next;
  RankSet known;
  if (victim >= 0 && known_before) {
    known = {victim};
    nodes[static_cast<std::size_t>(victim)].dead = true;
  }
  int learn_round = -1;
  Result r;
  std::function<void(int, GroupCreation::Action)> act;
  auto collect = [&](int v, int att) {
    Agreement &a = *nodes[static_cast<std::size_t>(v)].agreements[att];
    for (Outgoing &o : a.take_outbox()) next.push_back(Msg{v, o.to, att, std::move(o.msg)});
    a.take_learned();
    Node &nd = nodes[static_cast<std::size_t>(v)];
    if (a.decided() && att == nd.g->attempt() && !nd.creating && !nd.done) act(v, nd.g->on_decided(a.decided_flag(), a.decided_failed()));
  };
  act = [&](int v, GroupCreation::Action a) {
    Node &nd = nodes[static_cast<std::size_t>(v)];
    switch (a.kind) {
      case GroupCreation::Action::kCreate: {
        nd.creating = true;
        nd.over = a.members;
        auto key = std::make_pair(nd.g->attempt(), a.members);
        if (++callers[key] == static_cast<int>(a.members.size())) complete_next.push_back(key);
        if (v == victim && !known_before && nd.g->attempt() == 0) {
          nd.dead = true;
          learn_round = r.rounds + 2;
        }
        return;
      }
      case GroupCreation::Action::kAgree: {
        int att = nd.g->attempt();
        r.attempts = std::max(r.attempts, att + 1);
        nd.agreements[att] = std::make_unique<Agreement>(n, v, a.flag, known);
        collect(v, att);
        return;
      }
      case GroupCreation::Action::kDone: nd.done = true; return;
      case GroupCreation::Action::kFenced: r.ok = false; return;
    }
  };
  for (int v = 0; v < n; ++v) {
    Node &nd = nodes[static_cast<std::size_t>(v)];
    if (nd.dead) continue;
    nd.g = std::make_unique<GroupCreation>(n, v, known);
    act(v, nd.g->start());
  }
  for (;;) {
    bool any = !next.empty() || !complete_next.empty() || r.rounds < learn_round;
    if (!any) break;
    ++r.rounds;
    now.swap(next);
    next.clear();
    r.messages += static_cast<long>(now.size());
    std::vector<std::pair<int, RankSet>> completing;
    completing.swap(complete_next);
    for (auto &key : completing) {
      for (int m : key.second) {
        Node &nd = nodes[static_cast<std::size_t>(m)];
        if (nd.dead || !nd.creating || nd.over != key.second) continue;
        nd.creating = false;
        act(m, nd.g->on_created(true));
      }
    }
    if (r.rounds == learn_round) {
      known = {victim};
      for (int v = 0; v < n; ++v) {
        Node &nd = nodes[static_cast<std::size_t>(v)];
        if (nd.dead) continue;
        for (auto &[att, a] : nd.agreements) {
          a->on_failure(victim);
          collect(v, att);
        }
        if (nd.creating && cohort::repair::contains(nd.over, victim)) {
          nd.creating = false;
          act(v, nd.g->on_created(false));
        }
      }
    }
    for (Msg &m : now) {
      Node &nd = nodes[static_cast<std::size_t>(m.to)];
      if (nd.dead) continue;
      nd.agreements[m.attempt]->on_message(m.from, m.msg);
      collect(m.to, m.attempt);
    }
  }
  for (const Node &nd : nodes) r.ok = r.ok && (nd.dead || nd.done);
  return r;
}

}  // namespace

int main(int argc, char **argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 10000;
  struct Case {
    const char *name;
    int victim;
    bool before;
  } cases[] = {{"free", -1, false}, {"dead_before", n / 2, true}, {"dies_creating", n / 2, false}};
  for (const Case &c : cases) {
    auto t0 = std::chrono::steady_clock::now();
    Result r = run(n, c.victim, c.before);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!r.ok) {
      std::fprintf(stderr, "liveness_scale: %s at n=%d did not finish on every member\n", c.name, n);
      return 1;
    }
    std::printf("csv,liveness,%s,%d,%ld,%d,%d,%.0f\n", c.name, n, r.messages, r.rounds, r.attempts, ms);
  }
  return 0;
}
