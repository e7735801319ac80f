#include "topology/hierarchy.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <set>

namespace cohort::topology {

namespace {
// The value with its control characters as \xNN, so that the error stays one line (detector/env.hpp's
// printable; topology does not depend on the detector).
std::string printable(const char *text) {
  static const char hex[] = "0123456789abcdef";
  std::string out;
  for (; *text != '\0'; ++text) {
    auto c = static_cast<unsigned char>(*text);
    if (c >= 0x20 && c != 0x7f) {
      out += *text;
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}
}  // namespace

bool parse_hierarchy(const char *text, HierarchySpec *spec, std::string *error) {
  *spec = HierarchySpec{};
  if (text == nullptr || *text == '\0' || std::strcmp(text, "off") == 0) return true;
  if (std::strcmp(text, "host") == 0) {
    spec->mode = HierarchySpec::host;
    return true;
  }
  char *end = nullptr;
  long k = std::strtol(text, &end, 10);
  if (*text >= '0' && *text <= '9' && end != nullptr && *end == '\0' && k >= 2 && k <= (1L << 20)) {
    spec->mode = HierarchySpec::fixed;
    spec->k = static_cast<int>(k);
    return true;
  }
  *error = std::string("invalid COHORT_HIERARCHY='") + printable(text) + "' (expected off, host or a local group size K >= 2)";
  return false;
}

std::vector<int> Hierarchy::global() const {
  std::vector<int> out;
  for (int m : master) {
    if (m >= 0) out.push_back(m);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int> Hierarchy::pov(int g) const {
  std::vector<int> out = global();
  for (int r : local[static_cast<std::size_t>(g)]) {
    if (!std::binary_search(out.begin(), out.end(), r)) out.push_back(r);
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool Hierarchy::is_master(int rank) const {
  if (rank < 0 || rank >= static_cast<int>(group_of.size())) return false;
  return master[static_cast<std::size_t>(group_of[static_cast<std::size_t>(rank)])] == rank;
}

Hierarchy build_hierarchy(const std::vector<int> &host, const HierarchySpec &spec) {
  const int n = static_cast<int>(host.size());
  Hierarchy h;
  h.group_of.assign(static_cast<std::size_t>(n), 0);
  std::vector<int> key(static_cast<std::size_t>(n), 0);  // rank -> group key before renumbering
  for (int r = 0; r < n; ++r) {
    if (spec.mode == HierarchySpec::host) key[static_cast<std::size_t>(r)] = host[static_cast<std::size_t>(r)];
    if (spec.mode == HierarchySpec::fixed) key[static_cast<std::size_t>(r)] = r / spec.k;
  }
  // Groups numbered in the order of their lowest rank (ranks are visited ascending).
  std::vector<int> index_of_key;
  for (int r = 0; r < n; ++r) {
    int k = key[static_cast<std::size_t>(r)];
    if (k >= static_cast<int>(index_of_key.size())) index_of_key.resize(static_cast<std::size_t>(k) + 1, -1);
    int &g = index_of_key[static_cast<std::size_t>(k)];
    if (g < 0) {
      g = static_cast<int>(h.local.size());
      h.local.emplace_back();
      h.master.push_back(r);
    }
    h.local[static_cast<std::size_t>(g)].push_back(r);
    h.group_of[static_cast<std::size_t>(r)] = g;
  }
  return h;
}

RepairPlan plan_repair(Hierarchy *h, const std::vector<int> &failed) {
  RepairPlan plan;
  std::set<int> locals;
  for (int r : failed) {
    if (r < 0 || r >= static_cast<int>(h->group_of.size())) continue;
    const int g = h->group_of[static_cast<std::size_t>(r)];
    std::vector<int> &members = h->local[static_cast<std::size_t>(g)];
    auto it = std::lower_bound(members.begin(), members.end(), r);
    if (it == members.end() || *it != r) continue;  // already removed
    members.erase(it);
    locals.insert(g);
    if (h->master[static_cast<std::size_t>(g)] == r) plan.global = true;
  }
  plan.local.assign(locals.begin(), locals.end());
  for (int g : plan.local) {
    const std::vector<int> &members = h->local[static_cast<std::size_t>(g)];
    const int m = members.empty() ? -1 : members.front();
    if (m != h->master[static_cast<std::size_t>(g)]) {
      h->master[static_cast<std::size_t>(g)] = m;
      plan.new_master.emplace_back(g, m);
    }
  }
  if (plan.global) {
    for (int g = 0; g < h->groups(); ++g) {
      if (h->master[static_cast<std::size_t>(g)] >= 0) plan.pov.push_back(g);
    }
  } else {
    for (int g : plan.local) {
      if (h->master[static_cast<std::size_t>(g)] >= 0) plan.pov.push_back(g);
    }
  }
  // An emptied group needs no local repair: nobody is left in it.
  plan.local.erase(std::remove_if(plan.local.begin(), plan.local.end(),
                                  [&](int g) { return h->local[static_cast<std::size_t>(g)].empty(); }),
                   plan.local.end());
  return plan;
}

}  // namespace cohort::topology
