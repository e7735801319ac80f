// Starting and stopping cohort around the MPI library (wrap/runtime/lifecycle.hpp): the settings check,
// the detector, repair and the world alias; the state of the World and Sessions models.
#include <mpi.h>

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "detector/inject.hpp"
#include "detector/log.hpp"
#include "detector/run_status.hpp"
#include "detector/runtime.hpp"
#include "detector/settings.hpp"
#include "detector/world.hpp"
#include "repair/repair.hpp"
#include "wrap/calls.h"
#include "wrap/core/deferred.hpp"
#include "wrap/core/driver.hpp"
#include "wrap/core/errors.hpp"
#include "wrap/coll/hierarchy.hpp"
#include "wrap/runtime/lifecycle.hpp"
#include "wrap/core/policy.hpp"
#include "wrap/p2p/request.hpp"
#include "wrap/core/ulfm_mode.hpp"
#include "wrap/runtime/watchdog.hpp"

namespace cohort::wrap {
namespace {

// Reads every policy variable and COHORT_SEND_RETRIES once, so that an invalid value stops the rank when
// cohort starts (MPI_Init or MPI_Session_init, `call`) with one line naming the variable and the rank, not
// later in the middle of a failure. Warns (rank 0 only: every rank has the same environment) about COHORT_*
// names that cohort does not know.
void check_settings(int rank, const char *call) {
  std::vector<std::string> per_call;
  for (const CallInfo &call : kCallInfo) {
    if (call.rooted) per_call.push_back(dead_root_variable(call.name));
  }
  std::string policy_error = check_policy_variables(per_call);
  if (!policy_error.empty()) log::fatal(2, "%s", policy_error.c_str());
  p2p::send_retries();
  deferred::check_settings();
  small::check_settings();
  ulfm::read_setting();
  hierarchy::read_setting();
  if (rank != 0) return;
  std::vector<std::string> names;
  for (char **e = environ; *e != nullptr; ++e) {
    const char *eq = std::strchr(*e, '=');
    if (eq != nullptr && std::strncmp(*e, "COHORT_", 7) == 0) names.emplace_back(*e, eq - *e);
  }
  for (const std::string &w : detector::unknown_variables(names, per_call)) COHORT_LOG_WARN("%s: %s", call, w.c_str());
}

// Sets `sig` to SIG_IGN when `disposition` (read earlier) is the default action; true when it did.
bool ignore_where_default(int sig, const struct sigaction &disposition) {
  if (disposition.sa_handler != SIG_DFL || (disposition.sa_flags & SA_SIGINFO) != 0) return false;
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(sig, &ignore, nullptr);
  return true;
}

}  // namespace

// Undoes MPICH's SIGUSR1 handler: hydra signals every survivor with SIGUSR1 when a rank ends, and MPICH's
// handler makes its next progress call ask the process manager, in a blocking PMI read under MPICH's global
// lock, which ranks died. Cut off from the launcher (a partition: the proxy cannot reach mpiexec), that
// read never returns, and the detector thread, waiting for the lock, never fences the rank (seen with gdb:
// hosts.partition_equal, the minority's second rank after the first fenced). cohort learns deaths itself.
// The handler the program had before MPI_Init is put back; where it had none, SIGUSR1 is ignored (its
// default action would end the survivors). No-op on other MPIs. `before` is the disposition read before
// MPI_Init.
void restore_sigusr1(const struct sigaction &before) {
#if defined(MPICH)
  if (!ignore_where_default(SIGUSR1, before)) sigaction(SIGUSR1, &before, nullptr);
#else
  (void)before;
#endif
}

// A survivor must not die of SIGPIPE: the MPI's TCP transport writes to the socket of a peer that died
// (or fenced across a cut), whose kernel answers with a reset, and the write raises SIGPIPE in whichever
// thread wrote, the detector's or the program's (seen under Slurm with Open MPI: a rank ended with code 141,
// "srun: error: h1: task 1: Broken pipe", as its peers on a cut node fenced). Where the program chose no
// disposition, SIGPIPE is ignored, so such a write returns EPIPE to the MPI library instead; a handler or
// an ignore the program installed is left alone.
void ignore_sigpipe() {
  struct sigaction now {};
  if (sigaction(SIGPIPE, nullptr, &now) == 0) ignore_where_default(SIGPIPE, now);
}

namespace {

// The state of the two ways to start MPI (MPI 4.0 section 11.3: a program may use both): whether the World
// Model is on (MPI_Init returned, MPI_Finalize not yet called), whether MPI_Finalize left the MPI
// library's own finalize to the end of the last session, and whether cohort ran and stopped. (Atomic: the
// program's threads may call MPI_Comm_create_from_group, which asks running(), while another one starts.)
std::atomic<bool> g_world_model{false};
std::atomic<bool> g_finalize_deferred{false};
std::atomic<bool> g_running{false};
std::atomic<bool> g_stopped{false};

}  // namespace

int start(const char *call, int *argc, char ***argv, int *provided, BringUpMpi bring_up) {
  std::string log_error = log::configure_from_env();
  if (!log_error.empty()) log::fatal(2, "%s: %s", call, log_error.c_str());
  // NOTE: cohort-run stops the job when a rank ends before its init-done record while another one waits
  // in MPI_Init (which would otherwise wait for it forever, under both MPIs).
  run_status::put("init-begin", run_status::launcher_rank(), "");
  struct sigaction sigusr1_before {};
  sigaction(SIGUSR1, nullptr, &sigusr1_before);
  int got = MPI_THREAD_SINGLE;
  // NOTE: the detector thread calls MPI concurrently with the program, so cohort always asks for
  // MPI_THREAD_MULTIPLE, whatever the program asked for.
  int rc = bring_up(argc, argv, &got);
  if (rc != MPI_SUCCESS) return rc;
  restore_sigusr1(sigusr1_before);
  ignore_sigpipe();
  int rank = -1;
  PMPI_Comm_rank(cohort::world(), &rank);
  log::set_rank(rank);
  init_error_classes();
  check_settings(rank, call);
  std::vector<std::string> calls;
  for (const CallInfo &call_info : kCallInfo) calls.emplace_back(call_info.name);
  inject::declare_calls(std::move(calls));
  if (got < MPI_THREAD_MULTIPLE) {
    COHORT_LOG_WARN("%s: MPI provides thread level %d, not MPI_THREAD_MULTIPLE; failure detection is off", call, got);
  }
  detector::start(got >= MPI_THREAD_MULTIPLE);
  run_status::put("init-done", rank, "");
  inject::hold(true);
  repair::init();
  register_world(call);
  hierarchy::init();
  inject::hold(false);
  if (detector::running()) watchdog::start(detector::timeout_ms());
  if (provided != nullptr) *provided = got;
  g_running = true;
  return MPI_SUCCESS;
}

bool running() { return g_running; }

bool stopped() { return g_stopped; }

bool world_model() { return g_world_model; }

bool finalize_deferred() { return g_finalize_deferred; }

void set_world_model(bool on) { g_world_model = on; }

void defer_finalize() { g_finalize_deferred = true; }

bool failures_seen() {
  Alias *world = find_alias(cohort::world());
  return (world != nullptr && world->degraded()) || detector::failure_epoch() > 0 || repair::revoke_seen();
}

bool stop() {
  // A survivors-only barrier: no rank tears MPI down while another still talks to it.
  Alias *world = find_alias(cohort::world());
  if (world != nullptr) survivors_barrier(*world);
  deferred::shutdown();  // (pending receives of count reports)
  // (a revoke leaves requests abandoned on live communicators: Open MPI 4.1's finalize then frees them
  // under MPI's feet, corrupting its heap)
  bool failures = failures_seen();
  repair::finalize();
  detector::stop();
  if (!failures && detector::neighbour_silent_at_stop()) {
    COHORT_LOG_INFO("MPI_Finalize: a ring neighbour never said that it was leaving: most likely it died");
    failures = true;
  }
  g_running = false;
  g_stopped = true;
  return failures;
}

}  // namespace cohort::wrap
