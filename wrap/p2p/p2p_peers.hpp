// The point-to-point view of the failure detector: is the rank a call names (a rank of the program's own
// communicator, the alias) dead? Point-to-point runs on the alias with the peer's rank unchanged: its
// numbering stays valid for the live peers, so no repair is forced on uninvolved ranks (Legio's P.2).
#pragma once
#include <mpi.h>

#include "detector/runtime.hpp"
#include "wrap/core/driver.hpp"

namespace cohort::wrap::p2p {

/// The MPI_COMM_WORLD rank of `rank` of comm (of comm's remote group for an intercommunicator), or -1 when
/// rank is not a rank of comm or the process is outside MPI_COMM_WORLD. The map of each communicator is
/// built once (PMPI_Comm_group + PMPI_Group_translate_ranks) and cached as an MPI attribute of comm, so it
/// goes with MPI_Comm_free and a recycled handle never sees a stale map. Thread-safe.
int world_rank(MPI_Comm comm, int rank);

/// True when comm's peer `rank` is known dead. MPI_PROC_NULL and ranks outside MPI_COMM_WORLD: false.
/// MPI_ANY_SOURCE: true when no peer but the caller can send any more (every other member is dead).
/// One inlined atomic load when no rank has died yet. Thread-safe.
bool peer_dead_after_failures(MPI_Comm comm, int rank);
inline bool peer_dead(MPI_Comm comm, int rank) {
  return detector::failure_epoch() != 0 && rank != MPI_PROC_NULL && peer_dead_after_failures(comm, rank);
}

/// The rank of comm's handle that MPI must be given for the program's `rank` (wrap/core/driver.hpp, Alias::to_handle):
/// rank itself unless comm is a communicator with holes (a topology made of a degraded communicator);
/// Alias::kHole for a hole. One relaxed load when there is none.
int handle_rank_with_holes(MPI_Comm comm, int rank);
inline int handle_rank(MPI_Comm comm, int rank) {
  return any_alias_with_holes() ? handle_rank_with_holes(comm, rank) : rank;
}
/// Puts status->MPI_SOURCE (a rank of comm's handle, from MPI) in the program's numbering.
void program_source_with_holes(MPI_Comm comm, MPI_Status *status);
inline void program_source(MPI_Comm comm, MPI_Status *status) {
  if (any_alias_with_holes() && status != MPI_STATUS_IGNORE) program_source_with_holes(comm, status);
}

}  // namespace cohort::wrap::p2p
