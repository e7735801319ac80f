// The RingDetector state machine over a fake network (SimNet: virtual clock, simulated latency, drops,
// duplicates, kills and pauses). No MPI.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "detector/simnet.hpp"

using namespace cohort::detector;
using cohort::topology::Bcast;

namespace {

constexpr Time kMs = 1000;
constexpr Time kPeriod = 100 * kMs, kTimeout = 1000 * kMs, kGrace = 100 * kMs;

SimConfig config(int n, Bcast b = Bcast::chord) {
  SimConfig c;
  c.n = n;
  c.period = kPeriod;
  c.timeout = kTimeout;
  c.grace = kGrace;
  c.bcast = b;
  c.tick = 1 * kMs;
  return c;
}

std::vector<int> sorted(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Runs until every survivor knows `dead`; returns the virtual time that took (or -1).
Time detect(SimNet &net, const std::vector<int> &dead, Time limit) {
  Time t0 = net.now();
  bool ok = net.run_until([&] { return net.all_survivors_know_exactly(dead); }, t0 + limit);
  return ok ? net.now() - t0 : -1;
}

void expect_nothing_more(SimNet &net, const std::vector<int> &dead) {
  net.run_until(net.now() + 5 * kTimeout);
  EXPECT_TRUE(net.all_survivors_know_exactly(dead));
  for (int r = 0; r < net.size(); ++r) {
    if (!net.alive(r)) continue;
    EXPECT_EQ(net.fenced_at[r], -1) << "rank " << r << " fenced";
    std::set<int> seen;
    for (const Learned &l : net.learned[r]) EXPECT_TRUE(seen.insert(l.rank).second) << "rank " << r << " learned " << l.rank << " twice";
  }
}

// One state machine on an identity ring of n ranks, started at time 0 (its first output discarded).
std::unique_ptr<RingDetector> machine(int n, int rank) {
  Config c;
  c.rank = rank;
  c.ring = std::make_shared<cohort::topology::Ring>(n, false, 1);
  Output out;
  return std::make_unique<RingDetector>(c, 0, &out);
}

std::vector<int> notice_targets(const Output &out) {
  std::vector<int> to;
  for (auto &o : out.messages)
    if (o.msg.type == MsgType::notice) to.push_back(o.to);
  return sorted(to);
}

int max_hops(const SimNet &net, int dead) {
  int h = 0;
  for (int r = 0; r < net.size(); ++r)
    for (const Learned &l : net.learned[r])
      if (l.rank == dead) h = std::max(h, l.hops);
  return h;
}

// Rank 3 of 8 dies (crash: its process exits; else it is killed unseen). Its observer 4 learns it as
// `how` says, within `bound`; the others by notice, the new emitter 2 by 4's emit request.
void single_failure_found(SimNet &net, bool crash, How how, Time bound) {
  net.run_until(2 * kTimeout);
  crash ? net.crash(3) : net.kill(3);
  Time took = detect(net, {3}, 2 * kTimeout);
  ASSERT_GE(took, 0);
  EXPECT_LE(took, bound);
  ASSERT_EQ(net.learned[4].size(), 1u);
  EXPECT_EQ(net.learned[4][0].how, how);
  for (int r : {0, 1, 5, 6, 7}) EXPECT_EQ(net.learned[r][0].how, How::notice) << r;
  // The new emitter hears it from the observer's emit request, at the same time as the notices.
  EXPECT_EQ(net.learned[2][0].how, How::emit_request);
  EXPECT_EQ(net.node(4).emitter(), 2);
  EXPECT_EQ(net.node(2).observer(), 4);
  expect_nothing_more(net, {3});
}

// Ranks 3 and 4 of 8 die together (crash: their processes exit; else they are killed unseen). Rank 5
// must find 4, then 3, as `how` says, within `bound`, and end up observing rank 2.
void adjacent_pair_found(SimNet &net, bool crash, How how, Time bound) {
  net.run_until(2 * kTimeout);
  for (int r : {3, 4}) crash ? net.crash(r) : net.kill(r);
  Time took = detect(net, {3, 4}, 4 * kTimeout);
  ASSERT_GE(took, 0);
  EXPECT_LE(took, bound);
  ASSERT_EQ(net.learned[5].size(), 2u);
  EXPECT_EQ(net.learned[5][0].rank, 4);
  EXPECT_EQ(net.learned[5][0].how, how);
  EXPECT_EQ(net.learned[5][1].rank, 3);
  EXPECT_EQ(net.learned[5][1].how, how);
  EXPECT_EQ(net.node(5).emitter(), 2);
  expect_nothing_more(net, {3, 4});
}

}  // namespace

TEST(DetectorMachine, NoFailureNoSuspicion) {
  SimNet net(config(8));
  net.run_until(10 * kTimeout);
  expect_nothing_more(net, {});
  // Each rank emits to the next and observes the previous.
  for (int r = 0; r < 8; ++r) {
    EXPECT_EQ(net.node(r).observer(), (r + 1) % 8);
    EXPECT_EQ(net.node(r).emitter(), (r + 7) % 8);
  }
}

TEST(DetectorMachine, SingleFailure) {
  SimNet net(config(8));
  // The observer suspects it after the timeout, then a few 50 µs hops.
  single_failure_found(net, false, How::suspected, kTimeout + 5 * kMs);
  EXPECT_LE(max_hops(net, 3), 3 + 1);  // ceil(log2 7) + 1
}

TEST(DetectorMachine, TwoAdjacentFailures) {
  SimNet net(config(8));
  // 4 after the timeout; 3 after the timeout and grace granted to it as the new emitter.
  adjacent_pair_found(net, false, How::suspected, 2 * kTimeout + kGrace + 10 * kMs);
}

class DetectorSimultaneous : public ::testing::TestWithParam<std::tuple<int, bool>> {};

TEST_P(DetectorSimultaneous, AllFoundByEverySurvivor) {
  const int n = 16;
  auto [k, consecutive] = GetParam();
  std::mt19937_64 rng(1000 + k);
  std::vector<int> ranks(n);
  for (int i = 0; i < n; ++i) ranks[i] = i;
  std::vector<int> dead;
  if (consecutive) {
    int start = static_cast<int>(rng() % n);
    for (int i = 0; i < k; ++i) dead.push_back((start + i) % n);
  } else {
    std::shuffle(ranks.begin(), ranks.end(), rng);
    dead.assign(ranks.begin(), ranks.begin() + k);
  }
  SimNet net(config(n));
  net.run_until(2 * kTimeout);
  for (int r : dead) net.kill(r);
  Time took = detect(net, dead, (k + 1) * (kTimeout + kGrace) + kTimeout);
  ASSERT_GE(took, 0) << "k=" << k;
  // A run of j consecutive dead ranks costs j suspicions in a row.
  EXPECT_LE(took, k * (kTimeout + kGrace) + 20 * kMs);
  expect_nothing_more(net, dead);
}

INSTANTIATE_TEST_SUITE_P(K, DetectorSimultaneous,
                         ::testing::Combine(::testing::Values(1, 2, 3, 5, 8, 12, 15), ::testing::Bool()));

TEST(DetectorMachine, ForwarderDiesMidBroadcast) {
  SimNet net(config(16));
  net.run_until(2 * kTimeout);
  net.kill(3);
  // Every rank that would forward the first notice about 3 dies as it receives it: the notice reaches
  // none of them, so the rest must learn of 3 through the other targets and resync.
  std::set<int> killed;
  net.on_deliver = [&](int from, int to, const Message &m) {
    if (m.type == MsgType::notice && m.subject == 3 && from == 4 && (to == 5 || to == 6 || to == 8)) {
      net.kill(to);
      killed.insert(to);
      return false;
    }
    return true;
  };
  ASSERT_GE(detect(net, {3, 5, 6, 8}, 10 * kTimeout), 0);
  EXPECT_EQ(killed, (std::set<int>{5, 6, 8}));
  expect_nothing_more(net, {3, 5, 6, 8});
}

TEST(DetectorMachine, FailureWhileNoticeInFlight) {
  SimNet net(config(8));
  net.run_until(2 * kTimeout);
  net.kill(2);
  bool done = false;
  // When the first notice about 2 is in flight, its sender's observer dies.
  net.filter = [&](int from, const Outgoing &o) {
    if (!done && o.msg.type == MsgType::notice && o.msg.subject == 2) {
      done = true;
      net.kill(net.node(from).observer());
    }
    return 1;
  };
  ASSERT_GE(detect(net, {2, 4}, 6 * kTimeout), 0);
  expect_nothing_more(net, {2, 4});
}

TEST(DetectorMachine, AllNoticesLostStillEveryoneKnows) {
  SimNet net(config(12));
  net.run_until(2 * kTimeout);
  net.filter = [](int, const Outgoing &o) { return o.msg.type == MsgType::notice ? 0 : 1; };
  net.kill(5);
  net.kill(9);
  // Only the digest on heartbeats and the syncs it triggers spread the news around the ring.
  ASSERT_GE(detect(net, {5, 9}, 30 * kTimeout), 0);
  EXPECT_GT(net.sent[static_cast<int>(MsgType::sync)], 0u);
  expect_nothing_more(net, {5, 9});
}

TEST(DetectorMachine, RandomLossOfAnyMessage) {
  SimNet net(config(16));
  std::mt19937_64 rng(7);
  net.filter = [&](int, const Outgoing &) { return (rng() % 100) < 20 ? 0 : 1; };  // 20 % lost
  net.run_until(2 * kTimeout);
  net.kill(1);
  net.kill(2);
  net.kill(10);
  ASSERT_GE(detect(net, {1, 2, 10}, 30 * kTimeout), 0);
  expect_nothing_more(net, {1, 2, 10});
}

TEST(DetectorMachine, DuplicatedMessagesAreHarmless) {
  SimNet net(config(8));
  net.filter = [](int, const Outgoing &) { return 2; };
  net.run_until(2 * kTimeout);
  net.kill(6);
  ASSERT_GE(detect(net, {6}, 3 * kTimeout), 0);
  expect_nothing_more(net, {6});  // also checks that nobody learned a failure twice
}

TEST(DetectorMachine, SlowButAliveRankIsFencedNotRejoined) {
  SimNet net(config(8));
  net.run_until(2 * kTimeout);
  net.pause(2);
  ASSERT_GE(detect(net, {2}, 2 * kTimeout), 0);
  Time resumed = net.now() + 2 * kTimeout;
  net.run_until(resumed);
  net.resume(2);
  net.run_until(resumed + kTimeout);
  EXPECT_GE(net.fenced_at[2], resumed);
  EXPECT_LE(net.fenced_at[2], resumed + 5 * kMs);
  EXPECT_TRUE(net.fenced(2));
  // Its emitter (rank 1) was not accused by the waking rank.
  EXPECT_TRUE(net.all_survivors_know_exactly({2}));
  EXPECT_TRUE(net.learned[2].empty());
  net.kill(2);  // the runtime exits on fencing
  expect_nothing_more(net, {2});
}

TEST(DetectorMachine, RankLeavingIsNotSuspected) {
  SimNet net(config(8));
  net.run_until(2 * kTimeout);
  net.leave(3);
  net.run_until(net.now() + 5 * kTimeout);
  EXPECT_TRUE(net.all_survivors_know_exactly({}));
  EXPECT_EQ(net.node(4).emitter(), 2);
  EXPECT_EQ(net.node(2).observer(), 4);
  // Finalize: everyone leaves, a few ms apart; still nobody is declared failed.
  for (int r : {0, 5, 1, 7, 2, 6, 4}) {
    net.leave(r);
    net.run_until(net.now() + 30 * kMs);
  }
  for (int r = 0; r < 8; ++r) EXPECT_TRUE(net.learned[r].empty()) << r;
  EXPECT_EQ(net.sent[static_cast<int>(MsgType::departure)], 0u) << "no failure known: nothing is flooded";
}

// MPI_Finalize after a failure: ranks leave one after the other while rank 6 still repairs (its survivors
// barrier's retry). Rank 6 learns every departure as it happens (the leaving rank's departure notices to
// its broadcast targets, and the leaving notes, which carry the departures their sender knew), long before
// any timeout, and takes none of them for a failure.
TEST(DetectorMachine, TheLastRankStillRunningLearnsEveryDeparture) {
  SimNet net(config(8));
  net.run_until(2 * kTimeout);
  net.crash(3);
  ASSERT_GE(detect(net, {3}, 3 * kTimeout), 0);
  std::vector<int> order = {0, 5, 1, 7, 2, 4};
  for (int r : order) {
    net.leave(r);
    net.run_until(net.now() + 5 * kMs);
  }
  EXPECT_EQ(sorted(net.departed[6]), sorted(order));
  EXPECT_GT(net.sent[static_cast<int>(MsgType::departure)], 0u);
  net.run_until(net.now() + 5 * kTimeout);
  ASSERT_EQ(net.learned[6].size(), 1u) << "rank 6 took a departed rank for a failed one";
  EXPECT_EQ(net.learned[6][0].rank, 3);
  EXPECT_FALSE(net.fenced(6));
}

// A departure known by a rank that leaves reaches its neighbours in its leaving note, even where no notice
// was flooded (no failure known) and the departed rank was not their neighbour.
TEST(DetectorMachine, ALeavingNoteCarriesTheDeparturesItsSenderKnew) {
  SimNet net(config(6));
  net.run_until(2 * kTimeout);
  net.leave(2);  // tells 1 and 3
  net.run_until(net.now() + 5 * kMs);
  EXPECT_TRUE(net.departed[4].empty());
  net.leave(3);  // tells 4 (its observer) and 1 (its emitter since 2 left), naming 2
  net.run_until(net.now() + 5 * kMs);
  EXPECT_EQ(sorted(net.departed[4]), (std::vector<int>{2, 3}));
  EXPECT_EQ(net.node(4).emitter(), 1);
  for (int r = 0; r < 6; ++r) EXPECT_TRUE(net.learned[r].empty()) << r;
}

// A departed rank named dead by another part of cohort (an agreement's view) is not declared failed.
TEST(DetectorMachine, ADepartedRankIsNotDeclaredFailed) {
  SimNet net(config(4));
  net.run_until(2 * kTimeout);
  net.leave(2);
  net.run_until(net.now() + 5 * kMs);
  ASSERT_TRUE(net.node(1).has_left(2));
  net.declare(1, 2);
  net.run_until(net.now() + 2 * kTimeout);
  for (int r = 0; r < 4; ++r) EXPECT_TRUE(net.learned[r].empty()) << r;
}

TEST(DetectorMachine, DeclaredFailureIsBroadcast) {
  SimNet net(config(8));
  net.run_until(kTimeout);
  net.declare(0, 5);
  net.run_until(net.now() + 10 * kMs);
  EXPECT_EQ(net.learned[0][0].how, How::declared);
  // rank 5 is alive: it learns that the others declared it dead and fences itself.
  EXPECT_TRUE(net.fenced(5));
  net.kill(5);
  expect_nothing_more(net, {5});
}

TEST(DetectorMachine, NoticeTargetsAreChordFingersOverLivePositions) {
  auto d = machine(8, 0);
  Output out;
  d->declare_failed(5, 1, &out);
  // live 0 1 2 3 4 6 7: +1, +2, +4 -> ranks 1, 2, 4
  EXPECT_EQ(notice_targets(out), (std::vector<int>{1, 2, 4}));
  out.clear();
  d->declare_failed(2, 2, &out);
  // live 0 1 3 4 6 7: +1 -> 1, +2 -> 3, +4 -> 6
  EXPECT_EQ(notice_targets(out), (std::vector<int>{1, 3, 6}));
}

TEST(DetectorMachine, MessageFromAFailedRankIsAnsweredWithItsDeath) {
  auto d = machine(4, 0);
  Output out;
  d->declare_failed(2, 1, &out);
  out.clear();
  Message hb;
  hb.type = MsgType::heartbeat;
  d->on_message(2, hb, 2, &out);
  ASSERT_EQ(out.messages.size(), 1u);
  EXPECT_EQ(out.messages[0].to, 2);
  EXPECT_EQ(out.messages[0].msg.type, MsgType::sync);
  EXPECT_EQ(out.messages[0].msg.failed, (std::vector<int>{2}));
  // ...and that sync fences the receiver.
  auto zombie = machine(4, 2);
  Output out2;
  zombie->on_message(0, out.messages[0].msg, 3, &out2);
  EXPECT_TRUE(zombie->fenced());
  ASSERT_EQ(out2.events.size(), 1u);
  EXPECT_EQ(out2.events[0].kind, Event::self_fenced);
}

TEST(DetectorMachine, StalledRankDoesNotAccuseItsEmitter) {
  auto d = machine(4, 1);
  Output out;
  for (Time t = 0; t <= 500 * kMs; t += kMs) d->tick(t, &out);
  // No tick for 5 s (this rank was not scheduled), then one: the emitter's silence proves nothing.
  out.clear();
  d->tick(5500 * kMs, &out);
  EXPECT_TRUE(out.events.empty());
  EXPECT_FALSE(d->is_failed(0));
  // Ticking normally again, a silent emitter is suspected one timeout later.
  for (Time t = 5501 * kMs; t <= 6600 * kMs && out.events.empty(); t += kMs) d->tick(t, &out);
  ASSERT_EQ(out.events.size(), 1u);
  EXPECT_EQ(out.events[0].rank, 0);
}

// Issue 17, item 3: a rank stopped past the timeout resumes after the others exited; it must not carry
// on alone.
TEST(DetectorMachine, StalledRankThatEndsUpAloneFencesItself) {
  auto d = machine(3, 1);
  Output out;
  for (Time t = 0; t <= 500 * kMs; t += kMs) d->tick(t, &out);
  out.clear();
  d->tick(5500 * kMs, &out);  // stopped for 5 s, longer than the timeout
  Time t = 5501 * kMs;
  for (; t <= 12000 * kMs && !d->fenced(); t += kMs) d->tick(t, &out);
  ASSERT_TRUE(d->fenced());
  ASSERT_FALSE(out.events.empty());
  EXPECT_EQ(out.events.back().kind, Event::self_fenced);
  EXPECT_EQ(out.events.back().how, How::alone);
  EXPECT_EQ(d->failed_order().size(), 1u);  // the last one is not published: it fenced instead
}

TEST(DetectorMachine, RankAloneWithoutAStallCarriesOn) {
  auto d = machine(3, 1);
  Output out;
  Time t = 0;
  for (; t <= 5000 * kMs; t += kMs) d->tick(t, &out);
  EXPECT_FALSE(d->fenced());
  EXPECT_EQ(d->failed_order().size(), 2u);
}

TEST(DetectorMachine, NoticeNamingThisRankFencesIt) {
  auto d = machine(4, 3);
  Output out;
  Message m;
  m.type = MsgType::notice;
  m.subject = 3;
  m.hops = 2;
  d->on_message(1, m, 10, &out);
  EXPECT_TRUE(d->fenced());
  ASSERT_EQ(out.events.size(), 1u);
  EXPECT_EQ(out.events[0].kind, Event::self_fenced);
  EXPECT_EQ(out.events[0].from, 1);
  out.clear();
  d->tick(10 * kTimeout, &out);  // inert afterwards
  EXPECT_TRUE(out.messages.empty());
}

TEST(DetectorMachine, ShuffledRingStillFindsEverything) {
  SimConfig c = config(16);
  c.shuffle = true;
  c.ring_seed = 99;
  SimNet net(c);
  net.run_until(2 * kTimeout);
  for (int r : {0, 1, 2, 3}) net.kill(r);
  ASSERT_GE(detect(net, {0, 1, 2, 3}, 10 * kTimeout), 0);
  expect_nothing_more(net, {0, 1, 2, 3});
}

TEST(DetectorMachine, EveryBroadcastFindsEverything) {
  for (Bcast b : {Bcast::chord, Bcast::bmg, Bcast::hba}) {
    SimNet net(config(32, b));
    net.run_until(2 * kTimeout);
    for (int r : {4, 5, 20}) net.kill(r);
    ASSERT_GE(detect(net, {4, 5, 20}, 10 * kTimeout), 0) << cohort::topology::bcast_name(b);
    expect_nothing_more(net, {4, 5, 20});
  }
}

TEST(DetectorMachine, EventDrivenTicksFindTheSame) {
  // The simulator's fast mode ticks each rank only at next_wakeup(); detection must not change.
  SimConfig c = config(64);
  c.tick = 0;
  SimNet net(c);
  net.run_until(2 * kTimeout);
  for (int r : {7, 8, 40}) net.kill(r);
  Time took = detect(net, {7, 8, 40}, 10 * kTimeout);
  ASSERT_GE(took, 0);
  EXPECT_LE(took, 2 * kTimeout + kGrace + 10 * kMs);
  expect_nothing_more(net, {7, 8, 40});
}

// ---- process exit of a same-host emitter (the runtime's pidfd watch) ----
namespace {
SimConfig watching(int n) {
  SimConfig c = config(n);
  c.watch_exits = true;
  return c;
}
}  // namespace

TEST(DetectorMachine, ExitedEmitterIsSuspectedWithoutWaitingForTheTimeout) {
  SimNet net(watching(8));
  single_failure_found(net, true, How::exited, 5 * kMs);  // one tick (1 ms) to see the exit, then hops
}

TEST(DetectorMachine, LostHostIsStillFoundByTheTimeout) {
  SimNet net(watching(8));
  net.run_until(2 * kTimeout);
  net.kill(3);  // no exit to see (the host is gone): heartbeats must find it
  Time took = detect(net, {3}, 2 * kTimeout);
  ASSERT_GE(took, kTimeout - kPeriod);
  EXPECT_LE(took, kTimeout + 5 * kMs);
  EXPECT_EQ(net.learned[4][0].how, How::suspected);
  expect_nothing_more(net, {3});
}

TEST(DetectorMachine, AdjacentExitsAreFoundOneAfterTheOther) {
  SimNet net(watching(8));
  // The re-targeted emitter 3 is seen exited at once, not after timeout + grace.
  adjacent_pair_found(net, true, How::exited, 5 * kMs);
}

TEST(DetectorMachine, HalfTheRanksExitingAreAllFound) {
  SimNet net(watching(16));
  net.run_until(2 * kTimeout);
  for (int r : {1, 2, 3, 4, 9, 11, 13, 15}) net.crash(r);
  Time took = detect(net, {1, 2, 3, 4, 9, 11, 13, 15}, 4 * kTimeout);
  ASSERT_GE(took, 0);
  // NOTE: notices flooded while the others are still being found partly go to dead ranks; the digest on
  // the next heartbeats recovers them: within two periods, far below the timeout.
  EXPECT_LE(took, 2 * kPeriod + 10 * kMs);
  expect_nothing_more(net, {1, 2, 3, 4, 9, 11, 13, 15});
}

TEST(DetectorMachine, ExitOfARankThatIsNotTheEmitterIsIgnored) {
  auto d = machine(8, 4);
  Output out;
  d->tick(10 * kMs, &out);
  out.clear();
  for (int r : {-1, 2, 4, 5, 8}) d->on_emitter_exited(r, 20 * kMs, &out);
  EXPECT_TRUE(out.events.empty());
  EXPECT_TRUE(out.messages.empty());
  EXPECT_TRUE(d->failed_order().empty());
  Message hb;
  hb.type = MsgType::heartbeat;
  d->on_message(3, hb, 30 * kMs, &out);
  out.clear();
  d->on_emitter_exited(3, 45 * kMs, &out);
  ASSERT_EQ(out.events.size(), 1u);
  EXPECT_EQ(out.events[0].kind, Event::rank_failed);
  EXPECT_EQ(out.events[0].rank, 3);
  EXPECT_EQ(out.events[0].how, How::exited);
  EXPECT_EQ(out.events[0].from, 4);
  EXPECT_EQ(out.events[0].silent, 15 * kMs);  // since the last heartbeat
  // live 0 1 2 4 5 6 7 from 4: +1, +2, +4 -> 5, 6, 0; and an emit request to the new emitter 2
  EXPECT_EQ(notice_targets(out), (std::vector<int>{0, 5, 6}));
  EXPECT_EQ(d->emitter(), 2);
  bool asked = false;
  for (auto &o : out.messages) asked |= o.to == 2 && o.msg.type == MsgType::emit_request;
  EXPECT_TRUE(asked);
}

TEST(DetectorMachine, ExitSeenAfterReTargetingIsIgnoredThenTheNewEmittersIsNot) {
  auto d = machine(8, 4);
  Output out;
  d->on_emitter_exited(3, 10 * kMs, &out);
  out.clear();
  d->on_emitter_exited(3, 11 * kMs, &out);  // the old watch fires again: nothing new
  EXPECT_TRUE(out.events.empty());
  EXPECT_TRUE(out.messages.empty());
  d->on_emitter_exited(2, 12 * kMs, &out);
  ASSERT_EQ(out.events.size(), 1u);
  EXPECT_EQ(out.events[0].rank, 2);
  EXPECT_EQ(d->emitter(), 1);
  EXPECT_EQ(d->failed_order(), (std::vector<int>{3, 2}));
}

TEST(DetectorMachine, EmitterThatLeftAndThenExitedIsNotFailed) {
  // MPI_Finalize: the emitter says it leaves, then its process exits; the exit must not be a failure.
  auto d = machine(8, 4);
  Output out;
  Message bye;
  bye.type = MsgType::leaving;
  d->on_message(3, bye, 10 * kMs, &out);
  EXPECT_EQ(d->emitter(), 2);
  out.clear();
  d->on_emitter_exited(3, 11 * kMs, &out);
  EXPECT_TRUE(out.events.empty());
  EXPECT_TRUE(d->failed_order().empty());
}

TEST(DetectorMachine, ExitIsIgnoredOnceStoppedOrFenced) {
  auto left = machine(8, 4);
  Output out;
  left->leave(10 * kMs, &out);
  out.clear();
  left->on_emitter_exited(3, 11 * kMs, &out);
  EXPECT_TRUE(out.events.empty());
  EXPECT_TRUE(out.messages.empty());

  auto fenced = machine(8, 4);
  Message m;
  m.type = MsgType::notice;
  m.subject = 4;
  fenced->on_message(1, m, 10 * kMs, &out);
  ASSERT_TRUE(fenced->fenced());
  out.clear();
  fenced->on_emitter_exited(3, 11 * kMs, &out);
  EXPECT_TRUE(out.events.empty());
  EXPECT_TRUE(out.messages.empty());
}

TEST(DetectorMachine, ExitThatLeavesAStalledRankAloneFencesIt) {
  auto d = machine(2, 1);
  Output out;
  for (Time t = 0; t <= 500 * kMs; t += kMs) d->tick(t, &out);
  d->tick(5500 * kMs, &out);  // stopped for 5 s: the other rank may have declared this one dead
  out.clear();
  d->on_emitter_exited(0, 5501 * kMs, &out);
  EXPECT_TRUE(d->fenced());
  ASSERT_EQ(out.events.size(), 1u);
  EXPECT_EQ(out.events[0].how, How::alone);
}
