// The engine: wire format, routing by (communicator id, instance), early messages, retained decisions,
// revocation notices, failures learned from messages. Several engines share one fake network.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>

#include "repair/engine.hpp"

namespace cohort::repair {
namespace {

TEST(RepairWire, RoundTripsAgreementAndRevokeMessages) {
  Wire w;
  w.kind = Wire::kAgree;
  w.comm = 0x1234567890abcdefULL;
  w.instance = 42;
  w.msg = AgreeMsg{AgreeMsg::kDecide, -7, RankSet{1, 5, 9}};
  std::vector<char> b = encode(w);
  EXPECT_EQ(b.size(), max_wire_size(3));
  Wire back;
  ASSERT_TRUE(decode(b.data(), b.size(), &back));
  EXPECT_EQ(back.kind, Wire::kAgree);
  EXPECT_EQ(back.comm, w.comm);
  EXPECT_EQ(back.instance, 42u);
  EXPECT_EQ(back.msg.type, AgreeMsg::kDecide);
  EXPECT_EQ(back.msg.flag, -7);
  EXPECT_EQ(back.msg.failed, (RankSet{1, 5, 9}));

  Wire r;
  r.kind = Wire::kRevoke;
  r.comm = 99;
  r.origin = 3;
  b = encode(r);
  ASSERT_TRUE(decode(b.data(), b.size(), &back));
  EXPECT_EQ(back.kind, Wire::kRevoke);
  EXPECT_EQ(back.comm, 99u);
  EXPECT_EQ(back.origin, 3);
}

TEST(RepairWire, RejectsMalformedMessages) {
  Wire w;
  w.msg = AgreeMsg{AgreeMsg::kContrib, 1, RankSet{2, 4}};
  std::vector<char> b = encode(w);
  Wire out;
  EXPECT_FALSE(decode(b.data(), 10, &out));             // short
  EXPECT_FALSE(decode(b.data(), b.size() - 4, &out));   // count disagrees with length
  std::vector<char> bad = b;
  bad[0] = 9;                                           // unknown kind
  EXPECT_FALSE(decode(bad.data(), bad.size(), &out));
  bad = b;
  std::swap(bad[28], bad[32]);                          // members not sorted
  EXPECT_FALSE(decode(bad.data(), bad.size(), &out));
}

// A member number beyond the communicator (decode cannot know its size) is dropped, not merged into a
// view whose members index the member table (fuzz/repair_wire).
TEST(RepairWire, EngineDropsMembersBeyondTheCommunicator) {
  Engine e(0, 2);
  e.add_comm(7, {0, 1, 2, 3});
  std::uint64_t inst = e.start_agree(7, 1);
  e.take_sends();
  Wire w;
  w.kind = Wire::kAgree;
  w.comm = 7;
  w.instance = inst;
  w.msg = AgreeMsg{AgreeMsg::kView, 0, RankSet{2, 4000}};
  std::vector<char> b = encode(w);
  e.on_receive(1, b.data(), b.size());
  EXPECT_TRUE(e.take_learned().empty());
  EXPECT_FALSE(e.is_failed(2));
  w.msg.failed = RankSet{2};
  b = encode(w);
  e.on_receive(1, b.data(), b.size());
  EXPECT_EQ(e.take_learned(), std::vector<int>{2});
}

// k engines (world ranks 0..k-1) over a network that delivers in a seeded random order.
class Net {
 public:
  Net(int k, std::uint64_t seed) : rng_(seed) {
    for (int i = 0; i < k; ++i) engines_.push_back(std::make_unique<Engine>(i));
    dead_.assign(static_cast<std::size_t>(k), false);
  }
  Engine &operator[](int i) { return *engines_[static_cast<std::size_t>(i)]; }
  void kill(int v) { dead_[static_cast<std::size_t>(v)] = true; }
  /// Tells every live engine that v died.
  void notify(int v) {
    for (int i = 0; i < static_cast<int>(engines_.size()); ++i) {
      if (!dead_[static_cast<std::size_t>(i)]) engines_[static_cast<std::size_t>(i)]->on_failure(v);
    }
  }
  /// Collects what every live engine sends; delivers everything, in random order, until quiet.
  /// `hold(to)`: messages to that engine stay queued.
  template <typename Hold>
  void run(Hold hold) {
    for (;;) {
      gather();
      std::vector<std::size_t> ready;
      for (std::size_t i = 0; i < q_.size(); ++i) {
        if (!hold(q_[i].to)) ready.push_back(i);
      }
      if (ready.empty()) return;
      std::size_t i = ready[rng_() % ready.size()];
      Msg m = std::move(q_[i]);
      q_.erase(q_.begin() + static_cast<long>(i));
      if (!dead_[static_cast<std::size_t>(m.to)]) {
        engines_[static_cast<std::size_t>(m.to)]->on_receive(m.from, m.bytes.data(), m.bytes.size());
      }
    }
  }
  void run() {
    run([](int) { return false; });
  }
  /// Delivers one random pending message; false when none is pending.
  bool step() {
    gather();
    if (q_.empty()) return false;
    std::size_t i = rng_() % q_.size();
    Msg m = std::move(q_[i]);
    q_.erase(q_.begin() + static_cast<long>(i));
    if (!dead_[static_cast<std::size_t>(m.to)]) {
      engines_[static_cast<std::size_t>(m.to)]->on_receive(m.from, m.bytes.data(), m.bytes.size());
    }
    return true;
  }
  bool dead(int v) const { return dead_[static_cast<std::size_t>(v)]; }
  std::size_t sent() const { return sent_; }

 private:
  struct Msg {
    int from, to;
    std::vector<char> bytes;
  };
  void gather() {
    for (int i = 0; i < static_cast<int>(engines_.size()); ++i) {
      for (Engine::Send &s : engines_[static_cast<std::size_t>(i)]->take_sends()) {
        if (dead_[static_cast<std::size_t>(i)]) continue;
        ++sent_;
        q_.push_back(Msg{i, s.to, std::move(s.bytes)});
      }
    }
  }
  std::mt19937_64 rng_;
  std::vector<std::unique_ptr<Engine>> engines_;
  std::vector<bool> dead_;
  std::vector<Msg> q_;
  std::size_t sent_ = 0;
};

TEST(RepairEngine, RunsInstancesInSequenceOnTwoCommunicators) {
  Net net(5, 1);
  // comm 10: world ranks 0..4; comm 20: world ranks 4, 1, 3 (members 0, 1, 2).
  for (int i = 0; i < 5; ++i) net[i].add_comm(10, {0, 1, 2, 3, 4});
  for (int i : {4, 1, 3}) net[i].add_comm(20, {4, 1, 3});
  EXPECT_EQ(net[4].member_rank(20), 0);
  EXPECT_EQ(net[3].member_rank(20), 2);
  EXPECT_EQ(net[0].member_rank(20), -1);
  for (int round = 1; round <= 3; ++round) {
    for (int i = 0; i < 5; ++i) EXPECT_EQ(net[i].start_agree(10, i == round ? 0x2 : 0x3), std::uint64_t(round));
    for (int i : {4, 1, 3}) net[i].start_agree(20, i == 1 ? 0x1 : 0x5);
    net.run();
    for (int i = 0; i < 5; ++i) {
      int flag = -1;
      RankSet failed{99};
      ASSERT_TRUE(net[i].decision(10, std::uint64_t(round), &flag, &failed));
      EXPECT_EQ(flag, 0x2);
      EXPECT_TRUE(failed.empty());
    }
    for (int i : {4, 1, 3}) {
      int flag = -1;
      RankSet failed;
      ASSERT_TRUE(net[i].decision(20, std::uint64_t(round), &flag, &failed));
      EXPECT_EQ(flag, 0x1);
    }
  }
}

TEST(RepairEngine, KeepsMessagesForInstancesAndCommunicatorsNotReachedYet) {
  Net net(4, 2);
  for (int i = 0; i < 3; ++i) net[i].add_comm(7, {0, 1, 2, 3});
  for (int i = 0; i < 3; ++i) net[i].start_agree(7, 1);
  net.run();  // rank 3 has not even added comm 7: everything waits for it
  int flag;
  RankSet failed;
  EXPECT_FALSE(net[0].decision(7, 1, &flag, &failed));
  net[3].add_comm(7, {0, 1, 2, 3});
  net.run();
  EXPECT_FALSE(net[0].decision(7, 1, &flag, &failed));
  net[3].start_agree(7, 0);
  net.run();
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(net[i].decision(7, 1, &flag, &failed));
    EXPECT_EQ(flag, 0);
  }
}

TEST(RepairEngine, AgreesOnTheFailedSetAndReportsFailuresLearnedFromMessages) {
  Net net(6, 3);
  for (int i = 0; i < 6; ++i) net[i].add_comm(1, {0, 1, 2, 3, 4, 5});
  net.kill(2);
  net.kill(5);
  net[0].on_failure(2);  // only rank 0's detector knows 2 is dead; nobody knows about 5 yet
  for (int i : {0, 1, 3, 4}) net[i].start_agree(1, 1);
  net.run();
  int flag;
  RankSet failed;
  EXPECT_FALSE(net[1].decision(1, 1, &flag, &failed));  // waiting on 5
  net.notify(5);
  net.run();
  for (int i : {0, 1, 3, 4}) {
    ASSERT_TRUE(net[i].decision(1, 1, &flag, &failed)) << i;
    EXPECT_EQ(failed, (RankSet{2, 5}));
    EXPECT_TRUE(net[i].is_failed(2));
  }
  std::vector<int> learned = net[3].take_learned();
  EXPECT_NE(std::find(learned.begin(), learned.end(), 2), learned.end()) << "3 learned 2 only from a message";
}

TEST(RepairEngine, ADecidedRankKeepsAnsweringAfterTheRootDies) {
  Net net(4, 4);
  for (int i = 0; i < 4; ++i) net[i].add_comm(5, {0, 1, 2, 3});
  for (int i = 0; i < 4; ++i) net[i].start_agree(5, 1);
  // Deliver until ranks 1 and 2 decided but rank 3's DECIDE (from 2) is held back.
  net.run([](int to) { return to == 3; });
  net.kill(0);
  net.kill(2);  // 2 dies before passing the decision on to 3
  net.notify(0);
  net.notify(2);
  net.run();
  int f1, f3;
  RankSet s1, s3;
  ASSERT_TRUE(net[1].decision(5, 1, &f1, &s1));
  ASSERT_TRUE(net[3].decision(5, 1, &f3, &s3));
  EXPECT_EQ(f1, f3);
  EXPECT_EQ(s1, s3);
}

// MPI_Finalize's survivors barrier: ranks 0 and 1 completed it and left; ranks 2 and 3 saw rank 4 die
// in it and agree on its retry. The departed ranks never answer: once each survivor's detector reports
// them, the agreement leaves them out and reports them in the failed set (the retry runs without them),
// and never names them as learned failures (which the detector would declare).
TEST(RepairEngine, AnAgreementLeavesOutRanksThatLeft) {
  Net net(5, 5);
  for (int i = 0; i < 5; ++i) net[i].add_comm(3, {0, 1, 2, 3, 4});
  net.kill(0);
  net.kill(1);
  net.kill(4);
  for (int i : {2, 3}) net[i].on_failure(4);
  for (int i : {2, 3}) net[i].start_agree(3, 0);
  net.run();
  int flag;
  RankSet failed;
  EXPECT_FALSE(net[2].decision(3, 1, &flag, &failed)) << "nobody knows that ranks 0 and 1 left";
  for (int w : {0, 1})
    for (int i : {2, 3}) net[i].on_left(w);
  net.run();
  for (int i : {2, 3}) {
    ASSERT_TRUE(net[i].decision(3, 1, &flag, &failed)) << i;
    EXPECT_EQ(flag, 0);
    EXPECT_EQ(failed, (RankSet{0, 1, 4}));
    EXPECT_TRUE(net[i].is_failed(1));
    EXPECT_TRUE(net[i].take_learned().empty()) << i;
  }
}

TEST(RepairEngine, RevocationReachesEveryMemberEvenIfTheRevokerDies) {
  Net net(5, 5);
  for (int i = 0; i < 5; ++i) net[i].add_comm(3, {0, 1, 2, 3, 4});
  net[0].revoke(3);
  EXPECT_TRUE(net[0].revoked(3));
  // Only rank 1 gets the notice before 0 dies.
  net.run([](int to) { return to != 1; });
  net.kill(0);
  EXPECT_TRUE(net[1].revoked(3));
  EXPECT_FALSE(net[2].revoked(3));
  net.notify(0);
  net.run();
  for (int i = 1; i < 5; ++i) EXPECT_TRUE(net[i].revoked(3)) << i;
}

TEST(RepairEngine, RetainsOnlyTheLastDecisions) {
  Net net(2, 6);
  for (int i = 0; i < 2; ++i) net[i].add_comm(4, {0, 1});
  for (int round = 0; round < 10; ++round) {
    for (int i = 0; i < 2; ++i) net[i].start_agree(4, 1);
    net.run();
  }
  int flag;
  RankSet failed;
  EXPECT_TRUE(net[0].decision(4, 10, &flag, &failed));
  EXPECT_TRUE(net[0].decision(4, 10 - Engine::kKeepDecided + 1, &flag, &failed));
  EXPECT_FALSE(net[0].decision(4, 10 - Engine::kKeepDecided - 1, &flag, &failed));
}

// Random runs of consecutive agreements on one communicator, each rank starting the next instance once
// it decided the previous one (as a program does), with ranks crashing at random moments: every survivor
// decides every instance, and all survivors decide the same for each.
TEST(RepairEngine, ConsecutiveAgreementsStayUniformUnderRandomCrashes) {
  for (std::uint64_t seed = 1; seed <= 2000; ++seed) {
    std::mt19937_64 rng(seed);
    int n = 3 + static_cast<int>(rng() % 7);
    const int kInstances = 4;
    Net net(n, seed);
    std::vector<int> world(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) world[static_cast<std::size_t>(i)] = i;
    for (int i = 0; i < n; ++i) net[i].add_comm(9, world);
    std::vector<int> started(static_cast<std::size_t>(n), 0);
    int crashes = static_cast<int>(rng() % static_cast<std::uint64_t>(n - 1));
    std::vector<int> pending_notice;
    for (long steps = 0; steps < 200000; ++steps) {
      for (int i = 0; i < n; ++i) {
        int &k = started[static_cast<std::size_t>(i)];
        int flag;
        RankSet failed;
        if (net.dead(i) || k == kInstances || rng() % 3 != 0) continue;  // ranks reach their calls late
        if (k == 0 || net[i].decision(9, static_cast<std::uint64_t>(k), &flag, &failed)) {
          net[i].start_agree(9, static_cast<int>(rng() % 4) | 4);
          ++k;
        }
      }
      if (crashes > 0 && rng() % 16 == 0) {
        int v = static_cast<int>(rng() % static_cast<std::uint64_t>(n));
        if (!net.dead(v)) {
          net.kill(v);
          pending_notice.push_back(v);
          --crashes;
        }
      }
      if (!pending_notice.empty() && rng() % 8 == 0) {
        net.notify(pending_notice.back());
        pending_notice.pop_back();
      }
      if (!net.step() && pending_notice.empty()) {
        bool all_done = true;
        for (int i = 0; i < n; ++i) {
          int flag;
          RankSet failed;
          all_done = all_done && (net.dead(i) || (started[static_cast<std::size_t>(i)] == kInstances &&
                                                  net[i].decision(9, kInstances, &flag, &failed)));
        }
        if (all_done) break;
      }
    }
    for (int k = 1; k <= kInstances; ++k) {
      int ref = -1, rflag = 0;
      RankSet rfailed;
      for (int i = 0; i < n; ++i) {
        if (net.dead(i)) continue;
        int flag;
        RankSet failed;
        ASSERT_TRUE(net[i].decision(9, static_cast<std::uint64_t>(k), &flag, &failed))
            << "seed " << seed << ": rank " << i << " did not decide instance " << k;
        if (ref < 0) {
          ref = i;
          rflag = flag;
          rfailed = failed;
        }
        EXPECT_EQ(flag, rflag) << "seed " << seed << " instance " << k;
        EXPECT_EQ(failed, rfailed) << "seed " << seed << " instance " << k;
        for (int f : failed) EXPECT_TRUE(net.dead(f)) << "seed " << seed << ": live rank " << f << " in the set";
      }
    }
  }
}

}  // namespace
}  // namespace cohort::repair
