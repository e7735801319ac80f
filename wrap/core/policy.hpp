// What to do when the rank that a call needs is dead (Legio's policies, chosen at run time).
//
//   COHORT_ON_DEAD_ROOT=abort|skip|error        all rooted collectives (default: per call, below)
//   COHORT_ON_DEAD_ROOT_<CALL>=...              one call, e.g. COHORT_ON_DEAD_ROOT_BCAST=skip
//   COHORT_ON_DEAD_PEER=abort|skip|error        point-to-point, both directions
//   COHORT_ON_DEAD_PEER_SEND=... / _RECV=...    one direction
//   COHORT_SEND_RETRIES=3                       send retries for transient trouble before the policy
//
// Defaults: per rooted call, the dead_root column of wrap/calls.def (Legio's: abort where the root sends,
// skip where it receives; the README's policy table is generated from it); send to a dead rank skip,
// receive from a dead rank abort.
//
// Pure: reads the environment, calls no MPI (the fuzz target wrap_settings runs it). Stopping the job for
// `abort` is wrap/core/stop_job.hpp.
#pragma once
#include <string>
#include <vector>

namespace cohort::wrap {

enum class Policy { abort, skip, error };

const char *policy_name(Policy p);

/// Reads the policy for `call` (e.g. "MPI_Bcast"): COHORT_ON_DEAD_ROOT_BCAST, then COHORT_ON_DEAD_ROOT,
/// then `fallback`. An invalid value: one line naming the variable and the rank, exit code 2.
Policy dead_root_policy(const char *call, Policy fallback);

/// The per-call variable of `call`: "MPI_Bcast" -> "COHORT_ON_DEAD_ROOT_BCAST".
std::string dead_root_variable(const char *call);

/// Reads COHORT_ON_DEAD_ROOT, COHORT_ON_DEAD_PEER, COHORT_ON_DEAD_PEER_SEND/_RECV and each of
/// `per_call_variables`, each on its own (a per-call value does not hide an invalid generic one). Returns
/// "" or, for the first invalid value, one line naming the variable (MPI_Init stops the rank with it).
std::string check_policy_variables(const std::vector<std::string> &per_call_variables);

/// Reads COHORT_ON_DEAD_PEER_SEND or _RECV, then COHORT_ON_DEAD_PEER, then `fallback`.
Policy dead_peer_policy(bool send, Policy fallback);

}  // namespace cohort::wrap
