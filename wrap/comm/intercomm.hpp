// Intercommunicators (wrap/comm/intercomm.cpp): the collectives that the generated entry points (wrap/coll/coll.cpp)
// hand over when the program's communicator is an intercommunicator cohort made.
//
// Each overload answers for the calls of one parameter list: it returns false (and leaves *rc alone)
// when comm is not an intercommunicator cohort made, or when `id` is not one of the collectives cohort
// runs over intercommunicators (every collective MPI defines on one: Barrier, Bcast, Allreduce, Reduce,
// Gather(v), Scatter(v), Allgather(v), Alltoall(v, w), Reduce_scatter(_block), and their nonblocking twins,
// whose requests complete through any wait or test call and which a revoke of either group interrupts);
// the entry point then passes the call through to PMPI. Otherwise it runs the call and
// returns true with the call's result in *rc. Collectives on one intercommunicator are serialised by the
// program, as MPI requires; calls on different ones may run on different threads.
#pragma once
#include <mpi.h>

#include "wrap/calls.h"

namespace cohort::wrap::inter {

/// The union alias of an intercommunicator cohort made (see wrap/comm/intercomm.cpp), or MPI_COMM_NULL for any
/// other communicator. The union stands for the intercommunicator in repair: its revocation is the
/// intercommunicator's (MPIX_Comm_revoke on either, ULFM 17.3.1). Thread-safe.
MPI_Comm union_of(MPI_Comm comm);
/// Which group of an intercommunicator cohort made this process is in: 0 for the group whose ranks come
/// first in the union (the one holding the lower MPI_COMM_WORLD rank), 1 for the other; -1 for any other
/// communicator. Thread-safe.
int union_side(MPI_Comm comm);
/// MPIX_Comm_shrink of an intercommunicator cohort made (ULFM 17.3.2): its union shrunk over the survivors
/// of both groups (works on a revoked one), and a new intercommunicator between each group's survivors on
/// it, registered as cohort's, with comm's error handler. Collective over the survivors of both groups.
/// Returns MPI_SUCCESS, MPI_ERR_COMM (not an intercommunicator cohort made), MPI_ERR_OTHER (a group has no
/// survivor), or an MPI error of the shrink or the creation.
int shrink(MPI_Comm comm, MPI_Comm *newcomm);

bool collective(CallId id, int *rc, MPI_Comm comm);
bool collective(CallId id, int *rc, MPI_Comm comm, MPI_Request *request);
bool collective(CallId id, int *rc, void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm);
bool collective(CallId id, int *rc, const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                MPI_Comm comm);
bool collective(CallId id, int *rc, const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                int root, MPI_Comm comm);
bool collective(CallId id, int *rc, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
bool collective(CallId id, int *rc, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
/// The nonblocking twins (Ibcast; Iallreduce; Ireduce; Igather, Iscatter; Iallgather, Ialltoall): cohort's
/// own nonblocking collectives on the union, whose requests complete through any wait or test call.
bool collective(CallId id, int *rc, void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
                MPI_Request *request);
bool collective(CallId id, int *rc, const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                MPI_Comm comm, MPI_Request *request);
bool collective(CallId id, int *rc, const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request *request);
bool collective(CallId id, int *rc, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request);
bool collective(CallId id, int *rc, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
/// The v and w variants and the reduce-scatters (MPI_Reduce_scatter_block shares Allreduce's lists): the
/// blocking ones as their nonblocking twin and a wait.
bool collective(CallId id, int *rc, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm,
                MPI_Request *request);
bool collective(CallId id, int *rc, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm);
bool collective(CallId id, int *rc, const void *sendbuf, const int sendcounts[], const int displs[],
                MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                MPI_Request *request);
bool collective(CallId id, int *rc, const void *sendbuf, const int sendcounts[], const int displs[],
                MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
bool collective(CallId id, int *rc, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                MPI_Request *request);
bool collective(CallId id, int *rc, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm);
bool collective(CallId id, int *rc, const void *sendbuf, const int sendcounts[], const int sdispls[],
                MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
bool collective(CallId id, int *rc, const void *sendbuf, const int sendcounts[], const int sdispls[],
                MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                MPI_Datatype recvtype, MPI_Comm comm);
bool collective(CallId id, int *rc, const void *sendbuf, const int sendcounts[], const int sdispls[],
                const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[],
                const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request);
bool collective(CallId id, int *rc, const void *sendbuf, const int sendcounts[], const int sdispls[],
                const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[],
                const MPI_Datatype recvtypes[], MPI_Comm comm);
bool collective(CallId id, int *rc, const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype type,
                MPI_Op op, MPI_Comm comm, MPI_Request *request);
bool collective(CallId id, int *rc, const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype type,
                MPI_Op op, MPI_Comm comm);
/// Every other parameter list: not a collective cohort runs over an intercommunicator.
template <typename... T>
bool collective(CallId, int *, T...) {
  return false;
}

}  // namespace cohort::wrap::inter
