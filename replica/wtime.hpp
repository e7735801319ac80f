// MPI_Wtime under replication, sans-IO: the time a replica's program reads is a decision event
// (replica/protocol.hpp), so every replica of a logical rank reads the same value, the leader's. This
// part says what a replica proposes and what it learns from each outcome; the integration
// (wrap/replica/wtime.cpp) reads the clock and runs the decision.
//
// The leader proposes its own clock. A twin follows the leader's values, and from each one it learns the
// offset from its own clock (read when its program reached the event) to the leader's. The replicas'
// clocks need not agree (MPI_WTIME_IS_GLOBAL is false across hosts): a twin that becomes leader proposes
// its own clock moved by the last offset it learned, so the program's times go on from the dead leader's,
// not from another clock. They never go back: a candidate below the last time the program read is raised
// to it (a new leader whose clock, moved, is behind; the time stands still until it catches up).
//
// Leader death follows the protocol's rule: an outcome some twin stored is re-proposed by the next leader,
// and any program that used it used that very value; an event nobody stored is decided afresh with the
// new leader's candidate, which no program had used.
//
// Thread-safety: none; the program's thread.
#pragma once
#include <cstdint>

namespace cohort::replica {

/// A time in seconds as a decision outcome (its bits, exactly) and back.
std::int64_t wtime_outcome(double seconds);
double wtime_seconds(std::int64_t outcome);

/// The times one replica's program reads from MPI_Wtime.
class WtimeClock {
 public:
  /// This replica's candidate for a Wtime event that its program reached when its own clock read `own`:
  /// `own` moved by the offset learned last, never below the last time the program read.
  double candidate(double own) const;
  /// The program reads the committed outcome `time` of an event it reached at its own clock `own`: the
  /// offset to the leader's clock is learned from it. Returns `time`.
  double use(double own, double time);
  /// A time read without a decision (after replication stopped at MPI_Finalize, or on a thread other than
  /// the program's): candidate(own), not recorded.
  double undecided(double own) const { return candidate(own); }

  double offset() const { return offset_; }
  /// The last time the program read (-1e300 before the first).
  double last() const { return last_; }

 private:
  double offset_ = 0.0;
  double last_ = -1e300;
};

}  // namespace cohort::replica
