// Synchronous sends under replication (replica/protocol.hpp; MPI 4.0, 3.4: a synchronous send completes
// only once the receiver matched it): match acknowledgements from the receiver's replicas, the first one
// wins, an acknowledgement that arrives before the send is kept, and a receiver replica killed at every
// step of the exchange is masked by its twin.
#include <gtest/gtest.h>

#include <deque>
#include <map>

#include "replica/protocol.hpp"

namespace cohort::replica {
namespace {

Bytes one(int v) { return Bytes{static_cast<unsigned char>(v)}; }

TEST(ReplicaSync, CompletesWhenOneReceiverReplicaMatched) {
  Placement p(2, 2);
  Endpoint s(&p, p.world(0, 0)), r0(&p, p.world(1, 0)), r1(&p, p.world(1, 1));
  std::vector<Wire> out, none;
  const std::uint64_t seq = s.send(3, 1, 7, one(1), &out, true);
  const Channel c{3, 0, 1};
  EXPECT_FALSE(s.synced(c, seq));
  r0.receive(out[0], &none);  // copies to r0 and r1
  r1.receive(out[1], &none);
  Delivery d;
  ASSERT_TRUE(r1.deliver(c, &d));
  EXPECT_TRUE(d.synchronous);
  std::vector<Wire> acks;
  r1.matched(d, &acks);
  ASSERT_EQ(acks.size(), 2u);  // to both sender replicas
  EXPECT_EQ(acks[0].kind, Wire::matched);
  s.receive(acks[0].to == s.self() ? acks[0] : acks[1], &none);
  EXPECT_TRUE(s.synced(c, seq));
  // r0's acknowledgement, later, changes nothing and is not kept
  ASSERT_TRUE(r0.deliver(c, &d));
  std::vector<Wire> more;
  r0.matched(d, &more);
  for (const Wire &w : more)
    if (w.to == s.self()) s.receive(w, &none);
  EXPECT_TRUE(s.synced(c, seq));
  EXPECT_EQ(s.counters().match_acks_used, 1u);
  EXPECT_TRUE(none.empty());
}

TEST(ReplicaSync, StandardSendsNeedNoAcknowledgement) {
  Placement p(2, 2);
  Endpoint s(&p, p.world(0, 1)), r(&p, p.world(1, 0));
  std::vector<Wire> out, acks;
  std::uint64_t seq = s.send(0, 1, 0, one(2), &out);
  EXPECT_TRUE(s.synced(Channel{0, 0, 1}, seq));
  r.receive(out[0], &acks);
  Delivery d;
  ASSERT_TRUE(r.deliver(Channel{0, 0, 1}, &d));
  r.matched(d, &acks);
  EXPECT_TRUE(acks.empty());
}

// A sender replica behind its twin: the receiver matched the twin's copy and acknowledged to both before
// the slow replica sent; its send completes at once.
TEST(ReplicaSync, AcknowledgementBeforeTheSendIsKept) {
  Placement p(2, 2);
  Endpoint fast(&p, p.world(0, 0)), slow(&p, p.world(0, 1)), r(&p, p.world(1, 0));
  std::vector<Wire> out, acks, none;
  fast.send(0, 1, 0, one(3), &out, true);
  r.receive(out[0], &none);
  Delivery d;
  ASSERT_TRUE(r.deliver(Channel{0, 0, 1}, &d));
  r.matched(d, &acks);
  for (const Wire &w : acks) (w.to == fast.self() ? fast : slow).receive(w, &none);
  std::vector<Wire> later;
  std::uint64_t seq = slow.send(0, 1, 0, one(3), &later, true);
  EXPECT_TRUE(slow.synced(Channel{0, 0, 1}, seq));
  EXPECT_TRUE(fast.synced(Channel{0, 0, 1}, seq));
  // a second synchronous send on the channel waits for its own acknowledgement
  std::uint64_t next = slow.send(0, 1, 0, one(4), &later, true);
  EXPECT_FALSE(slow.synced(Channel{0, 0, 1}, next));
}

// Three synchronous sends from 2 sender replicas to 2 (then 3) receiver replicas over a FIFO network; one
// receiver replica killed after each delivery of the exchange (its messages in flight lost): every live
// sender replica completes every send, since a live receiver replica matches each message too.
TEST(ReplicaSync, ReceiverReplicaKilledAtEveryStep) {
  for (int r = 2; r <= 3; ++r)
    for (int victim = 0; victim < r; ++victim)
      for (int kill_at = 0; kill_at < 40; ++kill_at) {
        Placement p(2, r);
        std::map<int, Endpoint> eps;
        for (int l = 0; l < 2; ++l)
          for (int k = 0; k < r; ++k) eps.emplace(p.world(l, k), Endpoint(&p, p.world(l, k)));
        const int dead = p.world(1, victim);
        std::deque<Wire> net;
        std::vector<Wire> out;
        std::vector<std::uint64_t> seqs;
        for (int k = 0; k < r; ++k)
          for (int i = 0; i < 3; ++i) {
            std::uint64_t s = eps.at(p.world(0, k)).send(0, 1, i, one(i), &out, true);
            if (k == 0) seqs.push_back(s);
          }
        net.insert(net.end(), out.begin(), out.end());
        bool killed = false;
        int step = 0;
        const Channel c{0, 0, 1};
        while (!net.empty()) {
          if (step++ == kill_at && !killed) {
            killed = true;
            std::deque<Wire> kept;
            for (const Wire &w : net)
              if (w.from != dead && w.to != dead) kept.push_back(w);
            net.swap(kept);
            for (auto &[w, e] : eps)
              if (w != dead) {
                std::vector<Wire> o;
                e.replica_died(dead, &o);
                net.insert(net.end(), o.begin(), o.end());
              }
            continue;
          }
          Wire w = net.front();
          net.pop_front();
          if (killed && w.to == dead) continue;
          Endpoint &e = eps.at(w.to);
          std::vector<Wire> o;
          e.receive(w, &o);
          Delivery d;
          while (e.deliver(c, &d)) e.matched(d, &o);  // the program matches at once
          net.insert(net.end(), o.begin(), o.end());
        }
        for (int k = 0; k < r; ++k)
          for (std::uint64_t s : seqs)
            EXPECT_TRUE(eps.at(p.world(0, k)).synced(c, s))
                << "r=" << r << " victim=" << victim << " kill_at=" << kill_at << " seq=" << s;
      }
}

}  // namespace
}  // namespace cohort::replica
