// The communicators of all the job's processes and of this process alone that cohort's own traffic, rank
// numbering and group translations use. Under the World Model they are MPI_COMM_WORLD and MPI_COMM_SELF;
// when the program starts MPI with MPI_Session_init instead (MPI 4.0 section 11.3), those handles are not
// valid, and cohort uses communicators it makes from its own session's "mpi://WORLD" and "mpi://SELF"
// process sets (wrap/runtime/session.cpp). Set once while cohort starts, before any of its threads runs.
#pragma once
#include <mpi.h>

namespace cohort {

namespace world_detail {
inline MPI_Comm g_world = MPI_COMM_WORLD;
inline MPI_Comm g_self = MPI_COMM_SELF;
}  // namespace world_detail

/// All the job's processes, in MPI_COMM_WORLD's order (ranks of this communicator are "world ranks").
inline MPI_Comm world() { return world_detail::g_world; }

/// This process alone.
inline MPI_Comm self() { return world_detail::g_self; }

/// Makes cohort use `world` and `self` (from its session) instead of MPI_COMM_WORLD and MPI_COMM_SELF.
inline void use_session_world(MPI_Comm world, MPI_Comm self) {
  world_detail::g_world = world;
  world_detail::g_self = self;
}

/// cohort runs on communicators of its own session rather than on MPI_COMM_WORLD.
inline bool world_from_session() { return world_detail::g_world != MPI_COMM_WORLD; }

}  // namespace cohort
