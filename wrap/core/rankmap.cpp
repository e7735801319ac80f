#include "wrap/core/rankmap.hpp"

#include <numeric>
#include <utility>

namespace cohort::wrap {

RankMap::RankMap(std::vector<int> alias_to_world)
    : to_world_(std::move(alias_to_world)), to_sub_(to_world_.size()), members_(to_world_.size()) {
  std::iota(to_sub_.begin(), to_sub_.end(), 0);
  std::iota(members_.begin(), members_.end(), 0);
}

RankMap RankMap::shrunk(const std::vector<int> &kept) const {
  RankMap m;
  m.to_world_ = to_world_;
  m.to_sub_.assign(to_world_.size(), -1);
  m.members_.reserve(kept.size());
  for (int s : kept) {
    int a = members_[s];
    m.to_sub_[a] = static_cast<int>(m.members_.size());
    m.members_.push_back(a);
  }
  return m;
}

int RankMap::world_to_alias(int w) const {
  for (int a = 0; a < alias_size(); ++a) {
    if (to_world_[a] == w) return a;
  }
  return -1;
}

std::vector<int> RankMap::member_world_ranks() const {
  std::vector<int> out;
  out.reserve(members_.size());
  for (int a : members_) out.push_back(to_world_[a]);
  return out;
}

void PositionalLayout::uniform(const RankMap &map, int count) {
  counts.assign(map.sub_size(), count);
  displs.resize(map.sub_size());
  for (int s = 0; s < map.sub_size(); ++s) displs[s] = map.to_alias(s) * count;
}

}  // namespace cohort::wrap
