#include "wrap/errors.hpp"

#include <mpi.h>
// NOTE: also in the heartbeat build: an Open MPI with ULFM (5, --with-ft ulfm) defines MPIX_ERR_* there,
// and programs that include it must get those classes from cohort's MPIX_* and ULFM mode too.
#if defined(OPEN_MPI)
#include <mpi-ext.h>
#endif

#include <atomic>

#include "detector/log.hpp"
#include "repair/repair.hpp"
#include "wrap/policy.hpp"

namespace cohort::wrap {
namespace {
std::atomic<int> g_class{-1}, g_code{-1};
std::atomic<int> g_pending_class{-1}, g_pending_code{-1}, g_revoked_class{-1}, g_revoked_code{-1};

#ifndef MPIX_ERR_PROC_FAILED
// A class added with MPI_Add_error_class, its string, and one code of it (see err_proc_failed_code).
void add_class(const char *text, std::atomic<int> *cls_out, std::atomic<int> *code_out) {
  int cls = -1, code = -1;
  if (PMPI_Add_error_class(&cls) != MPI_SUCCESS) return;
  PMPI_Add_error_string(cls, const_cast<char *>(text));
  if (PMPI_Add_error_code(cls, &code) == MPI_SUCCESS) PMPI_Add_error_string(code, const_cast<char *>(text));
  cls_out->store(cls);
  code_out->store(code);
}
#endif
thread_local bool t_raising = false;  // cohort itself calls the handler (call_errhandler)

#if defined(COHORT_USE_ULFM)
// MPI_ERRORS_ARE_FATAL, except for the failures that cohort's wrappers handle.
void fatal_but_failures(MPI_Comm *, int *code, ...) {
  if (!t_raising && repair::error_kind(*code) != repair::ErrorKind::none) return;
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  PMPI_Error_string(*code, text, &len);
  log::write(log::Level::error, "MPI error on a communicator with MPI_ERRORS_ARE_FATAL: %s (code %d)", text, *code);
  stop_job(1);
}

void tolerate_failures(MPI_Comm comm) {
  MPI_Errhandler current = MPI_ERRHANDLER_NULL, mine = MPI_ERRHANDLER_NULL;
  PMPI_Comm_get_errhandler(comm, &current);
  if (current == MPI_ERRORS_ARE_FATAL && PMPI_Comm_create_errhandler(fatal_but_failures, &mine) == MPI_SUCCESS) {
    PMPI_Comm_set_errhandler(comm, mine);
    PMPI_Errhandler_free(&mine);
  }
  if (current != MPI_ERRHANDLER_NULL) PMPI_Errhandler_free(&current);
}
#endif
}  // namespace

void call_errhandler(MPI_Comm comm, int code) {
  t_raising = true;
  PMPI_Comm_call_errhandler(comm, code);
  t_raising = false;
}

void copy_errhandler(MPI_Comm from, MPI_Comm to) {
  MPI_Errhandler eh;
  PMPI_Comm_get_errhandler(from, &eh);
  PMPI_Comm_set_errhandler(to, eh);
  PMPI_Errhandler_free(&eh);
}

int err_proc_failed() { return g_class.load(); }
int err_proc_failed_code() { return g_code.load(); }
int err_proc_failed_pending() { return g_pending_class.load(); }
int err_proc_failed_pending_code() { return g_pending_code.load(); }
int err_revoked() { return g_revoked_class.load(); }
int err_revoked_code() { return g_revoked_code.load(); }

bool is_failure_code(int rc) {
  return rc != MPI_SUCCESS && (rc == g_code.load() || rc == g_pending_code.load() || rc == g_revoked_code.load());
}

void init_error_classes() {
#ifdef MPIX_ERR_PROC_FAILED
  g_class.store(MPIX_ERR_PROC_FAILED);
  g_code.store(MPIX_ERR_PROC_FAILED);
  g_pending_class.store(MPIX_ERR_PROC_FAILED_PENDING);
  g_pending_code.store(MPIX_ERR_PROC_FAILED_PENDING);
  g_revoked_class.store(MPIX_ERR_REVOKED);
  g_revoked_code.store(MPIX_ERR_REVOKED);
#if defined(COHORT_USE_ULFM)
  tolerate_failures(MPI_COMM_WORLD);
#endif
#else
  add_class("cohort: a rank needed by this call has failed", &g_class, &g_code);
  add_class("cohort: a rank that could send to this MPI_ANY_SOURCE receive has failed (acknowledge it)",
            &g_pending_class, &g_pending_code);
  add_class("cohort: the communicator has been revoked", &g_revoked_class, &g_revoked_code);
#endif
}

}  // namespace cohort::wrap
