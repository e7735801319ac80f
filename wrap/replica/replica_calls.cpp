// The calls that work under replication, as a flag per row of wrap/calls.def (derived from it, so that a
// call added there is stopped under replication until it is listed here), and the stop at any other.
#include <string_view>

#include "detector/log.hpp"
#include "wrap/calls.h"
#include "wrap/core/replica_mode.hpp"
#include "wrap/replica/replica.hpp"
#include "wrap/replica/sdc_check.hpp"

namespace cohort::wrap::replica {
namespace {

// Handled by wrap/replica/ (point-to-point, requests, communicators, collectives over the logical ranks) or harmless
// as they are (start and stop, local queries that do not depend on the number of processes).
constexpr std::string_view kHandled[] = {
    // start and stop, local queries
    "MPI_Init", "MPI_Init_thread", "MPI_Finalize", "MPI_Abort", "MPI_Comm_rank", "MPI_Comm_size",
    "MPI_Error_class", "MPI_Error_string", "MPI_Comm_get_attr", "MPI_Reduce_local", "MPI_Wtime", "MPI_Wtick",
    // point-to-point and requests
    "MPI_Send", "MPI_Recv", "MPI_Sendrecv", "MPI_Isend", "MPI_Irecv", "MPI_Wait", "MPI_Waitall", "MPI_Waitany",
    "MPI_Test", "MPI_Testany", "MPI_Testall", "MPI_Waitsome", "MPI_Testsome", "MPI_Ssend", "MPI_Issend", "MPI_Rsend", "MPI_Bsend", "MPI_Irsend",
    "MPI_Ibsend", "MPI_Probe", "MPI_Iprobe", "MPI_Mprobe", "MPI_Improbe", "MPI_Mrecv", "MPI_Imrecv",
    // communicators
    "MPI_Comm_dup", "MPI_Comm_split", "MPI_Comm_split_type", "MPI_Comm_create", "MPI_Comm_create_group",
    "MPI_Comm_free", "MPI_Comm_group", "MPI_Comm_compare", "MPI_Comm_dup_with_info", "MPI_Comm_idup",
    "MPI_Comm_disconnect",
    // collectives
    "MPI_Barrier", "MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Gather", "MPI_Allgather",
    "MPI_Gatherv", "MPI_Scatter", "MPI_Scatterv", "MPI_Allgatherv", "MPI_Alltoall", "MPI_Alltoallv",
    "MPI_Reduce_scatter", "MPI_Reduce_scatter_block", "MPI_Scan", "MPI_Exscan",
    // Cartesian topologies (wrap/topo/process_topology.cpp: the grid kept by cohort over a logical communicator)
    "MPI_Cart_create", "MPI_Cart_sub", "MPI_Cart_coords", "MPI_Cart_rank", "MPI_Cart_shift", "MPI_Cart_get",
    "MPI_Cartdim_get", "MPI_Topo_test",
};

constexpr bool handled(std::string_view name) {
  for (std::string_view h : kHandled)
    if (h == name) return true;
  return false;
}

constexpr bool in_calls_def(std::string_view name) {
#define COHORT_CALL(call, ...) \
  if (name == #call) return true;
#include "wrap/calls.def"
#undef COHORT_CALL
  return false;
}

constexpr bool all_listed_exist() {
  for (std::string_view h : kHandled)
    if (!in_calls_def(h)) return false;
  return true;
}
static_assert(all_listed_exist(), "kHandled names a call that is not a COHORT_CALL row of wrap/calls.def");

constexpr bool kHandledById[] = {
#define COHORT_CALL(call, ...) handled(#call),
#include "wrap/calls.def"
#undef COHORT_CALL
};
static_assert(sizeof kHandledById / sizeof kHandledById[0] == static_cast<int>(CallId::count_));

}  // namespace

bool handles(CallId id) { return kHandledById[static_cast<int>(id)]; }

}  // namespace cohort::wrap::replica

namespace cohort::wrap::replica_mode {

void check_call(int call_id) {
  replica::sdc_check::set_call(call_id);
  if (replica::handles(static_cast<CallId>(call_id))) return;
  replica::stop_unsupported(kCallInfo[call_id].name);
}

}  // namespace cohort::wrap::replica_mode
