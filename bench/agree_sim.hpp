// The agreement state machine (repair/agreement.hpp) over a synchronous simulated network, in one
// process: every message sent in a round arrives in the next. Shared by bench/repair_scale.cpp and
// bench/hierarchy_scale.cpp.
//
// simulate_agreement(n, radix, known, root_dies): n members, those in `known` dead and known dead to all
// beforehand; root_dies: the root decides, sends DECIDE to half of its children and dies, and every
// survivor's detector learns it one round later. Returns the messages delivered, the rounds until no
// message is left, and whether every survivor decided the same (flag, failed set).
#pragma once
#include <memory>
#include <utility>
#include <vector>

#include "repair/agreement.hpp"

namespace cohort::bench {

using repair::Agreement;
using repair::Outgoing;
using repair::RankSet;

struct AgreeResult {
  long messages = 0;
  int rounds = 0;
  bool ok = true;
};

inline AgreeResult simulate_agreement(int n, int radix, const RankSet &known, bool root_dies) {
  std::vector<std::unique_ptr<Agreement>> a(static_cast<std::size_t>(n));
  std::vector<bool> dead(static_cast<std::size_t>(n), false);
  for (int f : known) dead[static_cast<std::size_t>(f)] = true;
  std::vector<std::pair<int, Outgoing>> now, next;
  AgreeResult r;
  auto collect = [&](int i) {
    for (Outgoing &o : a[static_cast<std::size_t>(i)]->take_outbox()) next.emplace_back(i, std::move(o));
  };
  for (int i = 0; i < n; ++i) {
    if (dead[static_cast<std::size_t>(i)]) continue;
    a[static_cast<std::size_t>(i)] = std::make_unique<Agreement>(n, i, 1, known, radix);
    collect(i);
  }
  int root = 0;
  while (dead[static_cast<std::size_t>(root)]) ++root;
  bool killed = false;
  while (!next.empty()) {
    ++r.rounds;
    now.swap(next);
    next.clear();
    if (root_dies && !killed && a[static_cast<std::size_t>(root)]->decided()) {
      // The root's DECIDEs are in `now`: only the first half of them leave before it dies.
      long sent = 0, total = 0;
      for (auto &m : now) total += m.first == root ? 1 : 0;
      std::vector<std::pair<int, Outgoing>> kept;
      for (auto &m : now) {
        if (m.first != root || sent++ < total / 2) kept.push_back(std::move(m));
      }
      now.swap(kept);
      dead[static_cast<std::size_t>(root)] = true;
      killed = true;
      for (int i = 0; i < n; ++i) {
        if (dead[static_cast<std::size_t>(i)]) continue;
        a[static_cast<std::size_t>(i)]->on_failure(root);
        collect(i);
      }
    }
    r.messages += static_cast<long>(now.size());
    for (auto &m : now) {
      int to = m.second.to;
      if (dead[static_cast<std::size_t>(to)]) continue;
      a[static_cast<std::size_t>(to)]->on_message(m.first, m.second.msg);
      collect(to);
    }
  }
  int flag = -1;
  RankSet failed;
  for (int i = 0; i < n; ++i) {
    if (dead[static_cast<std::size_t>(i)]) continue;
    const Agreement &x = *a[static_cast<std::size_t>(i)];
    if (!x.decided()) r.ok = false;
    if (flag < 0) {
      flag = x.decided_flag();
      failed = x.decided_failed();
    } else if (x.decided_flag() != flag || x.decided_failed() != failed) {
      r.ok = false;
    }
  }
  return r;
}

}  // namespace cohort::bench
