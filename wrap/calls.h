// Declarations generated from wrap/calls.def (the one list of wrapped calls) by the preprocessor:
// __wrap_MPI_X (defined by cohort), __real_MPI_X (the MPI library's own, resolved by the linker's --wrap),
// and the CallId enumeration used to count calls. The same objects make libcohort-preload.so, where
// wrap/preload.cpp generates the MPI_X entry points and __real_MPI_X (= PMPI_X) from the same table.
#pragma once
#include <mpi.h>

#include <atomic>

#include "detector/runtime.hpp"

// Rows of calls.def for calls that cohort does not wrap expand to nothing unless a user of the table
// defines this macro.
#ifndef COHORT_PASSTHROUGH
#define COHORT_PASSTHROUGH(...)
#endif

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

/// Per-thread call counters (see count_call), summed by cohort_call_count.
struct CallCounters {
  std::atomic<long> n[static_cast<int>(CallId::count_)];
};
CallCounters *new_thread_counters();  // registers a zeroed block for the calling thread
inline thread_local CallCounters *t_call_counters = nullptr;

/// Counts one entry into the wrapper of `id`. The counters are the calling thread's own: a relaxed load
/// and store, no atomic read-modify-write on every wrapped call (inlined).
inline void count_call(CallId id) {
  detector::note_progress();
  CallCounters *c = t_call_counters;
  if (c == nullptr) c = t_call_counters = new_thread_counters();
  std::atomic<long> &n = c->n[static_cast<int>(id)];
  n.store(n.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

}  // namespace cohort::wrap
