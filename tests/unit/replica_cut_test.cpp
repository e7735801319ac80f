// The cut of a dead sender (replica/protocol.hpp, docs/design/replication.md): when every replica of a
// logical rank died, its last messages had reached some replicas of a receiver and not others. The
// receiver's replicas relay what they have, the leader decides each channel's cut, and every live replica
// delivers exactly the messages below it, in order, then the channel is closed. The leader (then its
// successor) is killed at every step of that exchange.
#include <gtest/gtest.h>

#include <deque>
#include <map>

#include "replica/protocol.hpp"

namespace cohort::replica {
namespace {

// Logical rank 0 (the sender, r replicas) sends 6 messages on context 0 and 3 on context 2 to logical
// rank 1, whose replica j got the first have[j][ctx] of them before every sender replica died.
struct CutJob {
  int r;
  std::vector<std::array<int, 2>> have;
  std::vector<int> victims;  // receiver replicas killed, in order, at steps kill_at[i]
  std::vector<int> kill_at;

  Placement p{2, r};
  std::map<int, Endpoint> eps;
  std::map<int, std::map<int, std::vector<std::uint64_t>>> delivered;  // world rank -> context -> seqs
  std::deque<Wire> net;
  std::set<int> dead;

  CutJob(int r_, std::vector<std::array<int, 2>> have_, std::vector<int> victims_, std::vector<int> kill_at_)
      : r(r_), have(std::move(have_)), victims(std::move(victims_)), kill_at(std::move(kill_at_)) {}

  int b(int j) const { return p.world(1, j); }

  void drain(int w) {
    for (int ctx : {0, 2}) {
      Delivery d;
      while (eps.at(w).deliver(Channel{ctx, 0, 1}, &d)) {
        EXPECT_EQ(d.payload, (Bytes{static_cast<unsigned char>(ctx), static_cast<unsigned char>(d.seq)}));
        delivered[w][ctx].push_back(d.seq);
      }
    }
  }

  void kill(int w) {
    dead.insert(w);
    std::deque<Wire> kept;
    for (const Wire &m : net)
      if (m.from != w && m.to != w) kept.push_back(m);
    net.swap(kept);
    for (auto &[x, e] : eps) {
      if (dead.count(x)) continue;
      std::vector<Wire> o;
      e.replica_died(w, &o);
      net.insert(net.end(), o.begin(), o.end());
      drain(x);  // (a replica left alone commits at once)
    }
  }

  void run() {
    for (int l = 0; l < 2; ++l)
      for (int k = 0; k < r; ++k) eps.emplace(p.world(l, k), Endpoint(&p, p.world(l, k)));
    // the sender's copies: replica 0's reach each receiver replica's prefix
    std::vector<Wire> copies;
    for (int ctx : {0, 2})
      for (int i = 0; i < (ctx == 0 ? 6 : 3); ++i)
        eps.at(p.world(0, 0)).send(ctx, 1, i, Bytes{static_cast<unsigned char>(ctx), static_cast<unsigned char>(i)},
                                   &copies);
    for (const Wire &m : copies) {
      int j = p.replica(m.to);
      if (static_cast<int>(m.seq) < have[static_cast<std::size_t>(j)][m.channel.context == 0 ? 0 : 1]) {
        std::vector<Wire> none;
        eps.at(m.to).receive(m, &none);
        drain(m.to);
      }
    }
    for (int k = 0; k < r; ++k) kill(p.world(0, k));
    std::size_t next_victim = 0;
    for (int step = 0; !net.empty() || next_victim < victims.size(); ++step) {
      if (next_victim < victims.size() && step >= kill_at[next_victim]) {
        kill(b(victims[next_victim++]));
        continue;
      }
      if (net.empty()) continue;
      Wire m = net.front();
      net.pop_front();
      if (dead.count(m.to)) continue;
      std::vector<Wire> o;
      eps.at(m.to).receive(m, &o);
      net.insert(net.end(), o.begin(), o.end());
      drain(m.to);
    }
  }

  // Every live receiver replica: a's cuts settled, the same cut per channel, no less than anything a live
  // replica had, and exactly the messages below it delivered, in order.
  void check(const std::string &what) {
    std::map<int, std::uint64_t> cuts;
    for (int j = 0; j < r; ++j) {
      int w = b(j);
      if (dead.count(w)) continue;
      Endpoint &e = eps.at(w);
      EXPECT_TRUE(e.cut_settled(0)) << what;
      for (int ctx : {0, 2}) {
        std::uint64_t end = 0;
        if (!e.cut(Channel{ctx, 0, 1}, &end)) end = 0;
        if (cuts.count(ctx)) EXPECT_EQ(cuts[ctx], end) << what << " ctx " << ctx;
        cuts[ctx] = end;
        std::vector<std::uint64_t> want;
        for (std::uint64_t s = 0; s < end; ++s) want.push_back(s);
        EXPECT_EQ(delivered[w][ctx], want) << what << " replica " << j << " ctx " << ctx;
      }
      EXPECT_EQ(e.counters().conflicts, 0u) << what;
    }
    for (int j = 0; j < r; ++j)
      if (!dead.count(b(j)))
        for (int c = 0; c < 2; ++c)
          EXPECT_GE(cuts[c == 0 ? 0 : 2], static_cast<std::uint64_t>(have[static_cast<std::size_t>(j)][static_cast<std::size_t>(c)]))
              << what;
  }
};

TEST(ReplicaCut, EveryReplicaDeliversUpToTheLongestPrefix) {
  CutJob job(3, {{6, 0}, {2, 3}, {4, 1}}, {}, {});
  job.run();
  job.check("no kill");
  std::uint64_t end = 0;
  ASSERT_TRUE(job.eps.at(job.b(1)).cut(Channel{0, 0, 1}, &end));
  EXPECT_EQ(end, 6u);
  ASSERT_TRUE(job.eps.at(job.b(0)).cut(Channel{2, 0, 1}, &end));
  EXPECT_EQ(end, 3u);
}

TEST(ReplicaCut, NothingReceivedAnywhere) {
  CutJob job(2, {{0, 0}, {0, 0}}, {}, {});
  job.run();
  job.check("nothing");
}

// The leader, and then its successor, killed at every pair of steps of the cut exchange: the survivors
// agree. (A survivor's cut may be shorter than a dead replica's prefix: nobody used what was lost.)
TEST(ReplicaCut, LeaderKilledAtEveryStep) {
  const std::vector<std::vector<std::array<int, 2>>> patterns = {
      {{6, 0}, {2, 3}, {4, 1}}, {{0, 0}, {6, 3}, {1, 2}}, {{3, 3}, {3, 3}, {3, 3}}};
  int runs = 0;
  for (const auto &have : patterns)
    for (int k1 = 0; k1 < 30; ++k1) {
      CutJob one(3, have, {0}, {k1});
      one.run();
      one.check("leader at " + std::to_string(k1));
      ++runs;
      for (int k2 = k1; k2 < 30; k2 += 3) {
        CutJob two(3, have, {0, 1}, {k1, k2});
        two.run();
        two.check("leader at " + std::to_string(k1) + ", successor at " + std::to_string(k2));
        ++runs;
      }
    }
  EXPECT_GT(runs, 300);
}

}  // namespace
}  // namespace cohort::replica
