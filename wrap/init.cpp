// MPI_Init, MPI_Init_thread, MPI_Finalize, MPI_Abort: start and stop cohort around the MPI library.
#include <mpi.h>

#include <cstdio>

#include "detector/inject.hpp"
#include "detector/log.hpp"
#include "detector/runtime.hpp"
#include "repair/repair.hpp"
#include "wrap/calls.h"
#include "wrap/driver.hpp"
#include "wrap/errors.hpp"
#include "wrap/policy.hpp"

namespace cohort::wrap {
namespace {

// NOTE: scripts/cohort-run reads this string from the program's binary to pick the launcher flags of the
// backend (Open MPI 5: --with-ft ulfm for the ulfm one).
#if defined(COHORT_USE_ULFM)
[[gnu::used]] const char kBackendTag[] = "cohort-backend=ulfm";
#else
[[gnu::used]] const char kBackendTag[] = "cohort-backend=heartbeat";
#endif

// Reads every dead-root policy variable once, so that an invalid value stops the job at MPI_Init with
// one line naming the variable, not later in the middle of a failure.
void check_policies() {
  const char *rooted[] = {"MPI_Bcast", "MPI_Reduce", "MPI_Gather", "MPI_Scatter"};
  for (const char *call : rooted) dead_root_policy(call, Policy::abort);
}

int init_common(int *argc, char ***argv, int *provided) {
  if (!log::configure_from_env()) {
    log::fatal(2, "MPI_Init: invalid COHORT_LOG (expected error, warn, info or debug)");
  }
  int got = MPI_THREAD_SINGLE;
  // NOTE: the detector thread calls MPI concurrently with the program, so cohort always asks for
  // MPI_THREAD_MULTIPLE, whatever the program asked for.
  int rc = PMPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &got);
  if (rc != MPI_SUCCESS) return rc;
  int rank = -1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  log::set_rank(rank);
  init_error_classes();
  check_policies();
  if (got < MPI_THREAD_MULTIPLE) {
    COHORT_LOG_WARN("MPI_Init: MPI provides thread level %d, not MPI_THREAD_MULTIPLE; failure detection is off", got);
  }
  detector::start(got >= MPI_THREAD_MULTIPLE);
  inject::hold(true);
  repair::init();
  register_world();
  inject::hold(false);
  if (provided != nullptr) *provided = got;
  return MPI_SUCCESS;
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
  // A survivors-only barrier: no rank tears MPI down while another still talks to it.
  cohort::wrap::Alias *world = cohort::wrap::find_alias(MPI_COMM_WORLD);
  if (world != nullptr) cohort::wrap::barrier(*world);
  bool failures = (world != nullptr && world->degraded()) || cohort::detector::failure_epoch() > 0;
  cohort::repair::finalize();
  cohort::detector::stop();
  // NOTE: once a rank has died, MPICH's PMPI_Finalize hangs, and Open MPI's hangs now and then (its
  // runtime's fence may still wait for the dead rank). Both launchers, as cohort-run starts them,
  // accept a process that exits 0 without it.
  if (failures) {
    COHORT_LOG_INFO("MPI_Finalize: ranks have failed; skipping the MPI library's own finalize");
    std::fflush(nullptr);
    return MPI_SUCCESS;
  }
  return PMPI_Finalize();
}

extern "C" int __wrap_MPI_Abort(MPI_Comm comm, int errorcode) {
  count_call(CallId::MPI_Abort);
  (void)comm;  // NOTE: stops the whole job, as both MPIs do for any communicator
  COHORT_LOG_INFO("MPI_Abort: errorcode %d; stopping the whole job", errorcode);
  std::fflush(nullptr);
  cohort::wrap::stop_job(errorcode);
}
