// A simulated network of RingDetector state machines in virtual time: the fake network of the unit tests
// and the engine of bench/detector_sim. Pure C++ (no MPI, no threads, no clock).
//
// Every rank ticks every `tick` µs of virtual time; each message gets a latency drawn from `latency`;
// `filter` may drop or duplicate any message; ranks can be killed (they stop ticking and messages to
// them vanish) or paused (they stop ticking; messages to them wait until they resume).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "detector/ring_detector.hpp"

namespace cohort::detector {

struct SimConfig {
  int n = 8;
  Time period = 100000, timeout = 1000000, grace = 100000;  ///< µs
  topology::Bcast bcast = topology::Bcast::chord;
  bool shuffle = false;
  std::uint64_t ring_seed = 1;
  bool resync = true;
  /// Each observer watches its emitter's process if it is on its host (the runtime's pidfd): a crash() is
  /// reported to the observer at its next tick (on_emitter_exited), and to the rank that watches it as its host's tail
  /// (RingDetector::host_tail, on_host_tail_exited). kill() stays unseen (a lost host).
  bool watch_exits = false;
  /// Host index per rank (shape: host[rank]); empty: one host. With several hosts the ring is grouped by
  /// host (topology::Ring(host, shuffle, ring_seed)) and the partition rule applies (Config::host).
  std::vector<int> host;
  Time tick = 1000;  ///< µs between ticks of each rank; 0: tick each rank only at its next_wakeup()
  std::uint64_t rng_seed = 42;
  /// Latency of one message, µs (default: 50 µs fixed).
  std::function<Time(std::mt19937_64 &)> latency;
};

/// What a rank learned about one failed rank.
struct Learned {
  int rank;
  Time at;   ///< virtual µs
  How how;
  int hops;  ///< notice hop count (0 if suspected or learned otherwise)
};

class SimNet {
 public:
  explicit SimNet(SimConfig config);

  Time now() const { return now_; }
  int size() const { return cfg_.n; }
  const SimConfig &config() const { return cfg_; }
  RingDetector &node(int rank) { return *nodes_[rank]; }
  bool alive(int rank) const { return state_[rank] != State::dead; }
  bool fenced(int rank) const { return nodes_[rank]->fenced(); }
  /// Live, running, not fenced.
  bool survivor(int rank) const { return state_[rank] == State::running && !nodes_[rank]->fenced(); }

  /// The rank is gone without a trace its observer could see (a lost host, a partition).
  void kill(int rank) { state_[rank] = State::dead; }
  /// The rank's process exits (SIGKILL, crash): as kill, and with watch_exits its observer sees it.
  void crash(int rank) {
    kill(rank);
    exited_[rank] = true;
  }
  void pause(int rank) { state_[rank] = State::paused; }
  void resume(int rank);
  /// rank stops its detector (leave()) and goes silent, as at MPI_Finalize.
  void leave(int rank);
  /// Another part of cohort declares `dead` failed on `rank`.
  void declare(int rank, int dead);

  /// Processes every event up to virtual time t (inclusive).
  void run_until(Time t);
  /// Runs until pred() holds (checked after each event) or virtual time limit; returns pred().
  bool run_until(const std::function<bool()> &pred, Time limit);

  /// True when every survivor knows exactly `dead` (as a set) as failed.
  bool all_survivors_know_exactly(std::vector<int> dead) const;

  /// Called for every message sent: return the number of copies to deliver (0 drops it).
  std::function<int(int from, const Outgoing &)> filter;
  /// Called when a message is about to be delivered; return false to withhold it (e.g. kill the target
  /// first). The message is then dropped.
  std::function<bool(int from, int to, const Message &)> on_deliver;

  /// Called each time a rank learns a failure (after it is appended to `learned`).
  std::function<void(int rank, const Learned &)> on_learned;
  /// Per rank: what it learned, in order.
  std::vector<std::vector<Learned>> learned;
  /// Per rank: the departed ranks it learned (event rank_left), in order.
  std::vector<std::vector<int>> departed;
  /// Messages sent (after the filter), by MsgType value 1..6.
  std::uint64_t sent[7] = {0, 0, 0, 0, 0, 0, 0};
  /// Time at which each rank was fenced, or -1.
  std::vector<Time> fenced_at;

 private:
  enum class State : std::uint8_t { running, paused, dead };
  struct Ev {
    Time at;
    std::uint64_t seq;
    int kind;  // 0 tick, 1 deliver
    int from, to;
    Message msg;
  };
  // NOTE: the heap holds small keys; events live in slots_ (at 65,536 ranks the heap is large and
  // moving whole events through it dominated the run time).
  struct Key {
    Time at;
    std::uint64_t seq;
    std::uint32_t slot;
    bool operator>(const Key &o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  void absorb(int rank, Output &out);
  void push(Ev ev);
  void schedule_tick(int rank);
  void watch_exit(int rank);
  bool step();

  SimConfig cfg_;
  std::shared_ptr<const topology::Ring> ring_;
  std::vector<std::unique_ptr<RingDetector>> nodes_;
  std::vector<State> state_;
  std::vector<bool> exited_;           // crash(): the process is gone
  std::vector<std::vector<Ev>> held_;  // messages to a paused rank
  std::vector<Time> tick_at_;          // event-driven mode: the pending tick of each rank
  std::vector<Key> q_;  // a min-heap on (at, seq)
  std::vector<Ev> slots_;
  std::vector<std::uint32_t> free_;
  std::mt19937_64 rng_;
  Time now_ = 0;
  std::uint64_t seq_ = 0;
  Output out_;
};

}  // namespace cohort::detector
