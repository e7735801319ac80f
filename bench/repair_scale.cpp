// The agreement state machine (repair/agreement.hpp) at scale, without MPI: n members in one process over
// a synchronous network (every message sent in a round arrives in the next). Shows that the failure-free
// cost stays 2(n-1) messages and 2*ceil(log_r n) rounds, and what failures cost.
//
//   repair_scale [max_n]      (default 100000) -> rows `csv,scale,<case>,<n>,<radix>,<messages>,<rounds>,<ms>`
//
// Cases: `free`; `known16`: 16 random members dead and known to all beforehand; `root_dies`: the root
// decides, sends DECIDE to half of its children and dies; every survivor's detector learns it one round
// later.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "repair/agreement.hpp"

using cohort::repair::Agreement;
using cohort::repair::AgreeMsg;
using cohort::repair::Outgoing;
using cohort::repair::RankSet;

namespace {

struct Result {
  long messages = 0;
  int rounds = 0;
  bool ok = true;
};

Result run(int n, int radix, const RankSet &known, bool root_dies) {
  std::vector<std::unique_ptr<Agreement>> a(static_cast<std::size_t>(n));
  std::vector<bool> dead(static_cast<std::size_t>(n), false);
  for (int f : known) dead[static_cast<std::size_t>(f)] = true;
  std::vector<std::pair<int, Outgoing>> now, next;
  Result r;
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

}  // namespace

int main(int argc, char **argv) {
  long max_n = argc > 1 ? std::atol(argv[1]) : 100000;
  std::mt19937 rng(42);
  bool all_ok = true;
  for (int radix : {2, 32}) {
    for (long n = 1000; n <= max_n; n *= 10) {
      for (const char *c : {"free", "known16", "root_dies"}) {
        std::string name = c;
        RankSet known;
        if (name == "known16") {
          std::uniform_int_distribution<int> pick(1, static_cast<int>(n) - 1);
          while (known.size() < 16) {
            cohort::repair::merge_into(&known, {pick(rng)});
          }
        }
        auto t0 = std::chrono::steady_clock::now();
        Result r = run(static_cast<int>(n), radix, known, name == "root_dies");
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        all_ok = all_ok && r.ok;
        std::printf("csv,scale,%s,%ld,%d,%ld,%d,%.1f%s\n", c, n, radix, r.messages, r.rounds, ms,
                    r.ok ? "" : ",DISAGREEMENT");
        std::fflush(stdout);
      }
    }
  }
  return all_ok ? 0 : 1;
}
