// The request table: the program's request handles -> cohort's record of what each request is (direction,
// peer, communicator). Pure data (no MPI calls), templated on the handle type so unit tests drive it with
// integers; wrap/request.hpp instantiates it for MPI_Request.
//
// NOTE: the key is the handle value MPI returned. MPI recycles a handle value once its request is freed, so
// a record whose request was completed behind cohort's back (by a call cohort does not wrap, e.g.
// MPI_Testsome) is replaced, not duplicated, when the value comes back: the table cannot grow without
// bound.
#pragma once
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

namespace cohort::wrap {

/// Thread-safe map from request handle to record. Every operation takes one mutex (uncontended: ~20 ns);
/// put() after take() allocates nothing.
template <typename Handle, typename Record, typename Hash = std::hash<Handle>>
class RequestTable {
 public:
  /// Records rec under h. Returns true if it replaced a stale record left under the same handle value.
  bool put(Handle h, const Record &rec) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(h);
    if (it != map_.end()) {
      it->second = rec;
      return true;
    }
    if (spare_.empty()) {
      map_.emplace(h, rec);
    } else {
      // NOTE: reuses a node that take() kept: no allocation on the per-message path.
      auto node = std::move(spare_.back());
      spare_.pop_back();
      node.key() = h;
      node.mapped() = rec;
      map_.insert(std::move(node));
    }
    return false;
  }

  /// A copy of the record under h, if any.
  std::optional<Record> find(Handle h) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(h);
    if (it == map_.end()) return std::nullopt;
    return it->second;
  }

  /// Removes and returns the record under h, if any.
  std::optional<Record> take(Handle h) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(h);
    if (it == map_.end()) return std::nullopt;
    auto node = map_.extract(it);
    Record rec = node.mapped();
    if (spare_.size() < kSpareNodes) spare_.push_back(std::move(node));
    return rec;
  }

  /// Number of records (requests the program still holds, as far as cohort knows).
  std::size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return map_.size();
  }

 private:
  using Map = std::unordered_map<Handle, Record, Hash>;
  static constexpr std::size_t kSpareNodes = 64;
  mutable std::mutex mu_;
  Map map_;
  std::vector<typename Map::node_type> spare_;  // nodes of taken records, for put() to reuse
};

}  // namespace cohort::wrap
