// The non-collective creation's state machine (repair/liveness.hpp) alone, then in the simulation of
// liveness_sim.hpp with members crashing at every step of their own (before, between and after their
// messages and their call to create), with members dead before the call, and at random.
#include <gtest/gtest.h>

#include "liveness_sim.hpp"
#include "repair/engine.hpp"
#include "repair/liveness.hpp"

namespace cohort::repair {
namespace {

using Kind = GroupCreation::Action::Kind;

TEST(RepairGroupCreation, NobodyKnownDeadCreatesOverTheWholeGroupThenConfirms) {
  GroupCreation g(4, 2, {});
  auto a = g.start();
  EXPECT_EQ(a.kind, Kind::kCreate);
  EXPECT_EQ(a.members, (RankSet{0, 1, 2, 3}));
  a = g.on_created(true);
  EXPECT_EQ(a.kind, Kind::kAgree);
  EXPECT_EQ(a.flag, 1);
  a = g.on_decided(1, {});
  EXPECT_EQ(a.kind, Kind::kDone);
  EXPECT_EQ(a.members, (RankSet{0, 1, 2, 3}));
  EXPECT_TRUE(g.done());
  EXPECT_EQ(g.attempt(), 0);
}

TEST(RepairGroupCreation, AKnownDeadMemberSkipsTheOptimisticAttempt) {
  GroupCreation g(4, 0, {3});
  auto a = g.start();
  EXPECT_EQ(a.kind, Kind::kAgree);
  EXPECT_EQ(a.flag, 0);
  a = g.on_decided(0, {3});
  EXPECT_EQ(a.kind, Kind::kCreate);
  EXPECT_EQ(a.members, (RankSet{0, 1, 2}));
  EXPECT_EQ(g.attempt(), 1);
  g.on_created(true);
  a = g.on_decided(1, {3});
  EXPECT_EQ(a.kind, Kind::kDone);
  EXPECT_EQ(a.members, (RankSet{0, 1, 2}));
}

TEST(RepairGroupCreation, AMemberDyingAfterMakingItForcesARetryWithoutIt) {
  GroupCreation g(3, 1, {});
  g.start();
  g.on_created(true);
  auto a = g.on_decided(1, {2});  // everyone made it, but member 2 died meanwhile
  EXPECT_EQ(a.kind, Kind::kCreate);
  EXPECT_EQ(a.members, (RankSet{0, 1}));
}

TEST(RepairGroupCreation, FindingItselfInTheFailedSetFences) {
  GroupCreation g(3, 1, {});
  g.start();
  g.on_created(false);
  EXPECT_EQ(g.on_decided(0, {1}).kind, Kind::kFenced);
}

std::string run_case(lsim::Options o) {
  lsim::Sim sim(o);
  lsim::Result r = sim.run();
  return lsim::check(o, r);
}

TEST(RepairGroupCreationSim, FailureFreeAndDeadBeforeTheCall) {
  for (int n = 1; n <= 9; ++n) {
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
      lsim::Options o;
      o.n = n;
      o.seed = seed;
      o.radix = seed % 2 ? 2 : kDefaultRadix;
      ASSERT_EQ(run_case(o), "") << "n=" << n << " seed " << seed;
      if (n < 2) continue;
      o.dead_before = {static_cast<int>(seed % static_cast<std::uint64_t>(n))};
      if (o.dead_before[0] == 0) o.dead_before = {0, n - 1};
      ASSERT_EQ(run_case(o), "") << "n=" << n << " seed " << seed << " dead before";
    }
  }
}

TEST(RepairGroupCreationSim, OneCrashAtEveryStep) {
  long runs = 0;
  for (int n : {2, 3, 5, 8}) {
    for (int radix : {2, kDefaultRadix}) {
      for (int victim = 0; victim < n; ++victim) {
        for (int step = 0; step < 24; ++step) {
          for (int sends = 0; sends <= 3; ++sends) {
            for (std::uint64_t seed = 1; seed <= 3; ++seed) {
              lsim::Options o;
              o.n = n;
              o.radix = radix;
              o.seed = seed * 977 + static_cast<std::uint64_t>(step);
              o.crashes = {{victim, step, sends}};
              ++runs;
              ASSERT_EQ(run_case(o), "") << "n=" << n << " radix " << radix << " victim " << victim << " step "
                                         << step << " sends " << sends << " seed " << o.seed;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(runs, 5000);
}

TEST(RepairGroupCreationSim, ADeadMemberBeforeAndAnotherCrashingAtEveryStep) {
  for (int n : {3, 5}) {
    for (int victim = 1; victim < n; ++victim) {
      for (int step = 0; step < 20; ++step) {
        for (int sends = 0; sends <= 2; ++sends) {
          lsim::Options o;
          o.n = n;
          o.radix = 2;
          o.seed = static_cast<std::uint64_t>(step * 31 + sends);
          o.dead_before = {0};
          o.crashes = {{victim, step, sends}};
          ASSERT_EQ(run_case(o), "") << "n=" << n << " victim " << victim << " step " << step << " sends " << sends;
        }
      }
    }
  }
}

TEST(RepairGroupCreationSim, TwoCrashesAtPairsOfSteps) {
  for (int a = 0; a < 10; ++a) {
    for (int b = 0; b < 10; ++b) {
      lsim::Options o;
      o.n = 5;
      o.radix = 2;
      o.seed = static_cast<std::uint64_t>(a * 10 + b + 1);
      o.crashes = {{1, a, 1}, {3, b, 0}};
      ASSERT_EQ(run_case(o), "") << "steps " << a << "," << b;
    }
  }
}

TEST(RepairGroupCreationSim, RandomCrashes) {
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    lsim::Options o;
    o.n = 2 + static_cast<int>(seed % 9);
    o.seed = seed;
    o.radix = seed % 3 == 0 ? 2 : kDefaultRadix;
    o.random_crashes = 1 + static_cast<int>(seed % 3);
    if (o.random_crashes >= o.n) o.random_crashes = o.n - 1;
    ASSERT_EQ(run_case(o), "") << "seed " << seed;
  }
}


// The engine carries a group's agreement like a communicator's: registered (on the members only) under an
// id of its own, its messages go to the group's members and never to a rank outside the group, even
// when a member dies during it and when outsiders run agreements of their own at the same time.
TEST(RepairGroupEngine, AGroupAgreementOnlyMessagesTheGroupsMembers) {
  const int world = 8;
  const std::vector<int> group{6, 1, 3, 4};  // world ranks, in group order
  const std::vector<int> outsiders{0, 2, 5, 7};
  const std::uint64_t gid = 0x67726f7570, oid = 0x6f757473;
  std::vector<std::unique_ptr<Engine>> e;
  for (int r = 0; r < world; ++r) e.push_back(std::make_unique<Engine>(r, 2));
  for (int r : group) e[r]->add_comm(gid, group);
  for (int r : outsiders) e[r]->add_comm(oid, outsiders);
  std::map<int, std::uint64_t> inst;
  for (int r : group) {
    if (r != 3) inst[r] = e[r]->start_agree(gid, r == 1 ? 0x6 : 0x7);
  }
  for (int r : outsiders) inst[r] = e[r]->start_agree(oid, 1);
  // Member 3 (world) never calls: it died before; its death reaches the members after a few rounds.
  for (int round = 0; round < 50; ++round) {
    if (round == 3) {
      for (int r : group) e[r]->on_failure(3);
    }
    for (int from = 0; from < world; ++from) {
      if (from == 3) continue;
      for (Engine::Send &s : e[from]->take_sends()) {
        bool from_group = std::find(group.begin(), group.end(), from) != group.end();
        bool to_group = std::find(group.begin(), group.end(), s.to) != group.end();
        ASSERT_EQ(from_group, to_group) << "world rank " << from << " sent to " << s.to;
        if (s.to != 3) e[s.to]->on_receive(from, s.bytes.data(), s.bytes.size());
      }
    }
  }
  for (int r : group) {
    if (r == 3) continue;
    int flag = -1;
    RankSet failed;
    ASSERT_TRUE(e[r]->decision(gid, inst[r], &flag, &failed)) << "member " << r;
    EXPECT_EQ(flag, 0x6);
    EXPECT_EQ(failed, RankSet{2});  // group rank of world rank 3
  }
  for (int r : outsiders) {
    int flag = -1;
    RankSet failed;
    ASSERT_TRUE(e[r]->decision(oid, inst[r], &flag, &failed));
    EXPECT_EQ(flag, 1);
    EXPECT_TRUE(failed.empty());
  }
}

}  // namespace
}  // namespace cohort::repair
