#include "detector/process_watch.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstddef>
#include <cstring>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434  // the same number on every Linux architecture
#endif

namespace cohort::detector {
namespace {

std::string first_line(const char *path) {
  char buf[128] = {0};
  FILE *f = std::fopen(path, "r");
  if (f == nullptr) return "";
  if (std::fgets(buf, sizeof buf, f) == nullptr) buf[0] = '\0';
  std::fclose(f);
  buf[std::strcspn(buf, "\n")] = '\0';
  return buf;
}

long long now_us() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

// The abstract address of the doorbell of process pid; returns its length.
socklen_t doorbell_address(pid_t pid, struct sockaddr_un *a) {
  std::memset(a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  int n = std::snprintf(a->sun_path + 1, sizeof a->sun_path - 1, "cohort-detector-%d", static_cast<int>(pid));
  return static_cast<socklen_t>(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

}  // namespace

bool Doorbell::open() {
  close();
  fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return false;
  struct sockaddr_un a;
  socklen_t len = doorbell_address(getpid(), &a);
  if (bind(fd_, reinterpret_cast<struct sockaddr *>(&a), len) != 0) {
    close();
    return false;
  }
  return true;
}

void Doorbell::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void Doorbell::ring(pid_t pid) {
  static int out = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (out < 0) return;
  struct sockaddr_un a;
  socklen_t len = doorbell_address(pid, &a);
  char b = 1;
  (void)sendto(out, &b, 1, MSG_DONTWAIT, reinterpret_cast<struct sockaddr *>(&a), len);
}

void Doorbell::clear() {
  char buf[64];
  while (fd_ >= 0 && recv(fd_, buf, sizeof buf, MSG_DONTWAIT) > 0) {
  }
}

std::string host_key() {
  char name[128] = {0};
  if (gethostname(name, sizeof name - 1) != 0) name[0] = '\0';
  struct stat st;
  std::string ns = stat("/proc/self/ns/pid", &st) == 0 ? std::to_string(st.st_ino) : "";
  std::string key = std::string(name) + "/" + first_line("/proc/sys/kernel/random/boot_id") + "/" + ns;
  return key.substr(0, 255);
}

std::int64_t process_start_time(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  FILE *f = std::fopen(path, "r");
  if (f == nullptr) return -1;
  char buf[1024];
  size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  // NOTE: field 2 (the command) may hold spaces and parentheses: count fields after its last ')'.
  const char *p = std::strrchr(buf, ')');
  if (p == nullptr) return -1;
  int field = 2;
  for (; *p != '\0' && field < 22; ++p)
    if (*p == ' ') ++field;
  long long v = -1;
  if (field != 22 || std::sscanf(p, "%lld", &v) != 1) return -1;
  return v;
}

ProcessWatch::Result ProcessWatch::watch(pid_t pid, std::int64_t start_time, int *errno_out) {
  stop();
  int fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) {
    int e = errno;
    if (errno_out != nullptr) *errno_out = e;
    return e == ESRCH ? Result::exited : Result::unavailable;
  }
  // NOTE: the pidfd pins whatever process has this pid now; if that is not the one that started at
  // start_time, ours exited and its pid was reused.
  if (start_time >= 0 && process_start_time(pid) != start_time) {
    close(fd);
    return Result::exited;
  }
  fd_ = fd;
  return Result::watching;
}

void ProcessWatch::stop() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

ProcessWatch::Woke ProcessWatch::wait(long us, Doorbell *doorbell, ProcessWatch *also) {
  long long until = now_us() + us;
  int bell = doorbell != nullptr ? doorbell->fd() : -1;
  int other = also != nullptr ? also->fd_ : -1;
  for (;;) {
    long long left = until - now_us();
    if (left < 0) left = 0;
    struct timespec ts = {static_cast<time_t>(left / 1000000), static_cast<long>((left % 1000000) * 1000)};
    struct pollfd pfd[3];
    nfds_t n = 0;
    int mine = -1, theirs = -1;
    if (fd_ >= 0) mine = static_cast<int>(n), pfd[n++] = {fd_, POLLIN, 0};
    if (other >= 0) theirs = static_cast<int>(n), pfd[n++] = {other, POLLIN, 0};
    if (bell >= 0) pfd[n++] = {bell, POLLIN, 0};
    int rc = n > 0 ? ppoll(pfd, n, &ts, nullptr) : nanosleep(&ts, nullptr);
    if (rc > 0) {
      if (mine >= 0 && pfd[mine].revents != 0) {
        stop();
        return Woke::exited;
      }
      if (theirs >= 0 && pfd[theirs].revents != 0) {
        also->stop();
        return Woke::also_exited;
      }
      doorbell->clear();
      return Woke::doorbell;
    }
    if (rc == -1 && errno == EINTR && left > 0) continue;
    return Woke::timeout;
  }
}

}  // namespace cohort::detector
