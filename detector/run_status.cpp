#include "detector/run_status.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace cohort::run_status {
namespace {

const char *dir() {
  const char *d = std::getenv("COHORT_RUN_STATUS_DIR");
  return (d != nullptr && *d != '\0') ? d : nullptr;
}

bool write_all(int fd, const std::string &s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

int launcher_rank() {
  for (const char *name : {"PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"}) {
    const char *v = std::getenv(name);
    if (v != nullptr && *v >= '0' && *v <= '9') return std::atoi(v);
  }
  return -1;
}

void put(const char *kind, int rank, const std::string &text) {
  const char *d = dir();
  if (d == nullptr || rank < 0) return;
  char path[4096], tmp[4096];
  std::snprintf(path, sizeof path, "%s/%s.%d", d, kind, rank);
  std::snprintf(tmp, sizeof tmp, "%s/.%s.%d.%d", d, kind, rank, static_cast<int>(getpid()));
  int fd = ::open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  bool ok = write_all(fd, text + "\n");
  ::close(fd);
  if (!ok || ::rename(tmp, path) != 0) ::unlink(tmp);
}

void append_line(const char *kind, int rank, const std::string &line) {
  const char *d = dir();
  if (d == nullptr || rank < 0) return;
  char path[4096];
  std::snprintf(path, sizeof path, "%s/%s.%d", d, kind, rank);
  int fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  write_all(fd, line + "\n");
  ::close(fd);
}

}  // namespace cohort::run_status
