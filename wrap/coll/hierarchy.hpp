// Collectives on Legio's hierarchical communicators (COHORT_HIERARCHY=host|K): the MPI adapter of
// topology/hierarchy.hpp. Source: Legio (Rocco, Gadioli, Palermo), journal paper section 5 and Rocco's
// thesis chapter 4: local communicators, masters, partially overlapped (POV) communicators.
//
// Layout, built once at MPI_Init over MPI_COMM_WORLD (every rank alive): one *local* communicator per
// local group g (its host's ranks, or K consecutive ranks), and one *POV* communicator per group: g's
// ranks together with the initial masters (the lowest rank of each group: the *hubs*). Each is a cohort
// alias, repaired by the driver (wrap/core/driver.hpp) on its own: a death shrinks only the communicators its
// rank is a member of.
//
// MPI_Allreduce and MPI_Barrier on MPI_COMM_WORLD (blocking) run in three steps, each a resilient cohort
// collective:
//   1. local: MPI_Allreduce on g's local communicator: every member of g holds g's partial result;
//   2. up: for each group g in order, an allreduce on POV g whose operation keeps any *valid* contribution
//      (a flag and the packed value, one element): every member of g offers g's partial, the hubs offer
//      nothing. So g's partial reaches every hub whichever of g's ranks survive (a master's death needs no
//      re-election for the data to flow: its group's next rank, the new master, carries the partial);
//   3. down: every hub folds the partials in group order (MPI_Reduce_local) and, for each group in order,
//      an allreduce on POV g gives g the total (the hubs offer it, g's members nothing).
// A non-master's death repairs its local and its POV communicator only; a master's (hub's) repairs its
// local communicator and every POV communicator (each holds every hub); nothing else is touched. Every
// other collective, and MPI_COMM_WORLD's own substitute, stay on the flat path.
//
// Limits: the operation must be commutative unless the groups are blocks of consecutive ranks (K); if
// every hub has died the hierarchy cannot carry a collective and the rank stops with one line (exit 2).
// The hierarchy needs at least 2 local groups; with one (one host under `host`) it is not built.
//
// Thread-safety: as MPI collectives (serialised on MPI_COMM_WORLD by the program).
#pragma once
#include <mpi.h>

namespace cohort::wrap {
class Alias;
struct CallDesc;

namespace hierarchy {

/// Reads and validates COHORT_HIERARCHY (off|host|K; default off). An invalid value stops the rank with
/// one line naming the variable and the rank (exit 2). Called from check_settings at MPI_Init.
void read_setting();
/// Builds the local and POV communicators (collective over MPI_COMM_WORLD, from MPI_Init after
/// register_world). Does nothing when the setting is off or there would be one group.
void init();
/// True when a blocking MPI_Allreduce / MPI_Barrier on `alias` runs on the hierarchy.
bool applies(const Alias &alias, MPI_Op op);
/// The three steps above. Return MPI_SUCCESS or an MPI error code (through the local/POV aliases' handlers).
int allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op);
int barrier();

}  // namespace hierarchy
}  // namespace cohort::wrap
