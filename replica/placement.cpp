#include "replica/placement.hpp"

#include <algorithm>
#include <numeric>
#include <set>
#include <sstream>
#include <stdexcept>

namespace cohort::replica {
namespace {

void check(int n, int r) {
  if (n < 1) throw std::invalid_argument("replica: the number of logical ranks must be >= 1");
  if (r < 1 || r > kMaxReplicas) throw std::invalid_argument("replica: replicas must be 1, 2 or 3");
}

}  // namespace

Placement::Placement(int logical_size, int replicas) : n_(logical_size), r_(replicas) {
  check(n_, r_);
  host_.assign(static_cast<std::size_t>(n_) * r_, 0);
  std::vector<int> order(host_.size());
  std::iota(order.begin(), order.end(), 0);
  build(order);
}

Placement::Placement(int logical_size, int replicas, const std::vector<int> &host)
    : n_(logical_size), r_(replicas) {
  check(n_, r_);
  if (host.size() != static_cast<std::size_t>(n_) * r_)
    throw std::invalid_argument("replica: one host per world rank is needed (logical ranks x replicas)");
  // Hosts numbered by their lowest world rank, so that the rule does not depend on the host keys' values.
  std::vector<int> first_seen;
  host_.resize(host.size());
  for (std::size_t w = 0; w < host.size(); ++w) {
    auto it = std::find(first_seen.begin(), first_seen.end(), host[w]);
    if (it == first_seen.end()) {
      first_seen.push_back(host[w]);
      it = first_seen.end() - 1;
    }
    host_[w] = static_cast<int>(it - first_seen.begin());
  }
  std::vector<int> order(host.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return host_[a] < host_[b]; });
  build(order);
}

void Placement::build(const std::vector<int> &order) {
  world_of_ = order;
  logical_of_.assign(order.size(), -1);
  replica_of_.assign(order.size(), -1);
  for (std::size_t pos = 0; pos < order.size(); ++pos) {
    logical_of_[static_cast<std::size_t>(order[pos])] = static_cast<int>(pos % n_);
    replica_of_[static_cast<std::size_t>(order[pos])] = static_cast<int>(pos / n_);
  }
}

int Placement::shared_host_ranks() const {
  int shared = 0;
  for (int l = 0; l < n_; ++l) {
    std::set<int> hosts;
    for (int k = 0; k < r_; ++k) hosts.insert(host(world(l, k)));
    if (static_cast<int>(hosts.size()) < r_) ++shared;
  }
  return shared;
}

std::string Placement::describe() const {
  std::ostringstream os;
  for (int l = 0; l < n_; ++l) {
    os << "logical " << l << ":";
    for (int k = 0; k < r_; ++k)
      os << (k ? ", " : " ") << "world " << world(l, k) << " (host " << host(world(l, k)) << ")";
    os << "\n";
  }
  return os.str();
}

Liveness::Liveness(const Placement *placement)
    : p_(placement) {}

int Liveness::live_replicas(int logical) const {
  int c = 0;
  for (int k = 0; k < p_->replicas(); ++k) c += alive(p_->world(logical, k)) ? 1 : 0;
  return c;
}

int Liveness::leader(int logical) const {
  for (int k = 0; k < p_->replicas(); ++k)
    if (alive(p_->world(logical, k))) return p_->world(logical, k);
  return -1;
}

std::vector<int> Liveness::live(int logical) const {
  std::vector<int> out;
  for (int k = 0; k < p_->replicas(); ++k)
    if (alive(p_->world(logical, k))) out.push_back(p_->world(logical, k));
  return out;
}

Death Liveness::mark_dead(int world_rank) {
  Death d;
  d.logical = p_->logical(world_rank);
  d.replica = p_->replica(world_rank);
  int before = leader(d.logical);
  d.was_alive = alive(world_rank);
  dead_.insert(world_rank);
  d.new_leader = leader(d.logical);
  d.leader_changed = before != d.new_leader;
  d.logical_dead = d.new_leader < 0;
  return d;
}

}  // namespace cohort::replica
