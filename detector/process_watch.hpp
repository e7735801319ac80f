// Watching another process of this host for its exit: the runtime's side of the detector's process-exit
// input (RingDetector::on_emitter_exited). Linux only (pidfd_open, 5.3+); no MPI.
//
// Why a pidfd: it refers to one process, not to a number that may be reused; it becomes readable when
// that process exits (a zombie counts, so a killed rank is seen before its launcher reaps it); and the
// detector thread can wait on it with ppoll instead of sleeping, so it wakes at once.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <string>

namespace cohort::detector {

/// This process's identity as seen by another rank: equal host keys mean the two processes share a
/// kernel and a PID namespace, so one can watch the other by pid. The key is the hostname (gethostname,
/// the UTS namespace), the kernel's boot id and the PID namespace's inode, joined by '/'; a part that
/// cannot be read is left empty. At most 255 bytes.
std::string host_key();

/// When the process `pid` (of this PID namespace) started, in clock ticks since boot (/proc/PID/stat,
/// field 22), or -1 when it is gone or unreadable. With the pid it names one process over its lifetime.
std::int64_t process_start_time(pid_t pid);

/// A wake-up for the detector thread of another rank on this host: an abstract Unix datagram socket named
/// after the owner's pid ("\0cohort-detector-PID"; abstract names are per network namespace, so only
/// ranks of one host reach each other). MPI gives the detector thread nothing to wait on, so between
/// loop iterations it sleeps; a rank that sends it a failure notice rings its doorbell too, and the
/// notice is handled at once instead of after the rest of the sleep. Best effort: every error is ignored
/// (the thread then finds the message at its next iteration). Not thread-safe: the detector thread owns it.
class Doorbell {
 public:
  Doorbell() = default;
  Doorbell(const Doorbell &) = delete;
  Doorbell &operator=(const Doorbell &) = delete;
  ~Doorbell() { close(); }
  /// Binds this process's doorbell; false when it cannot (then ring() still works).
  bool open();
  void close();
  int fd() const { return fd_; }
  /// Wakes the detector thread of process `pid` on this host (non-blocking).
  void ring(pid_t pid);
  /// Empties the socket after it woke a wait.
  void clear();

 private:
  int fd_ = -1;
};

/// One watched process at a time. Not thread-safe: the detector thread owns it.
class ProcessWatch {
 public:
  enum class Result {
    watching,     ///< the process is alive and watched
    exited,       ///< the process is already gone (or its pid now names another process)
    unavailable,  ///< pidfd_open is not allowed or not implemented here (ENOSYS, EPERM, ...): never works
  };
  ProcessWatch() = default;
  ProcessWatch(const ProcessWatch &) = delete;
  ProcessWatch &operator=(const ProcessWatch &) = delete;
  ~ProcessWatch() { stop(); }

  /// Stops watching the previous process and watches `pid`, which started at `start_time`
  /// (process_start_time on that process, -1: not checked). errno_out: the errno of a failed
  /// pidfd_open (unavailable).
  Result watch(pid_t pid, std::int64_t start_time, int *errno_out = nullptr);
  /// Stops watching (closes the pidfd).
  void stop();
  bool watching() const { return fd_ >= 0; }

  enum class Woke { timeout, exited, also_exited, doorbell };
  /// Waits up to `us` µs for the watched process (or the one of `also`, if given) to exit or `doorbell` to
  /// ring (ppoll; resumed after EINTR, e.g. MPICH's SIGUSR1 to survivors). exited / also_exited: that
  /// watch stops. doorbell: the bell is cleared. Without a watched process and a doorbell, it just sleeps.
  Woke wait(long us, Doorbell *doorbell, ProcessWatch *also = nullptr);

 private:
  int fd_ = -1;
};

}  // namespace cohort::detector
