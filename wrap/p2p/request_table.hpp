// The request table: the program's request handles -> cohort's record of what each request is (direction,
// peer, communicator). Pure data (no MPI calls), templated on the handle type so unit tests drive it with
// integers; wrap/p2p/request.hpp instantiates it for MPI_Request.
//
// NOTE: the key is the handle value MPI returned. MPI recycles a handle value once its request is freed, so
// a record whose request was completed behind cohort's back (by a call cohort does not wrap, e.g.
// MPI_Testsome) is replaced, not duplicated, when the value comes back: the table cannot grow without
// bound.
//
// Layout: each thread that records requests owns a *segment*, a direct-mapped array of slots indexed by a
// hash of the handle. Only the owner fills an empty slot of its segment; any thread may replace or clear a
// slot that holds the handle it was given (MPI lets one thread at a time use a request), so a slot's key
// is published with a release store and read with an acquire load: no lock and no locked instruction.
// NOTE: a locked instruction (a mutex, a compare-and-swap) right after MPI_Isend waits for the MPI's own
// stores into shared memory to drain; in the 8 B ping-pong that made the table ~10% of a round trip.
// A handle whose slot is taken, and threads beyond the segment limit, go to a mutex-guarded map that is
// only looked at while it holds records.
#pragma once
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

namespace cohort::wrap {

/// Thread-safe map from request handle to record.
///
/// Thread-safety: any thread may call any member at any time for *different* handles; as MPI requires of
/// a request, one handle is used by one thread at a time (put, find and take of one handle never race),
/// and a handle passed from one thread to another is passed with synchronization (as MPI requires too).
/// Cost with one recording thread: a few plain loads and stores per call; each further recording thread
/// adds one slot probe to every put, and to find/take of handles outside the caller's own segment.
template <typename Handle, typename Record>
class RequestTable {
  static_assert(sizeof(Handle) <= sizeof(std::uint64_t), "handles are at most 64 bits");

 public:
  static constexpr std::size_t kSlots = 256;       ///< slots per segment (per recording thread)
  static constexpr std::size_t kMaxSegments = 64;  ///< recording threads with a segment; others use the map

  RequestTable() : id_(next_id()) {}
  RequestTable(const RequestTable &) = delete;
  RequestTable &operator=(const RequestTable &) = delete;
  ~RequestTable() {
    for (auto &s : segments_) delete s.load(std::memory_order_relaxed);
  }

  /// Records rec under h. Returns true if it replaced a stale record left under the same handle value.
  bool put(Handle h, const Record &rec) {
    const std::uint64_t k = key_of(h);
    const std::size_t i = index_of(k);
    Segment *own = own_segment();
    if (k != kEmpty) {
      if (Slot *s = find_slot(own, i, k)) {
        s->rec = rec;  // NOTE: the stale record's handle is ours now (MPI recycled the value)
        return true;
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
    if (k != kEmpty && own != nullptr) {
      Slot &s = own->slots[i];
      if (s.key.load(std::memory_order_acquire) == kEmpty) {  // only this thread fills its segment's slots
        s.rec = rec;
        s.key.store(k, std::memory_order_release);
        return false;
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
    if (k != kEmpty) {
      if (const Slot *s = find_slot(own_segment_if_any(), index_of(k), k)) return s->rec;
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
    if (k != kEmpty) {
      if (Slot *s = find_slot(own_segment_if_any(), index_of(k), k)) {
        std::optional<Record> rec(s->rec);
        s->key.store(kEmpty, std::memory_order_release);
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

  /// Number of records (requests the program still holds, as far as cohort knows). Scans every segment:
  /// for tests and leak checks, not for the per-message path.
  std::size_t size() const {
    std::size_t n = 0;
    const std::size_t segments = nsegments_.load(std::memory_order_acquire);
    for (std::size_t j = 0; j < segments; ++j) {
      const Segment *seg = segments_[j].load(std::memory_order_acquire);
      for (const Slot &s : seg->slots) n += s.key.load(std::memory_order_acquire) != kEmpty;
    }
    std::lock_guard<std::mutex> lock(mu_);
    return n + map_.size();
  }

  /// Records held in the map (their slot was taken, or their thread had no segment); for tests.
  std::size_t spilled() const { return spilled_.load(std::memory_order_acquire); }

 private:
  static constexpr std::uint64_t kEmpty = 0;

  struct Slot {
    std::atomic<std::uint64_t> key{kEmpty};
    Record rec{};
  };
  struct Segment {
    std::array<Slot, kSlots> slots;
  };

  static std::uint64_t bits_of(Handle h) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &h, sizeof h);
    return bits;
  }
  // A slot's key for h: its bits, zero-extended, plus one; kEmpty only for the 64-bit handle of all ones,
  // which lives in the map.
  static std::uint64_t key_of(Handle h) { return bits_of(h) + 1; }
  static std::size_t index_of(std::uint64_t k) {
    return static_cast<std::size_t>((k * 0x9E3779B97F4A7C15ull) >> 32) & (kSlots - 1);
  }
  static std::uint64_t next_id() {
    static std::atomic<std::uint64_t> ids{0};
    return ++ids;
  }

  // The slot holding key k at index i: the caller's own segment first, then every other one.
  Slot *find_slot(Segment *own, std::size_t i, std::uint64_t k) const {
    if (own != nullptr && own->slots[i].key.load(std::memory_order_acquire) == k) return &own->slots[i];
    const std::size_t segments = nsegments_.load(std::memory_order_acquire);
    for (std::size_t j = 0; j < segments; ++j) {
      Segment *seg = segments_[j].load(std::memory_order_acquire);
      if (seg != own && seg->slots[i].key.load(std::memory_order_acquire) == k) return &seg->slots[i];
    }
    return nullptr;
  }

  // NOTE: the calling thread's segment of this table, cached per thread by table id (not by address: a
  // table destroyed and another made at the same address must not inherit the old cache).
  struct ThreadCache {
    std::uint64_t table = 0;
    Segment *segment = nullptr;
  };
  static ThreadCache &cache() {
    thread_local ThreadCache c;
    return c;
  }
  Segment *own_segment_if_any() const {
    const ThreadCache &c = cache();
    if (c.table == id_) return c.segment;
    const std::thread::id me = std::this_thread::get_id();
    const std::size_t segments = nsegments_.load(std::memory_order_acquire);
    for (std::size_t j = 0; j < segments; ++j) {
      if (owners_[j] == me) return segments_[j].load(std::memory_order_acquire);
    }
    return nullptr;
  }
  // The calling thread's segment, made on its first put; nullptr once kMaxSegments threads have one.
  Segment *own_segment() {
    ThreadCache &c = cache();
    if (c.table == id_) return c.segment;
    Segment *seg = own_segment_if_any();
    if (seg == nullptr) {
      std::lock_guard<std::mutex> lock(mu_);
      const std::size_t n = nsegments_.load(std::memory_order_relaxed);
      if (n < kMaxSegments) {
        seg = new Segment();
        owners_[n] = std::this_thread::get_id();
        segments_[n].store(seg, std::memory_order_release);
        nsegments_.store(n + 1, std::memory_order_release);
      }
    }
    c.table = id_;
    c.segment = seg;
    return seg;
  }

  const std::uint64_t id_;
  std::array<std::atomic<Segment *>, kMaxSegments> segments_{};  // [0, nsegments_) set, never removed
  std::array<std::thread::id, kMaxSegments> owners_{};           // owners_[j] written before nsegments_ > j
  std::atomic<std::size_t> nsegments_{0};
  mutable std::mutex mu_;
  std::unordered_map<std::uint64_t, Record> map_;  // spilled records by handle bits, guarded by mu_
  std::atomic<std::size_t> spilled_{0};            // map_.size(), read without the lock
};

}  // namespace cohort::wrap
