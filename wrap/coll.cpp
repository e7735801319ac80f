// The collectives: each wrapper only describes its call to the driver (wrap/driver.hpp) and posts the
// nonblocking variant on the substitute it is given. Communicators cohort did not create pass through.
#include <mpi.h>

#include "wrap/calls.h"
#include "wrap/driver.hpp"

#include <optional>

using namespace cohort::wrap;  // NOLINT: this file only defines the extern "C" entry points

namespace {

// The input of a reduction: sendbuf, or under MPI_IN_PLACE a saved copy of recvbuf (SavedInput).
class ReductionInput {
 public:
  ReductionInput(const void *sendbuf, const void *recvbuf, int count, MPI_Datatype type) : data_(sendbuf) {
    if (sendbuf == MPI_IN_PLACE) data_ = saved_.emplace(recvbuf, count, type).data();
  }
  const void *data() const { return data_; }

 private:
  std::optional<SavedInput> saved_;
  const void *data_;
};

}  // namespace

int cohort::wrap::barrier(Alias &alias) {
  return run(alias, CallDesc{"MPI_Barrier", "barrier.posted", Shape::all_to_all},
             [&](const Substitute &s, int, MPI_Request *req) { return PMPI_Ibarrier(s.comm, req); });
}

extern "C" int __wrap_MPI_Barrier(MPI_Comm comm) {
  count_call(CallId::MPI_Barrier);
  Alias *a = find_alias(comm);
  if (a == nullptr) return PMPI_Barrier(comm);
  return cohort::wrap::barrier(*a);
}

extern "C" int __wrap_MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  count_call(CallId::MPI_Bcast);
  Alias *a = find_alias(comm);
  if (a == nullptr) return PMPI_Bcast(buf, count, type, root, comm);
  return run(*a, CallDesc{"MPI_Bcast", "bcast.posted", Shape::one_to_all, root, Policy::abort},
             [&](const Substitute &s, int r, MPI_Request *req) {
               return PMPI_Ibcast(buf, count, type, r, s.comm, req);
             });
}

extern "C" int __wrap_MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                                 int root, MPI_Comm comm) {
  count_call(CallId::MPI_Reduce);
  Alias *a = find_alias(comm);
  if (a == nullptr) return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
  ReductionInput in(sendbuf, recvbuf, count, type);  // MPI_IN_PLACE is only valid at the root
  return run(*a, CallDesc{"MPI_Reduce", "reduce.posted", Shape::all_to_one, root, Policy::skip},
             [&](const Substitute &s, int r, MPI_Request *req) {
               return PMPI_Ireduce(in.data(), recvbuf, count, type, op, r, s.comm, req);
             });
}

extern "C" int __wrap_MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                                    MPI_Comm comm) {
  count_call(CallId::MPI_Allreduce);
  Alias *a = find_alias(comm);
  if (a == nullptr) return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
  ReductionInput in(sendbuf, recvbuf, count, type);
  return run(*a, CallDesc{"MPI_Allreduce", "allreduce.posted", Shape::all_to_all},
             [&](const Substitute &s, int, MPI_Request *req) {
               return PMPI_Iallreduce(in.data(), recvbuf, count, type, op, s.comm, req);
             });
}

extern "C" int __wrap_MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                               MPI_Comm comm) {
  count_call(CallId::MPI_Scan);
  Alias *a = find_alias(comm);
  if (a == nullptr) return PMPI_Scan(sendbuf, recvbuf, count, type, op, comm);
  // NOTE: the substitute keeps the alias's rank order, so its prefix is the prefix over the live ranks
  // in original order.
  ReductionInput in(sendbuf, recvbuf, count, type);
  return run(*a, CallDesc{"MPI_Scan", "scan.posted", Shape::all_to_all},
             [&](const Substitute &s, int, MPI_Request *req) {
               return PMPI_Iscan(in.data(), recvbuf, count, type, op, s.comm, req);
             });
}

extern "C" int __wrap_MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  count_call(CallId::MPI_Gather);
  Alias *a = find_alias(comm);
  if (a == nullptr) return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  return run(*a, CallDesc{"MPI_Gather", "gather.posted", Shape::positional, root, Policy::skip},
             [&](const Substitute &s, int r, MPI_Request *req) {
               if (s.map.complete())
                 return PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, r, s.comm, req);
               const int *counts, *displs;
               s.layout(recvcount, &counts, &displs);
               return PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, counts, displs, recvtype, r, s.comm,
                                    req);
             });
}

extern "C" int __wrap_MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  count_call(CallId::MPI_Scatter);
  Alias *a = find_alias(comm);
  if (a == nullptr)
    return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  return run(*a, CallDesc{"MPI_Scatter", "scatter.posted", Shape::positional, root, Policy::abort},
             [&](const Substitute &s, int r, MPI_Request *req) {
               if (s.map.complete())
                 return PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, r, s.comm, req);
               const int *counts, *displs;
               s.layout(sendcount, &counts, &displs);
               return PMPI_Iscatterv(sendbuf, counts, displs, sendtype, recvbuf, recvcount, recvtype, r, s.comm,
                                     req);
             });
}

extern "C" int __wrap_MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  count_call(CallId::MPI_Allgather);
  Alias *a = find_alias(comm);
  if (a == nullptr) return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  return run(*a, CallDesc{"MPI_Allgather", "allgather.posted", Shape::positional},
             [&](const Substitute &s, int, MPI_Request *req) {
               if (s.map.complete())
                 return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, s.comm, req);
               const int *counts, *displs;
               s.layout(recvcount, &counts, &displs);
               return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, counts, displs, recvtype, s.comm, req);
             });
}
