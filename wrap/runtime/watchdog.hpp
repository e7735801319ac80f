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
// stall_ms() (3 x COHORT_HB_TIMEOUT_MS, at least 3 s). Then, once the thread that called MPI_Init is seen
// running (not waiting in a system call: /proc/self/task/<tid>/syscall, read every 100 ms), it sends that
// thread SIGURG (once per stall; SA_RESTART), whose handler records the thread's call stack (glibc
// backtrace(); warmed up at MPI_Init so that it does not load libgcc_s inside the handler). A thread that
// waits in sleep(), nanosleep(), poll(), select(), read() etc. is never signalled: Linux ends sleep(),
// nanosleep(), poll(), select() and epoll_wait() early at any handled signal, SA_RESTART or not. What can
// still return EINTR: such a call that the thread was entering (not yet waiting) when it was seen running,
// at most once per stall. An unwrapped MPI call that waits in a system call instead of polling (both MPIs
// here poll) goes unnamed. The hook finds the outermost frame inside the MPI library (dladdr: the function
// the program called) and logs it; with no MPI frame on the stack (the
// program computes) it logs nothing and waits for the next stall. If the program installed its own SIGURG
// handler, cohort leaves it alone and logs the line without the call's name.
// Linux/glibc only (backtrace, dladdr); thread-safe.
#pragma once

namespace cohort::wrap::watchdog {

/// From the MPI_Init wrappers, on the thread that called MPI_Init, after the detector started.
void start(long timeout_ms);

}  // namespace cohort::wrap::watchdog
