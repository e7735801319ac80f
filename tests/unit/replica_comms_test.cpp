// The program's communicators under replication (replica/comms.hpp): members and ranks of a split, of a
// create over a group, and the contexts the members agree on (MPI 4.0 sections 7.4.2, 7.4.3: dup, split,
// create, create_group; 7.4.1: compare).
#include <gtest/gtest.h>

#include <set>

#include "replica/comms.hpp"

namespace cohort::replica {
namespace {

// Every logical rank of an n-rank world splits the parent with the colors and keys given; returns each
// rank's new communicator (null where undefined).
std::vector<std::shared_ptr<const LogicalComm>> split_all(std::vector<CommTable> &tables,
                                                          const std::vector<std::shared_ptr<const LogicalComm>> &parent,
                                                          const std::vector<int> &colors, const std::vector<int> &keys) {
  std::vector<Contribution> all;
  for (std::size_t r = 0; r < parent.size(); ++r) {
    int w = parent[0]->members[r];
    all.push_back({colors[r], keys[r], tables[static_cast<std::size_t>(w)].counter()});
  }
  std::vector<std::shared_ptr<const LogicalComm>> out;
  for (std::size_t r = 0; r < parent.size(); ++r) {
    int w = parent[0]->members[r];
    out.push_back(tables[static_cast<std::size_t>(w)].split(*parent[r], all));
  }
  return out;
}

std::vector<CommTable> world(int n) {
  std::vector<CommTable> t;
  for (int l = 0; l < n; ++l) t.emplace_back(n, l);
  return t;
}

TEST(ReplicaComms, WorldAndSelf) {
  CommTable t(4, 2);
  EXPECT_EQ(t.world()->rank, 2);
  EXPECT_EQ(t.world()->size(), 4);
  EXPECT_EQ(t.world()->p2p_context(), 0);
  EXPECT_EQ(t.world()->coll_context(), 1);
  EXPECT_EQ(t.self_comm()->members, std::vector<int>{2});
  EXPECT_EQ(t.self_comm()->rank, 0);
  EXPECT_NE(t.self_comm()->p2p_context(), t.world()->p2p_context());
  EXPECT_EQ(t.world()->rank_of(3), 3);
  EXPECT_EQ(t.self_comm()->rank_of(3), -1);
}

// MPI_Comm_split: members ordered by key, then old rank; MPI_UNDEFINED gets no communicator.
TEST(ReplicaComms, SplitByColorThenKeyThenRank) {
  auto t = world(5);
  std::vector<std::shared_ptr<const LogicalComm>> w;
  for (auto &x : t) w.push_back(x.world());
  auto s = split_all(t, w, {0, 1, 0, CommTable::kUndefined, 0}, {5, 0, 5, 0, 1});
  EXPECT_EQ(s[0]->members, (std::vector<int>{4, 0, 2}));
  EXPECT_EQ(s[0]->rank, 1);
  EXPECT_EQ(s[2]->rank, 2);
  EXPECT_EQ(s[4]->rank, 0);
  EXPECT_EQ(s[1]->members, std::vector<int>{1});
  EXPECT_EQ(s[3], nullptr);
  // the disjoint results share a context; every rank, the undefined one too, moved past it
  EXPECT_EQ(s[0]->context, s[1]->context);
  EXPECT_NE(s[0]->context, w[0]->context);
  for (auto &x : t) EXPECT_GT(x.counter(), s[0]->context);
}

// Overlapping MPI_Comm_create_group calls leave the members' counters apart; a later creation over a
// pair that already shares a communicator still gets a context of its own (the max rule).
TEST(ReplicaComms, ContextsNeverRepeatForAPairOfMembers) {
  auto t = world(4);
  auto a0 = t[0].create({0, 1}, {t[0].counter(), t[1].counter()});
  auto a1 = t[1].create({0, 1}, {a0->context, a0->context});
  ASSERT_TRUE(a0 && a1);
  EXPECT_EQ(a0->context, a1->context);
  auto b1 = t[1].create({1, 2}, {t[1].counter(), t[2].counter()});
  auto b2 = t[2].create({1, 2}, {b1->context, t[2].counter()});
  EXPECT_EQ(b1->context, b2->context);
  EXPECT_GT(b1->context, a0->context);
  // a dup of the world: counters differ (2 never took part in the first), the max wins
  std::vector<std::shared_ptr<const LogicalComm>> w;
  for (auto &x : t) w.push_back(x.world());
  auto d = split_all(t, w, {0, 0, 0, 0}, {0, 1, 2, 3});
  std::set<int> ctx;
  for (auto &c : d) ctx.insert(c->context);
  EXPECT_EQ(ctx.size(), 1u);
  EXPECT_GT(*ctx.begin(), b1->context);
  EXPECT_EQ(d[3]->members, (std::vector<int>{0, 1, 2, 3}));
  // not a member: no communicator
  EXPECT_EQ(t[3].create({0, 1}, {9, 9}), nullptr);
}

// A split of a split: ranks are those of the parent, members stay logical world ranks.
TEST(ReplicaComms, SplitOfASplit) {
  auto t = world(4);
  std::vector<std::shared_ptr<const LogicalComm>> w;
  for (auto &x : t) w.push_back(x.world());
  auto s = split_all(t, w, {0, 1, 0, 1}, {3, 2, 1, 0});  // {2,0} and {3,1}
  EXPECT_EQ(s[0]->members, (std::vector<int>{2, 0}));
  std::vector<std::shared_ptr<const LogicalComm>> odd{s[3], s[1]};  // in parent rank order
  std::vector<Contribution> all{{7, 0, t[3].counter()}, {7, 0, t[1].counter()}};
  auto n3 = t[3].split(*s[3], all);
  auto n1 = t[1].split(*s[1], all);
  EXPECT_EQ(n3->members, (std::vector<int>{3, 1}));
  EXPECT_EQ(n1->rank, 1);
  EXPECT_GT(n1->context, s[1]->context);
}

TEST(ReplicaComms, Compare) {
  CommTable t(3, 0);
  LogicalComm a{5, {0, 1, 2}, 0}, b{6, {0, 1, 2}, 0}, c{7, {2, 1, 0}, 2}, d{8, {0, 1}, 0};
  EXPECT_EQ(CommTable::compare(a, a), Similarity::ident);
  EXPECT_EQ(CommTable::compare(a, b), Similarity::congruent);
  EXPECT_EQ(CommTable::compare(a, c), Similarity::similar);
  EXPECT_EQ(CommTable::compare(a, d), Similarity::unequal);
}

}  // namespace
}  // namespace cohort::replica
