#include "wrap/errors.hpp"

#include <mpi.h>

#include <atomic>

namespace cohort::wrap {
namespace {
std::atomic<int> g_proc_failed{-1};
}

int err_proc_failed() { return g_proc_failed.load(); }

void init_error_classes() {
#ifdef MPIX_ERR_PROC_FAILED
  g_proc_failed.store(MPIX_ERR_PROC_FAILED);
#else
  int cls = -1;
  if (PMPI_Add_error_class(&cls) == MPI_SUCCESS) {
    PMPI_Add_error_string(cls, const_cast<char *>("cohort: a rank needed by this call has failed"));
    g_proc_failed.store(cls);
  }
#endif
}

}  // namespace cohort::wrap
