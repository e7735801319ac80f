// The small collectives' schedules (topology/schedule.hpp) run on every rank of a simulated network:
// FIFO channels per ordered pair, rounds in order, a round's receive completing once its message is there.
// Checks every result, that each contribution is combined exactly once, that no message is left over and
// that no schedule deadlocks, for every size up to 70 and every root.
#include "topology/schedule.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <map>
#include <random>
#include <utility>
#include <vector>

namespace cohort::topology {
namespace {

// A value that records what was combined into it: the set of contributing ranks and how many times.
struct Value {
  std::vector<int> hits;  // hits[r]: how many times rank r's contribution is in it
  double sum = 0;         // a floating-point sum, to compare results bit for bit
};

Value combine(const Value &in, const Value &acc) {
  Value v = acc;
  for (std::size_t r = 0; r < v.hits.size(); ++r) v.hits[r] += in.hits[r];
  v.sum = in.sum + acc.sum;  // accumulator = received op accumulator
  return v;
}

struct Rank {
  std::vector<CollStep> steps;
  std::size_t pos = 0;
  bool sent = false;  // the current round's sends went out
  Value acc;
  bool done() const { return pos == steps.size(); }
};

// Runs all ranks; returns false on a deadlock. Channels: (from, to) -> messages in flight.
bool simulate(CollKind kind, int n, int root, std::vector<Rank> *ranks, int *max_rounds) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(n * 1000 + root));
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  ranks->assign(static_cast<std::size_t>(n), Rank{});
  for (int r = 0; r < n; ++r) {
    Rank &k = (*ranks)[r];
    coll_schedule(kind, n, r, root, &k.steps);
    k.acc.hits.assign(static_cast<std::size_t>(n), 0);
    if (kind != CollKind::bcast || r == root) k.acc.hits[r] = 1;
    k.acc.sum = kind == CollKind::bcast && r != root ? 0 : d(rng);
    int rounds = 0;
    for (const CollStep &s : k.steps) rounds += s.op == CollStep::end_round;
    if (!k.steps.empty()) EXPECT_EQ(k.steps.back().op, CollStep::end_round) << "rank " << r;
    *max_rounds = std::max(*max_rounds, rounds);
  }
  std::map<std::pair<int, int>, std::deque<Value>> channels;
  // A round: its sends go out at once (the accumulator at the round's start); it ends when its receive has
  // a message. Ranks are stepped in turn until none can move.
  for (bool moved = true; moved;) {
    moved = false;
    for (int r = 0; r < n; ++r) {
      Rank &k = (*ranks)[r];
      while (!k.done()) {
        std::size_t end = k.pos;
        const CollStep *recv = nullptr;
        for (; k.steps[end].op != CollStep::end_round; ++end) {
          const CollStep &s = k.steps[end];
          if (s.op != CollStep::send) {
            EXPECT_EQ(recv, nullptr) << "two receives in one round, rank " << r;
            recv = &s;
          }
        }
        if (!k.sent) {
          for (std::size_t i = k.pos; i < end; ++i) {
            if (k.steps[i].op == CollStep::send) channels[{r, k.steps[i].peer}].push_back(k.acc);
          }
          k.sent = true;
          moved = true;
        }
        if (recv != nullptr && channels[{recv->peer, r}].empty()) break;
        if (recv != nullptr) {
          auto &q = channels[{recv->peer, r}];
          Value got = q.front();
          q.pop_front();
          // (a barrier's messages carry no data: what a rank knows grows with each one)
          k.acc = recv->op == CollStep::recv && kind != CollKind::barrier ? got : combine(got, k.acc);
        }
        k.pos = end + 1;
        k.sent = false;
      }
    }
  }
  for (auto &c : channels) EXPECT_TRUE(c.second.empty()) << "message " << c.first.first << "->" << c.first.second << " left";
  for (const Rank &k : *ranks) {
    if (!k.done()) return false;
  }
  return true;
}

int ceil_log2(int n) {
  int l = 0;
  while ((1 << l) < n) ++l;
  return l;
}

TEST(CollSchedule, BarrierEveryRankHearsFromEveryOtherTransitively) {
  for (int n = 1; n <= 70; ++n) {
    std::vector<Rank> ranks;
    int rounds = 0;
    ASSERT_TRUE(simulate(CollKind::barrier, n, 0, &ranks, &rounds)) << "n=" << n;
    EXPECT_EQ(rounds, ceil_log2(n)) << "n=" << n;
    // Dissemination: after ceil(log2 n) rounds, each rank's knowledge covers every rank (hits >= 1).
    for (int r = 0; r < n; ++r) {
      for (int s = 0; s < n; ++s) EXPECT_GE(ranks[r].acc.hits[s], 1) << "n=" << n << " rank " << r << " missed " << s;
    }
  }
}

TEST(CollSchedule, BcastDeliversTheRootsValueToAll) {
  for (int n = 1; n <= 70; ++n) {
    for (int root = 0; root < n; ++root) {
      std::vector<Rank> ranks;
      int rounds = 0;
      ASSERT_TRUE(simulate(CollKind::bcast, n, root, &ranks, &rounds)) << "n=" << n << " root=" << root;
      EXPECT_LE(rounds, ceil_log2(n) + 1);
      const Value &want = ranks[root].acc;
      for (int r = 0; r < n; ++r) {
        EXPECT_EQ(ranks[r].acc.hits, want.hits) << "n=" << n << " root=" << root << " rank " << r;
        EXPECT_EQ(ranks[r].acc.sum, want.sum);
      }
    }
  }
}

TEST(CollSchedule, ReduceCombinesEachRankOnceAtTheRoot) {
  for (int n = 1; n <= 70; ++n) {
    for (int root = 0; root < n; ++root) {
      std::vector<Rank> ranks;
      int rounds = 0;
      ASSERT_TRUE(simulate(CollKind::reduce, n, root, &ranks, &rounds)) << "n=" << n << " root=" << root;
      EXPECT_LE(rounds, ceil_log2(n));
      for (int s = 0; s < n; ++s) EXPECT_EQ(ranks[root].acc.hits[s], 1) << "n=" << n << " root=" << root << " rank " << s;
    }
  }
}

TEST(CollSchedule, AllreduceGivesEveryRankTheSameBits) {
  for (int n = 1; n <= 70; ++n) {
    std::vector<Rank> ranks;
    int rounds = 0;
    ASSERT_TRUE(simulate(CollKind::allreduce, n, 0, &ranks, &rounds)) << "n=" << n;
    EXPECT_LE(rounds, ceil_log2(n) + 2);
    for (int r = 0; r < n; ++r) {
      for (int s = 0; s < n; ++s) EXPECT_EQ(ranks[r].acc.hits[s], 1) << "n=" << n << " rank " << r << " of " << s;
      EXPECT_EQ(ranks[r].acc.sum, ranks[0].acc.sum) << "n=" << n << " rank " << r;  // bit for bit
    }
  }
}

TEST(CollSchedule, NoMessagesOnOneRank) {
  std::vector<CollStep> steps{{CollStep::send, 3}};
  for (CollKind k : {CollKind::barrier, CollKind::bcast, CollKind::reduce, CollKind::allreduce}) {
    coll_schedule(k, 1, 0, 0, &steps);
    EXPECT_TRUE(steps.empty());
  }
}

}  // namespace
}  // namespace cohort::topology
