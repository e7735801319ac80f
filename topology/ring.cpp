#include "topology/ring.hpp"

#include <algorithm>

namespace cohort::topology {
namespace {

std::uint64_t splitmix64(std::uint64_t *state) {
  std::uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Uniform in [0, bound) without modulo bias (rejection sampling).
std::uint64_t below(std::uint64_t *state, std::uint64_t bound) {
  std::uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  for (;;) {
    std::uint64_t v = splitmix64(state);
    if (v < limit) return v % bound;
  }
}

int ceil_log2(int n) {
  int k = 0;
  while ((1LL << k) < n) ++k;
  return k;
}

int floor_log2(int n) {
  int k = 0;
  while ((2LL << k) <= n) ++k;
  return k;
}

}  // namespace

std::vector<int> ring_order(int n, bool shuffle, std::uint64_t seed) {
  std::vector<int> order(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) order[i] = i;
  if (!shuffle) return order;
  std::uint64_t state = seed;
  for (int i = n - 1; i > 0; --i) {
    int j = static_cast<int>(below(&state, static_cast<std::uint64_t>(i) + 1));
    std::swap(order[i], order[j]);
  }
  return order;
}

std::vector<int> inverse(const std::vector<int> &order) {
  std::vector<int> inv(order.size());
  for (size_t p = 0; p < order.size(); ++p) inv[order[p]] = static_cast<int>(p);
  return inv;
}

std::vector<int> host_indices(const std::vector<std::string> &keys) {
  std::vector<int> out(keys.size());
  std::vector<const std::string *> seen;  // host index -> key
  for (size_t r = 0; r < keys.size(); ++r) {
    size_t h = 0;
    while (h < seen.size() && *seen[h] != keys[r]) ++h;
    if (h == seen.size()) seen.push_back(&keys[r]);
    out[r] = static_cast<int>(h);
  }
  return out;
}

std::vector<int> host_ring_order(const std::vector<int> &host, bool shuffle, std::uint64_t seed) {
  int hosts = 0;
  for (int h : host) hosts = std::max(hosts, h + 1);
  std::vector<std::vector<int>> members(static_cast<size_t>(hosts));
  for (size_t r = 0; r < host.size(); ++r) members[static_cast<size_t>(host[r])].push_back(static_cast<int>(r));
  // NOTE: host indices come from host_indices, so index order is the order of each host's lowest rank.
  std::vector<int> order;
  order.reserve(host.size());
  for (int h : ring_order(hosts, shuffle, seed)) {
    const std::vector<int> &m = members[static_cast<size_t>(h)];
    for (int i : ring_order(static_cast<int>(m.size()), shuffle, seed + static_cast<std::uint64_t>(h)))
      order.push_back(m[static_cast<size_t>(i)]);
  }
  return order;
}

Ring::Ring(int n, bool shuffle, std::uint64_t seed)
    : rank_at(ring_order(n, shuffle, seed)), position_of(inverse(rank_at)) {}

Ring::Ring(const std::vector<int> &host, bool shuffle, std::uint64_t seed)
    : rank_at(host_ring_order(host, shuffle, seed)), position_of(inverse(rank_at)) {}

const char *bcast_name(Bcast b) {
  switch (b) {
    case Bcast::chord: return "chord";
    case Bcast::bmg: return "bmg";
    case Bcast::hba: return "hba";
  }
  return "?";
}

bool parse_bcast(const std::string &text, Bcast *out) {
  for (Bcast b : {Bcast::chord, Bcast::bmg, Bcast::hba}) {
    if (text == bcast_name(b)) {
      *out = b;
      return true;
    }
  }
  return false;
}

std::vector<int> bcast_offsets(Bcast b, int live) {
  std::vector<int> out;
  if (live <= 1) return out;
  auto add = [&](int off) {
    int m = ((off % live) + live) % live;
    if (m == 0) return;
    for (int o : out) {
      if (((o % live) + live) % live == m) return;
    }
    out.push_back(off);
  };
  int k = ceil_log2(live) - 1;  // 2^k < live <= 2^(k+1)
  switch (b) {
    case Bcast::chord:
      for (int i = 0; i <= k; ++i) add(1 << i);
      break;
    case Bcast::bmg:
      for (int i = 0; i <= k; ++i) {
        add(1 << i);
        add(-(1 << i));
      }
      break;
    case Bcast::hba: {
      int h = floor_log2(live);
      for (int i = 1; i <= h; ++i) {
        add(i);
        add(-i);
      }
      break;
    }
  }
  return out;
}

bool LiveRing::absent(int pos) const { return std::binary_search(absent_.begin(), absent_.end(), pos); }

bool LiveRing::remove(int pos) {
  auto it = std::lower_bound(absent_.begin(), absent_.end(), pos);
  if (it != absent_.end() && *it == pos) return false;
  absent_.insert(it, pos);
  return true;
}

int LiveRing::live_index_floor(int pos) const {
  return pos - static_cast<int>(std::lower_bound(absent_.begin(), absent_.end(), pos) - absent_.begin());
}

int LiveRing::nth_live(int idx) const {
  int pos = idx;
  for (int a : absent_) {
    if (a <= pos) {
      ++pos;
    } else {
      break;
    }
  }
  return pos;
}

int LiveRing::step(int from, int steps) const {
  int live_n = live();
  bool from_live = !absent(from);
  if (live_n == 0 || (live_n == 1 && from_live)) return -1;
  long idx = live_index_floor(from) + static_cast<long>(steps);
  if (steps > 0 && !from_live) idx -= 1;
  idx %= live_n;
  if (idx < 0) idx += live_n;
  return nth_live(static_cast<int>(idx));
}

std::vector<int> LiveRing::absent_between(int a, int b) const {
  std::vector<int> out;
  if (a < b) {
    for (int p : absent_)
      if (p > a && p < b) out.push_back(p);
  } else {
    for (int p : absent_)
      if (p > a) out.push_back(p);
    for (int p : absent_)
      if (p < b) out.push_back(p);
  }
  return out;
}

}  // namespace cohort::topology
