// Peer maps: world rank of a communicator rank, and when MPI_ANY_SOURCE can no longer be satisfied.
#include "wrap/p2p/p2p_peer_map.hpp"

#include <gtest/gtest.h>

#include <set>

namespace {

using cohort::wrap::p2p::PeerMap;

struct Dead {
  std::set<int> world;
  bool operator()(int w) const { return world.count(w) != 0; }
};

TEST(PeerMap, WorldRanks) {
  PeerMap m({5, 3, 7, -1}, 1);  // a communicator over world ranks 5, 3, 7 and one outside the world
  EXPECT_EQ(m.size(), 4);
  EXPECT_EQ(m.world_rank(0), 5);
  EXPECT_EQ(m.world_rank(2), 7);
  EXPECT_EQ(m.world_rank(3), -1);
  EXPECT_EQ(m.world_rank(4), -1);
  EXPECT_EQ(m.world_rank(-1), -1);
}

TEST(PeerMap, AnySourceFailsOnlyWhenEveryOtherPeerIsDead) {
  PeerMap m({5, 3, 7}, 1);  // the caller is world rank 3
  EXPECT_FALSE(m.no_live_sender(Dead{{}}));
  EXPECT_FALSE(m.no_live_sender(Dead{{5}}));
  EXPECT_FALSE(m.no_live_sender(Dead{{7}}));
  EXPECT_TRUE(m.no_live_sender(Dead{{5, 7}}));
  EXPECT_TRUE(m.no_live_sender(Dead{{5, 7, 0, 1}}));  // unrelated world ranks do not matter
}

TEST(PeerMap, CallerAloneCanStillSendToItself) {
  PeerMap m({4}, 0);
  EXPECT_FALSE(m.no_live_sender(Dead{{1, 2, 3}}));
}

TEST(PeerMap, ProcessOutsideTheWorldIsNeverDead) {
  PeerMap m({0, -1, 2}, 0);
  EXPECT_FALSE(m.no_live_sender(Dead{{2}}));
}

TEST(PeerMap, IntercommunicatorRemoteGroup) {
  PeerMap m({2, 3}, -1);  // remote group: the caller is not among the peers
  EXPECT_FALSE(m.no_live_sender(Dead{{2}}));
  EXPECT_TRUE(m.no_live_sender(Dead{{2, 3}}));
}

}  // namespace
