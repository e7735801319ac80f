#include "replica/sdc_compare.hpp"

#include <algorithm>

namespace cohort::replica::sdc {

bool parse_mode(const std::string &text, Mode *mode) {
  if (text == "off") *mode = Mode::off;
  else if (text == "hash") *mode = Mode::hash;
  else if (text == "full") *mode = Mode::full;
  else return false;
  return true;
}

const char *mode_name(Mode m) {
  switch (m) {
    case Mode::off: return "off";
    case Mode::hash: return "hash";
    case Mode::full: return "full";
  }
  return "?";
}

Comparator::Comparator(Mode mode, int replicas, Limits limits)
    : mode_(mode), replicas_(replicas), limits_(limits) {}

bool Comparator::same(const Digest &a, const Digest &b) const {
  if (a.hash != b.hash) return false;
  return mode_ != Mode::full || a.bytes == b.bytes;
}

bool Comparator::completed(const Key &key) const {
  auto it = done_.find(key.channel);
  if (it == done_.end()) return false;
  return key.seq < it->second.below || it->second.above.count(key.seq) != 0;
}

void Comparator::mark_completed(const Key &key) {
  Done &d = done_[key.channel];
  if (key.seq < d.below) return;
  d.above.insert(key.seq);
  // Completions come nearly in sequence order; fold the contiguous prefix into the watermark so that
  // `above` holds only the out-of-order ones.
  while (!d.above.empty() && *d.above.begin() == d.below) {
    d.above.erase(d.above.begin());
    ++d.below;
  }
}

void Comparator::arrived(const Key &key, int from, Digest digest, const std::vector<int> &awaited,
                         std::vector<Verdict> *out) {
  const bool first = !pending_.count(key);
  arrived(key, from, std::move(digest), awaited, first, out);
}

void Comparator::kept(const Key &key, int from) {
  auto it = pending_.find(key);
  if (it != pending_.end()) it->second.delivered_from = from;
}

void Comparator::arrived(const Key &key, int from, Digest digest, const std::vector<int> &awaited, bool kept,
                         std::vector<Verdict> *out) {
  if (mode_ == Mode::off || from < 0 || from >= replicas_) return;
  auto it = pending_.find(key);
  if (it == pending_.end()) {
    if (completed(key)) {
      ++counters_.late;
      late(key, from, digest, out);
      return;
    }
    Pending p;
    for (int k : awaited)
      if (k >= 0 && k < replicas_) p.awaited.insert(k);
    it = pending_.emplace(key, std::move(p)).first;
  }
  Pending &p = it->second;
  if (p.content.count(from)) return;
  if (kept) p.delivered_from = from;
  std::size_t index = p.exemplars.size();
  for (std::size_t i = 0; i < p.exemplars.size(); ++i)
    if (same(p.exemplars[i], digest)) {
      index = i;
      break;
    }
  if (index == p.exemplars.size()) {
    pending_bytes_ += digest.bytes.size();
    p.exemplars.push_back(std::move(digest));
  }
  p.content[from] = index;
  p.awaited.erase(from);
  if (p.awaited.empty()) finish(it, out);
}

void Comparator::late(const Key &key, int from, const Digest &digest, std::vector<Verdict> *out) {
  auto it = agreed_.find(key);
  if (it == agreed_.end()) return;
  Agreed &a = it->second;
  for (int k : a.compared)
    if (k == from) return;
  if (digest.hash == a.hash) {
    a.compared.push_back(from);
    return;
  }
  Verdict v;
  v.kind = Verdict::mismatch;
  v.key = key;
  v.compared = a.compared;
  v.compared.push_back(from);
  std::sort(v.compared.begin(), v.compared.end());
  v.majority = 2 * a.compared.size() > v.compared.size();
  if (v.majority) v.minority = {from};
  v.delivered_from = a.delivered_from;
  v.tainted = !v.majority;
  v.groups = {a.compared, {from}};
  v.content_of_delivered = 0;
  ++counters_.mismatches;
  a.compared.push_back(from);
  out->push_back(std::move(v));
}

void Comparator::sender_replica_died(int logical, int replica, std::vector<Verdict> *out) {
  for (auto it = pending_.begin(); it != pending_.end();) {
    auto next = std::next(it);
    if (it->first.channel.src == logical && it->second.awaited.erase(replica) && it->second.awaited.empty())
      finish(it, out);
    it = next;
  }
}

void Comparator::finish(std::map<Key, Pending>::iterator it, std::vector<Verdict> *out) {
  const Pending &p = it->second;
  Verdict v;
  v.key = it->first;
  v.delivered_from = p.delivered_from;
  std::vector<std::size_t> members(p.exemplars.size(), 0);
  for (const auto &[replica, index] : p.content) {
    v.compared.push_back(replica);
    ++members[index];
  }
  ++counters_.compared;
  if (v.compared.size() < 2) {
    v.kind = Verdict::unchecked;
    ++counters_.unchecked;
  } else if (p.exemplars.size() == 1) {
    v.kind = Verdict::agree;
    ++counters_.agreed;
    if (limits_.kept_agreed > 0) {
      if (agreed_order_.size() < limits_.kept_agreed) {
        agreed_order_.push_back(it->first);
      } else {
        agreed_.erase(agreed_order_[agreed_next_]);
        agreed_order_[agreed_next_] = it->first;
        agreed_next_ = (agreed_next_ + 1) % limits_.kept_agreed;
      }
      agreed_[it->first] = Agreed{p.exemplars[0].hash, v.compared, p.delivered_from};
    }
  } else {
    v.kind = Verdict::mismatch;
    ++counters_.mismatches;
    std::size_t best = static_cast<std::size_t>(std::max_element(members.begin(), members.end()) - members.begin());
    v.majority = 2 * members[best] > v.compared.size();
    if (v.majority)
      for (const auto &[replica, index] : p.content)
        if (index != best) v.minority.push_back(replica);
    auto got = p.content.find(p.delivered_from);
    v.tainted = !v.majority || (got != p.content.end() && got->second != best);
    // Groups by content, the largest first (ties: the group of the lowest replica first).
    for (std::size_t i = 0; i < p.exemplars.size(); ++i) {
      std::vector<int> grp;
      for (const auto &[replica, index] : p.content)
        if (index == i) grp.push_back(replica);
      v.groups.push_back(std::move(grp));
    }
    std::vector<std::size_t> order(v.groups.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
      if (v.groups[x].size() != v.groups[y].size()) return v.groups[x].size() > v.groups[y].size();
      return v.groups[x].front() < v.groups[y].front();
    });
    std::vector<std::vector<int>> sorted;
    for (std::size_t i : order) {
      if (got != p.content.end() && got->second == i) v.content_of_delivered = static_cast<int>(sorted.size());
      sorted.push_back(v.groups[i]);
    }
    v.groups = std::move(sorted);
  }
  for (const Digest &d : p.exemplars) pending_bytes_ -= d.bytes.size();
  mark_completed(it->first);
  pending_.erase(it);
  out->push_back(std::move(v));
}

bool Comparator::full() const {
  return pending_.size() >= limits_.max_pending ||
         (mode_ == Mode::full && pending_bytes_ >= limits_.max_pending_bytes);
}

std::vector<Key> Comparator::pending_keys() const {
  std::vector<Key> keys;
  keys.reserve(pending_.size());
  for (const auto &kv : pending_) keys.push_back(kv.first);
  return keys;
}

}  // namespace cohort::replica::sdc
