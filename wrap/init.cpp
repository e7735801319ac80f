// MPI_Init, MPI_Init_thread, MPI_Finalize: start and stop cohort around the MPI library.
#include <mpi.h>

#include "detector/log.hpp"
#include "detector/runtime.hpp"
#include "repair/repair.hpp"
#include "wrap/calls.h"
#include "wrap/errors.hpp"

namespace cohort::wrap {
namespace {

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
  if (got < MPI_THREAD_MULTIPLE) {
    COHORT_LOG_WARN("MPI_Init: MPI provides thread level %d, not MPI_THREAD_MULTIPLE; failure detection is off", got);
  }
  detector::start(got >= MPI_THREAD_MULTIPLE);
  repair::init();
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
  cohort::repair::finalize();
  cohort::detector::stop();
  return PMPI_Finalize();
}

extern "C" int __wrap_MPI_Comm_rank(MPI_Comm comm, int *rank) {
  count_call(CallId::MPI_Comm_rank);
  return PMPI_Comm_rank(comm, rank);
}

extern "C" int __wrap_MPI_Comm_size(MPI_Comm comm, int *size) {
  count_call(CallId::MPI_Comm_size);
  return PMPI_Comm_size(comm, size);
}

extern "C" int __wrap_MPI_Barrier(MPI_Comm comm) {
  count_call(CallId::MPI_Barrier);
  return PMPI_Barrier(comm);
}
