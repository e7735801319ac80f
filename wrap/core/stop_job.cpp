#include "wrap/core/stop_job.hpp"

#include <mpi.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "detector/log.hpp"
#include "detector/runtime.hpp"
#include "detector/world.hpp"

namespace cohort::wrap {
namespace {

// Tells cohort-run (COHORT_RUN_STATUS_DIR) that this rank stops the job: the first rank to do so
// writes "<world rank> <code>" to <dir>/abort, and cohort-run then ends every process of the job.
// NOTE: under Open MPI 5 with --enable-recovery or --with-ft ulfm, MPI_Abort ends no other process and
// does not return; the launcher is the one place that can stop them all.
void tell_launcher(int code) {
  const char *dir = std::getenv("COHORT_RUN_STATUS_DIR");
  if (dir == nullptr || *dir == '\0') return;
  std::string path = std::string(dir) + "/abort";
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) return;
  char line[64];
  int len = std::snprintf(line, sizeof line, "%d %d\n", detector::world_rank(), code);
  if (len > 0 && write(fd, line, static_cast<std::size_t>(len)) < 0) {
  }
  close(fd);
}

}  // namespace

void stop_job(int code) {
  tell_launcher(code);
  // NOTE: under Open MPI with --enable-recovery (as cohort-run launches it) MPI_Abort ends only the
  // calling process, and the others would carry on as survivors. So this rank first declares every
  // other rank failed: the failure notices reach each of them, and a rank named in one fences itself
  // (exits with COHORT_EXIT_FENCED). Under MPICH, hydra stops the job on MPI_Abort anyway.
  if (detector::running()) {
    int me = detector::world_rank(), n = detector::world_size();
    for (int r = 0; r < n; ++r) {
      if (r != me) detector::declare_failed(r);
    }
  }
  // NOTE: give the notices time to leave, and the launcher time to forward this rank's last lines
  // (MPICH's hydra tears the job down on MPI_Abort without draining the ranks' output).
  struct timespec ts = {0, 200 * 1000 * 1000};
  while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
  }
  // NOTE: PMPI_Abort should not return, but under Open MPI 5's recovery modes it may never return either:
  // exit on our own after 2 s.
  std::thread([code] {
    struct timespec t = {2, 0};
    while (nanosleep(&t, &t) == -1 && errno == EINTR) {
    }
    std::_Exit(code);
  }).detach();
  PMPI_Abort(cohort::world(), code);
  std::_Exit(code);
}

void abort_job(const char *call, const char *what) {
  log::write(log::Level::error, "%s: %s (policy abort)", call, what);
  stop_job(1);
}

}  // namespace cohort::wrap
