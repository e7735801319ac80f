// The entry points of libcohort-preload.so, the PMPI build of cohort: generated from wrap/calls.def.
//
// Put in front of the MPI library with LD_PRELOAD, this library defines MPI_X for every wrapped call, so
// that a program that was not relinked (a prebuilt binary, mpi4py, a solver library's own calls) lands in
// cohort: MPI_X forwards to the same __wrap_MPI_X that `-Wl,--wrap` reaches in the static build. The
// wrappers are compiled once, into the same objects for both builds (nothing is written twice).
//
// Recursion: nothing in cohort calls MPI_X (its wrappers, driver, repair and detector thread call PMPI_X;
// the unit test build.no_mpi_calls_inside_cohort checks libcohort's undefined symbols), so cohort's own
// calls reach the MPI library. Calls that the MPI library makes through the public names while a wrapped
// call runs on the same thread (MPICH's ROMIO calls MPI_File_* and MPI_Type_* that way; callbacks such
// as user-defined reduction ops or error handlers run inside the call) go straight to PMPI_X: each entry
// point counts its depth in a thread-local counter and forwards to cohort only at depth 0.
#include <mpi.h>

#include <string_view>

#include "wrap/calls.h"

namespace {

// Depth of cohort entry points on this thread. initial-exec: the library is loaded at startup (by
// LD_PRELOAD), so its TLS is static and each access is one load, not a __tls_get_addr call.
__attribute__((tls_model("initial-exec"))) thread_local int t_depth = 0;

struct Enter {
  Enter() { ++t_depth; }
  ~Enter() { --t_depth; }
  Enter(const Enter &) = delete;
  Enter &operator=(const Enter &) = delete;
};

// Calls answered by cohort at any depth: what a program's error handler, which runs inside the call that
// raised the error, asks about the code (cohort's failure classes: wrap/core/errors.hpp). Local, no MPI state.
constexpr bool any_depth(std::string_view name) { return name == "MPI_Error_class" || name == "MPI_Error_string"; }

}  // namespace

#define COHORT_EXPORT __attribute__((visibility("default")))

extern "C" {

// MPI_X: the program's (or another library's) call.
#define COHORT_CALL(name, cls, params, args, note, root, dead_root, outputs, completion, entry, chapter, result) \
  COHORT_EXPORT result name params {                          \
    if (t_depth != 0 && !any_depth(#name)) return P##name args; \
    Enter enter;                                              \
    return __wrap_##name args;                                \
  }
#include "wrap/calls.def"
#undef COHORT_CALL

#if !defined(COHORT_USE_ULFM)
// MPIX_X of ULFM's API: cohort's own (MPICH's exported stubs abort; Open MPI 4.1 has none). The MPI library
// never calls them, so no depth check.
#define COHORT_MPIX(name, params, args, note) \
  COHORT_EXPORT int name params { return __wrap_##name args; }
#define COHORT_CALL(...)
#include "wrap/calls.def"
#undef COHORT_CALL
#undef COHORT_MPIX
#endif

// __real_MPI_X: in the static build `--wrap` makes it MPI_X, the library's own; here it is PMPI_X, so a
// wrapper written with either name reaches the MPI library in both builds. Not exported.
#define COHORT_CALL(name, cls, params, args, note, root, dead_root, outputs, completion, entry, chapter, result) \
  result __real_##name params { return P##name args; }
#include "wrap/calls.def"
#undef COHORT_CALL

}  // extern "C"
