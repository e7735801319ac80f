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

// A positional receive buffer (Gather at the root, Allgather): saved before the first attempt; after a
// retry, the slots of ranks that are not members of the substitute the last attempt ran on get their
// original bytes back (an abandoned attempt may have written them).
class PositionalSlots {
 public:
  PositionalSlots(void *recvbuf, int alias_size, int count, MPI_Datatype type)
      : buf_(recvbuf), count_(count), saved_(recvbuf, alias_size * count, type) {}
  /// Called from the post function: remembers the substitute of each attempt.
  void attempt(const Substitute &s) {
    last_ = &s;
    ++attempts_;
  }
  /// Called after the driver returned MPI_SUCCESS.
  void restore_dead() const {
    if (attempts_ < 2) return;
    const RankMap &m = last_->map;
    for (int r = 0; r < m.alias_size(); ++r) {
      if (m.to_sub(r) < 0) saved_.restore(buf_, r * count_, count_);
    }
  }

 private:
  void *buf_;
  int count_;
  SavedInput saved_;
  const Substitute *last_ = nullptr;
  int attempts_ = 0;
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
  CallDesc desc{"MPI_Reduce", "reduce.posted", Shape::all_to_one, root, Policy::skip};
  desc.output_at_root = true;
  return run(*a, desc, [&](const Substitute &s, int r, MPI_Request *req) {
    return PMPI_Ireduce(in.data(), recvbuf, count, type, op, r, s.comm, req);
  });
}

namespace {

// MPI_Allreduce and MPI_Scan: an all-to-all reduction of sendbuf (or, under MPI_IN_PLACE, of a saved copy
// of recvbuf) posted with `ipost` (PMPI_Iallreduce or PMPI_Iscan, same signature).
using IReduceAll = int (*)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm, MPI_Request *);
int reduce_to_all(const CallDesc &desc, IReduceAll ipost, const void *sendbuf, void *recvbuf, int count,
                  MPI_Datatype type, MPI_Op op, Alias &a) {
  ReductionInput in(sendbuf, recvbuf, count, type);
  return run(a, desc, [&](const Substitute &s, int, MPI_Request *req) {
    return ipost(in.data(), recvbuf, count, type, op, s.comm, req);
  });
}

}  // namespace

extern "C" int __wrap_MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                                    MPI_Comm comm) {
  count_call(CallId::MPI_Allreduce);
  Alias *a = find_alias(comm);
  if (a == nullptr) return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
  return reduce_to_all(CallDesc{"MPI_Allreduce", "allreduce.posted", Shape::all_to_all}, PMPI_Iallreduce, sendbuf,
                       recvbuf, count, type, op, *a);
}

extern "C" int __wrap_MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                               MPI_Comm comm) {
  count_call(CallId::MPI_Scan);
  Alias *a = find_alias(comm);
  if (a == nullptr) return PMPI_Scan(sendbuf, recvbuf, count, type, op, comm);
  // NOTE: the substitute keeps the alias's rank order, so its prefix is the prefix over the live ranks
  // in original order.
  return reduce_to_all(CallDesc{"MPI_Scan", "scan.posted", Shape::all_to_all}, PMPI_Iscan, sendbuf, recvbuf, count,
                       type, op, *a);
}

extern "C" int __wrap_MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  count_call(CallId::MPI_Gather);
  Alias *a = find_alias(comm);
  if (a == nullptr) return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  int me = -1, n = 0;
  PMPI_Comm_rank(comm, &me);
  PMPI_Comm_size(comm, &n);
  std::optional<PositionalSlots> slots;
  if (me == root) slots.emplace(recvbuf, n, recvcount, recvtype);
  CallDesc desc{"MPI_Gather", "gather.posted", Shape::positional, root, Policy::skip};
  desc.output_at_root = true;
  int rc = run(*a, desc, [&](const Substitute &s, int r, MPI_Request *req) {
    if (slots) slots->attempt(s);
    if (s.map.complete())
      return PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, r, s.comm, req);
    const int *counts, *displs;
    s.layout(recvcount, &counts, &displs);
    return PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, counts, displs, recvtype, r, s.comm, req);
  });
  if (rc == MPI_SUCCESS && slots) slots->restore_dead();
  return rc;
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
  int n = 0;
  PMPI_Comm_size(comm, &n);
  PositionalSlots slots(recvbuf, n, recvcount, recvtype);
  int rc = run(*a, CallDesc{"MPI_Allgather", "allgather.posted", Shape::positional},
               [&](const Substitute &s, int, MPI_Request *req) {
                 slots.attempt(s);
                 if (s.map.complete())
                   return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, s.comm, req);
                 const int *counts, *displs;
                 s.layout(recvcount, &counts, &displs);
                 return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, counts, displs, recvtype, s.comm,
                                         req);
               });
  if (rc == MPI_SUCCESS) slots.restore_dead();
  return rc;
}
