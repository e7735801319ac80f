#include "wrap/core/errors.hpp"

#include <mpi.h>
// NOTE: also in the heartbeat build: an Open MPI with ULFM (5, --with-ft ulfm) defines MPIX_ERR_* there,
// and programs that include it must get those classes from cohort's MPIX_* and ULFM mode too.
#if defined(OPEN_MPI)
#include <mpi-ext.h>
#endif

#include <atomic>
#include <cstring>

#include "detector/log.hpp"
#include "detector/world.hpp"
#include "repair/repair.hpp"
#include "wrap/calls.h"
#include "wrap/core/policy.hpp"
#include "wrap/core/stop_job.hpp"

namespace cohort::wrap {
namespace {

// One of ULFM's failure classes: its value (the MPI's constant, or the class added at MPI_Init) and text.
struct FailureClass {
  std::atomic<int> value;
  const char *text;
};

// The MPI's constants where its headers define them (MPICH, Open MPI 5); otherwise added at MPI_Init.
#ifdef MPIX_ERR_PROC_FAILED
constexpr int kProcFailed = MPIX_ERR_PROC_FAILED, kPending = MPIX_ERR_PROC_FAILED_PENDING, kRevoked = MPIX_ERR_REVOKED;
#else
constexpr int kProcFailed = -1, kPending = -1, kRevoked = -1;
#endif
FailureClass g_proc_failed{{kProcFailed}, "MPI_ERR_PROC_FAILED: a rank needed by this call has failed"};
FailureClass g_pending{{kPending}, "MPI_ERR_PROC_FAILED_PENDING: a rank that could send to this MPI_ANY_SOURCE "
                                   "receive has failed (acknowledge it to receive from the others)"};
FailureClass g_revoked{{kRevoked}, "MPI_ERR_REVOKED: the communicator has been revoked"};

#ifndef MPIX_ERR_PROC_FAILED
// A class added with MPI_Add_error_class, with its text (what Open MPI's own fatal handler prints).
void add_class(FailureClass *c) {
  int cls = -1;
  if (PMPI_Add_error_class(&cls) != MPI_SUCCESS) return;
  PMPI_Add_error_string(cls, const_cast<char *>(c->text));
  c->value.store(cls);
}
#endif

FailureClass *failure_class(int code) {
  if (code == MPI_SUCCESS) return nullptr;
  for (FailureClass *c : {&g_proc_failed, &g_pending, &g_revoked}) {
    if (code == c->value.load(std::memory_order_relaxed)) return c;
  }
  return nullptr;
}

// MPIX_FT (<cohort/mpi-ext.h>): the attribute key where the MPI has none, and the value on MPI_COMM_WORLD.
// NOTE: an int that the attribute points to, as for MPI's own integer attributes (MPI_TAG_UB): programs
// read *(int *)val. 1: cohort's ULFM API is linked into this program.
std::atomic<int> g_ft_keyval{MPI_KEYVAL_INVALID};
int g_ft_value = 1;

// The key, and its value on MPI_COMM_WORLD under the World Model (a program that starts with
// MPI_Session_init gets it on MPI_COMM_WORLD at its MPI_Init, set_world_ft_attribute).
void set_ft_attribute() {
  int key = MPI_KEYVAL_INVALID;
  if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key, nullptr) != MPI_SUCCESS) return;
  if (!cohort::world_from_session()) PMPI_Comm_set_attr(MPI_COMM_WORLD, key, &g_ft_value);
  g_ft_keyval.store(key);
}

thread_local bool t_raising = false;  // cohort itself calls the handler (call_errhandler)

#if defined(COHORT_USE_ULFM)
// MPI_ERRORS_ARE_FATAL, except for the failures that cohort's wrappers handle.
void fatal_but_failures(MPI_Comm *, int *code, ...) {
  if (!t_raising && repair::error_kind(*code) != repair::ErrorKind::none) return;
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  error_string(*code, text, &len);
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
  const FailureClass *c = failure_class(code);
  if (c != nullptr) {
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    PMPI_Comm_get_errhandler(comm, &eh);
    if (eh == MPI_ERRORS_ARE_FATAL) log::write(log::Level::error, "%s (code %d, MPI_ERRORS_ARE_FATAL)", c->text, code);
    if (eh != MPI_ERRHANDLER_NULL) PMPI_Errhandler_free(&eh);
  }
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

int err_proc_failed() { return g_proc_failed.value.load(); }
int err_proc_failed_code() { return g_proc_failed.value.load(); }
int err_proc_failed_pending() { return g_pending.value.load(); }
int err_proc_failed_pending_code() { return g_pending.value.load(); }
int err_revoked() { return g_revoked.value.load(); }
int err_revoked_code() { return g_revoked.value.load(); }

bool is_failure_code(int rc) { return failure_class(rc) != nullptr; }

const char *failure_text(int code) {
  const FailureClass *c = failure_class(code);
  return c != nullptr ? c->text : nullptr;
}

int error_class(int code, int *cls) {
  if (failure_class(code) == nullptr || cls == nullptr) return PMPI_Error_class(code, cls);
  *cls = code;
  return MPI_SUCCESS;
}

int error_string(int code, char *text, int *len) {
  const char *mine = failure_text(code);
  if (mine == nullptr || text == nullptr || len == nullptr) return PMPI_Error_string(code, text, len);
  std::size_t n = std::strlen(mine);
  if (n > MPI_MAX_ERROR_STRING - 1) n = MPI_MAX_ERROR_STRING - 1;
  std::memcpy(text, mine, n);
  text[n] = '\0';
  *len = static_cast<int>(n);
  return MPI_SUCCESS;
}

void init_error_classes() {
#ifdef MPIX_ERR_PROC_FAILED
#if defined(COHORT_USE_ULFM)
  tolerate_failures(cohort::world());
#endif
#else
  add_class(&g_proc_failed);
  add_class(&g_pending);
  add_class(&g_revoked);
#endif
#if !defined(MPIX_FT)
  set_ft_attribute();
#endif
}

void set_world_ft_attribute() {
#if !defined(MPIX_FT)
  int key = g_ft_keyval.load();
  if (key != MPI_KEYVAL_INVALID) PMPI_Comm_set_attr(MPI_COMM_WORLD, key, &g_ft_value);
#endif
}

int raise_error(MPI_Comm comm, const char *call) {
  int code = err_proc_failed_code();
  COHORT_LOG_INFO("%s: a rank it needs has failed (policy error, code %d of class %d)", call, code,
                  err_proc_failed());
  call_errhandler(comm, code);
  return code;
}

}  // namespace cohort::wrap

extern "C" int cohort_mpix_ft(void) { return cohort::wrap::g_ft_keyval.load(); }

extern "C" int __wrap_MPI_Error_class(int errorcode, int *errorclass) {
  cohort::wrap::count_call(cohort::wrap::CallId::MPI_Error_class);
  return cohort::wrap::error_class(errorcode, errorclass);
}

extern "C" int __wrap_MPI_Comm_get_attr(MPI_Comm comm, int keyval, void *value, int *flag) {
  cohort::wrap::count_call(cohort::wrap::CallId::MPI_Comm_get_attr);
#if defined(MPIX_FT) && !defined(COHORT_USE_ULFM)
  // NOTE: the MPI's own key (Open MPI 5), whose value says whether the MPI's ULFM is on: off under cohort's
  // heartbeat build, whose ULFM API is cohort's own.
  if (keyval == MPIX_FT && comm == MPI_COMM_WORLD && value != nullptr && flag != nullptr) {
    *static_cast<int **>(value) = &cohort::wrap::g_ft_value;
    *flag = 1;
    return MPI_SUCCESS;
  }
#endif
  return PMPI_Comm_get_attr(comm, keyval, value, flag);
}

extern "C" int __wrap_MPI_Error_string(int errorcode, char *string, int *resultlen) {
  cohort::wrap::count_call(cohort::wrap::CallId::MPI_Error_string);
  return cohort::wrap::error_string(errorcode, string, resultlen);
}
