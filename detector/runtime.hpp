// The process-wide failure-detector runtime: the heartbeat ring's thread and its MPI transport.
// This is the detector's interface to the rest of cohort (repair/, wrap/ and the C API).
//
// Ranks are MPI_COMM_WORLD ranks. All functions are thread-safe. The failed set only grows.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

namespace cohort::detector {

/// Starts the detector after PMPI_Init_thread has returned MPI_THREAD_MULTIPLE (ULFM build: no ring;
/// the thread polls MPI's own failure knowledge, see refresh()): reads COHORT_HB_* and
/// COHORT_RING_SHUFFLE/COHORT_BCAST/COHORT_INJECT_FAILURE (an invalid value: one line naming the variable,
/// exit code 2), duplicates MPI_COMM_WORLD for its own traffic (collective: call it from every rank) and
/// starts the thread. With thread_multiple == false the ring is not started (warned once) and no failure
/// is ever detected.
void start(bool thread_multiple);

/// Stops the thread, cancels the receives it posted, and logs the failed-set summary (COHORT_LOG=info).
/// Local: never waits on another rank. Safe to call twice.
void stop();
/// After stop(), in a job where this rank knew no failure: true when a ring neighbour never said that it
/// was leaving within the heartbeat timeout. It most likely died after (or in) MPI_Finalize's survivors
/// barrier, which this rank completed without learning it, and the MPI library's own finalize would wait
/// for it (MPICH's always does).
bool neighbour_silent_at_stop();

bool running();
/// COHORT_HB_TIMEOUT_MS as read at start() (ms).
long timeout_ms();
int world_rank();
int world_size();

namespace detail {
extern std::atomic<std::uint64_t> g_failure_epoch;  // written by the detector thread only
extern std::atomic<std::uint64_t> g_departure_epoch;  // likewise
inline std::atomic<std::uint64_t> g_progress{0};     // see note_progress
}  // namespace detail

/// Notes that the calling thread is making progress through cohort (a wrapper was entered, a poll loop
/// went round). Read by the unwrapped-call watchdog (wrap/runtime/watchdog.hpp). One relaxed load and store, no
/// atomic read-modify-write: concurrent notes may lose counts, never the fact that something changed.
inline void note_progress() {
  detail::g_progress.store(detail::g_progress.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}
inline std::uint64_t progress_count() { return detail::g_progress.load(std::memory_order_relaxed); }

/// Number of ranks known dead. Cheap (one inlined atomic load): poll it and look closer only when it
/// changes.
inline std::uint64_t failure_epoch() { return detail::g_failure_epoch.load(std::memory_order_acquire); }
bool is_failed(int world_rank);
/// Dead ranks in the order this rank learned of them.
std::vector<int> failed_ranks();

/// Number of ranks known to have left (stopped their detector in MPI_Finalize): a rank that finished is
/// not a failed one, but it will never answer again. Cheap, like failure_epoch().
inline std::uint64_t departure_epoch() { return detail::g_departure_epoch.load(std::memory_order_acquire); }
/// Departed ranks in the order this rank learned of them (RingDetector's event rank_left).
std::vector<int> departed_ranks();
/// Another part of cohort learned that world_rank is dead (e.g. from an agreement message): records it
/// and broadcasts a failure notice as if it had been suspected here. A notice naming this very rank fences it.
/// A rank known departed is not declared (it finished; it did not fail).
void declare_failed(int world_rank);

/// ULFM build: asks MPI which ranks its runtime knows dead (MPIX_Comm_get_failed, local, a few µs)
/// and publishes the new ones, so that failure_epoch() moves at once; called by the detector thread
/// every COHORT_POLL_US / COHORT_IDLE_POLL_US and by the wrappers when an MPI call returns an error of
/// class MPIX_ERR_PROC_FAILED. Heartbeat build: does nothing (the ring is the only source).
void refresh();

/// ULFM build: while at least one hold is on (hold_progress(true) ... hold_progress(false), counted, any
/// thread), refresh() and the detector thread read MPI's failed set without entering MPI's progress engine
/// (no probe), so they learn only of the failures MPI recorded already. Measured reason: Open MPI 5.0.7 never
/// completes an MPI_Comm_create_from_group while another thread probes meanwhile (ompi_comm_activate waits
/// forever; build/exp-style test: 40 creations, 8 ranks, a probing thread: 5 of 8 ranks hung every time,
/// none without the prober). repair's ULFM calls (agree, shrink, revoke) hold it too, and the detector thread
/// probes only when the program went through no cohort wrapper or poll round since its last look
/// (progress_count()): Open MPI 5.0.7's failure handling crashed once with this thread probing meanwhile.
/// Heartbeat build: does nothing. Thread-safe.
void hold_progress(bool on);

/// hold_progress(true) for the scope of the object.
class ProgressHold {
 public:
  ProgressHold() { hold_progress(true); }
  ~ProgressHold() { hold_progress(false); }
  ProgressHold(const ProgressHold &) = delete;
  ProgressHold &operator=(const ProgressHold &) = delete;
};

/// Internal listener, called on the detector thread once per newly dead rank (after it is recorded).
/// Must not block and must not call MPI.
void on_failure(std::function<void(int world_rank)> listener);

/// Registers work that the detector thread runs on every iteration of its loop, e.g. a protocol that
/// must answer peers while the application computes. It may call MPI (the thread runs under
/// MPI_THREAD_MULTIPLE). It must not block. The loop runs every COHORT_POLL_US (default 1000 µs) while
/// active, and every COHORT_IDLE_POLL_US (default 5000 µs) after 100 ms with nothing but heartbeats
/// (which keeps the thread under 1% of a core); see poll_fast().
void add_progress_hook(std::function<void()> hook);

/// Keeps the loop at COHORT_POLL_US for the next `ms` milliseconds (e.g. a protocol round that expects
/// answers soon). Failures, failure notices and every non-heartbeat message do this for 100 ms on their
/// own. Thread-safe, cheap (one atomic store).
void poll_fast(int ms);

}  // namespace cohort::detector
