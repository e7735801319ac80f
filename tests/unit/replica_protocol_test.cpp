// The replication protocol (replica/protocol.hpp): exactly-once delivery of mirror copies under
// reordering and duplication, the held-copy bound, the leader's two-phase decisions and the takeover
// rule, then simulated jobs (replica/simnet.hpp) that kill a replica at every step of an exchange.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "replica/protocol.hpp"
#include "replica/simnet.hpp"

namespace cohort::replica {
namespace {

Bytes bytes(int v) { return Bytes{static_cast<unsigned char>(v), static_cast<unsigned char>(v >> 8)}; }

std::vector<Wire> only_to(const std::vector<Wire> &ws, int to) {
  std::vector<Wire> out;
  for (const auto &w : ws)
    if (w.to == to) out.push_back(w);
  return out;
}

TEST(ReplicaMirror, EverySenderReplicaSendsToEveryLiveReceiverReplica) {
  Placement p(2, 3);
  Endpoint a1(&p, p.world(0, 1), {});
  std::vector<Wire> out;
  EXPECT_EQ(a1.send(5, 1, 9, bytes(1), &out), 0u);
  ASSERT_EQ(out.size(), 3u);
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(out[k].to, p.world(1, k));
    EXPECT_EQ(out[k].kind, Wire::data);
    EXPECT_EQ(out[k].seq, 0u);
    EXPECT_EQ(out[k].channel, (Channel{5, 0, 1}));
  }
  out.clear();
  a1.replica_died(p.world(1, 0), &out);
  EXPECT_EQ(a1.send(5, 1, 9, bytes(2), &out), 1u);
  ASSERT_EQ(out.size(), 2u);  // the dead receiver replica gets no copy
  EXPECT_EQ(a1.counters().copies_sent, 5u);
}

// Lanes (Limits::lanes, SDC checking): receiver replica 1 keeps sender replica 1's copy, even when a
// twin's came first; once sender replica 1 is dead, the twin's copy waiting as a spare is kept instead.
TEST(ReplicaMirror, LanesKeepTheLanesCopyAndPromoteASpareAtItsDeath) {
  Placement p(2, 3);
  Limits l;
  l.lanes = true;
  Endpoint b1(&p, p.world(1, 1), l);
  std::vector<Wire> out[3], none;
  for (int k = 0; k < 3; ++k) {
    Endpoint a(&p, p.world(0, k), {});
    a.send(0, 1, 7, bytes(10 + k), &out[k]);
    a.send(0, 1, 7, bytes(20 + k), &out[k]);
  }
  const Channel c{0, 0, 1};
  Wire m0 = only_to(out[0], b1.self())[0], m1 = only_to(out[1], b1.self())[0];
  EXPECT_FALSE(b1.receive(m0, &none));  // a spare: sender replica 1 lives
  EXPECT_FALSE(b1.ready(c));
  EXPECT_TRUE(b1.receive(m1, &none));
  EXPECT_EQ(b1.kept_from(c, 0), p.world(0, 1));
  Delivery d;
  ASSERT_TRUE(b1.deliver(c, &d));
  EXPECT_EQ(d.payload, bytes(11));
  EXPECT_EQ(d.from, p.world(0, 1));
  // sequence number 1: replica 2's copy first, then the lane's replica dies before sending it
  Wire s2 = only_to(out[2], b1.self())[1];
  EXPECT_FALSE(b1.receive(s2, &none));
  EXPECT_EQ(b1.kept_from(c, 1), -1);
  b1.replica_died(p.world(0, 1), &none);
  EXPECT_EQ(b1.kept_from(c, 1), p.world(0, 2));
  ASSERT_TRUE(b1.deliver(c, &d));
  EXPECT_EQ(d.payload, bytes(22));
}

// Copies of 50 logical messages from all 3 sender replicas, each copy twice, in random order: each
// logical message is delivered once, in sequence order, whatever the order of arrival.
TEST(ReplicaMirror, ExactlyOnceInOrderUnderReorderingAndDuplication) {
  for (int r = 1; r <= 3; ++r)
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
      Placement p(2, r);
      std::vector<Endpoint> senders;
      for (int k = 0; k < r; ++k) senders.emplace_back(&p, p.world(0, k));
      Endpoint recv(&p, p.world(1, r - 1));
      std::vector<Wire> wire;
      for (auto &s : senders)
        for (int i = 0; i < 50; ++i) s.send(0, 1, i, bytes(i), &wire);
      wire = only_to(wire, recv.self());
      std::vector<Wire> twice = wire;
      wire.insert(wire.end(), twice.begin(), twice.end());
      std::mt19937 rng(static_cast<unsigned>(seed));
      std::shuffle(wire.begin(), wire.end(), rng);
      std::vector<Wire> none;
      int next = 0;
      Channel c{0, 0, 1};
      for (const auto &w : wire) {
        recv.receive(w, &none);
        Delivery d;
        while (recv.deliver(c, &d)) {
          EXPECT_EQ(d.seq, static_cast<std::uint64_t>(next));
          EXPECT_EQ(d.payload, bytes(next));
          EXPECT_EQ(d.tag, next);
          ++next;
        }
      }
      EXPECT_TRUE(none.empty());
      EXPECT_EQ(next, 50);
      EXPECT_EQ(recv.held(), 0u);
      EXPECT_EQ(recv.counters().duplicates, static_cast<std::uint64_t>(2 * r * 50 - 50));
      Delivery d;
      EXPECT_FALSE(recv.deliver(c, &d));
    }
}

TEST(ReplicaMirror, HeldCopiesAreBoundedAndDuplicatesAreNeverHeld) {
  Placement p(2, 2);
  Limits lim;
  lim.max_held = 4;
  Endpoint s0(&p, p.world(0, 0)), s1(&p, p.world(0, 1)), recv(&p, p.world(1, 0), lim);
  std::vector<Wire> w0, w1, none;
  for (int i = 0; i < 6; ++i) {
    s0.send(0, 1, 0, bytes(i), &w0);
    s1.send(0, 1, 0, bytes(i), &w1);
  }
  w0 = only_to(w0, recv.self());
  w1 = only_to(w1, recv.self());
  for (int i = 0; i < 4; ++i) recv.receive(w0[i], &none);
  EXPECT_TRUE(recv.full());
  for (int i = 0; i < 4; ++i) recv.receive(w1[i], &none);  // duplicates: the bound is not exceeded
  EXPECT_EQ(recv.held(), 4u);
  Delivery d;
  ASSERT_TRUE(recv.deliver(Channel{0, 0, 1}, &d));
  EXPECT_FALSE(recv.full());
  EXPECT_TRUE(recv.ready(Channel{0, 0, 1}));
  EXPECT_EQ(recv.ready_channels().size(), 1u);
}

// A fake network for one logical rank's team: delivers every message in flight, in order of sending.
struct Team {
  Placement p;
  std::vector<Endpoint> eps;
  std::vector<Wire> flight;
  std::vector<char> dead;
  explicit Team(int r) : p(1, r) {
    for (int k = 0; k < r; ++k) eps.emplace_back(&p, k);
    dead.assign(static_cast<std::size_t>(r), 0);
  }
  void drain() {
    while (!flight.empty()) {
      Wire w = flight.front();
      flight.erase(flight.begin());
      if (dead[static_cast<std::size_t>(w.to)] || dead[static_cast<std::size_t>(w.from)]) continue;
      eps[static_cast<std::size_t>(w.to)].receive(w, &flight);
    }
  }
  void kill(int w) {
    dead[static_cast<std::size_t>(w)] = 1;
    for (std::size_t k = 0; k < eps.size(); ++k)
      if (!dead[k]) eps[k].replica_died(w, &flight);
  }
  bool decided(int k, std::uint64_t e, std::int64_t *o) { return eps[static_cast<std::size_t>(k)].decided(e, o); }
};

TEST(ReplicaDecision, LeaderDecidesTwinsFollowAfterEveryTwinStoredIt) {
  for (int r = 1; r <= 3; ++r) {
    Team t(r);
    std::int64_t o = 0;
    if (r > 1) t.eps[1].decide(0, 111, &t.flight);  // a twin's candidate is not used
    t.eps[0].decide(0, 42, &t.flight);
    // Before the acknowledgements, nobody may use the outcome (unless the leader is alone).
    EXPECT_EQ(t.decided(0, 0, &o), r == 1);
    t.drain();
    for (int k = 0; k < r; ++k) {
      ASSERT_TRUE(t.decided(k, 0, &o)) << "r=" << r << " replica " << k;
      EXPECT_EQ(o, 42);
    }
    EXPECT_EQ(t.eps[0].counters().proposals_sent, static_cast<std::uint64_t>(r - 1));
    EXPECT_EQ(t.eps[0].counters().commits_sent, static_cast<std::uint64_t>(r - 1));
  }
}

TEST(ReplicaDecision, LeaderNeverWaitsForADeadTwin) {
  Team t(3);
  t.eps[0].decide(0, 7, &t.flight);
  t.dead[2] = 1;  // twin 2 dies before acknowledging
  t.drain();
  std::int64_t o = 0;
  EXPECT_FALSE(t.decided(0, 0, &o));
  t.kill(2);
  t.drain();
  ASSERT_TRUE(t.decided(0, 0, &o));
  ASSERT_TRUE(t.decided(1, 0, &o));
  EXPECT_EQ(o, 7);
}

// The leader dies after its proposal reached twin 1 only: twin 1 leads and re-proposes the stored
// outcome; twin 2, which had nothing, follows it.
TEST(ReplicaDecision, NewLeaderReproposesTheStoredOutcome) {
  Team t(3);
  t.eps[0].decide(0, 5, &t.flight);
  ASSERT_EQ(t.flight.size(), 2u);
  Wire to1 = t.flight[0].to == 1 ? t.flight[0] : t.flight[1];
  t.flight.clear();
  std::vector<Wire> ack;
  t.eps[1].receive(to1, &ack);  // twin 1 stores 5; its acknowledgement is lost with the leader
  t.eps[2].decide(0, 99, &t.flight);
  t.kill(0);
  t.drain();
  std::int64_t o = 0;
  for (int k = 1; k < 3; ++k) {
    ASSERT_TRUE(t.decided(k, 0, &o));
    EXPECT_EQ(o, 5) << "replica " << k;
  }
  EXPECT_EQ(t.eps[1].counters().takeovers, 1u);
}

// The leader committed and told twin 1, then died before telling twin 2: twin 1, which may have used
// the outcome, re-proposes it; twin 2 commits the same outcome.
TEST(ReplicaDecision, CommitReachingOneTwinIsCompletedByTheNewLeader) {
  Team t(3);
  t.eps[0].decide(0, 8, &t.flight);
  std::vector<Wire> acks, commits;
  for (auto &w : t.flight) t.eps[static_cast<std::size_t>(w.to)].receive(w, &acks);
  t.flight.clear();
  for (auto &w : acks) t.eps[0].receive(w, &commits);
  ASSERT_EQ(commits.size(), 2u);
  for (auto &w : commits)
    if (w.to == 1) t.eps[1].receive(w, &acks);
  std::int64_t o = 0;
  ASSERT_TRUE(t.decided(1, 0, &o));
  EXPECT_FALSE(t.decided(2, 0, &o));
  t.kill(0);
  t.drain();
  ASSERT_TRUE(t.decided(2, 0, &o));
  EXPECT_EQ(o, 8);
  EXPECT_EQ(t.eps[2].counters().conflicts, 0u);
}

// The leader dies before any twin stored its proposal: the new leader decides its own candidate, and a
// late copy of the dead leader's proposal (lower epoch) changes nothing.
TEST(ReplicaDecision, UnstoredProposalIsDecidedAfreshAndStaleProposalsLose) {
  Team t(2);
  t.eps[0].decide(0, 1, &t.flight);
  std::vector<Wire> stale = t.flight;
  t.flight.clear();
  t.eps[1].decide(0, 2, &t.flight);
  t.kill(0);
  t.drain();
  std::int64_t o = 0;
  ASSERT_TRUE(t.decided(1, 0, &o));
  EXPECT_EQ(o, 2);
  std::vector<Wire> none;
  t.eps[1].receive(stale[0], &none);  // the stale proposal of an outcome never committed
  ASSERT_TRUE(t.decided(1, 0, &o));
  EXPECT_EQ(o, 2);
  EXPECT_EQ(t.eps[1].counters().conflicts, 0u);  // a lower epoch: the dead leader's, never committed
}

TEST(ReplicaDecision, UsedDecisionsAreForgottenBeyondTheKeptWindow) {
  Placement p(1, 2);
  Limits lim;
  lim.kept_decisions = 3;
  Endpoint e0(&p, 0, lim), e1(&p, 1, lim);
  for (std::uint64_t ev = 0; ev < 10; ++ev) {
    std::vector<Wire> f;
    e0.decide(ev, static_cast<std::int64_t>(ev) * 10, &f);
    while (!f.empty()) {
      Wire w = f.front();
      f.erase(f.begin());
      (w.to == 0 ? e0 : e1).receive(w, &f);
    }
    std::int64_t o = 0;
    ASSERT_TRUE(e1.decided(ev, &o));
    EXPECT_EQ(o, static_cast<std::int64_t>(ev) * 10);
    e0.consumed(ev);
    e1.consumed(ev);
  }
  std::int64_t o = 0;
  EXPECT_TRUE(e1.decided(9, &o));
  EXPECT_TRUE(e1.decided(7, &o));
  EXPECT_FALSE(e1.decided(5, &o));
  // A re-proposal of a forgotten event is acknowledged, so a new leader never waits for it.
  Wire w;
  w.kind = Wire::propose;
  w.from = 0;
  w.to = 1;
  w.event = 2;
  w.epoch = 0;
  std::vector<Wire> out;
  e1.receive(w, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, Wire::ack);
}

// --- simulated jobs ---

void expect_ok(const sim::Options &o, const std::string &what) {
  sim::Result r = sim::run(o);
  EXPECT_EQ(r.error, "") << what;
}

TEST(ReplicaSim, FailureFreeRingAndAllToAll) {
  for (int r = 1; r <= 3; ++r)
    for (auto pat : {sim::Pattern::ring, sim::Pattern::alltoall}) {
      sim::Options o;
      o.logical = 6;
      o.replicas = r;
      o.pattern = pat;
      o.rounds = 5;
      sim::Result res = sim::run(o);
      ASSERT_EQ(res.error, "");
      std::uint64_t per_round = pat == sim::Pattern::ring ? 6 : 6 * 5;
      // Mirror: r x r copies of each logical message; each replica delivers each message once.
      EXPECT_EQ(res.data_copies, per_round * 5 * r * r);
      EXPECT_EQ(res.delivered, per_round * 5 * r);
      EXPECT_EQ(res.takeovers, 0u);
    }
}

// Every replica of a small job, killed after each of its actions (each wire message it emitted or
// received), in a ring and in an all-to-all with MPI_ANY_SOURCE matches: r = 2 and 3.
TEST(ReplicaSim, EachReplicaKilledAtEveryStep) {
  int runs = 0;
  for (int r = 2; r <= 3; ++r)
    for (auto pat : {sim::Pattern::ring, sim::Pattern::alltoall}) {
      sim::Options o;
      o.logical = 3;
      o.replicas = r;
      o.pattern = pat;
      o.rounds = 2;
      o.seed = 3;
      for (int victim = 0; victim < 3 * r; ++victim) {
        sim::Options probe = o;
        probe.victim = victim;
        long steps = sim::run(probe).victim_actions;
        ASSERT_GT(steps, 0);
        for (long at = 1; at <= steps + 1; ++at) {
          sim::Options k = o;
          k.victim = victim;
          k.victim_after = at;
          k.seed = o.seed + static_cast<std::uint64_t>(at);
          expect_ok(k, "r=" + std::to_string(r) + " victim " + std::to_string(victim) + " at " + std::to_string(at));
          ++runs;
        }
      }
    }
  EXPECT_GE(runs, 900);  // 930 kill points with these sizes
}

// r = 3: the leader killed at every step, and its successor killed at every step after that.
TEST(ReplicaSim, LeaderAndItsSuccessorKilledAtEveryStep) {
  sim::Options o;
  o.logical = 2;
  o.replicas = 3;
  o.pattern = sim::Pattern::alltoall;
  o.rounds = 2;
  o.seed = 11;
  Placement p(2, 3);
  sim::Options probe = o;
  probe.victim = p.world(1, 0);
  long steps = sim::run(probe).victim_actions;
  for (long a = 1; a <= steps; a += 1)
    for (long b = 1; b <= 12; ++b) {
      sim::Options k = o;
      k.victim = p.world(1, 0);
      k.victim_after = a;
      k.victim2 = p.world(1, 1);
      k.victim2_after = a + b;
      k.seed = static_cast<std::uint64_t>(a * 100 + b);
      expect_ok(k, "leader at " + std::to_string(a) + ", successor " + std::to_string(b) + " later");
    }
}

TEST(ReplicaSim, RandomDeathsDuplicationAndHosts) {
  for (std::uint64_t seed = 1; seed <= 40; ++seed)
    for (int r = 2; r <= 3; ++r) {
      sim::Options o;
      o.logical = 12;
      o.replicas = r;
      o.pattern = seed % 2 ? sim::Pattern::ring : sim::Pattern::alltoall;
      o.rounds = 4;
      o.kills = 10;
      o.duplicate = 0.1;
      o.seed = seed;
      if (seed % 3 == 0)
        for (int w = 0; w < 12 * r; ++w) o.host.push_back(w % (r + 1));
      expect_ok(o, "seed " + std::to_string(seed) + " r=" + std::to_string(r));
    }
}

}  // namespace
}  // namespace cohort::replica
