// MPI_Win_fence on a window cohort keeps: the epoch's completion, the fence exchange
// (wrap/rma/fence_exchange.hpp) as the fence's request, the survivors' confirmation, and the window made
// again over the survivors.
//
// Recreation over the survivors (Legio, section 3.7): at the first MPI_Win_fence whose request is
// posted on a substitute communicator other than the one the window was made on, that post makes a
// new window over the same memory on it (MPI_Win_create on a thread of its own, completing a
// generalized request that the driver polls like any collective's request), and the fence returns on
// the new window; the old one is left to MPI (it has a dead member). Every survivor recreates at the
// same fence: the driver gives a call the same outcome everywhere, so the attempt that completes a
// fence was posted on the same substitute by every survivor (a creation that a member's death
// interrupts is abandoned with its attempt and made again on the shrunk communicator). A survivor that
// returned from the fence that saw the failure before it learned of it (the driver's "one call ahead")
// switches at the next fence with the others. Only fences switch: lock/unlock epochs have no point that
// every survivor passes, so a window used only with passive target synchronisation stays on the
// communicator it was made on (no cohort call on it needs a dead member: RMA never targets one).
//
// Thread-safety: none; calls on one window follow MPI's rules.
#pragma once
#include <mpi.h>

#include "wrap/rma/window_registry.hpp"

namespace cohort::wrap::win {

// MPI_Win_fence(assert) on w (the program's window `handle`).
int fence(WinRecord &w, MPI_Win handle, int assert);

// The program's MPI_Win_create or MPI_Win_allocate (`id`) over w's memory, collective over the survivors
// of w.alias: made as a recreation is (MPI_Win_create on a thread of its own, whose completion the driver
// polls and confirms), so that a member that dies meanwhile never holds the survivors in MPI's creation:
// its attempt is abandoned and the window made on the shrunk communicator. Sets w's window, its
// substitute, exchange communicator and the program's error handler.
int create_window(WinRecord &w, CallId id);

}  // namespace cohort::wrap::win
