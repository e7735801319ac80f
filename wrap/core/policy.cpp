#include "wrap/core/policy.hpp"

#include <mpi.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "detector/env.hpp"
#include "detector/log.hpp"
#include "detector/runtime.hpp"
#include "detector/world.hpp"

namespace cohort::wrap {
namespace {

bool parse(const std::string &v, Policy *out) {
  if (v == "abort") *out = Policy::abort;
  else if (v == "skip") *out = Policy::skip;
  else if (v == "error") *out = Policy::error;
  else return false;
  return true;
}

// Reads `name`; true if it was set (and valid). Invalid: one line, exit 2.
bool read_policy(const std::string &name, Policy *out) {
  auto v = env::get(name.c_str());
  if (!v) return false;
  if (!parse(*v, out)) {
    log::fatal(2, "invalid %s='%s' (expected abort, skip or error)", name.c_str(), v->c_str());
  }
  return true;
}

}  // namespace

const char *policy_name(Policy p) {
  switch (p) {
    case Policy::abort: return "abort";
    case Policy::skip: return "skip";
    case Policy::error: return "error";
  }
  return "?";
}

std::string dead_root_variable(const char *call) {
  std::string suffix = call;
  if (suffix.rfind("MPI_", 0) == 0) suffix = suffix.substr(4);
  for (char &c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return "COHORT_ON_DEAD_ROOT_" + suffix;
}

void check_policy_variables(const std::vector<std::string> &per_call_variables) {
  Policy p = Policy::abort;
  for (const char *name : {"COHORT_ON_DEAD_ROOT", "COHORT_ON_DEAD_PEER", "COHORT_ON_DEAD_PEER_SEND", "COHORT_ON_DEAD_PEER_RECV"})
    read_policy(name, &p);
  for (const std::string &name : per_call_variables) read_policy(name, &p);
}

Policy dead_root_policy(const char *call, Policy fallback) {
  Policy p = fallback;
  if (read_policy(dead_root_variable(call), &p)) return p;
  if (read_policy("COHORT_ON_DEAD_ROOT", &p)) return p;
  return fallback;
}

Policy dead_peer_policy(bool send, Policy fallback) {
  Policy p = fallback;
  if (read_policy(send ? "COHORT_ON_DEAD_PEER_SEND" : "COHORT_ON_DEAD_PEER_RECV", &p)) return p;
  if (read_policy("COHORT_ON_DEAD_PEER", &p)) return p;
  return fallback;
}

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
