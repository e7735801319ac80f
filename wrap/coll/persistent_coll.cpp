// MPI 4.0's persistent collectives (MPI_Allreduce_init and its 21 siblings; MPI 4.0, section 6.13) on
// cohort's nonblocking collectives.
//
// The init call records the collective (its arguments, and cohort's duplicates of derived datatypes, those of
// the w variants' arrays included, which the program may free once the call returned) under a persistent request that cohort makes and never
// starts: an MPI_Send_init to MPI_PROC_NULL on MPI_COMM_SELF, so that MPI knows the handle (MPI_Request_free,
// MPI_Request_get_status) and no MPI collective is ever set up on a communicator that may lose a member.
// Each MPI_Start(all) (wrap/p2p/p2p.cpp) then calls the collective's nonblocking twin as cohort runs it
// (__wrap_MPI_Iallreduce & co.: wrap/core/nbc.hpp, survivors' confirmation, retries, dead-root policies), and the
// wait and test calls complete that request in place of the handle (p2p::Persistent, PersistentView), after
// which the handle is inactive again. So a persistent collective has its nonblocking twin's outcome, start
// after start, on every survivor. MPI_Info hints are not used. Where the MPI lacks these calls (Open MPI 4.1)
// the wrappers exist all the same; a program built against that MPI cannot name them.
//
// Thread-safety: as the request table's (wrap/p2p/request.hpp).
#include <mpi.h>

#include <functional>
#include <memory>
#include <utility>

#include "wrap/calls.h"
#include "wrap/core/driver.hpp"
#include "wrap/p2p/request.hpp"
#include "detector/world.hpp"

using cohort::wrap::Alias;
using cohort::wrap::CallId;
using cohort::wrap::find_alias;
using cohort::wrap::count_call;
using cohort::wrap::HeldTypes;
using cohort::wrap::TypeRef;
namespace p2p = cohort::wrap::p2p;

namespace {

// significant: false for a datatype argument that MPI ignores at this rank (then never queried).
TypeRef keep(MPI_Datatype t, bool significant = true) { return cohort::wrap::hold_type(t, significant); }

// Which sides of a rooted call (Gather, Scatter and their v variants) MPI reads at this rank (MPI 4.0
// sections 6.2.2, 6.5, 6.6): `root`, the root's (its receive side of a Gather, its send side of a Scatter:
// at the root of an intracommunicator, at MPI_ROOT in an intercommunicator's root group); `member`, the
// other side (every other rank of an intracommunicator, every rank of the other group; an intracommunicator's
// root too unless MPI_IN_PLACE stands in for it, `root_in_place`). Neither at MPI_PROC_NULL.
struct RootedSides {
  bool root = false, member = false;
};
RootedSides rooted_sides(MPI_Comm comm, int root, bool root_in_place) {
  int inter = 0, me = 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter) return {root == MPI_ROOT, root != MPI_ROOT && root != MPI_PROC_NULL};
  const Alias *a = find_alias(comm);
  if (a != nullptr) me = a->rank();
  else PMPI_Comm_rank(comm, &me);
  return {me == root, me != root || !root_in_place};
}

// The datatypes of a w variant's array (n of them), held as keep() holds one; none for an array the call
// ignores (MPI_IN_PLACE's send side: its get() is then nullptr).
using TypeArrayRef = std::shared_ptr<const HeldTypes>;
TypeArrayRef keep_array(const MPI_Datatype types[], int n, bool ignored = false) {
  return std::make_shared<const HeldTypes>(ignored ? nullptr : types, n);
}

// Members at the other side of comm: its remote group's size for an intercommunicator (Alltoallw's arrays).
int peers(MPI_Comm comm) {
  int inter = 0, n = 0;
  PMPI_Comm_test_inter(comm, &inter);
  const Alias *a = find_alias(comm);
  if (inter) PMPI_Comm_remote_size(comm, &n);
  else if (a != nullptr) n = a->size();
  else PMPI_Comm_size(comm, &n);
  return n;
}

// In- and out-degree of comm's virtual topology, as the program would query them (cohort keeps Cartesian
// and distributed graph topologies; MPI keeps graph ones): the lengths of Neighbor_alltoallw's arrays.
void degrees(MPI_Comm comm, int *in, int *out) {
  int status = MPI_UNDEFINED, weighted = 0, ndims = 0, rank = 0;
  *in = *out = 0;
  __wrap_MPI_Topo_test(comm, &status);
  if (status == MPI_CART) {
    __wrap_MPI_Cartdim_get(comm, &ndims);
    *in = *out = 2 * ndims;
  } else if (status == MPI_DIST_GRAPH) {
    __wrap_MPI_Dist_graph_neighbors_count(comm, in, out, &weighted);
  } else if (status == MPI_GRAPH) {
    __wrap_MPI_Comm_rank(comm, &rank);
    __wrap_MPI_Graph_neighbors_count(comm, rank, in);
    *out = *in;
  }
}

// Makes the program's handle *req and records `start` under it (see the header). MPI_SUCCESS, or MPI's
// error of MPI_Send_init.
int record(const char *call, MPI_Comm comm, MPI_Request *req, std::function<int(MPI_Request *)> start) {
  int rc = PMPI_Send_init(nullptr, 0, MPI_BYTE, MPI_PROC_NULL, 0, cohort::self(), req);
  if (rc != MPI_SUCCESS) return rc;
  p2p::Persistent p;
  p.op = p2p::make_op(p2p::Dir::none, MPI_PROC_NULL, 0, comm, call);
  p.start_coll = std::make_shared<const std::function<int(MPI_Request *)>>(std::move(start));
  p2p::track_persistent(*req, p);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int __wrap_MPI_Barrier_init(MPI_Comm comm, MPI_Info, MPI_Request *req) {
  count_call(CallId::MPI_Barrier_init);
  return record("MPI_Barrier_init", comm, req, [=](MPI_Request *r) { return __wrap_MPI_Ibarrier(comm, r); });
}

extern "C" int __wrap_MPI_Bcast_init(void *buffer, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Info,
                                     MPI_Request *req) {
  count_call(CallId::MPI_Bcast_init);
  return record("MPI_Bcast_init", comm, req, [=, t = keep(type)](MPI_Request *r) {
    return __wrap_MPI_Ibcast(buffer, count, t->get(), root, comm, r);
  });
}

extern "C" int __wrap_MPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                                      int root, MPI_Comm comm, MPI_Info, MPI_Request *req) {
  count_call(CallId::MPI_Reduce_init);
  return record("MPI_Reduce_init", comm, req, [=, t = keep(type)](MPI_Request *r) {
    return __wrap_MPI_Ireduce(sendbuf, recvbuf, count, t->get(), op, root, comm, r);
  });
}

extern "C" int __wrap_MPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                                         MPI_Comm comm, MPI_Info, MPI_Request *req) {
  count_call(CallId::MPI_Allreduce_init);
  return record("MPI_Allreduce_init", comm, req, [=, t = keep(type)](MPI_Request *r) {
    return __wrap_MPI_Iallreduce(sendbuf, recvbuf, count, t->get(), op, comm, r);
  });
}

extern "C" int __wrap_MPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                      int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info,
                                      MPI_Request *req) {
  count_call(CallId::MPI_Gather_init);
  const RootedSides at = rooted_sides(comm, root, sendbuf == MPI_IN_PLACE);
  return record("MPI_Gather_init", comm, req,
                [=, st = keep(sendtype, at.member), rt = keep(recvtype, at.root)](MPI_Request *r) {
    return __wrap_MPI_Igather(sendbuf, sendcount, st->get(), recvbuf, recvcount, rt->get(), root, comm, r);
  });
}

extern "C" int __wrap_MPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                       const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                                       MPI_Comm comm, MPI_Info, MPI_Request *req) {
  count_call(CallId::MPI_Gatherv_init);
  const RootedSides at = rooted_sides(comm, root, sendbuf == MPI_IN_PLACE);
  return record("MPI_Gatherv_init", comm, req,
                [=, st = keep(sendtype, at.member), rt = keep(recvtype, at.root)](MPI_Request *r) {
    return __wrap_MPI_Igatherv(sendbuf, sendcount, st->get(), recvbuf, recvcounts, displs, rt->get(), root, comm, r);
  });
}

extern "C" int __wrap_MPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                       int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info,
                                       MPI_Request *req) {
  count_call(CallId::MPI_Scatter_init);
  const RootedSides at = rooted_sides(comm, root, recvbuf == MPI_IN_PLACE);
  return record("MPI_Scatter_init", comm, req,
                [=, st = keep(sendtype, at.root), rt = keep(recvtype, at.member)](MPI_Request *r) {
    return __wrap_MPI_Iscatter(sendbuf, sendcount, st->get(), recvbuf, recvcount, rt->get(), root, comm, r);
  });
}

extern "C" int __wrap_MPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[],
                                        MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                        int root, MPI_Comm comm, MPI_Info, MPI_Request *req) {
  count_call(CallId::MPI_Scatterv_init);
  const RootedSides at = rooted_sides(comm, root, recvbuf == MPI_IN_PLACE);
  return record("MPI_Scatterv_init", comm, req,
                [=, st = keep(sendtype, at.root), rt = keep(recvtype, at.member)](MPI_Request *r) {
    return __wrap_MPI_Iscatterv(sendbuf, sendcounts, displs, st->get(), recvbuf, recvcount, rt->get(), root, comm, r);
  });
}

extern "C" int __wrap_MPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                         int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info,
                                         MPI_Request *req) {
  count_call(CallId::MPI_Allgather_init);
  return record("MPI_Allgather_init", comm, req,
                [=, st = keep(sendtype, sendbuf != MPI_IN_PLACE), rt = keep(recvtype)](MPI_Request *r) {
    return __wrap_MPI_Iallgather(sendbuf, sendcount, st->get(), recvbuf, recvcount, rt->get(), comm, r);
  });
}

extern "C" int __wrap_MPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                          const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                                          MPI_Comm comm, MPI_Info, MPI_Request *req) {
  count_call(CallId::MPI_Allgatherv_init);
  return record("MPI_Allgatherv_init", comm, req,
                [=, st = keep(sendtype, sendbuf != MPI_IN_PLACE), rt = keep(recvtype)](MPI_Request *r) {
    return __wrap_MPI_Iallgatherv(sendbuf, sendcount, st->get(), recvbuf, recvcounts, displs, rt->get(), comm, r);
  });
}

extern "C" int __wrap_MPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info,
                                        MPI_Request *req) {
  count_call(CallId::MPI_Alltoall_init);
  return record("MPI_Alltoall_init", comm, req,
                [=, st = keep(sendtype, sendbuf != MPI_IN_PLACE), rt = keep(recvtype)](MPI_Request *r) {
    return __wrap_MPI_Ialltoall(sendbuf, sendcount, st->get(), recvbuf, recvcount, rt->get(), comm, r);
  });
}

extern "C" int __wrap_MPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                         MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                         const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info,
                                         MPI_Request *req) {
  count_call(CallId::MPI_Alltoallv_init);
  return record("MPI_Alltoallv_init", comm, req,
                [=, st = keep(sendtype, sendbuf != MPI_IN_PLACE), rt = keep(recvtype)](MPI_Request *r) {
    return __wrap_MPI_Ialltoallv(sendbuf, sendcounts, sdispls, st->get(), recvbuf, recvcounts, rdispls, rt->get(), comm,
                                 r);
  });
}

extern "C" int __wrap_MPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                         const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                                         const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info,
                                         MPI_Request *req) {
  count_call(CallId::MPI_Alltoallw_init);
  const int n = peers(comm);
  TypeArrayRef st = keep_array(sendtypes, n, sendbuf == MPI_IN_PLACE), rt = keep_array(recvtypes, n);
  return record("MPI_Alltoallw_init", comm, req, [=](MPI_Request *r) {
    return __wrap_MPI_Ialltoallw(sendbuf, sendcounts, sdispls, st->get(), recvbuf, recvcounts, rdispls,
                                 rt->get(), comm, r);
  });
}

extern "C" int __wrap_MPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                              MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Info,
                                              MPI_Request *req) {
  count_call(CallId::MPI_Reduce_scatter_init);
  return record("MPI_Reduce_scatter_init", comm, req, [=, t = keep(type)](MPI_Request *r) {
    return __wrap_MPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, t->get(), op, comm, r);
  });
}

extern "C" int __wrap_MPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount,
                                                    MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Info,
                                                    MPI_Request *req) {
  count_call(CallId::MPI_Reduce_scatter_block_init);
  return record("MPI_Reduce_scatter_block_init", comm, req, [=, t = keep(type)](MPI_Request *r) {
    return __wrap_MPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, t->get(), op, comm, r);
  });
}

extern "C" int __wrap_MPI_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                                    MPI_Comm comm, MPI_Info, MPI_Request *req) {
  count_call(CallId::MPI_Scan_init);
  return record("MPI_Scan_init", comm, req, [=, t = keep(type)](MPI_Request *r) {
    return __wrap_MPI_Iscan(sendbuf, recvbuf, count, t->get(), op, comm, r);
  });
}

extern "C" int __wrap_MPI_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                                      MPI_Comm comm, MPI_Info, MPI_Request *req) {
  count_call(CallId::MPI_Exscan_init);
  return record("MPI_Exscan_init", comm, req, [=, t = keep(type)](MPI_Request *r) {
    return __wrap_MPI_Iexscan(sendbuf, recvbuf, count, t->get(), op, comm, r);
  });
}

extern "C" int __wrap_MPI_Neighbor_allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                                  void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                                  MPI_Info, MPI_Request *req) {
  count_call(CallId::MPI_Neighbor_allgather_init);
  return record("MPI_Neighbor_allgather_init", comm, req, [=, st = keep(sendtype), rt = keep(recvtype)](MPI_Request *r) {
    return __wrap_MPI_Ineighbor_allgather(sendbuf, sendcount, st->get(), recvbuf, recvcount, rt->get(), comm, r);
  });
}

extern "C" int __wrap_MPI_Neighbor_allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                                   void *recvbuf, const int recvcounts[], const int displs[],
                                                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Info, MPI_Request *req) {
  count_call(CallId::MPI_Neighbor_allgatherv_init);
  return record("MPI_Neighbor_allgatherv_init", comm, req, [=, st = keep(sendtype), rt = keep(recvtype)](MPI_Request *r) {
    return __wrap_MPI_Ineighbor_allgatherv(sendbuf, sendcount, st->get(), recvbuf, recvcounts, displs, rt->get(), comm,
                                           r);
  });
}

extern "C" int __wrap_MPI_Neighbor_alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                                 void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                                 MPI_Info, MPI_Request *req) {
  count_call(CallId::MPI_Neighbor_alltoall_init);
  return record("MPI_Neighbor_alltoall_init", comm, req, [=, st = keep(sendtype), rt = keep(recvtype)](MPI_Request *r) {
    return __wrap_MPI_Ineighbor_alltoall(sendbuf, sendcount, st->get(), recvbuf, recvcount, rt->get(), comm, r);
  });
}

extern "C" int __wrap_MPI_Neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info,
                                                  MPI_Request *req) {
  count_call(CallId::MPI_Neighbor_alltoallv_init);
  return record("MPI_Neighbor_alltoallv_init", comm, req, [=, st = keep(sendtype), rt = keep(recvtype)](MPI_Request *r) {
    return __wrap_MPI_Ineighbor_alltoallv(sendbuf, sendcounts, sdispls, st->get(), recvbuf, recvcounts, rdispls,
                                          rt->get(), comm, r);
  });
}

extern "C" int __wrap_MPI_Neighbor_alltoallw_init(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                                  const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                                                  const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                                  MPI_Comm comm, MPI_Info, MPI_Request *req) {
  count_call(CallId::MPI_Neighbor_alltoallw_init);
  int in = 0, out = 0;
  degrees(comm, &in, &out);
  TypeArrayRef st = keep_array(sendtypes, out), rt = keep_array(recvtypes, in);
  return record("MPI_Neighbor_alltoallw_init", comm, req, [=](MPI_Request *r) {
    return __wrap_MPI_Ineighbor_alltoallw(sendbuf, sendcounts, sdispls, st->get(), recvbuf, recvcounts,
                                          rdispls, rt->get(), comm, r);
  });
}
