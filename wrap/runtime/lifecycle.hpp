// Starting and stopping cohort around the MPI library, shared by the World Model's calls (MPI_Init,
// MPI_Finalize: wrap/runtime/init.cpp) and the Sessions model's (MPI_Session_init, MPI_Session_finalize:
// wrap/runtime/session.cpp). MPI 4.0 section 11.3 lets one program use both: cohort starts at the first of them and
// stops at the last finalize.
#pragma once
#include <mpi.h>
#include <signal.h>

namespace cohort::wrap {

/// Brings the MPI library up, asking for MPI_THREAD_MULTIPLE, and stores the level it provides.
using BringUpMpi = int (*)(int *argc, char ***argv, int *provided);

/// Starts cohort: brings MPI up with `bring_up` (which also makes cohort::world() valid), then reads the
/// settings, starts the detector, repair, the world alias and the watchdog. `call` names the program's call
/// in messages. Returns bring_up's error if it fails.
int start(const char *call, int *argc, char ***argv, int *provided, BringUpMpi bring_up);

/// Stops cohort (a survivors-only barrier on the world alias, then repair and the detector). Returns true
/// when ranks failed, a communicator was revoked or a ring neighbour went silent meanwhile
/// (detector::neighbour_silent_at_stop): the MPI library's own finalize can then hang, and the caller
/// skips it.
bool stop();

bool running();        ///< started and not stopped
bool stopped();        ///< started once and stopped since: cohort does not start twice in a process
bool world_model();    ///< MPI_Init returned and MPI_Finalize was not called yet
bool finalize_deferred();  ///< MPI_Finalize left PMPI_Finalize to the last MPI_Session_finalize
bool failures_seen();
/// The World Model starts (MPI_Init returned: on) or ends (MPI_Finalize called: off).
void set_world_model(bool on);
/// MPI_Finalize leaves the MPI library's own finalize to the last MPI_Session_finalize.
void defer_finalize();

/// Undoes MPICH's SIGUSR1 handler after the MPI library started (see lifecycle.cpp); `before` is the
/// disposition read before it started. No-op on other MPIs.
void restore_sigusr1(const struct sigaction &before);
/// Ignores SIGPIPE where the program left its default action (a write to a dead peer's socket must not end
/// a survivor). Called once at MPI_Init.
void ignore_sigpipe();

}  // namespace cohort::wrap
