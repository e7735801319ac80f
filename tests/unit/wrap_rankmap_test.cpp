// The alias <-> substitute <-> world rank maps, positional layouts and the driver's decision table.
#include <initializer_list>
#include <utility>
#include <gtest/gtest.h>

#include "wrap/core/outcome.hpp"
#include "wrap/core/rankmap.hpp"

namespace cohort::wrap {
namespace {

// An alias of 6 ranks whose world ranks are 10..15.
RankMap six() { return RankMap({10, 11, 12, 13, 14, 15}); }

TEST(RankMap, StartsComplete) {
  RankMap m = six();
  EXPECT_TRUE(m.complete());
  EXPECT_EQ(m.alias_size(), 6);
  EXPECT_EQ(m.sub_size(), 6);
  for (int a = 0; a < 6; ++a) {
    EXPECT_EQ(m.to_sub(a), a);
    EXPECT_EQ(m.to_alias(a), a);
    EXPECT_EQ(m.to_world(a), 10 + a);
  }
  EXPECT_EQ(m.to_sub(-1), -1);
  EXPECT_EQ(m.to_sub(6), -1);
}

TEST(RankMap, ShrinkKeepsAliasNumbering) {
  RankMap m = six().shrunk({0, 2, 3, 5});  // alias ranks 1 and 4 died
  EXPECT_FALSE(m.complete());
  EXPECT_EQ(m.alias_size(), 6);
  EXPECT_EQ(m.sub_size(), 4);
  EXPECT_EQ(m.to_sub(1), -1);
  EXPECT_EQ(m.to_sub(4), -1);
  EXPECT_EQ(m.to_sub(5), 3);
  EXPECT_EQ(m.to_alias(2), 3);
  EXPECT_EQ(m.to_world(4), 14);  // dead ranks keep their world rank
  EXPECT_EQ(m.members(), (std::vector<int>{0, 2, 3, 5}));
  EXPECT_EQ(m.member_world_ranks(), (std::vector<int>{10, 12, 13, 15}));
  EXPECT_EQ(m.world_to_alias(13), 3);
  EXPECT_EQ(m.world_to_alias(99), -1);
}

TEST(RankMap, SecondShrinkComposesThroughTheFirst) {
  // Substitute ranks of the first shrink are {0,2,3,5}; the second keeps substitute ranks 1 and 3.
  RankMap m = six().shrunk({0, 2, 3, 5}).shrunk({1, 3});
  EXPECT_EQ(m.members(), (std::vector<int>{2, 5}));
  EXPECT_EQ(m.to_sub(2), 0);
  EXPECT_EQ(m.to_sub(5), 1);
  EXPECT_EQ(m.to_sub(0), -1);
}

TEST(PositionalLayout, LiveBlocksStayAtOriginalOffsets) {
  PositionalLayout l;
  l.uniform(six().shrunk({0, 2, 5}), 3);
  EXPECT_EQ(l.counts, (std::vector<int>{3, 3, 3}));
  EXPECT_EQ(l.displs, (std::vector<int>{0, 6, 15}));
  l.uniform(six().shrunk({1}), 0);
  EXPECT_EQ(l.displs, (std::vector<int>{0}));
}

TEST(PositionalLayout, IrregularBlocksOfTheMembersOnly) {
  // Gatherv-style arguments per alias rank: irregular counts, displacements out of order, a gap.
  const int counts[] = {2, 0, 5, 1, 3, 4};
  const int displs[] = {20, 0, 3, 1, 9, 14};
  PositionalLayout l;
  l.select(six().shrunk({1, 2, 4}), counts, displs);
  EXPECT_EQ(l.counts, (std::vector<int>{0, 5, 3}));
  EXPECT_EQ(l.displs, (std::vector<int>{0, 3, 9}));
  l.select(six(), counts, displs);  // nobody dead: the arguments as given
  EXPECT_EQ(l.counts, (std::vector<int>(counts, counts + 6)));
  EXPECT_EQ(l.displs, (std::vector<int>(displs, displs + 6)));
}

TEST(PositionalLayout, MembersOfPicksAnyElementType) {
  const double types[] = {0.5, 1.5, 2.5, 3.5, 4.5, 5.5};
  std::vector<double> out;
  members_of(six().shrunk({0, 5}), types, &out);
  EXPECT_EQ(out, (std::vector<double>{0.5, 5.5}));
}

TEST(NextStep, UniformOutcome) {
  EXPECT_EQ(next_step(true, false, 0, 4), Step::finish);
  EXPECT_EQ(next_step(true, true, 0, 4), Step::shrink_then_finish);
  EXPECT_EQ(next_step(false, true, 0, 4), Step::shrink_then_retry);
  EXPECT_EQ(next_step(false, false, 3, 4), Step::shrink_then_retry);
  EXPECT_EQ(next_step(false, true, 4, 4), Step::give_up);
}

// The AND of the window codes of a set of (call, completed) positions, as the agreement computes it.
int agreed(std::initializer_list<std::pair<unsigned long long, bool>> ranks) {
  int a = ~0;
  for (auto [j, c] : ranks) a &= window_code(j, c);
  return a;
}

TEST(Window, SameCallDecidesOnTheCompletedFlags) {
  bool all = false;
  EXPECT_EQ(read_window(agreed({{7, true}, {7, true}, {7, true}}), 7, &all), Window::same_call);
  EXPECT_TRUE(all);
  EXPECT_EQ(read_window(agreed({{7, true}, {7, false}, {7, true}}), 7, &all), Window::same_call);
  EXPECT_FALSE(all);
  EXPECT_EQ(read_window(agreed({{0, true}}), 0, &all), Window::same_call);
  EXPECT_TRUE(all);
}

TEST(Window, OneCallApartIsSeenFromBothSidesAtEveryCallNumber) {
  for (unsigned long long m = 0; m < 12; ++m) {
    // Ranks still in the barrier of call m (completed) and ranks past it at call m + 1 (either state).
    for (bool c : {true, false}) {
      int a = agreed({{m, true}, {m + 1, c}, {m, true}, {m + 1, true}});
      bool all = false;
      EXPECT_EQ(read_window(a, m, &all), Window::ahead) << m;
      EXPECT_EQ(read_window(a, m + 1, &all), Window::behind) << m;
    }
  }
}

TEST(Window, ADeadRanksStaleCodeOneCallBehindMakesTheSurvivorsRetry) {
  // Every survivor at call 5 completed it; a dead rank's code from call 4 (it died in barrier 4, after
  // they passed it) reached the agreement: the survivors retry call 5 after the shrink.
  bool all = false;
  EXPECT_EQ(read_window(agreed({{5, true}, {5, true}, {4, true}}), 5, &all), Window::behind);
}

TEST(Window, ThreeCallsApartIsInconsistent) {
  bool all = false;
  EXPECT_EQ(read_window(agreed({{3, true}, {4, true}, {5, true}}), 4, &all), Window::inconsistent);
}

}  // namespace
}  // namespace cohort::wrap
