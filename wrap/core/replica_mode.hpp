// Whether the job runs replicated (COHORT_REPLICAS >= 2), as every wrapper's entry (count_call in
// wrap/calls.h) needs to know: under replication a call wrap/replica/ does not handle stops the program at
// the call. Declared here, in core/, because calls.h includes core/ only; defined in
// wrap/replica/replica_calls.cpp, which owns the list of the calls replication handles.
#pragma once
#include <atomic>

namespace cohort::wrap::replica_mode {

/// Set once at MPI_Init when COHORT_REPLICAS >= 2, before the program's first call after it.
inline std::atomic<bool> g_on{false};

/// Stops the program with one line when the call (a CallId of wrap/calls.h) is not handled under
/// replication; returns otherwise.
void check_call(int call_id);

}  // namespace cohort::wrap::replica_mode
