// The Sessions model (MPI 4.0 section 11.3) as cohort sees it: the program's open sessions and cohort's own.
#pragma once

namespace cohort::wrap::session {

/// The program's sessions that cohort protects and that are not finalized yet.
int open_count();

/// Finalizes cohort's own session (the one its world and self communicators come from), if it made one.
/// Called once cohort has stopped without failures.
void finalize_own();

}  // namespace cohort::wrap::session
