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

// ---- The confirmed fast path and its window (op_adapter.cpp) ----
// Without a known failure, a collective is confirmed by an MPI_Ibarrier posted once the rank's own request
// completed: its completion proves that every member completed the call, and the rank returns without the
// fault-tolerant agreement. A failure during that barrier leaves some ranks past call j (at j + 1) and
// others still in its barrier (at j): never further apart, since a rank at j + 1 completed barrier j,
// which every member had posted. The survivors then run one fault-tolerant agreement in which each gives
// its call number on the alias and whether its own request completed; the AND of these codes tells every
// survivor whether the others are at the same call, one behind or one ahead.

/// The agreement input of a rank at call j (j counts the alias's collectives) whose request of call j
/// completed or not. Bits 0-3: all set but bit (j + 1) % 4; bits 4-5: bit 4 + j % 2 = completed, the
/// other one set; higher bits set.
inline int window_code(unsigned long long j, bool completed) {
  unsigned code = ~0u & ~(1u << ((j + 1) % 4));
  if (!completed) code &= ~(1u << (4 + j % 2));
  return static_cast<int>(code);
}

enum class Window {
  same_call,   ///< every survivor is at my call: next_step decides
  ahead,       ///< others are one call ahead: my call completed everywhere (they passed its barrier)
  behind,      ///< others are one call behind: theirs completed everywhere; mine must be retried
  inconsistent,  ///< more than one call apart: cannot happen (a defect)
};

/// Reads the agreed AND of window_code() at a rank at call j: where the others are, and (same_call)
/// whether every survivor's request of call j completed.
inline Window read_window(int agreed, unsigned long long j, bool *all_completed) {
  unsigned cleared = ~static_cast<unsigned>(agreed) & 0xFu;
  bool after = (cleared & (1u << ((j + 2) % 4))) != 0;  // someone at j + 1
  bool before = (cleared & (1u << (j % 4))) != 0;       // someone at j - 1
  *all_completed = (static_cast<unsigned>(agreed) & (1u << (4 + j % 2))) != 0;
  if (after && before) return Window::inconsistent;
  if (after) return Window::ahead;
  if (before) return Window::behind;
  return Window::same_call;
}

}  // namespace cohort::wrap
