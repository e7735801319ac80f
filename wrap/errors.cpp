#include "wrap/errors.hpp"

#include <mpi.h>

#include <atomic>

namespace cohort::wrap {
namespace {
std::atomic<int> g_class{-1}, g_code{-1};
}

int err_proc_failed() { return g_class.load(); }
int err_proc_failed_code() { return g_code.load(); }

void init_error_classes() {
#ifdef MPIX_ERR_PROC_FAILED
  g_class.store(MPIX_ERR_PROC_FAILED);
  g_code.store(MPIX_ERR_PROC_FAILED);
#else
  int cls = -1, code = -1;
  if (PMPI_Add_error_class(&cls) == MPI_SUCCESS) {
    PMPI_Add_error_string(cls, const_cast<char *>("cohort: a rank needed by this call has failed"));
    if (PMPI_Add_error_code(cls, &code) == MPI_SUCCESS) {
      PMPI_Add_error_string(code, const_cast<char *>("cohort: a rank needed by this call has failed"));
    }
    g_class.store(cls);
    g_code.store(code);
  }
#endif
}

}  // namespace cohort::wrap
