// MPI_Wtime under replication (replica/wtime.hpp over the decision protocol of replica/protocol.hpp):
// every replica of a logical rank reads the leader's time, whose clock differs from its twins'; a twin
// that takes over goes on from the dead leader's clock and never backwards. The leader is killed after
// deciding (its program used the time; the commit reached some twins or none), and at every step of
// runs of several reads, at r = 2 and 3.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "replica/protocol.hpp"
#include "replica/wtime.hpp"

namespace cohort::replica {
namespace {

TEST(ReplicaWtime, OutcomeKeepsEveryBit) {
  for (double s : {0.0, -0.0, 1.5, 1e-9, 1.7e9 + 0.123456789, -3.25, std::numeric_limits<double>::max()}) {
    const double back = wtime_seconds(wtime_outcome(s));
    EXPECT_EQ(std::signbit(back), std::signbit(s));
    EXPECT_EQ(back, s);
  }
}

TEST(ReplicaWtime, CandidateIsOwnClockMovedByTheLearnedOffsetNeverBackwards) {
  WtimeClock c;
  EXPECT_EQ(c.candidate(10.0), 10.0);  // nothing learned yet: the own clock
  EXPECT_EQ(c.use(1010.0, 10.5), 10.5);  // this twin's clock is 999.5 s ahead of the leader's
  EXPECT_DOUBLE_EQ(c.offset(), -999.5);
  EXPECT_DOUBLE_EQ(c.candidate(1011.0), 11.5);
  EXPECT_DOUBLE_EQ(c.candidate(1009.0), 10.5);  // below the last time read: raised to it
  EXPECT_DOUBLE_EQ(c.undecided(1012.0), 12.5);
  EXPECT_DOUBLE_EQ(c.last(), 10.5);  // an undecided read is not recorded
}

// One logical rank of r replicas and their programs, each reading `reads` times in a row, over a fake
// network that delivers in order of sending. Replica k's clock reads true time + 1000 k.
struct Job {
  struct Program {
    WtimeClock clock;
    std::uint64_t event = 0;  // the read it is at
    bool reached = false;     // it called decide() for `event`
    double own = 0.0;         // its clock then
    std::vector<double> read; // the times it used
  };
  Placement p;
  std::vector<Endpoint> eps;
  std::vector<Program> progs;
  std::vector<Wire> flight;
  std::vector<char> dead;
  double now = 0.0;
  int reads;
  explicit Job(int r, int n_reads) : p(1, r), reads(n_reads) {
    for (int k = 0; k < r; ++k) eps.emplace_back(&p, k);
    progs.resize(static_cast<std::size_t>(r));
    dead.assign(static_cast<std::size_t>(r), 0);
  }
  double clock(int k) const { return now + 1000.0 * k; }
  bool finished(int k) const { return progs[static_cast<std::size_t>(k)].event == static_cast<std::uint64_t>(reads); }
  // One step of replica k's program: reach the next read, or use its committed time. False if blocked.
  bool step(int k) {
    Program &g = progs[static_cast<std::size_t>(k)];
    Endpoint &e = eps[static_cast<std::size_t>(k)];
    if (dead[static_cast<std::size_t>(k)] || finished(k)) return false;
    if (!g.reached) {
      g.own = clock(k);
      e.decide(g.event, wtime_outcome(g.clock.candidate(g.own)), &flight);
      g.reached = true;
      return true;
    }
    std::int64_t o = 0;
    if (!e.decided(g.event, &o)) return false;
    g.read.push_back(g.clock.use(g.own, wtime_seconds(o)));
    e.consumed(g.event);
    ++g.event;
    g.reached = false;
    return true;
  }
  // Delivers the oldest message in flight. False if none.
  bool deliver() {
    if (flight.empty()) return false;
    Wire w = flight.front();
    flight.erase(flight.begin());
    if (!dead[static_cast<std::size_t>(w.to)] && !dead[static_cast<std::size_t>(w.from)])
      eps[static_cast<std::size_t>(w.to)].receive(w, &flight);
    return true;
  }
  void kill(int w) {
    dead[static_cast<std::size_t>(w)] = 1;
    for (std::size_t k = 0; k < eps.size(); ++k)
      if (!dead[k]) eps[k].replica_died(static_cast<int>(w), &flight);
  }
  // Random steps (seeded) until every live program finished; `kill_at` maps a step number to a replica
  // to kill before it. Returns false if the job got stuck.
  bool run(unsigned seed, const std::vector<std::pair<int, int>> &kill_at) {
    std::mt19937 rng(seed);
    const int r = static_cast<int>(eps.size());
    for (int s = 0; s < 100000; ++s) {
      for (auto [at, who] : kill_at)
        if (at == s && !dead[static_cast<std::size_t>(who)]) kill(who);
      now += 0.001;
      bool all = true;
      for (int k = 0; k < r; ++k) all &= dead[static_cast<std::size_t>(k)] || finished(k);
      if (all && flight.empty()) return true;
      const int pick = static_cast<int>(rng() % static_cast<unsigned>(r + 1));
      if (pick == r ? deliver() : step(pick)) continue;
      bool moved = deliver();
      for (int k = 0; k < r && !moved; ++k) moved = step(k);
      if (!moved) {
        bool any = false;  // nothing can move: blocked for good unless the kills are still to come
        for (auto [at, who] : kill_at) any |= at > s;
        if (!any) return false;
      }
    }
    return false;
  }
  // Every replica (dead or alive) read the same time at each read it made; each one's times never go
  // back; after the first read no time comes from another replica's clock (replica k's is 1000 k s ahead).
  std::string check() const {
    for (std::size_t k = 0; k < progs.size(); ++k) {
      const auto &a = progs[k].read;
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (i > 0 && a[i] < a[i - 1]) return "replica " + std::to_string(k) + " read a time going back at read " + std::to_string(i);
        // (clocks are 1000 s apart, runs last well under 100 s)
        if (a[i] - a[0] > 100.0)
          return "replica " + std::to_string(k) + " read " + std::to_string(a[i]) + " after " + std::to_string(a[0]) +
                 ": another replica's clock";
        for (std::size_t j = 0; j < progs.size(); ++j)
          if (i < progs[j].read.size() && progs[j].read[i] != a[i])
            return "replicas " + std::to_string(k) + " and " + std::to_string(j) + " read different times at read " + std::to_string(i);
      }
    }
    for (std::size_t k = 0; k < progs.size(); ++k)
      if (!dead[k] && progs[k].read.size() != static_cast<std::size_t>(reads)) return "a live replica did not finish";
    return "";
  }
};

TEST(ReplicaWtime, TwinsReadTheLeadersTimeNotTheirOwnClock) {
  for (int r = 1; r <= 3; ++r) {
    Job j(r, 20);
    ASSERT_TRUE(j.run(7u + static_cast<unsigned>(r), {}));
    EXPECT_EQ(j.check(), "") << "r=" << r;
    for (int k = 0; k < r; ++k) EXPECT_LT(j.progs[static_cast<std::size_t>(k)].read.back(), 1000.0);
  }
}

// The leader decided a time and its program used it (the commit went out), then it died before its
// commit reached the twin: the twin, which stored the proposal, re-proposes the very time the dead
// leader's program used.
TEST(ReplicaWtime, LeaderDyingAfterItsProgramUsedTheTimeKeepsThatTime) {
  Job j(2, 1);
  j.now = 5.0;
  ASSERT_TRUE(j.step(0));  // leader proposes 5.0
  ASSERT_TRUE(j.deliver());  // the twin stores it and acknowledges
  ASSERT_TRUE(j.deliver());  // the leader commits; its commit to the twin is in flight
  ASSERT_TRUE(j.step(0));    // the leader's program uses 5.0
  EXPECT_EQ(j.progs[0].read.at(0), 5.0);
  j.flight.clear();  // lost with the leader
  j.kill(0);
  j.now = 9.0;
  ASSERT_TRUE(j.step(1));  // the twin reaches the read at its own clock 1009: leads and re-proposes 5.0
  ASSERT_TRUE(j.step(1));
  EXPECT_EQ(j.progs[1].read.at(0), 5.0);
  EXPECT_EQ(j.eps[1].counters().conflicts, 0u);
}

// The leader's proposal never reached the twin: the twin decides afresh, from its own clock moved onto
// the dead leader's by the offset it learned at the earlier reads, not from its own clock 1000 s ahead.
TEST(ReplicaWtime, LeaderDyingBeforeAnyTwinStoredItGoesOnFromTheLeadersClock) {
  Job j(2, 3);
  j.now = 1.0;
  for (int i = 0; i < 2; ++i) {  // two reads in step
    ASSERT_TRUE(j.step(1));
    ASSERT_TRUE(j.step(0));
    while (j.deliver()) {
    }
    ASSERT_TRUE(j.step(0));
    ASSERT_TRUE(j.step(1));
    j.now += 1.0;
  }
  EXPECT_EQ(j.progs[1].read, (std::vector<double>{1.0, 2.0}));
  ASSERT_TRUE(j.step(0));  // the leader proposes 3.0 and dies before it arrives
  j.flight.clear();
  j.kill(0);
  j.now = 3.5;
  ASSERT_TRUE(j.step(1));
  ASSERT_TRUE(j.step(1));
  EXPECT_DOUBLE_EQ(j.progs[1].read.at(2), 3.5);
}

// The twin reached read 0 a second after the leader: its offset is -1001, so after the takeover its time
// runs a second behind the dead leader's (2.5 at true time 3.5), after the last time read (2.0). One whose
// clock, moved, is behind the last time read holds that time: it never goes back.
TEST(ReplicaWtime, NewLeaderGoesOnFromTheLastTimeReadNeverBelowIt) {
  Job j(2, 2);
  j.now = 2.0;
  ASSERT_TRUE(j.step(0));
  while (j.deliver()) {
  }
  ASSERT_TRUE(j.step(0));
  j.now = 3.0;
  ASSERT_TRUE(j.step(1));
  ASSERT_TRUE(j.step(1));
  j.kill(0);
  j.now = 3.5;
  ASSERT_TRUE(j.step(1));
  ASSERT_TRUE(j.step(1));
  EXPECT_DOUBLE_EQ(j.progs[1].read.at(1), 2.5);
  WtimeClock c;
  c.use(100.0, 50.0);
  EXPECT_EQ(c.candidate(90.0), 50.0);
}

// The leader (and at r = 3 then its successor) killed before each step of a run of 6 reads per replica
// under random schedules: every replica reads the same times, in order, on the clock of its first read.
TEST(ReplicaWtime, LeaderKilledAtEveryStep) {
  int runs = 0;
  for (int r = 2; r <= 3; ++r)
    for (unsigned seed = 1; seed <= 5; ++seed)
      for (int at = 0; at < 80; ++at) {
        std::vector<std::pair<int, int>> kills{{at, 0}};
        if (r == 3) kills.push_back({at + 1 + static_cast<int>(seed) * 7, 1});
        Job j(r, 6);
        ASSERT_TRUE(j.run(seed * 31u + static_cast<unsigned>(at), kills)) << "r=" << r << " seed " << seed << " kill at " << at;
        ASSERT_EQ(j.check(), "") << "r=" << r << " seed " << seed << " kill at " << at;
        ++runs;
      }
  EXPECT_EQ(runs, 800);
}

// Any one replica killed at every step, r = 2 and 3.
TEST(ReplicaWtime, AnyReplicaKilledAtEveryStep) {
  for (int r = 2; r <= 3; ++r)
    for (int who = 0; who < r; ++who)
      for (int at = 0; at < 60; ++at) {
        Job j(r, 5);
        ASSERT_TRUE(j.run(static_cast<unsigned>(at * 13 + who), {{at, who}})) << "r=" << r << " replica " << who << " at " << at;
        ASSERT_EQ(j.check(), "") << "r=" << r << " replica " << who << " at " << at;
      }
}

}  // namespace
}  // namespace cohort::replica
