// Replica placement and rank maps (replica/placement.hpp): the host rule, the inverse maps, the leader
// and its change on a death.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

#include "replica/placement.hpp"

namespace cohort::replica {
namespace {

void expect_bijection(const Placement &p) {
  std::set<int> seen;
  for (int l = 0; l < p.logical_size(); ++l)
    for (int k = 0; k < p.replicas(); ++k) {
      int w = p.world(l, k);
      ASSERT_GE(w, 0);
      ASSERT_LT(w, p.world_size());
      EXPECT_TRUE(seen.insert(w).second) << "world " << w << " used twice";
      EXPECT_EQ(p.logical(w), l);
      EXPECT_EQ(p.replica(w), k);
    }
  EXPECT_EQ(static_cast<int>(seen.size()), p.world_size());
}

TEST(ReplicaPlacement, WithoutHostsReplicaKOfLogicalLIsWorldKNPlusL) {
  for (int r = 1; r <= 3; ++r)
    for (int n : {1, 2, 5, 64}) {
      Placement p(n, r);
      expect_bijection(p);
      for (int l = 0; l < n; ++l)
        for (int k = 0; k < r; ++k) EXPECT_EQ(p.world(l, k), k * n + l);
    }
}

TEST(ReplicaPlacement, RejectsBadShapesWithAClearMessage) {
  EXPECT_THROW(Placement(0, 2), std::invalid_argument);
  EXPECT_THROW(Placement(4, 0), std::invalid_argument);
  EXPECT_THROW(Placement(4, 4), std::invalid_argument);
  EXPECT_THROW(Placement(4, 2, std::vector<int>(7, 0)), std::invalid_argument);
  try {
    Placement(4, 4);
  } catch (const std::invalid_argument &e) {
    EXPECT_STREQ(e.what(), "replica: replicas must be 1, 2 or 3");
  }
}

// Hosts filled in blocks by the launcher (world ranks 0..N-1 on host 0, ...): twins land on r hosts.
TEST(ReplicaPlacement, BlockHostsPutTwinsOnDifferentHosts) {
  for (int r = 2; r <= 3; ++r)
    for (int n : {1, 3, 8}) {
      std::vector<int> host;
      for (int w = 0; w < n * r; ++w) host.push_back(100 + w / n);
      Placement p(n, r, host);
      expect_bijection(p);
      EXPECT_EQ(p.shared_host_ranks(), 0);
      for (int l = 0; l < n; ++l)
        for (int k = 0; k < r; ++k) EXPECT_EQ(p.host(p.world(l, k)), k);
    }
}

// Hosts filled round-robin (world rank w on host w mod H), more hosts than replicas, uneven hosts:
// whenever no host has more than N ranks, no logical rank has two replicas on one host.
TEST(ReplicaPlacement, AnyHostsOfAtMostNRanksSeparateEveryLogicalRank) {
  for (int r = 2; r <= 3; ++r)
    for (int n : {2, 4, 7, 12})
      for (int hosts = r; hosts <= r + 3; ++hosts) {
        std::vector<int> host;
        for (int w = 0; w < n * r; ++w) host.push_back(w % hosts);
        Placement p(n, r, host);
        expect_bijection(p);
        int biggest = (n * r + hosts - 1) / hosts;
        if (biggest <= n) EXPECT_EQ(p.shared_host_ranks(), 0) << "n=" << n << " r=" << r << " hosts=" << hosts;
        // A lost host takes at most one replica of each logical rank.
        for (int h = 0; h < hosts && biggest <= n; ++h)
          for (int l = 0; l < n; ++l) {
            int on_h = 0;
            for (int k = 0; k < r; ++k) on_h += p.host(p.world(l, k)) == h;
            EXPECT_LE(on_h, 1);
          }
      }
}

// A host with c > N ranks must double up c - N logical ranks (r = 2); the rule doubles no more.
TEST(ReplicaPlacement, OversizedHostDoublesUpTheFewestLogicalRanks) {
  int n = 5, r = 2;
  for (int c = n; c <= 2 * n; ++c) {
    std::vector<int> host(static_cast<std::size_t>(n * r), 1);
    for (int w = 0; w < c; ++w) host[static_cast<std::size_t>(w)] = 0;  // host 0 has c ranks
    Placement p(n, r, host);
    expect_bijection(p);
    EXPECT_EQ(p.shared_host_ranks(), c - n) << "c=" << c;
  }
  // One host only: every logical rank shares it, and the order is the identity.
  Placement one(4, 3, std::vector<int>(12, 7));
  EXPECT_EQ(one.shared_host_ranks(), 4);
  for (int w = 0; w < 12; ++w) EXPECT_EQ(one.world(w % 4, w / 4), w);
}

TEST(ReplicaPlacement, InterleavedHostKeysAreGroupedByHost) {
  // World ranks alternate between hosts "a" and "b" (keys 9 and 3): replicas 0 on host a, 1 on host b.
  std::vector<int> host = {9, 3, 9, 3, 9, 3};
  Placement p(3, 2, host);
  expect_bijection(p);
  EXPECT_EQ(p.world(0, 0), 0);
  EXPECT_EQ(p.world(1, 0), 2);
  EXPECT_EQ(p.world(2, 0), 4);
  EXPECT_EQ(p.world(0, 1), 1);
  EXPECT_EQ(p.world(2, 1), 5);
  EXPECT_EQ(p.shared_host_ranks(), 0);
  EXPECT_EQ(p.describe().substr(0, 36), "logical 0: world 0 (host 0), world 1");
}

TEST(ReplicaLiveness, LeaderIsTheLowestLiveReplicaAndMovesUpOnDeath) {
  Placement p(4, 3);
  Liveness live(&p);
  EXPECT_EQ(live.leader(2), p.world(2, 0));
  Death d = live.mark_dead(p.world(2, 1));  // a twin: leader unchanged
  EXPECT_TRUE(d.was_alive);
  EXPECT_FALSE(d.leader_changed);
  EXPECT_EQ(d.logical, 2);
  EXPECT_EQ(d.replica, 1);
  EXPECT_EQ(live.live_replicas(2), 2);
  d = live.mark_dead(p.world(2, 0));  // the leader: replica 2 leads
  EXPECT_TRUE(d.leader_changed);
  EXPECT_EQ(d.new_leader, p.world(2, 2));
  EXPECT_FALSE(d.logical_dead);
  EXPECT_EQ(live.live(2), std::vector<int>{p.world(2, 2)});
  d = live.mark_dead(p.world(2, 0));  // again: nothing changes
  EXPECT_FALSE(d.was_alive);
  EXPECT_FALSE(d.leader_changed);
  d = live.mark_dead(p.world(2, 2));
  EXPECT_TRUE(d.logical_dead);
  EXPECT_EQ(d.new_leader, -1);
  EXPECT_FALSE(live.logical_alive(2));
  EXPECT_TRUE(live.logical_alive(1));
}

}  // namespace
}  // namespace cohort::replica
