// MPI_Init, MPI_Init_thread, MPI_Finalize, MPI_Abort: start and stop cohort around the MPI library (the
// World Model); wrap/runtime/session.cpp starts and stops it under the Sessions model with the same functions
// (wrap/runtime/lifecycle.hpp).
#include <mpi.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>
#include <cstring>
#include <iterator>
#include <memory>
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
#include "wrap/replica/replica.hpp"
#include "wrap/runtime/session.hpp"
#include "wrap/core/stop_job.hpp"
#include "wrap/core/ulfm_mode.hpp"
#include "wrap/runtime/watchdog.hpp"

namespace cohort::wrap {
namespace {

// NOTE: scripts/cohort-run reads this string from the program's binary to pick the launcher flags of the
// backend (Open MPI 5: --with-ft ulfm for the ulfm one).
#if defined(COHORT_USE_ULFM)
[[gnu::used]] const char kBackendTag[] = "cohort-backend=ulfm";
#else
[[gnu::used]] const char kBackendTag[] = "cohort-backend=heartbeat";
#endif

}  // namespace

namespace {

int init_world_thread(int *argc, char ***argv, int *provided) {
  return PMPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, provided);
}

// MPI_Init in a program whose MPI_Session_init started cohort: MPI_COMM_WORLD becomes an alias like any
// communicator the program creates, with a substitute of its own (its collectives never run on it).
int init_world_after_session(int *argc, char ***argv, int *provided) {
  struct sigaction sigusr1_before {};
  sigaction(SIGUSR1, nullptr, &sigusr1_before);
  int got = MPI_THREAD_SINGLE;
  int rc = PMPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &got);
  if (rc != MPI_SUCCESS) return rc;
  restore_sigusr1(sigusr1_before);
  repair::register_comm(MPI_COMM_WORLD, cohort::world());
  register_alias(MPI_COMM_WORLD, true);
  set_world_ft_attribute();
  if (provided != nullptr) *provided = got;
  return MPI_SUCCESS;
}

int init_common(int *argc, char ***argv, int *provided) {
  int rc = MPI_SUCCESS;
  if (running()) {
    rc = init_world_after_session(argc, argv, provided);
  } else if (stopped()) {
    // NOTE: cohort's detector and repair start once per process; MPI after its last finalize runs unprotected.
    COHORT_LOG_WARN("MPI_Init: cohort stopped at an earlier finalize; MPI runs without cohort from here on");
    return PMPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, provided);
  } else {
    rc = start("MPI_Init", argc, argv, provided, init_world_thread);
    if (rc == MPI_SUCCESS) replica::start();
  }
  if (rc != MPI_SUCCESS) return rc;
  set_world_model(true);
  // NOTE: the last thing before the program runs: a test can kill a rank before it does any work of its
  // own, which a timed kill cannot promise (the timer starts inside this MPI_Init).
  inject::point("init.done");
  return MPI_SUCCESS;
}

// The MPI library's own finalize in a job where this rank knew no failure, bounded: a rank that dies inside
// it (after cohort's survivors barrier and its leaving note) leaves the others there for good under MPICH
// (its process manager's barrier waits for the dead rank). Past max(5 s, 4 x COHORT_HB_TIMEOUT_MS) the
// process exits 0, as after a failure (both launchers, as cohort-run starts them, accept it); the program's
// work after MPI_Finalize is then lost, which only a death inside the MPI library's finalize can cause.
int finalize_library() {
  inject::point("finalize.library");
  struct Bound {
    std::mutex mu;
    std::condition_variable cv;
    bool returned = false;
  };
  auto bound = std::make_shared<Bound>();
  const long ms = std::max(5000L, 4 * detector::timeout_ms());
  std::thread([bound, ms] {
    std::unique_lock<std::mutex> lock(bound->mu);
    if (bound->cv.wait_for(lock, std::chrono::milliseconds(ms), [&] { return bound->returned; })) return;
    COHORT_LOG_WARN("MPI_Finalize: the MPI library's finalize did not return in %ld ms (a rank died inside it?); "
                    "exiting with code 0", ms);
    std::fflush(nullptr);
    std::_Exit(0);
  }).detach();
  int rc = PMPI_Finalize();
  {
    std::lock_guard<std::mutex> lock(bound->mu);
    bound->returned = true;
  }
  bound->cv.notify_all();
  return rc;
}

}  // namespace
}  // namespace cohort::wrap

using cohort::wrap::CallId;
using cohort::wrap::count_call;

extern "C" int __wrap_MPI_Init(int *argc, char ***argv) {
  count_call(CallId::MPI_Init);
  return cohort::wrap::init_common(argc, argv, nullptr);
}

extern "C" int __wrap_MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  (void)required;  // cohort asks for MPI_THREAD_MULTIPLE and reports what MPI actually provides
  count_call(CallId::MPI_Init_thread);
  return cohort::wrap::init_common(argc, argv, provided);
}

extern "C" int __wrap_MPI_Finalize(void) {
  count_call(CallId::MPI_Finalize);
  namespace wrap = cohort::wrap;
  if (!wrap::running()) return PMPI_Finalize();
  if (wrap::replica::on()) wrap::replica::finish();
  wrap::set_world_model(false);
  if (wrap::session::open_count() > 0) {
    // NOTE: the program's sessions still use MPI and cohort: the MPI library's finalize of the World Model
    // waits for the last MPI_Session_finalize, which stops cohort first (MPI 4.0 section 11.3).
    wrap::defer_finalize();
    return MPI_SUCCESS;
  }
  // NOTE: once a rank has died, MPICH's PMPI_Finalize hangs, and Open MPI's hangs now and then (its
  // runtime's fence may still wait for the dead rank). Both launchers, as cohort-run starts them,
  // accept a process that exits 0 without it.
  const bool failures = wrap::stop();
  if (wrap::replica::on()) wrap::replica::deaths_at_exit();
  if (failures) {
    COHORT_LOG_INFO("MPI_Finalize: ranks have failed or a communicator was revoked; skipping the MPI library's own finalize");
    std::fflush(nullptr);
    return MPI_SUCCESS;
  }
  wrap::session::finalize_own();
  return wrap::finalize_library();
}

extern "C" int __wrap_MPI_Abort(MPI_Comm comm, int errorcode) {
  count_call(CallId::MPI_Abort);
  (void)comm;  // NOTE: stops the whole job, as both MPIs do for any communicator
  COHORT_LOG_INFO("MPI_Abort: errorcode %d; stopping the whole job", errorcode);
  std::fflush(nullptr);
  cohort::wrap::stop_job(errorcode);
}
