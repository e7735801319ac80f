// The unwrapped-call watchdog: after the detector has learned a failure, a main thread that makes no
// progress through cohort for a while is probably blocked in an MPI call that cohort does not wrap
// (MPI_Ssend, MPI_Mprobe, a PMPI_ call, a call from a library linked without --wrap), which can wait on a
// dead rank forever. The watchdog says so, once per stall, in one line naming the call:
//
//   cohort[rank 0] warn: no progress through cohort for 3012 ms since a rank failed: the program is
//   inside MPI_Mprobe, which cohort does not wrap; it can wait on a dead rank forever
//
// How: every wrapper entry and every poll round of cohort notes progress (detector::note_progress). A
// detector progress hook checks, while failure_epoch() > 0, whether the count stayed the same for
// stall_ms() (3 x COHORT_HB_TIMEOUT_MS, at least 3 s). Then it sends SIGURG to the thread that called
// MPI_Init (once per stall; SIGURG is ignored by default, so a program without cohort's handler is not
// disturbed), whose handler records the thread's call stack (glibc backtrace(); warmed up at MPI_Init so
// that it does not load libgcc_s inside the handler). The hook finds the outermost frame inside the MPI
// library (dladdr: the function the program called) and logs it; with no MPI frame on the stack (the
// program computes) it logs nothing and waits for the next stall. If the program installed its own SIGURG
// handler, cohort leaves it alone and logs the line without the call's name.
// Linux/glibc only (backtrace, dladdr); thread-safe.
#pragma once

namespace cohort::wrap::watchdog {

/// From the MPI_Init wrappers, on the thread that called MPI_Init, after the detector started.
void start(long timeout_ms);

}  // namespace cohort::wrap::watchdog
