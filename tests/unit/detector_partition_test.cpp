// The partition rule of the RingDetector (ring_detector.hpp, "Partitions"): on a multi-host ring the side of
// a network partition that holds less than half of the last view fences itself; with equal sides the side
// of the view's lowest rank carries on; lost hosts shrink the view after a quiet time. SimNet, no MPI.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "detector/simnet.hpp"

using namespace cohort::detector;

namespace {

constexpr Time kMs = 1000;
constexpr Time kPeriod = 100 * kMs, kTimeout = 1000 * kMs, kGrace = 100 * kMs;

// n ranks in blocks of `per_host` per host (ranks 0.. on host 0), as `cohort-run --hosts` places them.
SimConfig hosts(int n, int per_host) {
  SimConfig c;
  c.n = n;
  c.period = kPeriod;
  c.timeout = kTimeout;
  c.grace = kGrace;
  c.tick = 1 * kMs;
  c.watch_exits = true;
  for (int r = 0; r < n; ++r) c.host.push_back(r / per_host);
  return c;
}

// Cuts the network between the ranks of `cut` and the others (both ways), as a link taken down.
void partition(SimNet &net, std::set<int> cut) {
  net.filter = [cut](int from, const Outgoing &o) { return cut.count(from) == cut.count(o.to) ? 1 : 0; };
}

// Runs until every rank of `fenced` is fenced and every other rank knows exactly `fenced` as failed.
bool settles(SimNet &net, const std::vector<int> &fenced, Time limit) {
  return net.run_until(
      [&] {
        for (int r : fenced)
          if (!net.fenced(r)) return false;
        return net.all_survivors_know_exactly(fenced);
      },
      net.now() + limit);
}

void expect_fenced_exactly(SimNet &net, const std::set<int> &fenced) {
  for (int r = 0; r < net.size(); ++r) EXPECT_EQ(net.fenced(r), fenced.count(r) == 1) << "rank " << r;
}

}  // namespace

TEST(DetectorPartition, MinorityHostFencesItselfAndTheMajorityCarriesOn) {
  SimNet net(hosts(8, 2));
  net.run_until(2 * kTimeout);
  partition(net, {6, 7});  // host 3 cut off: 2 of 8 against 6 of 8
  ASSERT_TRUE(settles(net, {6, 7}, 20 * kTimeout));
  expect_fenced_exactly(net, {6, 7});
  net.run_until(net.now() + 3 * kTimeout);
  EXPECT_EQ(net.node(0).view_size(), 6);  // settled after 2 x timeout of quiet
  EXPECT_EQ(net.node(0).view_reached(), 6);
  expect_fenced_exactly(net, {6, 7});
}

TEST(DetectorPartition, EqualSidesTheSideOfTheLowestRankCarriesOn) {
  SimNet net(hosts(4, 2));
  net.run_until(2 * kTimeout);
  partition(net, {0, 1});  // either host's link down parts 2 of 4 from 2 of 4
  ASSERT_TRUE(settles(net, {2, 3}, 20 * kTimeout));
  expect_fenced_exactly(net, {2, 3});
}

TEST(DetectorPartition, LostHostFencesNobody) {
  SimNet net(hosts(8, 2));
  net.run_until(2 * kTimeout);
  for (int r : {4, 5}) net.kill(r);  // the host vanished: no process exit to see
  ASSERT_TRUE(net.run_until([&] { return net.all_survivors_know_exactly({4, 5}); }, net.now() + 10 * kTimeout));
  expect_fenced_exactly(net, {});
}

TEST(DetectorPartition, TwoHostsLostOneAfterTheOtherShrinkTheView) {
  // Hosts 0 and 1 (ranks 0-3) together are half of the view without its lowest rank: at once, the other
  // half stops. One after the other, with quiet in between, the view shrinks to 6 and 4 of 6 carry on.
  {
    SimNet net(hosts(8, 2));
    net.run_until(2 * kTimeout);
    for (int r : {0, 1, 2, 3}) net.kill(r);
    net.run_until(net.now() + 20 * kTimeout);
    for (int r : {4, 5, 6, 7}) EXPECT_TRUE(net.fenced(r)) << "rank " << r;
  }
  SimNet net(hosts(8, 2));
  net.run_until(2 * kTimeout);
  for (int r : {0, 1}) net.kill(r);
  ASSERT_TRUE(net.run_until([&] { return net.all_survivors_know_exactly({0, 1}); }, net.now() + 10 * kTimeout));
  net.run_until(net.now() + 3 * kTimeout);  // quiet: the view becomes ranks 2-7
  EXPECT_EQ(net.node(4).view_size(), 6);
  for (int r : {2, 3}) net.kill(r);
  ASSERT_TRUE(net.run_until([&] { return net.all_survivors_know_exactly({0, 1, 2, 3}); }, net.now() + 10 * kTimeout));
  net.run_until(net.now() + 3 * kTimeout);
  for (int r : {4, 5, 6, 7}) EXPECT_FALSE(net.fenced(r)) << "rank " << r;
  EXPECT_EQ(net.node(4).view_size(), 4);
}

TEST(DetectorPartition, CrashesOnOwnHostLeaveTheViewAtOnce) {
  // 3 of the 4 ranks of host 0 crash: their host's survivor sees the exits (a host cannot be partitioned
  // from itself), so it never counts them against its side.
  SimNet net(hosts(8, 4));
  net.run_until(2 * kTimeout);
  for (int r : {0, 1, 2}) net.crash(r);
  ASSERT_TRUE(net.run_until([&] { return net.all_survivors_know_exactly({0, 1, 2}); }, net.now() + 10 * kTimeout));
  net.run_until(net.now() + 3 * kTimeout);
  expect_fenced_exactly(net, {});
  EXPECT_EQ(net.node(3).view_size(), 5);  // its own host's crashes: at once, no quiet needed
}

TEST(DetectorPartition, OneHostNeverAppliesTheRule) {
  SimConfig c = hosts(4, 4);
  c.watch_exits = false;
  SimNet net(c);
  net.run_until(2 * kTimeout);
  for (int r : {0, 1, 2}) net.kill(r);
  ASSERT_TRUE(net.run_until([&] { return net.all_survivors_know_exactly({0, 1, 2}); }, net.now() + 10 * kTimeout));
  expect_fenced_exactly(net, {});
}

// Lost hosts (ring_detector.hpp, "Lost hosts"): the observer of a host's last rank suspects it by its
// timeout, then asks the host's other ranks to answer; none does within 2 x period: all are suspected.
TEST(DetectorLostHost, HostOfFourLostAtOnceIsFoundWithinTimeoutPlusTwoPeriods) {
  for (int lost : {1, 2, 3, 0}) {  // h2, h3, h4, and h1 (rank 0's host: its observer wraps around)
    SCOPED_TRACE("host " + std::to_string(lost));
    SimConfig c = hosts(16, 4);
    c.watch_exits = false;  // a lost host: no process exit anyone could see
    SimNet net(c);
    net.run_until(2 * kTimeout);
    std::vector<int> dead;
    for (int r = 4 * lost; r < 4 * lost + 4; ++r) {
      net.kill(r);
      dead.push_back(r);
    }
    Time t0 = net.now();
    ASSERT_TRUE(net.run_until([&] { return net.all_survivors_know_exactly(dead); }, t0 + 10 * kTimeout));
    // ticks every ms, 50 µs a message: the flood adds well under 10 ms
    EXPECT_LE(net.now() - t0, kTimeout + 2 * kPeriod + 10 * kMs);
    int observer = (4 * lost + 4) % 16;
    ASSERT_EQ(net.learned[observer].size(), 4u);
    EXPECT_EQ(net.learned[observer][0].rank, 4 * lost + 3);
    EXPECT_EQ(net.learned[observer][0].how, How::suspected);
    for (int i = 1; i < 4; ++i) EXPECT_EQ(net.learned[observer][i].how, How::host_silent) << i;
    EXPECT_EQ(net.node(observer).emitter(), (4 * lost + 15) % 16);  // past the whole host
    net.run_until(net.now() + 3 * kTimeout);
    expect_fenced_exactly(net, {});
    EXPECT_TRUE(net.all_survivors_know_exactly(dead));
  }
}

TEST(DetectorLostHost, OneStoppedRankIsJudgedByItsOwnTimeoutNotByItsHost) {
  for (int stopped : {7, 5}) {  // h2's last rank (observer on h3), and one inside h2 (observer on h2)
    SCOPED_TRACE("rank " + std::to_string(stopped));
    SimConfig c = hosts(16, 4);
    c.watch_exits = false;
    SimNet net(c);
    net.run_until(2 * kTimeout);
    net.pause(stopped);  // SIGSTOP: no exit, no heartbeat, messages wait
    Time t0 = net.now();
    ASSERT_TRUE(net.run_until([&] { return net.all_survivors_know_exactly({stopped}); }, t0 + 10 * kTimeout));
    EXPECT_GE(net.now() - t0, kTimeout - kPeriod);  // its own timeout (last heard up to a period before)
    net.run_until(net.now() + 5 * kTimeout);
    EXPECT_TRUE(net.all_survivors_know_exactly({stopped}));  // 4, 5, 6 (or 4, 6, 7) never suspected
    for (int r = 0; r < 16; ++r)
      if (r != stopped) EXPECT_FALSE(net.fenced(r)) << "rank " << r;
  }
}

TEST(DetectorLostHost, AHostThatAnswersOnlyTheSecondRequestKeepsItsRanks) {
  // h2's last rank stops; the first requests to 4 and 5 are lost and the new emitter 6 stays silent to
  // rank 8 for a while: the repeated request is answered, and nobody but rank 7 is suspected.
  SimConfig c = hosts(16, 4);
  c.watch_exits = false;
  SimNet net(c);
  net.run_until(2 * kTimeout);
  int probes_dropped = 0;
  Time six_silent_until = net.now() + kTimeout + 3 * kPeriod;
  net.filter = [&](int from, const Outgoing &o) {
    if (from == 6 && o.to == 8 && net.now() < six_silent_until) return 0;
    bool probe = from == 8 && o.msg.type == MsgType::emit_request && (o.to == 4 || o.to == 5);
    if (probe && probes_dropped < 2) {
      ++probes_dropped;
      return 0;
    }
    return 1;
  };
  net.pause(7);
  net.run_until(net.now() + 8 * kTimeout);
  EXPECT_EQ(probes_dropped, 2);
  EXPECT_TRUE(net.all_survivors_know_exactly({7}));
  for (int r = 0; r < 16; ++r)
    if (r != 7) EXPECT_FALSE(net.fenced(r)) << "rank " << r;
}

// A host's last rank has its observer on the next host: its host's first rank watches its process too
// (RingDetector::host_tail), so its crash is seen at once on its host, not after the observer's timeout.
TEST(DetectorHostTail, CrashOfAHostsLastRankIsSeenOnItsHost) {
  SimNet net(hosts(16, 4));
  net.run_until(2 * kTimeout);
  EXPECT_EQ(net.node(4).host_tail(), 7);
  EXPECT_EQ(net.node(5).host_tail(), -1);  // its emitter is on its host
  EXPECT_EQ(net.node(0).host_tail(), 3);   // the ring wraps: rank 0's emitter is 15 (host 3)
  net.crash(7);
  Time t0 = net.now();
  ASSERT_TRUE(net.run_until([&] { return net.all_survivors_know_exactly({7}); }, t0 + 10 * kTimeout));
  EXPECT_LE(net.now() - t0, 20 * kMs);  // a tick and a few hops, not a timeout
  ASSERT_FALSE(net.learned[4].empty());
  EXPECT_EQ(net.learned[4][0].how, How::exited);
  EXPECT_EQ(net.node(8).emitter(), 6);
  EXPECT_EQ(net.node(4).host_tail(), 6);  // the next one back
  net.crash(6);  // and again
  t0 = net.now();
  ASSERT_TRUE(net.run_until([&] { return net.all_survivors_know_exactly({6, 7}); }, t0 + 10 * kTimeout));
  EXPECT_LE(net.now() - t0, 20 * kMs);
  net.run_until(net.now() + 3 * kTimeout);
  expect_fenced_exactly(net, {});
  EXPECT_TRUE(net.all_survivors_know_exactly({6, 7}));
}

TEST(DetectorHostTail, OneHostHasNoTail) {
  SimNet net(hosts(8, 8));
  net.run_until(2 * kTimeout);
  for (int r = 0; r < 8; ++r) EXPECT_EQ(net.node(r).host_tail(), -1) << "rank " << r;
}
