// The detector runtime: the RingDetector state machine driven by a thread over MPI point-to-point on a
// private duplicate of MPI_COMM_WORLD. In the ULFM build (COHORT_USE_ULFM) the ring does not run: the
// thread only asks MPI which ranks its runtime knows dead (refresh()), and publishes them the same way.
#include "detector/runtime.hpp"

#include <mpi.h>
#if defined(COHORT_USE_ULFM) && defined(OPEN_MPI)
#include <mpi-ext.h>
#endif
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

#include "cohort/cohort.h"
#include "detector/inject.hpp"
#include "detector/log.hpp"
#include "detector/process_watch.hpp"
#include "detector/ring_detector.hpp"
#include "detector/run_status.hpp"
#include "detector/settings.hpp"
#include "detector/stats.hpp"
#include "detector/world.hpp"

namespace cohort::detector {

namespace detail {
std::atomic<std::uint64_t> g_failure_epoch{0};
std::atomic<std::uint64_t> g_departure_epoch{0};
}  // namespace detail

namespace {

constexpr int kTag = 7;               // the private communicator carries only detector traffic
constexpr int kMaxOutstanding = 16;   // per peer: sends to a dead rank mostly never complete
constexpr int kMaxDrain = 4096;       // receives handled per loop iteration

Time monotonic_us() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<Time>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

void sleep_us(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  // NOTE: MPICH signals survivors with SIGUSR1 when a rank dies: resume the sleep on EINTR.
  while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
  }
}

std::int64_t thread_cpu_us() {
  struct rusage ru;
  if (getrusage(RUSAGE_THREAD, &ru) != 0) return -1;
  return (static_cast<std::int64_t>(ru.ru_utime.tv_sec) + ru.ru_stime.tv_sec) * 1000000 + ru.ru_utime.tv_usec +
         ru.ru_stime.tv_usec;
}

bool is_activity(const Message &m) { return m.type != MsgType::heartbeat; }

struct PendingSend {
  int to;
  std::vector<std::int32_t> buf;
};

class Runtime;

// The detector thread's copies of the listeners and progress hooks, and the failures whose listeners it
// has not called yet: run() calls them outside the lock, once per loop iteration.
struct Callbacks {
  std::vector<std::function<void()>> my_hooks;
  std::vector<std::function<void(int)>> my_listeners;
  std::vector<int> calls;
  std::uint64_t my_hooks_gen = ~0ULL;
  void run(Runtime &rt);
};

class Runtime {
 public:
  // ---- state shared with other threads ----
  std::atomic<bool> running{false};
  std::atomic<bool> stop_flag{false};
  std::atomic<bool> neighbour_silent{false};  // see neighbour_silent_at_stop
  int rank = -1, size = 0;
  Settings settings;
  Time t0 = 0;

  std::mutex pub_mu;  // published failed set, listeners, hooks
  std::vector<int> order;
  std::unique_ptr<std::atomic<std::uint8_t>[]> flags;
  std::vector<int> departed;  // ranks that left (MPI_Finalize), in the order learned
  std::unique_ptr<std::atomic<std::uint8_t>[]> departed_flags;
  std::unique_ptr<std::atomic<Time>[]> learned_at;
  std::vector<std::function<void(int)>> listeners;
  std::vector<std::function<void()>> hooks;
  std::atomic<std::uint64_t> hooks_gen{0};
  std::atomic<Time> active_until{0};  // poll at settings.poll_us until then
  std::atomic<int> progress_holds{0};   // hold_progress()
  std::vector<int> listener_queue;  // failures whose listeners the thread has not called yet

  std::mutex sm_mu;  // the state machine and the messages produced outside the thread
  std::unique_ptr<RingDetector> sm;
  Output side_out;

  std::mutex stats_mu;
  Stats st;

  // ---- thread only ----
  std::thread thread;
  MPI_Comm comm = MPI_COMM_NULL;
  std::vector<std::int32_t> rbuf;
  MPI_Request rreq = MPI_REQUEST_NULL;
  std::vector<MPI_Request> sreqs;
  std::vector<PendingSend> sends;
  std::vector<int> outstanding;  // per peer
  // The emitter's process, watched when it is on this host (settings.pidfd; see process_watch.hpp).
  std::vector<int> host_of;                 // per rank: host index (topology::host_indices)
  std::vector<std::int64_t> pid_of, start_of;  // per rank: pid and process_start_time
  ProcessWatch watch;
  Doorbell doorbell;    // rung by same-host ranks that send this one a notice (settings.pidfd)
  int watched = -1;     // the rank whose process `watch` is about (-1: none)
  ProcessWatch tail_watch;  // the host's tail, when this rank is its host's first (RingDetector::host_tail)
  int tail_watched = -1;
  bool watch_ok = false;  // pidfd usable (set at start, cleared by the first ENOSYS/EPERM)

  void publish(const std::vector<Event> &events);
  void refresh_from_mpi(bool probe = true);
  void loop_ulfm();
  void transmit(std::vector<Outgoing> &msgs);
  void progress_sends();
  void drain(std::vector<std::pair<int, Message>> *in);
  bool follow(ProcessWatch &w, int *current, int target, const char *what);
  void learn_hosts();
  void loop();
  void shutdown();
};

// NOTE: never destroyed: a program may exit() without MPI_Finalize while the thread runs, and a
// destroyed joinable std::thread would call std::terminate.
Runtime &g = *new Runtime;

void Runtime::publish(const std::vector<Event> &events) {
  for (const Event &e : events) {
    Time at_ms = (monotonic_us() - t0) / 1000;
    if (e.kind == Event::self_fenced && e.how == How::alone) {
      run_status::put("fenced", rank, "alone after a stall");
      log::fatal(COHORT_EXIT_FENCED,
                 "fenced: this rank was not running for %lld ms (timeout %ld ms) and now finds every other rank "
                 "dead or gone: the survivors most likely declared it failed; exiting with code %d",
                 static_cast<long long>(e.silent / 1000), settings.timeout_ms, COHORT_EXIT_FENCED);
    }
    if (e.kind == Event::self_fenced && e.how == How::minority) {
      run_status::put("fenced", rank, "minority side of a partition");
      log::fatal(COHORT_EXIT_FENCED,
                 "fenced: this rank reaches %lld of the %lld ranks of its last view (other hosts silent for the "
                 "timeout): it is on the minority side of a partition, which stops; exiting with code %d",
                 static_cast<long long>(e.silent >> 32), static_cast<long long>(e.silent & 0xffffffff), COHORT_EXIT_FENCED);
    }
    if (e.kind == Event::self_fenced) {
      run_status::put("fenced", rank, std::string("a message from rank ") + std::to_string(e.from) + " (" + how_name(e.how) + ")");
      log::fatal(COHORT_EXIT_FENCED,
                 "fenced: rank %d reports that the survivors declared this rank failed (%s, %lld ms since start); "
                 "exiting with code %d",
                 e.from, how_name(e.how), static_cast<long long>(at_ms), COHORT_EXIT_FENCED);
    }
    if (e.kind == Event::rank_left) {
      {
        std::lock_guard<std::mutex> lock(pub_mu);
        if (departed_flags[e.rank].exchange(1) != 0) continue;
        departed.push_back(e.rank);
        detail::g_departure_epoch.store(departed.size(), std::memory_order_release);
      }
      COHORT_LOG_DEBUG("detector: rank %d left (MPI_Finalize): %s from rank %d, %lld ms since start", e.rank,
                       how_name(e.how), e.from, static_cast<long long>(at_ms));
      continue;
    }
    {
      std::lock_guard<std::mutex> lock(pub_mu);
      if (flags[e.rank].exchange(1) != 0) continue;
      learned_at[e.rank].store(monotonic_us());
      order.push_back(e.rank);
      listener_queue.push_back(e.rank);
      detail::g_failure_epoch.store(order.size(), std::memory_order_release);
    }
    run_status::append_line("failed", rank, std::to_string(e.rank));
    switch (e.how) {
      case How::suspected:
        COHORT_LOG_WARN("rank %d suspected after %lld ms (timeout %ld ms), %lld ms since start", e.rank,
                        static_cast<long long>(e.silent / 1000), settings.timeout_ms, static_cast<long long>(at_ms));
        break;
      case How::exited:
        if (e.silent < 0)  // the host's last rank, watched by its first (RingDetector::host_tail)
          COHORT_LOG_WARN("rank %d failed: its process exited (seen on this host by pidfd, as its host's last rank), "
                          "%lld ms since start", e.rank, static_cast<long long>(at_ms));
        else
          COHORT_LOG_WARN("rank %d failed: its process exited (seen on this host by pidfd, %lld ms after its last "
                          "heartbeat), %lld ms since start", e.rank, static_cast<long long>(e.silent / 1000),
                          static_cast<long long>(at_ms));
        break;
      case How::host_silent:
        COHORT_LOG_WARN("rank %d suspected: its host answered nothing %lld ms after another of its ranks was "
                        "suspected (a lost host), %lld ms since start", e.rank, static_cast<long long>(e.silent / 1000),
                        static_cast<long long>(at_ms));
        break;
      case How::notice:
        COHORT_LOG_INFO("rank %d failed: notice from rank %d (hop %d), %lld ms since start", e.rank, e.from, e.hops,
                        static_cast<long long>(at_ms));
        break;
      case How::reported:
        COHORT_LOG_INFO("rank %d failed: reported by MPI (ULFM), %lld ms since start", e.rank, static_cast<long long>(at_ms));
        break;
      case How::declared:
        COHORT_LOG_INFO("rank %d failed: declared by cohort, %lld ms since start", e.rank, static_cast<long long>(at_ms));
        break;
      default:
        COHORT_LOG_INFO("rank %d failed: %s from rank %d, %lld ms since start", e.rank, how_name(e.how), e.from,
                        static_cast<long long>(at_ms));
        break;
    }
  }
}

void Runtime::transmit(std::vector<Outgoing> &msgs) {
  for (Outgoing &o : msgs) {
    if (o.to < 0 || o.to >= size || o.to == rank) continue;
    if (outstanding[o.to] >= kMaxOutstanding) {
      progress_sends();
      if (outstanding[o.to] >= kMaxOutstanding) {
        std::lock_guard<std::mutex> lock(stats_mu);
        ++st.dropped;
        continue;
      }
    }
    PendingSend p{o.to, encode(o.msg)};
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = PMPI_Isend(p.buf.data(), static_cast<int>(p.buf.size()), MPI_INT32_T, o.to, kTag, comm, &req);
    if (rc != MPI_SUCCESS) {
      COHORT_LOG_DEBUG("detector: MPI_Isend to rank %d failed (code %d); message dropped", o.to, rc);
      continue;
    }
    ++outstanding[o.to];
    // NOTE: the receiver may be asleep for up to COHORT_IDLE_POLL_US: wake it for anything but a heartbeat.
    if (doorbell.fd() >= 0 && is_activity(o.msg) && host_of[o.to] == host_of[rank])
      doorbell.ring(static_cast<pid_t>(pid_of[o.to]));
    sends.push_back(std::move(p));
    sreqs.push_back(req);
    std::lock_guard<std::mutex> lock(stats_mu);
    ++st.sent;
  }
  msgs.clear();
}

void Runtime::progress_sends() {
  if (sreqs.empty()) return;
  int done = 0;
  std::vector<int> idx(sreqs.size());
  PMPI_Testsome(static_cast<int>(sreqs.size()), sreqs.data(), &done, idx.data(), MPI_STATUSES_IGNORE);
  if (done <= 0 || done == MPI_UNDEFINED) return;
  size_t w = 0;
  for (size_t i = 0; i < sreqs.size(); ++i) {
    if (sreqs[i] == MPI_REQUEST_NULL) {
      --outstanding[sends[i].to];
      continue;
    }
    if (w != i) {
      sreqs[w] = sreqs[i];
      sends[w] = std::move(sends[i]);
    }
    ++w;
  }
  sreqs.resize(w);
  sends.resize(w);
}

void Runtime::drain(std::vector<std::pair<int, Message>> *in) {
  for (int i = 0; i < kMaxDrain; ++i) {
    int flag = 0;
    MPI_Status status;
    PMPI_Test(&rreq, &flag, &status);
    if (!flag) return;
    int len = 0;
    PMPI_Get_count(&status, MPI_INT32_T, &len);
    Message m;
    if (decode(rbuf.data(), len, size, &m)) {
      in->emplace_back(status.MPI_SOURCE, std::move(m));
    } else {
      COHORT_LOG_DEBUG("detector: malformed message from rank %d (%d ints) ignored", status.MPI_SOURCE, len);
    }
    PMPI_Irecv(rbuf.data(), static_cast<int>(rbuf.size()), MPI_INT32_T, MPI_ANY_SOURCE, kTag, comm, &rreq);
  }
}

constexpr Time kActiveUs = 100000;  // fast polling after anything but a heartbeat

void mark_active(Time now, Time span = kActiveUs) {
  Time until = now + span;
  Time cur = g.active_until.load(std::memory_order_relaxed);
  while (cur < until && !g.active_until.compare_exchange_weak(cur, until, std::memory_order_relaxed)) {
  }
}

void Runtime::loop() {
  Time started = monotonic_us();
  Time next_cpu = started + 1000000;
  std::vector<std::pair<int, Message>> in;
  Callbacks callbacks;
  Output out;
  std::uint64_t iterations = 0, received = 0;
  int exited = -1;  // the watched emitter whose process exited during the last wait
  int tail_exited = -1;  // the same for the watched host tail
  while (!stop_flag.load(std::memory_order_acquire)) {
    // NOTE: drained before an exit is fed in: a rank that left (MPI_Finalize) said so before it exited.
    drain(&in);
    received += in.size();
    Time now = monotonic_us();
    Time wake;
    int emitter, tail;
    {
      std::lock_guard<std::mutex> lock(sm_mu);
      for (auto &m : in) sm->on_message(m.first, m.second, now, &out);
      if (exited >= 0) sm->on_emitter_exited(exited, now, &out);
      if (tail_exited >= 0) sm->on_host_tail_exited(tail_exited, now, &out);
      exited = tail_exited = -1;
      sm->tick(now, &out);
      if (!out.events.empty()) mark_active(now);
      publish(out.events);
      out.events.clear();
      for (auto &o : side_out.messages) out.messages.push_back(std::move(o));
      side_out.clear();
      wake = sm->next_wakeup();
      emitter = sm->emitter();
      tail = sm->host_tail();
    }
    for (auto &m : in)
      if (is_activity(m.second)) mark_active(now);
    for (auto &o : out.messages)
      if (is_activity(o.msg)) mark_active(now);
    in.clear();
    transmit(out.messages);
    progress_sends();
    callbacks.run(*this);
    ++iterations;
    if (now >= next_cpu) {
      next_cpu = now + 1000000;
      std::lock_guard<std::mutex> lock(stats_mu);
      st.thread_cpu_us = thread_cpu_us();
      st.thread_wall_us = now - started;
      st.iterations = iterations;
      st.received = received;
    }
    // NOTE: every wake-up costs ~10 µs of CPU on these machines: poll fast only while something is
    // going on, else sleep longer (never past the state machine's next deadline).
    long nap = settings.poll_us;
    if (now >= active_until.load(std::memory_order_relaxed)) {
      Time until_wake = wake < 0 ? settings.idle_poll_us : wake - now;
      nap = static_cast<long>(std::max<Time>(settings.poll_us, std::min<Time>(settings.idle_poll_us, until_wake)));
    }
    if (emitter != watched && follow(watch, &watched, emitter, "emitter")) {
      exited = emitter;  // gone already: no wait
      continue;
    }
    if (tail != tail_watched && follow(tail_watch, &tail_watched, tail, "its host's last rank")) {
      tail_exited = tail;
      continue;
    }
    switch (watch.wait(nap, &doorbell, &tail_watch)) {
      case ProcessWatch::Woke::exited: exited = watched; break;
      case ProcessWatch::Woke::also_exited: tail_exited = tail_watched; break;
      case ProcessWatch::Woke::doorbell: mark_active(monotonic_us()); break;
      case ProcessWatch::Woke::timeout: break;
    }
  }
  watch.stop();
  tail_watch.stop();
  shutdown();
  doorbell.close();
  std::lock_guard<std::mutex> lock(stats_mu);
  st.thread_cpu_us = thread_cpu_us();
  st.thread_wall_us = monotonic_us() - started;
  st.iterations = iterations;
  st.received = received;
}

// Watches the process of `target` (the new emitter, or the host's tail) in `w` if it is on this host.
// Returns true when that process has exited already (pidfd_open: ESRCH, or its pid now names a younger
// process).
bool Runtime::follow(ProcessWatch &w, int *current, int target, const char *what) {
  w.stop();
  *current = target;
  if (!watch_ok || target < 0 || host_of[target] != host_of[rank]) return false;
  int err = 0;
  switch (w.watch(static_cast<pid_t>(pid_of[target]), start_of[target], &err)) {
    case ProcessWatch::Result::watching:
      COHORT_LOG_DEBUG("detector: watching %s, rank %d (pid %lld), by pidfd", what, target, static_cast<long long>(pid_of[target]));
      return false;
    case ProcessWatch::Result::exited:
      return true;
    case ProcessWatch::Result::unavailable:
      watch_ok = false;
      COHORT_LOG_INFO("detector: pidfd_open failed (%s): same-host crashes are found by heartbeats only (timeout %ld ms)",
                      std::strerror(err), settings.timeout_ms);
      return false;
  }
  return false;
}

// Every rank's host key, pid and process start time, by one allgather on the private communicator:
// ranks with equal keys share a host (ring grouping) and can watch each other's processes.
void Runtime::learn_hosts() {
  struct Me {
    char key[256];
    std::int64_t pid, start;
  } me;
  std::memset(&me, 0, sizeof me);
  std::string key = host_key();
  std::memcpy(me.key, key.data(), std::min(key.size(), sizeof me.key - 1));
  me.pid = static_cast<std::int64_t>(getpid());
  me.start = process_start_time(getpid());
  std::vector<Me> all(static_cast<size_t>(size));
  if (PMPI_Allgather(&me, sizeof me, MPI_BYTE, all.data(), sizeof me, MPI_BYTE, comm) != MPI_SUCCESS)
    log::fatal(2, "MPI_Init: MPI_Allgather of the ranks' hosts for the failure detector failed");
  std::vector<std::string> keys;
  for (const Me &m : all) {
    keys.emplace_back(m.key);
    pid_of.push_back(m.pid);
    start_of.push_back(m.start);
  }
  host_of = topology::host_indices(keys);
}

void Callbacks::run(Runtime &rt) {
  {
    std::lock_guard<std::mutex> lock(rt.pub_mu);
    calls.swap(rt.listener_queue);
    if (!calls.empty()) my_listeners = rt.listeners;
    if (rt.hooks_gen.load() != my_hooks_gen) {
      my_hooks = rt.hooks;
      my_hooks_gen = rt.hooks_gen.load();
    }
  }
  for (int r : calls)
    for (auto &l : my_listeners) l(r);
  calls.clear();
  for (auto &h : my_hooks) h();
}

// ULFM: the MPI runtime's own knowledge of dead processes, asked on the private duplicate of
// MPI_COMM_WORLD (local, never blocks). MPIX_Comm_get_failed lists every failure this process knows;
// where the MPI lacks it (ULFM before MPI 5 proposals), acknowledging on the private duplicate and
// reading the acknowledged group gives the same set without touching the program's communicators.
void Runtime::refresh_from_mpi(bool probe) {
#if defined(COHORT_USE_ULFM)
  if (comm == MPI_COMM_NULL) return;
  // NOTE: Open MPI 5 records a death that its runtime reports only from inside MPI's progress engine,
  // which runs in MPI calls: a probe on the private duplicate drives it (no message ever matches).
  int any = 0;
  if (probe && progress_holds.load(std::memory_order_acquire) == 0) {
    PMPI_Iprobe(MPI_ANY_SOURCE, 0, comm, &any, MPI_STATUS_IGNORE);
  }
  MPI_Group failed = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
#if defined(COHORT_HAVE_MPIX_COMM_GET_FAILED)
  if (MPIX_Comm_get_failed(comm, &failed) != MPI_SUCCESS) return;
#else
  if (MPIX_Comm_failure_ack(comm) != MPI_SUCCESS || MPIX_Comm_failure_get_acked(comm, &failed) != MPI_SUCCESS) return;
#endif
  int n = 0;
  PMPI_Group_size(failed, &n);
  if (static_cast<std::uint64_t>(n) > detail::g_failure_epoch.load(std::memory_order_acquire)) {
    std::vector<int> in(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) in[static_cast<std::size_t>(i)] = i;
    PMPI_Comm_group(comm, &world);
    PMPI_Group_translate_ranks(failed, n, in.data(), world, out.data());
    PMPI_Group_free(&world);
    std::vector<Event> events;
    for (int r : out) {
      if (r >= 0 && r < size && r != rank && flags[r].load(std::memory_order_acquire) == 0)
        events.push_back(Event{Event::rank_failed, r, How::reported, rank, 0, 0});
    }
    if (!events.empty()) {
      mark_active(monotonic_us());
      publish(events);
    }
  }
  PMPI_Group_free(&failed);
#endif
}

// ULFM: no ring; ask MPI now and then, call the listeners and hooks, as loop() does.
// NOTE: this thread probes (drives MPI's progress engine) only when the program's threads went through no
// wrapper entry and no poll round of cohort since its last look (progress_count() unchanged): while they are
// in MPI, their own progress records the deaths, and a second thread progressing meanwhile is what Open MPI
// 5.0.7 does not survive in its failure handling (a SIGSEGV in opal_progress's event loop under this
// thread's PMPI_Iprobe in a CI run of file.fault.write_ordered.before_then_during; see also hold_progress).
void Runtime::loop_ulfm() {
  Callbacks callbacks;
  std::uint64_t seen = progress_count();  // (so the first look probes)
  while (!stop_flag.load(std::memory_order_acquire)) {
    std::uint64_t count = progress_count();
    refresh_from_mpi(count == seen);
    seen = count;
    callbacks.run(*this);
    Time now = monotonic_us();
    sleep_us(now < active_until.load(std::memory_order_relaxed) ? settings.poll_us : settings.idle_poll_us);
  }
}

void Runtime::shutdown() {
  Output out;
  int emitter = -1, observer = -1;
  {
    std::lock_guard<std::mutex> lock(sm_mu);
    emitter = sm->emitter();
    observer = sm->observer();
    sm->leave(monotonic_us(), &out);
  }
  transmit(out.messages);
  // NOTE: receive until the ring neighbours' leaving notes arrived. Each is the last message its sender
  // sends here (MPI's non-overtaking order on one communicator and tag), so no detector message is left
  // unmatched when MPI finalizes (MPICH over UCX prints a warning for each). Only in a job without
  // failures: after one, MPI_Finalize skips the MPI library's own finalize, and a dead neighbour never
  // sends. Bounded: stop() is local and never hangs.
  // A neighbour whose note does not come within the heartbeat timeout is most likely dead (it died after
  // the survivors barrier that this rank completed, or in it): the MPI library's finalize would wait for it
  // (neighbour_silent_at_stop).
  bool want_emitter = emitter >= 0, want_observer = observer >= 0 && observer != emitter;
  if (detail::g_failure_epoch.load(std::memory_order_acquire) != 0) want_emitter = want_observer = false;
  Time until = monotonic_us() + std::max<Time>(50000, static_cast<Time>(settings.timeout_ms) * 1000);
  std::vector<std::pair<int, Message>> in;
  while ((want_emitter || want_observer || !sreqs.empty()) && monotonic_us() < until) {
    progress_sends();
    in.clear();
    drain(&in);
    for (auto &m : in) {
      if (m.second.type != MsgType::leaving) continue;
      if (m.first == emitter) want_emitter = false;
      if (m.first == observer) want_observer = false;
    }
    sleep_us(500);
  }
  neighbour_silent.store(want_emitter || want_observer);
  PMPI_Cancel(&rreq);
  PMPI_Wait(&rreq, MPI_STATUS_IGNORE);
  // Sends to dead ranks may never complete: let MPI finish or drop them on its own.
  for (MPI_Request &r : sreqs) PMPI_Request_free(&r);
  sreqs.clear();
  sends.clear();
}

}  // namespace

void start(bool thread_multiple) {
  if (g.running.load() || g.size > 0) return;
  PMPI_Comm_rank(cohort::world(), &g.rank);
  PMPI_Comm_size(cohort::world(), &g.size);
  g.t0 = monotonic_us();
  std::string err = load_settings(&g.settings);
  if (!err.empty()) log::fatal(2, "MPI_Init: %s", err.c_str());
  g.flags.reset(new std::atomic<std::uint8_t>[g.size]);
  g.departed_flags.reset(new std::atomic<std::uint8_t>[g.size]);
  g.learned_at.reset(new std::atomic<Time>[g.size]);
  for (int i = 0; i < g.size; ++i) {
    g.flags[i].store(0);
    g.departed_flags[i].store(0);
    g.learned_at[i].store(-1);
  }
  if (thread_multiple) {
    if (PMPI_Comm_dup(cohort::world(), &g.comm) != MPI_SUCCESS) log::fatal(2, "MPI_Init: MPI_Comm_dup for the failure detector failed");
    PMPI_Comm_set_errhandler(g.comm, MPI_ERRORS_RETURN);
#if defined(COHORT_USE_ULFM)
    // NOTE: under ULFM the MPI runtime detects failures; the heartbeat ring would only add traffic.
    g.stop_flag.store(false);
    g.running.store(true);
    g.thread = std::thread([] { g.loop_ulfm(); });
    COHORT_LOG_DEBUG("detector: ULFM build: failures come from MPI (MPIX_Comm_get_failed), no heartbeat ring");
    inject::arm(g.rank, g.size);
    return;
#endif
    g.learn_hosts();
    g.watch_ok = g.settings.pidfd;
    if (g.settings.pidfd && !g.doorbell.open())
      COHORT_LOG_DEBUG("detector: no doorbell socket (%s): notices wait for the receiver's next loop", std::strerror(errno));
    Config c;
    c.rank = g.rank;
    c.ring = std::make_shared<topology::Ring>(g.host_of, g.settings.shuffle, g.settings.seed);
    c.period = g.settings.period_ms * 1000;
    c.timeout = g.settings.timeout_ms * 1000;
    c.grace = g.settings.grace_ms * 1000;
    c.bcast = g.settings.bcast;
    c.host = std::make_shared<const std::vector<int>>(g.host_of);
    Output out;
    g.sm = std::make_unique<RingDetector>(c, monotonic_us(), &out);
    g.side_out = std::move(out);
    g.rbuf.assign(static_cast<size_t>(max_encoded_len(g.size)), 0);
    g.outstanding.assign(static_cast<size_t>(g.size), 0);
    PMPI_Irecv(g.rbuf.data(), static_cast<int>(g.rbuf.size()), MPI_INT32_T, MPI_ANY_SOURCE, kTag, g.comm, &g.rreq);
    g.stop_flag.store(false);
    g.running.store(true);
    g.thread = std::thread([] { g.loop(); });
    COHORT_LOG_DEBUG("detector: started (period %ld ms, timeout %ld ms, grace %ld ms, broadcast %s, ring %s, %d host(s), "
                     "pidfd %s)",
                     g.settings.period_ms, g.settings.timeout_ms, g.settings.grace_ms, topology::bcast_name(g.settings.bcast),
                     g.settings.shuffle ? "shuffled" : "by host", *std::max_element(g.host_of.begin(), g.host_of.end()) + 1,
                     g.settings.pidfd ? "on" : "off");
  }
  inject::arm(g.rank, g.size);
}

void stop() {
  if (!g.running.exchange(false)) return;
  g.stop_flag.store(true, std::memory_order_release);
  if (g.thread.joinable()) g.thread.join();
  if (log::enabled(log::Level::info)) {
    std::vector<int> f = failed_ranks();
    std::string list;
    for (int r : f) list += " " + std::to_string(r);
    COHORT_LOG_INFO("detector stopped after %lld ms: %zu failed rank(s)%s%s", static_cast<long long>((monotonic_us() - g.t0) / 1000),
                    f.size(), f.empty() ? "" : ":", list.c_str());
  }
}

bool running() { return g.running.load(); }
bool neighbour_silent_at_stop() { return g.neighbour_silent.load(); }
long timeout_ms() { return g.settings.timeout_ms; }
int world_rank() { return g.rank; }
int world_size() { return g.size; }

bool is_failed(int world_rank) {
  if (world_rank < 0 || world_rank >= g.size || !g.flags) return false;
  return g.flags[world_rank].load(std::memory_order_acquire) != 0;
}

std::vector<int> failed_ranks() {
  std::lock_guard<std::mutex> lock(g.pub_mu);
  return g.order;
}

std::vector<int> departed_ranks() {
  std::lock_guard<std::mutex> lock(g.pub_mu);
  return g.departed;
}

void declare_failed(int world_rank) {
  if (world_rank < 0 || world_rank >= g.size) return;
  if (world_rank == g.rank) {
    run_status::put("fenced", g.rank, "declared failed by cohort");
    log::fatal(COHORT_EXIT_FENCED, "fenced: cohort declared this rank failed; exiting with code %d", COHORT_EXIT_FENCED);
  }
  std::vector<Event> events;
  if (g.sm) {
    std::lock_guard<std::mutex> lock(g.sm_mu);
    Output out;
    g.sm->declare_failed(world_rank, monotonic_us(), &out);
    for (auto &m : out.messages) g.side_out.messages.push_back(std::move(m));
    g.publish(out.events);
    mark_active(monotonic_us());
  } else {
    g.publish({Event{Event::rank_failed, world_rank, How::declared, g.rank, 0, 0}});
  }
  if (!g.running.load()) {
    // No thread to call the listeners: call them here.
    std::vector<int> calls;
    std::vector<std::function<void(int)>> ls;
    {
      std::lock_guard<std::mutex> lock(g.pub_mu);
      calls.swap(g.listener_queue);
      ls = g.listeners;
    }
    for (int r : calls)
      for (auto &l : ls) l(r);
  }
}

void refresh() {
#if defined(COHORT_USE_ULFM)
  if (g.running.load(std::memory_order_acquire)) g.refresh_from_mpi();
#endif
}

void hold_progress(bool on) { g.progress_holds.fetch_add(on ? 1 : -1, std::memory_order_acq_rel); }

void on_failure(std::function<void(int)> listener) {
  std::lock_guard<std::mutex> lock(g.pub_mu);
  g.listeners.push_back(std::move(listener));
}

void add_progress_hook(std::function<void()> hook) {
  std::lock_guard<std::mutex> lock(g.pub_mu);
  g.hooks.push_back(std::move(hook));
  g.hooks_gen.fetch_add(1);
}

void poll_fast(int ms) { mark_active(monotonic_us(), static_cast<Time>(ms) * 1000); }

Stats stats() {
  std::lock_guard<std::mutex> lock(g.stats_mu);
  return g.st;
}

std::int64_t learned_at_us(int world_rank) {
  if (world_rank < 0 || world_rank >= g.size || !g.learned_at) return -1;
  return g.learned_at[world_rank].load();
}

std::int64_t wall_minus_monotonic_us() {
  struct timespec w, m;
  clock_gettime(CLOCK_REALTIME, &w);
  clock_gettime(CLOCK_MONOTONIC, &m);
  return (static_cast<std::int64_t>(w.tv_sec) - m.tv_sec) * 1000000 + (w.tv_nsec - m.tv_nsec) / 1000;
}

}  // namespace cohort::detector
