#include "replica/comms.hpp"

#include <algorithm>
#include <tuple>

namespace cohort::replica {

int LogicalComm::rank_of(int w) const {
  for (int r = 0; r < size(); ++r)
    if (members[static_cast<std::size_t>(r)] == w) return r;
  return -1;
}

CommTable::CommTable(int n, int self) : self_(self) {
  std::vector<int> all(static_cast<std::size_t>(n));
  for (int l = 0; l < n; ++l) all[static_cast<std::size_t>(l)] = l;
  world_ = make(0, std::move(all));
  self_comm_ = make(1, {self});
}

std::shared_ptr<const LogicalComm> CommTable::make(int context, std::vector<int> members) {
  auto c = std::make_shared<LogicalComm>();
  c->context = context;
  c->members = std::move(members);
  c->rank = c->rank_of(self_);
  if (c->rank < 0) return nullptr;
  return c;
}

std::shared_ptr<const LogicalComm> CommTable::split(const LogicalComm &parent, const std::vector<Contribution> &all) {
  int agreed = 0;
  for (const Contribution &c : all) agreed = std::max(agreed, c.counter);
  counter_ = std::max(counter_, agreed + 1);
  const int mine = all[static_cast<std::size_t>(parent.rank)].color;
  if (mine == kUndefined) return nullptr;
  std::vector<std::tuple<int, int, int>> order;  // key, parent rank, logical world rank
  for (int r = 0; r < parent.size(); ++r) {
    const Contribution &c = all[static_cast<std::size_t>(r)];
    if (c.color == mine) order.emplace_back(c.key, r, parent.members[static_cast<std::size_t>(r)]);
  }
  std::sort(order.begin(), order.end());
  std::vector<int> members;
  for (const auto &o : order) members.push_back(std::get<2>(o));
  return make(agreed, std::move(members));
}

std::shared_ptr<const LogicalComm> CommTable::create(const std::vector<int> &members, const std::vector<int> &counters) {
  int agreed = 0;
  for (int c : counters) agreed = std::max(agreed, c);
  counter_ = std::max(counter_, agreed + 1);
  return make(agreed, members);
}

Similarity CommTable::compare(const LogicalComm &a, const LogicalComm &b) {
  if (&a == &b) return Similarity::ident;
  if (a.members == b.members) return Similarity::congruent;
  std::vector<int> x = a.members, y = b.members;
  std::sort(x.begin(), x.end());
  std::sort(y.begin(), y.end());
  return x == y ? Similarity::similar : Similarity::unequal;
}

}  // namespace cohort::replica
