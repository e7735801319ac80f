// What the communicator constructors share (wrap/comm/comm.cpp) with the topology calls (wrap/topo/process_topology.cpp).
#pragma once
#include <mpi.h>

#include <functional>
#include <vector>

#include "wrap/calls.h"
#include "wrap/core/driver.hpp"

namespace cohort::wrap {

/// MPI_Comm_split of alias `a` as the program's call `id` (log lines, inject hook "<call>.posted"):
/// collective over a's survivors. Of a degraded communicator the new one holds the survivors of each
/// color (size = survivors, ranks by key, then old rank); it is registered as an alias of its own.
/// *newcomm is MPI_COMM_NULL for color MPI_UNDEFINED. Returns MPI_SUCCESS or an MPI error code (already
/// passed to the alias's error handler).
/// With program_world (the topology constructors, wrap/topo/process_topology.cpp): the new communicator keeps the
/// numbering those MPI_COMM_WORLD ranks give it (every member of my color, by key, dead ones included), the
/// dead ones holes (Alias::has_holes); nullptr: the dup/split rule above.
int split_alias(Alias &a, CallId id, int color, int key, MPI_Comm *newcomm,
                const std::vector<int> *program_world = nullptr);

/// A private duplicate of alias `a` for cohort's own point-to-point traffic on it (the neighbourhood
/// collectives): collective over a's survivors, like MPI_Comm_dup but not an alias. *map maps a's ranks
/// to the duplicate's (to_sub; -1: a rank already dead when it was made). Returns MPI_SUCCESS or an MPI
/// error code (already passed to the alias's error handler).
int private_dup(Alias &a, CallId id, MPI_Comm *out, RankMap *map);

/// Runs `body` (blocking MPI calls with no nonblocking variant) on a helper thread; *req is a generalized
/// request that completes when body returns, for the driver to poll (PostFn). If the request is
/// abandoned, the thread stays blocked in MPI, leaked with its job. Returns MPI_SUCCESS or an MPI error.
int post_on_thread(std::function<void()> body, MPI_Request *req);

/// MPI_Comm_free of an intercommunicator cohort made (wrap/comm/intercomm.cpp): frees its union alias and
/// forgets it. Returns false (and does nothing) when comm is not one. Local.
bool free_intercomm(MPI_Comm comm);
/// MPI_Barrier over both groups of an intercommunicator cohort made, among the survivors; false when comm
/// is not one (then *rc is untouched).
bool intercomm_barrier(MPI_Comm comm, int *rc);

/// Forgets the topology cohort keeps for comm (wrap/topo/process_topology.cpp), when comm is freed. Local, thread-safe.
void forget_topology(MPI_Comm comm);

}  // namespace cohort::wrap
