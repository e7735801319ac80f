// Replication under MPI (COHORT_REPLICAS = 2 or 3): each logical rank of the program runs as r processes,
// its replicas; the program sees the N logical ranks. This room moves the wire messages of the sans-IO
// mirror protocol (replica/protocol.hpp) over MPI and implements these calls on it
// (docs/design/replication.md, "What is integrated"):
// - communicators: MPI_COMM_WORLD and MPI_COMM_SELF, and those made by Comm_dup/split/split_type/create/
//   create_group, are logical communicators (replica/comms.hpp) with channel contexts every replica
//   agrees on; Comm_rank/size/group/compare/free answer for them;
// - point-to-point on them: a send is packed and handed to the protocol, which copies it to every live
//   replica of the receiver with its channel and sequence number (the send is then complete: cohort holds
//   the copy; a synchronous one waits for a match acknowledgement); receives and probes match logical
//   messages in post order, as MPI's matching rules say, and an MPI_ANY_SOURCE match, the flag of
//   MPI_Test/Testall/Iprobe and the indices of Waitany/Testany/Waitsome/Testsome are the leader's decisions;
// - Barrier, Bcast, Reduce, Allreduce, Gather and Allgather on them run as linear point-to-point schedules
//   on mirror channels of their own; reductions combine in rank order, so every replica computes the same
//   bits;
// - the failure detector's dead world ranks go to the protocol as replica deaths (one warn line each);
// - only the leader of a logical rank writes to stdout and stderr (its twins' are /dev/null until one of
//   them becomes leader).
// Every other wrapped call stops the program at the call (replica_calls.cpp). Progress is made by the
// program's thread, inside these calls. Thread-safety: the program's calls from one thread at a time.
#pragma once
#include <mpi.h>

#include <cstdint>

#include "wrap/calls.h"

namespace cohort::wrap::replica {

/// True when the job runs replicated (COHORT_REPLICAS >= 2 at MPI_Init).
inline bool on() { return replica_mode::g_on.load(std::memory_order_relaxed); }

/// Reads COHORT_REPLICAS; with 2 or 3, sets up the placement, the protocol and the program's view (one
/// line and exit 2 when the world size is not a multiple). Collective over the world; call at MPI_Init
/// after cohort started.
void start();
/// Completes this replica's copies in flight before MPI_Finalize (copies to dead replicas are abandoned).
void finish();
/// After cohort stopped at MPI_Finalize: logs the replica deaths this replica had not learned yet.
void deaths_at_exit();

/// Whether wrap/replica/ handles the call under replication (replica_calls.cpp).
bool handles(CallId id);
/// One line naming the call and exit: the call is not supported under replication.
[[noreturn]] void stop_unsupported(const char *call);

/// Logical ranks with no live replica left, in the order they were lost (the C API's failed ranks).
int failed_logical(int *ranks, int max);
int failed_logical_count();

/// One decision event of the program: every replica's *outcome is the leader's candidate (the protocol's
/// two phases and takeover rule). False, and nothing decided, outside replication's run (after finish()).
bool decide(std::int64_t candidate, std::int64_t *outcome);
/// MPI_Wtime, MPI_Wtick: the leader's values (wtime.cpp).
double wtime();
double wtick();

int comm_rank(MPI_Comm comm, int *rank);
int comm_size(MPI_Comm comm, int *size);
int send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, const char *call);
int ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm);
int issend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *request);
int recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status *status);
int isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *request,
          const char *call);
int irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request *request);
int wait(MPI_Request *request, MPI_Status *status);
int waitall(int count, MPI_Request requests[], MPI_Status statuses[]);
int test(MPI_Request *request, int *flag, MPI_Status *status);
int waitany(int count, MPI_Request requests[], int *index, MPI_Status *status);
int testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status);
int testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]);
int waitsome(int count, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[]);
int testsome(int count, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[]);
int probe(int source, int tag, MPI_Comm comm, MPI_Status *status);
int iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status);
int mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status);
int improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status);
int mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Status *status);
int imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Request *request);

int comm_dup(MPI_Comm comm, MPI_Comm *newcomm);
int comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm, const char *call);
int comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm);
int comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm);
int comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm);
int comm_free(MPI_Comm *comm);
int comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm);
int comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request);
int comm_disconnect(MPI_Comm *comm);
int comm_group(MPI_Comm comm, MPI_Group *group);
int comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result);

int barrier(MPI_Comm comm);
int bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm);
int reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm);
int allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);
int gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, int root, MPI_Comm comm);
int allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
              MPI_Datatype recvtype, MPI_Comm comm);
int gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
            const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm);
int scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
            MPI_Datatype recvtype, int root, MPI_Comm comm);
int scatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void *recvbuf,
             int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
               const int displs[], MPI_Datatype recvtype, MPI_Comm comm);
int alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
             MPI_Datatype recvtype, MPI_Comm comm);
int alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
              const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
/// MPI_Reduce_scatter (id) or MPI_Reduce_scatter_block's schedule: a reduction to rank 0, then a scatter.
int reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm, CallId id);
int reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
                         MPI_Comm comm);
/// MPI_Scan, or MPI_Exscan when exclusive.
int scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm, bool exclusive);

/// The collectives' entry points (generated from wrap/calls.def, wrap/coll/coll.cpp) hand their call
/// here; only the calls handles() lets through reach it, matched by their parameter lists.
// (Several calls share a parameter list: each overload checks the call it implements.)
inline int collective(CallId id, MPI_Comm comm) {
  if (id != CallId::MPI_Barrier) stop_unsupported(info(id).name);
  return barrier(comm);
}
inline int collective(CallId id, void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  if (id != CallId::MPI_Bcast) stop_unsupported(info(id).name);
  return bcast(buf, count, type, root, comm);
}
inline int collective(CallId id, const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                      MPI_Comm comm) {
  if (id != CallId::MPI_Reduce) stop_unsupported(info(id).name);
  return reduce(sendbuf, recvbuf, count, type, op, root, comm);
}
inline int collective(CallId id, const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                      MPI_Comm comm) {
  switch (id) {
    case CallId::MPI_Allreduce: return allreduce(sendbuf, recvbuf, count, type, op, comm);
    case CallId::MPI_Reduce_scatter_block: return reduce_scatter_block(sendbuf, recvbuf, count, type, op, comm);
    case CallId::MPI_Scan: return scan(sendbuf, recvbuf, count, type, op, comm, false);
    case CallId::MPI_Exscan: return scan(sendbuf, recvbuf, count, type, op, comm, true);
    default: stop_unsupported(info(id).name);
  }
}
inline int collective(CallId id, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (id == CallId::MPI_Scatter) return scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  if (id != CallId::MPI_Gather) stop_unsupported(info(id).name);
  return gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}
inline int collective(CallId id, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  if (id == CallId::MPI_Alltoall) return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  if (id != CallId::MPI_Allgather) stop_unsupported(info(id).name);
  return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
inline int collective(CallId id, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (id != CallId::MPI_Gatherv) stop_unsupported(info(id).name);
  return gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
}
inline int collective(CallId id, const void *sendbuf, const int sendcounts[], const int displs[],
                      MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                      MPI_Comm comm) {
  if (id != CallId::MPI_Scatterv) stop_unsupported(info(id).name);
  return scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
}
inline int collective(CallId id, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  if (id != CallId::MPI_Allgatherv) stop_unsupported(info(id).name);
  return allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
}
inline int collective(CallId id, const void *sendbuf, const int sendcounts[], const int sdispls[],
                      MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                      MPI_Datatype recvtype, MPI_Comm comm) {
  if (id != CallId::MPI_Alltoallv) stop_unsupported(info(id).name);
  return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
}
inline int collective(CallId id, const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype type,
                      MPI_Op op, MPI_Comm comm) {
  if (id != CallId::MPI_Reduce_scatter) stop_unsupported(info(id).name);
  return reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm, id);
}
/// Any other collective: check_call stopped it before its entry point got here.
template <class... Args>
int collective(CallId id, Args...) {
  stop_unsupported(info(id).name);
}

}  // namespace cohort::wrap::replica
