// Stopping the whole job: what the `abort` policy and cohort's fatal errors after MPI_Init do.
#pragma once

namespace cohort::wrap {

/// Stops the whole job with exit code `code`: every other rank is declared failed (so that it fences
/// itself, also under Open MPI's recovery mode), then PMPI_Abort on MPI_COMM_WORLD. Never returns.
[[noreturn]] void stop_job(int code);

/// Applies `abort`: one line `cohort[rank R] error: <call>: <what> (policy abort)` and terminates the job
/// (PMPI_Abort on MPI_COMM_WORLD with errorcode 1; never returns, never hangs).
[[noreturn]] void abort_job(const char *call, const char *what);

}  // namespace cohort::wrap
