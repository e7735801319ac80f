// topology/cartesian.hpp: the Cartesian queries cohort answers for its Cartesian aliases, checked against
// the numbering the MPI standard defines (row-major, section 8.5.1) on small grids worked out by hand.
#include "topology/cartesian.hpp"

#include <gtest/gtest.h>

#include <set>

using cohort::topology::Cartesian;

TEST(Cartesian, RowMajorCoordsAndRankRoundTrip) {
  Cartesian g({3, 4}, {false, false});
  EXPECT_EQ(g.size(), 12);
  EXPECT_EQ(g.coords(0), (std::vector<int>{0, 0}));
  EXPECT_EQ(g.coords(5), (std::vector<int>{1, 1}));
  EXPECT_EQ(g.coords(11), (std::vector<int>{2, 3}));
  for (int r = 0; r < g.size(); ++r) EXPECT_EQ(g.rank(g.coords(r)), r);
}

TEST(Cartesian, RankWrapsOnlyPeriodicDimensions) {
  Cartesian g({3, 4}, {true, false});
  EXPECT_EQ(g.rank({-1, 0}), 8);   // row -1 is row 2
  EXPECT_EQ(g.rank({4, 1}), 5);    // row 4 is row 1
  EXPECT_EQ(g.rank({0, 4}), Cartesian::kNone);
  EXPECT_EQ(g.rank({0, -1}), Cartesian::kNone);
}

TEST(Cartesian, ShiftOffANonPeriodicEdgeIsNone) {
  Cartesian g({3, 4}, {false, false});
  int src = 0, dst = 0;
  g.shift(0, 1, 1, &src, &dst);  // rank 0 = (0,0): right neighbour 1, none to the left
  EXPECT_EQ(src, Cartesian::kNone);
  EXPECT_EQ(dst, 1);
  g.shift(5, 0, 1, &src, &dst);  // (1,1): up 1, down 9
  EXPECT_EQ(src, 1);
  EXPECT_EQ(dst, 9);
  g.shift(5, 0, 2, &src, &dst);  // two rows: off both edges... (1-2 = -1), (1+2 = 3)
  EXPECT_EQ(src, Cartesian::kNone);
  EXPECT_EQ(dst, Cartesian::kNone);
}

TEST(Cartesian, ShiftWrapsOnPeriodicDimensionsAndNegativeDisplacements) {
  Cartesian g({3, 4}, {true, true});
  int src = 0, dst = 0;
  g.shift(0, 1, 1, &src, &dst);
  EXPECT_EQ(src, 3);
  EXPECT_EQ(dst, 1);
  g.shift(0, 0, -1, &src, &dst);  // dest is the row above (wrapping to row 2), source the row below
  EXPECT_EQ(src, 4);
  EXPECT_EQ(dst, 8);
}

TEST(Cartesian, ShiftTowardsADeadRankStillNamesIt) {
  // Pure function of dims and periods: nothing about liveness; the point-to-point policy decides later.
  Cartesian g({2, 2}, {false, false});
  int src = 0, dst = 0;
  g.shift(0, 1, 1, &src, &dst);
  EXPECT_EQ(dst, 1);
}

TEST(Cartesian, SubGridsPartitionTheRanksAndKeepRowMajorOrder) {
  Cartesian g({2, 3, 4}, {false, true, false});
  std::vector<bool> remain{true, false, true};  // keep dims 0 and 2: 3 sub-grids of 2x4
  Cartesian s = g.sub(remain);
  EXPECT_EQ(s.dims(), (std::vector<int>{2, 4}));
  EXPECT_EQ(s.periodic(), (std::vector<bool>{false, false}));
  std::set<std::pair<int, int>> seen;
  for (int r = 0; r < g.size(); ++r) {
    std::vector<int> c = g.coords(r);
    EXPECT_EQ(g.sub_color(r, remain), c[1]);
    EXPECT_EQ(g.sub_rank(r, remain), s.rank({c[0], c[2]}));
    EXPECT_TRUE(seen.insert({g.sub_color(r, remain), g.sub_rank(r, remain)}).second);
  }
  EXPECT_EQ(seen.size(), 24u);
}

TEST(Cartesian, DroppingEveryDimensionGivesOnePointGrids) {
  Cartesian g({2, 2}, {false, false});
  std::vector<bool> none{false, false};
  EXPECT_EQ(g.sub(none).size(), 1);
  EXPECT_EQ(g.sub(none).ndims(), 0);
  EXPECT_EQ(g.sub_color(3, none), 3);
  EXPECT_EQ(g.sub_rank(3, none), 0);
}
