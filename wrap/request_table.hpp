// The request table: the program's request handles -> cohort's record of what each request is (direction,
// peer, communicator). Pure data (no MPI calls), templated on the handle type so unit tests drive it with
// integers; wrap/request.hpp instantiates it for MPI_Request.
//
// NOTE: the key is the handle value MPI returned. MPI recycles a handle value once its request is freed, so
// a record whose request was completed behind cohort's back (by a call cohort does not wrap, e.g.
// MPI_Testsome) is replaced, not duplicated, when the value comes back: the table cannot grow without
// bound.
//
// Layout: a fixed array of buckets of 8 slots (one cache line of keys per bucket), claimed and released
// with one compare-and-swap each and no lock: MPI_Isend + MPI_Wait cost two CASes here instead of two
// mutex round trips (the 8 B ping-pong budget is ~50 ns a round trip). A bucket that is full spills into
// a mutex-guarded map, which is only looked at while it holds records.
#pragma once
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

namespace cohort::wrap {

/// Thread-safe map from request handle to record.
///
/// Thread-safety: any thread may call any member at any time for *different* handles; as MPI requires of
/// a request, one handle is used by one thread at a time (put, find and take of one handle never race).
/// Cost: put/take one CAS on the handle's bucket (no lock, no allocation) unless the bucket is full.
template <typename Handle, typename Record>
class RequestTable {
  static_assert(sizeof(Handle) <= sizeof(std::uint64_t), "handles are at most 64 bits");

 public:
  static constexpr std::size_t kSlotsPerBucket = 8;

  /// `buckets` fixed buckets of 8 slots (rounded up to a power of two); the default holds 2048 requests
  /// before any spills into the map.
  explicit RequestTable(std::size_t buckets = 256) {
    std::size_t n = 1;
    while (n < buckets) n <<= 1;
    mask_ = n - 1;
    buckets_ = std::make_unique<Bucket[]>(n);
  }

  /// Records rec under h. Returns true if it replaced a stale record left under the same handle value.
  bool put(Handle h, const Record &rec) {
    const std::uint64_t k = key_of(h);
    Bucket &b = bucket_of(k);
    if (k != kEmpty) {
      for (std::size_t i = 0; i < kSlotsPerBucket; ++i) {
        if (b.keys[i].load(std::memory_order_acquire) == k) {
          b.records[i] = rec;  // NOTE: the stale record's handle is ours now (MPI recycled the value)
          return true;
        }
      }
    }
    if (spilled_.load(std::memory_order_acquire) != 0) {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = map_.find(bits_of(h));
      if (it != map_.end()) {
        it->second = rec;
        return true;
      }
    }
    if (k != kEmpty) {
      for (std::size_t i = 0; i < kSlotsPerBucket; ++i) {
        std::uint64_t expected = kEmpty;
        if (b.keys[i].load(std::memory_order_relaxed) == kEmpty &&
            b.keys[i].compare_exchange_strong(expected, kClaimed, std::memory_order_acquire)) {
          b.records[i] = rec;
          b.keys[i].store(k, std::memory_order_release);
          return false;
        }
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    map_[bits_of(h)] = rec;
    spilled_.store(map_.size(), std::memory_order_release);
    return false;
  }

  /// A copy of the record under h, if any.
  std::optional<Record> find(Handle h) const {
    const std::uint64_t k = key_of(h);
    const Bucket &b = bucket_of(k);
    for (std::size_t i = 0; i < kSlotsPerBucket && k != kEmpty; ++i) {
      if (b.keys[i].load(std::memory_order_acquire) == k) return b.records[i];
    }
    if (spilled_.load(std::memory_order_acquire) == 0) return std::nullopt;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(bits_of(h));
    if (it == map_.end()) return std::nullopt;
    return it->second;
  }

  /// Removes and returns the record under h, if any.
  std::optional<Record> take(Handle h) {
    const std::uint64_t k = key_of(h);
    Bucket &b = bucket_of(k);
    for (std::size_t i = 0; i < kSlotsPerBucket && k != kEmpty; ++i) {
      std::uint64_t expected = k;
      if (b.keys[i].load(std::memory_order_relaxed) == k &&
          b.keys[i].compare_exchange_strong(expected, kClaimed, std::memory_order_acquire)) {
        std::optional<Record> rec(b.records[i]);
        b.keys[i].store(kEmpty, std::memory_order_release);
        return rec;
      }
    }
    if (spilled_.load(std::memory_order_acquire) == 0) return std::nullopt;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(bits_of(h));
    if (it == map_.end()) return std::nullopt;
    std::optional<Record> rec(std::move(it->second));
    map_.erase(it);
    spilled_.store(map_.size(), std::memory_order_release);
    return rec;
  }

  /// Number of records (requests the program still holds, as far as cohort knows). Scans the table: for
  /// tests and leak checks, not for the per-message path.
  std::size_t size() const {
    std::size_t n = 0;
    for (std::size_t j = 0; j <= mask_; ++j) {
      for (const auto &key : buckets_[j].keys) {
        std::uint64_t v = key.load(std::memory_order_acquire);
        if (v != kEmpty && v != kClaimed) ++n;
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    return n + map_.size();
  }

  /// Records held in the spill map (every bucket slot of their handles was taken); for tests.
  std::size_t spilled() const { return spilled_.load(std::memory_order_relaxed); }

 private:
  // Slot keys: kEmpty, kClaimed (being written or read out), or key_of(handle).
  static constexpr std::uint64_t kEmpty = 0;
  static constexpr std::uint64_t kClaimed = ~std::uint64_t{0};

  struct alignas(64) Bucket {
    std::array<std::atomic<std::uint64_t>, kSlotsPerBucket> keys{};
    std::array<Record, kSlotsPerBucket> records{};
  };

  static std::uint64_t bits_of(Handle h) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &h, sizeof h);
    return bits;
  }
  // A slot's key for h: its bits, zero-extended, plus one. Never kClaimed for handles narrower than 64
  // bits; the two 64-bit handles whose key would be kEmpty or kClaimed (all ones, all ones but the last
  // bit) get kEmpty here, meaning "never in a bucket": they live in the map.
  static std::uint64_t key_of(Handle h) {
    std::uint64_t k = bits_of(h) + 1;
    return k == kClaimed ? kEmpty : k;
  }
  Bucket &bucket_of(std::uint64_t k) { return buckets_[mix(k) & mask_]; }
  const Bucket &bucket_of(std::uint64_t k) const { return buckets_[mix(k) & mask_]; }
  static std::uint64_t mix(std::uint64_t k) { return (k * 0x9E3779B97F4A7C15ull) >> 32; }

  std::unique_ptr<Bucket[]> buckets_;
  std::size_t mask_ = 0;
  mutable std::mutex mu_;
  std::unordered_map<std::uint64_t, Record> map_;  // spilled records by handle bits, guarded by mu_
  std::atomic<std::size_t> spilled_{0};            // map_.size(), read without the lock
};

}  // namespace cohort::wrap
