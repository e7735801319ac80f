// Declarations generated from wrap/calls.def (the one list of wrapped calls) by the preprocessor:
// __wrap_MPI_X (defined by cohort), __real_MPI_X (the MPI library's own, resolved by the linker's --wrap),
// and the CallId enumeration used to count calls.
#pragma once
#include <mpi.h>

extern "C" {
#define COHORT_CALL(name, cls, params, args, note) \
  int __wrap_##name params;                        \
  int __real_##name params;
#include "wrap/calls.def"
#undef COHORT_CALL
}

namespace cohort::wrap {

enum class CallId : int {
#define COHORT_CALL(name, cls, params, args, note) name,
#include "wrap/calls.def"
#undef COHORT_CALL
  count_
};

/// Counts one entry into the wrapper of `id` (relaxed atomic increment).
void count_call(CallId id);

}  // namespace cohort::wrap
