// The driver's decision after each attempt, from the agreed outcome only (pure; no MPI). Every survivor
// feeds it the same agreed values, so every survivor takes the same step (Legio's P.3).
#pragma once

namespace cohort::wrap {

enum class Step {
  finish,              ///< the call completed on every survivor: return MPI_SUCCESS
  shrink_then_finish,  ///< completed everywhere, but a member is known dead: shrink now, then return
  shrink_then_retry,   ///< some survivor's request did not complete: shrink and retry the call
  give_up,             ///< retries stopped removing ranks: return an error instead of looping
};

/// all_completed: the agreed AND of "my request completed"; failures_agreed: the agreed failed set is
/// not empty; attempt: 0 for the first try; sub_size: ranks in the substitute the attempt ran on.
/// Each shrink removes at least one rank, so more than sub_size retries means no progress.
inline Step next_step(bool all_completed, bool failures_agreed, int attempt, int sub_size) {
  if (all_completed) return failures_agreed ? Step::shrink_then_finish : Step::finish;
  return attempt < sub_size ? Step::shrink_then_retry : Step::give_up;
}

}  // namespace cohort::wrap
