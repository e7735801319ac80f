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
  if (mode_ == Mode::off || from < 0 || from >= replicas_) return;
  auto it = pending_.find(key);
  if (it == pending_.end()) {
    if (completed(key)) {
      ++counters_.late;
      return;
    }
    Pending p;
    p.delivered_from = from;
    for (int k : awaited)
      if (k >= 0 && k < replicas_) p.awaited.insert(k);
    it = pending_.emplace(key, std::move(p)).first;
  }
  Pending &p = it->second;
  if (p.content.count(from)) return;
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
  } else {
    v.kind = Verdict::mismatch;
    ++counters_.mismatches;
    std::size_t best = static_cast<std::size_t>(std::max_element(members.begin(), members.end()) - members.begin());
    v.majority = 2 * members[best] > v.compared.size();
    if (v.majority)
      for (const auto &[replica, index] : p.content)
        if (index != best) v.minority.push_back(replica);
    v.tainted = !v.majority || p.content.at(p.delivered_from) != best;
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
