// topology/hierarchy: Legio's local/global/POV layout and the repair plan after failures at every
// position (a non-master, a master, a whole local group, several groups at once).
#include "topology/hierarchy.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <utility>
#include <vector>

using cohort::topology::build_hierarchy;
using cohort::topology::Hierarchy;
using cohort::topology::HierarchySpec;
using cohort::topology::parse_hierarchy;
using cohort::topology::plan_repair;
using cohort::topology::RepairPlan;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

namespace {

HierarchySpec fixed(int k) {
  HierarchySpec s;
  s.mode = HierarchySpec::fixed;
  s.k = k;
  return s;
}

// 16 ranks in groups of 4: {0..3} {4..7} {8..11} {12..15}.
Hierarchy sixteen_by_four() { return build_hierarchy(std::vector<int>(16, 0), fixed(4)); }

}  // namespace

TEST(HierarchyParse, AcceptsOffHostAndK) {
  HierarchySpec s;
  std::string err;
  EXPECT_TRUE(parse_hierarchy(nullptr, &s, &err));
  EXPECT_EQ(s.mode, HierarchySpec::off);
  EXPECT_TRUE(parse_hierarchy("off", &s, &err));
  EXPECT_EQ(s.mode, HierarchySpec::off);
  EXPECT_TRUE(parse_hierarchy("host", &s, &err));
  EXPECT_EQ(s.mode, HierarchySpec::host);
  EXPECT_TRUE(parse_hierarchy("4", &s, &err));
  EXPECT_EQ(s.mode, HierarchySpec::fixed);
  EXPECT_EQ(s.k, 4);
}

TEST(HierarchyParse, RejectsBadValuesWithOneLine) {
  HierarchySpec s;
  for (const char *bad : {"1", "0", "-4", "4x", "hosts", "on", " 4", "99999999999", "4\n", "\nhost"}) {
    std::string err;
    EXPECT_FALSE(parse_hierarchy(bad, &s, &err)) << bad;
    EXPECT_THAT(err, ::testing::HasSubstr("COHORT_HIERARCHY"));
    EXPECT_EQ(err.find('\n'), std::string::npos);
    EXPECT_EQ(s.mode, HierarchySpec::off);
  }
}

TEST(HierarchyBuild, FixedBlocksMastersGlobalAndPov) {
  Hierarchy h = sixteen_by_four();
  ASSERT_EQ(h.groups(), 4);
  EXPECT_THAT(h.local[1], ElementsAre(4, 5, 6, 7));
  EXPECT_THAT(h.master, ElementsAre(0, 4, 8, 12));
  EXPECT_THAT(h.global(), ElementsAre(0, 4, 8, 12));
  EXPECT_THAT(h.pov(2), ElementsAre(0, 4, 8, 9, 10, 11, 12));
  EXPECT_EQ(h.group_of[13], 3);
  EXPECT_TRUE(h.is_master(8));
  EXPECT_FALSE(h.is_master(9));
}

TEST(HierarchyBuild, LastFixedBlockMayBeSmaller) {
  Hierarchy h = build_hierarchy(std::vector<int>(10, 0), fixed(4));
  ASSERT_EQ(h.groups(), 3);
  EXPECT_THAT(h.local[2], ElementsAre(8, 9));
}

TEST(HierarchyBuild, HostModeGroupsInterleavedHosts) {
  // Ranks placed round-robin over 3 hosts: groups follow hosts, numbered by lowest rank.
  Hierarchy h = build_hierarchy({0, 1, 2, 0, 1, 2, 0}, HierarchySpec{HierarchySpec::host, 0});
  ASSERT_EQ(h.groups(), 3);
  EXPECT_THAT(h.local[0], ElementsAre(0, 3, 6));
  EXPECT_THAT(h.local[2], ElementsAre(2, 5));
  EXPECT_THAT(h.global(), ElementsAre(0, 1, 2));
}

TEST(HierarchyBuild, OffIsOneGroup) {
  Hierarchy h = build_hierarchy(std::vector<int>(5, 0), HierarchySpec{});
  ASSERT_EQ(h.groups(), 1);
  EXPECT_THAT(h.global(), ElementsAre(0));
}

TEST(HierarchyRepair, NonMasterAtEveryPositionRepairsOnlyItsLocalAndPov) {
  for (int r = 0; r < 16; ++r) {
    Hierarchy h = sixteen_by_four();
    if (h.is_master(r)) continue;
    RepairPlan p = plan_repair(&h, {r});
    const int g = r / 4;
    EXPECT_THAT(p.local, ElementsAre(g)) << r;
    EXPECT_FALSE(p.global) << r;
    EXPECT_THAT(p.pov, ElementsAre(g)) << r;
    EXPECT_THAT(p.new_master, IsEmpty()) << r;
    EXPECT_THAT(h.global(), ElementsAre(0, 4, 8, 12)) << r;
    EXPECT_EQ(h.local[static_cast<std::size_t>(g)].size(), 3u) << r;
  }
}

TEST(HierarchyRepair, MasterReElectsLowestLiveAndRepairsGlobalAndEveryPov) {
  for (int g = 0; g < 4; ++g) {
    Hierarchy h = sixteen_by_four();
    RepairPlan p = plan_repair(&h, {4 * g});
    EXPECT_THAT(p.local, ElementsAre(g));
    EXPECT_TRUE(p.global);
    EXPECT_THAT(p.pov, ElementsAre(0, 1, 2, 3));
    EXPECT_THAT(p.new_master, ElementsAre(std::make_pair(g, 4 * g + 1)));
    EXPECT_TRUE(h.is_master(4 * g + 1));
    EXPECT_EQ(h.global()[static_cast<std::size_t>(g)], 4 * g + 1);
  }
}

TEST(HierarchyRepair, MasterAndItsSuccessorTogetherElectTheNextOne) {
  Hierarchy h = sixteen_by_four();
  RepairPlan p = plan_repair(&h, {5, 4});
  EXPECT_THAT(p.new_master, ElementsAre(std::make_pair(1, 6)));
  EXPECT_THAT(h.global(), ElementsAre(0, 6, 8, 12));
}

TEST(HierarchyRepair, WholeLocalGroupLeavesTheHierarchy) {
  Hierarchy h = sixteen_by_four();
  RepairPlan p = plan_repair(&h, {8, 9, 10, 11});
  EXPECT_THAT(p.local, IsEmpty());  // nobody left to shrink it
  EXPECT_TRUE(p.global);
  EXPECT_THAT(p.pov, ElementsAre(0, 1, 3));
  EXPECT_THAT(p.new_master, ElementsAre(std::make_pair(2, -1)));
  EXPECT_THAT(h.global(), ElementsAre(0, 4, 12));
}

TEST(HierarchyRepair, NonMastersInTwoGroups) {
  Hierarchy h = sixteen_by_four();
  RepairPlan p = plan_repair(&h, {15, 2});
  EXPECT_THAT(p.local, ElementsAre(0, 3));
  EXPECT_FALSE(p.global);
  EXPECT_THAT(p.pov, ElementsAre(0, 3));
}

TEST(HierarchyRepair, SuccessiveFailuresAndRepeatsAreIdempotent) {
  Hierarchy h = sixteen_by_four();
  plan_repair(&h, {12});
  EXPECT_TRUE(plan_repair(&h, {12}).empty());  // already applied
  RepairPlan p = plan_repair(&h, {13});        // the re-elected master dies too
  EXPECT_TRUE(p.global);
  EXPECT_THAT(p.new_master, ElementsAre(std::make_pair(3, 14)));
  EXPECT_THAT(h.local[3], ElementsAre(14, 15));
  EXPECT_TRUE(plan_repair(&h, {99, -1}).empty());  // not ranks of the hierarchy
}

TEST(HierarchyRepair, SingleRankGroupsAreAllMasters) {
  Hierarchy h = build_hierarchy({0, 1, 2}, HierarchySpec{HierarchySpec::host, 0});
  RepairPlan p = plan_repair(&h, {1});
  EXPECT_TRUE(p.global);
  EXPECT_THAT(p.new_master, ElementsAre(std::make_pair(1, -1)));
  EXPECT_THAT(h.global(), ElementsAre(0, 2));
}
