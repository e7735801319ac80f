// topology/: ring order and shuffle, live-ring stepping, broadcast targets computed by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "topology/ring.hpp"

using cohort::topology::Bcast;
using cohort::topology::bcast_offsets;
using cohort::topology::LiveRing;
using cohort::topology::ring_order;

namespace {
std::vector<int> offs(Bcast b, int live) { return bcast_offsets(b, live); }
}  // namespace

TEST(DetectorTopology, IdentityOrderWithoutShuffle) {
  EXPECT_EQ(ring_order(5, false, 99), (std::vector<int>{0, 1, 2, 3, 4}));
}

TEST(DetectorTopology, ShuffleIsAPermutationIdenticalForASeed) {
  for (int n : {1, 2, 7, 64, 1000}) {
    std::vector<int> a = ring_order(n, true, 12345);
    std::vector<int> b = ring_order(n, true, 12345);  // what every other rank computes
    EXPECT_EQ(a, b);
    std::vector<int> sorted(a);
    std::sort(sorted.begin(), sorted.end());
    std::vector<int> ident(static_cast<size_t>(n));
    std::iota(ident.begin(), ident.end(), 0);
    EXPECT_EQ(sorted, ident);
  }
  EXPECT_NE(ring_order(64, true, 1), ring_order(64, true, 2));
  EXPECT_NE(ring_order(64, true, 1), ring_order(64, false, 1));
}

TEST(DetectorTopology, ShuffleDoesNotDependOnThePlatform) {
  // Golden value: splitmix64 + Fisher-Yates is fully specified, so this never changes.
  EXPECT_EQ(ring_order(8, true, 1), (std::vector<int>{4, 3, 2, 7, 5, 6, 0, 1}));
}

TEST(DetectorTopology, InverseMapsRanksToPositions) {
  cohort::topology::Ring ring(10, true, 7);
  for (int p = 0; p < 10; ++p) EXPECT_EQ(ring.position_of[ring.rank_at[p]], p);
}

TEST(DetectorTopology, ChordTargetsByHand) {
  EXPECT_EQ(offs(Bcast::chord, 1), (std::vector<int>{}));
  EXPECT_EQ(offs(Bcast::chord, 2), (std::vector<int>{1}));
  EXPECT_EQ(offs(Bcast::chord, 3), (std::vector<int>{1, 2}));
  EXPECT_EQ(offs(Bcast::chord, 4), (std::vector<int>{1, 2}));
  EXPECT_EQ(offs(Bcast::chord, 5), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(offs(Bcast::chord, 8), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(offs(Bcast::chord, 9), (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(offs(Bcast::chord, 16), (std::vector<int>{1, 2, 4, 8}));
}

TEST(DetectorTopology, BmgTargetsByHand) {
  EXPECT_EQ(offs(Bcast::bmg, 1), (std::vector<int>{}));
  EXPECT_EQ(offs(Bcast::bmg, 2), (std::vector<int>{1}));        // -1 is +1 on a ring of 2
  EXPECT_EQ(offs(Bcast::bmg, 3), (std::vector<int>{1, -1}));    // +-2 are -+1
  EXPECT_EQ(offs(Bcast::bmg, 5), (std::vector<int>{1, -1, 2, -2}));  // +-4 are -+1
  EXPECT_EQ(offs(Bcast::bmg, 8), (std::vector<int>{1, -1, 2, -2, 4}));  // -4 is +4
  EXPECT_EQ(offs(Bcast::bmg, 9), (std::vector<int>{1, -1, 2, -2, 4, -4}));  // +-8 are -+1
  EXPECT_EQ(offs(Bcast::bmg, 16), (std::vector<int>{1, -1, 2, -2, 4, -4, 8}));
}

TEST(DetectorTopology, HbaTargetsByHand) {
  EXPECT_EQ(offs(Bcast::hba, 1), (std::vector<int>{}));
  EXPECT_EQ(offs(Bcast::hba, 2), (std::vector<int>{1}));                 // k = 1; -1 is +1
  EXPECT_EQ(offs(Bcast::hba, 3), (std::vector<int>{1, -1}));             // k = 1
  EXPECT_EQ(offs(Bcast::hba, 4), (std::vector<int>{1, -1, 2}));          // k = 2; -2 is +2
  EXPECT_EQ(offs(Bcast::hba, 7), (std::vector<int>{1, -1, 2, -2}));      // k = 2
  EXPECT_EQ(offs(Bcast::hba, 8), (std::vector<int>{1, -1, 2, -2, 3, -3}));  // k = 3
  EXPECT_EQ(offs(Bcast::hba, 16), (std::vector<int>{1, -1, 2, -2, 3, -3, 4, -4}));  // k = 4
}

TEST(DetectorTopology, ParseBcastNames) {
  Bcast b;
  EXPECT_TRUE(cohort::topology::parse_bcast("bmg", &b));
  EXPECT_EQ(b, Bcast::bmg);
  EXPECT_TRUE(cohort::topology::parse_bcast("hba", &b));
  EXPECT_EQ(b, Bcast::hba);
  EXPECT_TRUE(cohort::topology::parse_bcast("chord", &b));
  EXPECT_EQ(b, Bcast::chord);
  EXPECT_FALSE(cohort::topology::parse_bcast("Chord", &b));
  EXPECT_FALSE(cohort::topology::parse_bcast("", &b));
}

TEST(DetectorTopology, LiveRingStepsOverAbsentPositions) {
  LiveRing ring(8);
  EXPECT_EQ(ring.step(0, 1), 1);
  EXPECT_EQ(ring.step(0, -1), 7);
  EXPECT_TRUE(ring.remove(1));
  EXPECT_FALSE(ring.remove(1));
  ring.remove(2);
  ring.remove(7);
  EXPECT_EQ(ring.live(), 5);  // 0 3 4 5 6
  EXPECT_EQ(ring.step(0, 1), 3);
  EXPECT_EQ(ring.step(0, 2), 4);
  EXPECT_EQ(ring.step(0, 4), 6);
  EXPECT_EQ(ring.step(0, 5), 0);
  EXPECT_EQ(ring.step(0, -1), 6);
  EXPECT_EQ(ring.step(3, -1), 0);
  EXPECT_EQ(ring.step(6, 1), 0);
  // From an absent position: the nearest live ones on each side.
  EXPECT_EQ(ring.step(1, 1), 3);
  EXPECT_EQ(ring.step(1, -1), 0);
  EXPECT_EQ(ring.step(7, 1), 0);
  EXPECT_EQ(ring.step(7, -1), 6);
  EXPECT_EQ(ring.absent_between(0, 3), (std::vector<int>{1, 2}));
  EXPECT_EQ(ring.absent_between(6, 0), (std::vector<int>{7}));
  EXPECT_EQ(ring.absent_between(5, 3), (std::vector<int>{7, 1, 2}));
}

TEST(DetectorTopology, LiveRingWithOneOrNoLivePosition) {
  LiveRing ring(3);
  ring.remove(0);
  ring.remove(2);
  EXPECT_EQ(ring.step(1, 1), -1);
  EXPECT_EQ(ring.step(0, 1), 1);
  ring.remove(1);
  EXPECT_EQ(ring.step(0, 1), -1);
}

// ---- host-grouped ring (each observer on its emitter's host wherever possible) ----
using cohort::topology::host_indices;
using cohort::topology::host_ring_order;

TEST(DetectorTopology, HostIndicesNumberHostsByTheirLowestRank) {
  EXPECT_EQ(host_indices({"b", "a", "b", "c", "a"}), (std::vector<int>{0, 1, 0, 2, 1}));
  EXPECT_EQ(host_indices({}), (std::vector<int>{}));
  EXPECT_EQ(host_indices({"x", "x", "x"}), (std::vector<int>{0, 0, 0}));
}

TEST(DetectorTopology, HostRingGroupsRoundRobinPlacement) {
  // ranks mapped by node over 2 hosts: ranks alternate; the ring keeps each host's ranks together.
  EXPECT_EQ(host_ring_order({0, 1, 0, 1, 0, 1}, false, 1), (std::vector<int>{0, 2, 4, 1, 3, 5}));
  // Block placement is already grouped: the identity.
  EXPECT_EQ(host_ring_order({0, 0, 0, 1, 1, 2}, false, 1), (std::vector<int>{0, 1, 2, 3, 4, 5}));
}

TEST(DetectorTopology, HostRingOnOneHostIsTheClassicRing) {
  for (bool shuffle : {false, true}) {
    for (std::uint64_t seed : {1ULL, 7ULL, 12345ULL}) {
      std::vector<int> one(37, 0);
      EXPECT_EQ(host_ring_order(one, shuffle, seed), ring_order(37, shuffle, seed)) << shuffle << " " << seed;
    }
  }
}

TEST(DetectorTopology, ShuffledHostRingKeepsHostsContiguous) {
  std::vector<int> host;
  for (int r = 0; r < 64; ++r) host.push_back((r * 7) % 5);  // 5 hosts, scattered placement
  std::vector<int> order = host_ring_order(host, true, 42);
  std::vector<int> sorted(order);
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> all(64);
  std::iota(all.begin(), all.end(), 0);
  EXPECT_EQ(sorted, all);
  int boundaries = 0;
  for (size_t p = 0; p < order.size(); ++p)
    boundaries += host[order[p]] != host[order[(p + 1) % order.size()]];
  EXPECT_EQ(boundaries, 5);  // exactly one boundary per host: every other observer is on its emitter's host
  EXPECT_EQ(order, host_ring_order(host, true, 42));
  EXPECT_NE(order, host_ring_order(host, true, 43));
  EXPECT_NE(order, host_ring_order(host, false, 42));
}

TEST(DetectorTopology, HostRingIsTheRingsPositionMap) {
  cohort::topology::Ring ring(std::vector<int>{0, 1, 0, 1}, false, 1);
  EXPECT_EQ(ring.rank_at, (std::vector<int>{0, 2, 1, 3}));
  EXPECT_EQ(ring.position_of, (std::vector<int>{0, 2, 1, 3}));
}
