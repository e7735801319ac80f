// The agreement state machine: its tree, its failure-free cost, and the simulation sweeps that crash
// ranks at every message step (see repair_sim.hpp for the properties checked after every run).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "repair/agreement.hpp"
#include "repair_sim.hpp"

namespace cohort::repair {
namespace {

RankSet random_set(std::mt19937 &rng, int n, int k) {
  RankSet s;
  for (int i = 0; i < n; ++i) s.push_back(i);
  std::shuffle(s.begin(), s.end(), rng);
  s.resize(static_cast<std::size_t>(k));
  std::sort(s.begin(), s.end());
  return s;
}

TEST(RepairLiveTree, SpansTheLiveMembersRootedAtTheLowestWithLogDepth) {
  std::mt19937 rng(7);
  for (int radix : {2, 3, 4, 32}) {
    for (int n = 1; n <= 140; n += n < 40 ? 1 : 13) {
      for (int k = 0; k < n; k += 1 + n / 8) {
        RankSet failed = random_set(rng, n, k);
        LiveTree t(n, &failed, radix);
        int m = n - k;
        ASSERT_EQ(t.live_count(), m);
        int lowest = 0;
        while (contains(failed, lowest)) ++lowest;
        EXPECT_EQ(t.root(), lowest);
        EXPECT_EQ(t.parent(lowest), -1);
        int edges = 0, depth_max = 0;
        for (int v = 0; v < n; ++v) {
          if (contains(failed, v)) {
            EXPECT_EQ(t.position(v), -1);
            continue;
          }
          EXPECT_EQ(t.member_at(t.position(v)), v);
          for (int c : t.children(v)) {
            ++edges;
            EXPECT_FALSE(contains(failed, c));
            EXPECT_EQ(t.parent(c), v) << "radix " << radix << " n=" << n << " child " << c;
          }
          int depth = 0;
          for (int u = v; t.parent(u) >= 0; u = t.parent(u)) ++depth;
          depth_max = std::max(depth_max, depth);
        }
        EXPECT_EQ(edges, m - 1) << "radix " << radix << " n=" << n;
        int bound = 0;
        for (long w = 1; w < m; w *= radix) ++bound;  // ceil(log_radix m)
        EXPECT_LE(depth_max, bound) << "radix " << radix << " n=" << n;
      }
    }
  }
}

TEST(RepairLiveTree, ChildrenComeLargestSubtreeFirst) {
  RankSet none;
  LiveTree t(8, &none, 2);
  EXPECT_EQ(t.children(0), (std::vector<int>{4, 2, 1}));
  EXPECT_EQ(t.children(4), (std::vector<int>{6, 5}));
  EXPECT_EQ(t.children(6), (std::vector<int>{7}));
  EXPECT_TRUE(t.children(7).empty());
  LiveTree star(8, &none);
  EXPECT_EQ(star.children(0), (std::vector<int>{1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(star.parent(5), 0);
  LiveTree k3(10, &none, 3);
  EXPECT_EQ(k3.children(0), (std::vector<int>{9, 3, 6, 1, 2}));
  EXPECT_EQ(k3.children(3), (std::vector<int>{4, 5}));
  EXPECT_EQ(k3.parent(8), 6);
}

TEST(RepairAgreement, FailureFreeCostsTwoMessagesPerEdgeAndDecidesTheAnd) {
  for (int radix : {2, 3, 32}) {
    for (int n = 1; n <= 70; ++n) {
      sim::Options o;
      o.n = n;
      o.radix = radix;
      o.seed = static_cast<std::uint64_t>(n);
      sim::Result r = sim::Sim(o).run();
      ASSERT_EQ(sim::check(o, r), "") << "n=" << n;
      EXPECT_EQ(r.messages, 2L * (n - 1)) << "n=" << n;
      EXPECT_TRUE(r.nodes[0].a->decided_failed().empty());
    }
  }
}

TEST(RepairAgreement, KnownFailuresAreLeftOutAndReported) {
  // Four members, member 2 known dead by everyone from the start: the other three decide without it.
  std::vector<Agreement> a;
  for (int i = 0; i < 4; ++i) a.emplace_back(4, i, i == 1 ? 0x6 : 0x7, RankSet{2});
  std::vector<std::pair<int, Outgoing>> net;
  auto pump = [&] {
    for (int i = 0; i < 4; ++i) {
      for (Outgoing &o : a[static_cast<std::size_t>(i)].take_outbox()) net.emplace_back(i, o);
    }
  };
  pump();
  while (!net.empty()) {
    auto [from, o] = net.front();
    net.erase(net.begin());
    ASSERT_NE(o.to, 2) << "a message was sent to the dead member";
    a[static_cast<std::size_t>(o.to)].on_message(from, o.msg);
    pump();
  }
  for (int i : {0, 1, 3}) {
    ASSERT_TRUE(a[static_cast<std::size_t>(i)].decided());
    EXPECT_EQ(a[static_cast<std::size_t>(i)].decided_flag(), 0x6);
    EXPECT_EQ(a[static_cast<std::size_t>(i)].decided_failed(), RankSet{2});
  }
}

TEST(RepairAgreement, AMemberThatFindsItselfDeclaredDeadFences) {
  Agreement a(4, 3, 1, {});
  a.on_message(1, AgreeMsg{AgreeMsg::kView, 0, RankSet{3}});
  EXPECT_TRUE(a.fenced());
  EXPECT_TRUE(a.take_outbox().empty());
  Agreement b(4, 3, 1, {});
  b.take_outbox();
  b.on_message(2, AgreeMsg{AgreeMsg::kDecide, 1, RankSet{1, 3}});
  EXPECT_TRUE(b.fenced());
}

TEST(RepairAgreement, ADecidedMemberAnswersLateContributionsWithItsDecision) {
  Agreement a(3, 1, 1, {});  // member 1, a leaf under root 0
  a.take_outbox();
  a.on_message(0, AgreeMsg{AgreeMsg::kDecide, 1, {}});
  ASSERT_TRUE(a.decided());
  a.take_outbox();
  // Member 2 saw root 0 die before its DECIDE came and now contributes to member 1, the new root.
  a.on_message(2, AgreeMsg{AgreeMsg::kContrib, 0, RankSet{0}});
  auto out = a.take_outbox();
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(out[0].to, 2);
  EXPECT_EQ(out[0].msg.type, AgreeMsg::kDecide);
  EXPECT_EQ(out[0].msg.flag, 1);
  EXPECT_TRUE(out[0].msg.failed.empty());
  EXPECT_EQ(a.take_learned(), RankSet{0});
}

TEST(RepairAgreement, ADecisionFromAMemberInTheViewIsRefused) {
  // The old root 0 decided and died; member 1 already moved to the round without 0 and must not take
  // 0's late DECIDE (a member of the new round may already have decided otherwise).
  Agreement a(3, 1, 1, {0});
  a.take_outbox();
  a.on_message(0, AgreeMsg{AgreeMsg::kDecide, 1, {}});
  EXPECT_FALSE(a.decided());
}

// Sweep: every rank crashes at every one of its steps, after sending each possible prefix of that
// step's messages; each crash point under several schedules, with and without per-pair FIFO order, for
// the binomial tree, a ternary one and the star.
TEST(RepairAgreementSim, OneCrashAtEveryMessageStep) {
  long runs = 0;
  for (int radix : {2, 3, 32}) {
    for (int n = 2; n <= 9; ++n) {
      sim::Options base;
      base.n = n;
      base.radix = radix;
      sim::Result free_run = sim::Sim(base).run();
      int steps = free_run.max_steps + 2, sends = free_run.max_outbox + 1;
      for (int node = 0; node < n; ++node) {
        for (int step = 0; step < steps; ++step) {
          for (int s = 0; s <= sends; ++s) {
            for (std::uint64_t seed = 1; seed <= 4; ++seed) {
              sim::Options o = base;
              o.seed = seed * 1000003 + static_cast<std::uint64_t>(radix * 100000 + n * 1000 + node * 100 + step * 10 + s);
              o.fifo = seed % 2 == 0;
              o.detect_weight = seed % 3 == 0 ? 1 : 8;
              o.crashes = {{node, step, s}};
              sim::Result r = sim::Sim(o).run();
              ASSERT_EQ(sim::check(o, r), "") << "radix " << radix << " n=" << n << " crash " << node << "@"
                                              << step << "+" << s << " seed " << o.seed;
              ++runs;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(runs, 10000);
}

// Sweep: two crashes at every pair of (rank, step) points for small n, the second possibly during the
// recovery from the first.
TEST(RepairAgreementSim, TwoCrashesAtEveryPairOfSteps) {
  long runs = 0;
  for (int radix : {2, 32}) {
    for (int n = 3; n <= 6; ++n) {
      for (int a = 0; a < n; ++a) {
        for (int b = 0; b < n; ++b) {
          if (a == b) continue;
          for (int sa = 0; sa < 4; ++sa) {
            for (int sb = 0; sb < 6; ++sb) {
              for (std::uint64_t seed = 1; seed <= 3; ++seed) {
                sim::Options o;
                o.n = n;
                o.radix = radix;
                o.seed = seed * 7919 + static_cast<std::uint64_t>(radix * 10000 + a * 1000 + b * 100 + sa * 10 + sb);
                o.fifo = seed == 2;
                o.crashes = {{a, sa, static_cast<int>(seed) - 1}, {b, sb, 1}};
                sim::Result r = sim::Sim(o).run();
                ASSERT_EQ(sim::check(o, r), "") << "radix " << radix << " n=" << n << " seed " << o.seed;
                ++runs;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(runs, 5000);
}

// Random: many seeds, up to n-1 crashes at random moments and false suspicions (fenced live ranks).
TEST(RepairAgreementSim, RandomCrashesAndFalseSuspicions) {
  const int radices[] = {2, 3, 32};
  for (std::uint64_t seed = 1; seed <= 20000; ++seed) {
    std::mt19937_64 rng(seed);
    sim::Options o;
    o.n = 2 + static_cast<int>(rng() % (seed % 10 == 0 ? 40 : 15));
    o.radix = radices[rng() % 3];
    o.seed = seed;
    o.fifo = rng() % 2 == 0;
    o.random_crashes = static_cast<int>(rng() % static_cast<std::uint64_t>(o.n));
    o.false_suspicions = rng() % 4 == 0 ? 1 + static_cast<int>(rng() % 2) : 0;
    o.detect_weight = 1 + static_cast<int>(rng() % 8);
    sim::Result r = sim::Sim(o).run();
    ASSERT_EQ(sim::check(o, r), "") << "seed " << seed << " n=" << o.n << " radix " << o.radix;
  }
}

}  // namespace
}  // namespace cohort::repair
