// The post functions of the collectives (wrap/coll.hpp): each describes nothing (its wrap/calls.def row
// does) and only posts the nonblocking variant on the substitute it is given, with the bookkeeping that
// its data layout needs. Positional calls post their v-variant with a PositionalLayout once a rank is
// gone, the plain call while the substitute is complete (the fast path).
#include "wrap/coll.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "wrap/calls.h"
#include "wrap/driver.hpp"

namespace cohort::wrap {
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

// The byte span [lo, hi) of buf that blocks (counts[i] elements of types[i], or of `type`, at displs[i]
// elements, or bytes with byte_displs) cover, true extents included.
struct Span {
  MPI_Aint lo = 0, hi = 0;
  void add(MPI_Aint first_byte, int count, MPI_Datatype type) {
    if (count <= 0) return;
    MPI_Aint lb, extent, true_lb, true_extent;
    PMPI_Type_get_extent(type, &lb, &extent);
    PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
    MPI_Aint a = first_byte + true_lb, b = first_byte + (count - 1) * extent + true_lb + true_extent;
    if (hi <= lo) lo = a, hi = b;
    else lo = std::min(lo, a), hi = std::max(hi, b);
  }
};

MPI_Aint extent_of(MPI_Datatype type) {
  MPI_Aint lb, extent;
  PMPI_Type_get_extent(type, &lb, &extent);
  return extent;
}

// A positional receive buffer (Gather at the root, Allgather, Alltoall, ...): its span is saved before
// the first attempt and restored before every retry, since an abandoned attempt may have written the
// slots of ranks that were then found dead (their slots must stay untouched), or, under MPI_IN_PLACE,
// the input. Uses a per-thread buffer: one ReceiveSlots per thread at a time.
class ReceiveSlots {
 public:
  ReceiveSlots(void *buf, Span span) : buf_(static_cast<char *>(buf)), span_(span) {
    thread_local std::vector<char> storage;
    std::size_t n = span.hi > span.lo ? static_cast<std::size_t>(span.hi - span.lo) : 0;
    if (storage.size() < n) storage.resize(n);
    if (n > 0) std::memcpy(storage.data(), buf_ + span.lo, n);
    saved_ = storage.data();
  }
  /// Called at the start of every post: restores the span from the second post on.
  void before_post() {
    if (posts_++ == 0 || span_.hi <= span_.lo) return;
    std::memcpy(buf_ + span_.lo, saved_, static_cast<std::size_t>(span_.hi - span_.lo));
  }

 private:
  char *buf_;
  Span span_;
  const char *saved_ = nullptr;
  int posts_ = 0;
};

// Uniform blocks of `count` elements for alias ranks 0..n-1.
Span uniform_span(int n, int count, MPI_Datatype type) {
  Span s;
  s.add(0, n * count, type);
  return s;
}

// Blocks given per alias rank in elements of one type.
Span v_span(int n, const int *counts, const int *displs, MPI_Datatype type) {
  Span s;
  MPI_Aint extent = extent_of(type);
  for (int r = 0; r < n; ++r) s.add(displs[r] * extent, counts[r], type);
  return s;
}

int alias_size(const Alias &a) { return a.current().map.alias_size(); }
int alias_rank(const Alias &a) {
  int me = -1;
  PMPI_Comm_rank(a.handle(), &me);
  return me;
}


// Reduce_scatter's input without the blocks of dead ranks: `in` holds alias rank r's block of
// alias_counts[r] elements after the blocks of ranks 0..r-1; the members' blocks are copied, in substitute
// rank order, into s.scratch() (byte for byte over their true extent). Returns the packed input.
const void *pack_members(const Substitute &s, const void *in, const int *alias_counts, MPI_Datatype type) {
  MPI_Aint lb, extent, true_lb, true_extent;
  PMPI_Type_get_extent(type, &lb, &extent);
  PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
  const RankMap &m = s.map;
  std::vector<MPI_Aint> first(static_cast<std::size_t>(m.alias_size()) + 1, 0);
  for (int r = 0; r < m.alias_size(); ++r) first[r + 1] = first[r] + alias_counts[r];
  MPI_Aint packed = 0;
  for (int a : m.members()) packed += alias_counts[a];
  std::vector<char> &out = s.scratch();
  out.assign(packed > 0 ? static_cast<std::size_t>((packed - 1) * extent + true_extent) : 1, 0);
  char *base = out.data() - true_lb;
  MPI_Aint at = 0;
  for (int a : m.members()) {
    if (alias_counts[a] > 0) {
      std::memcpy(base + at * extent + true_lb, static_cast<const char *>(in) + first[a] * extent + true_lb,
                  static_cast<std::size_t>((alias_counts[a] - 1) * extent + true_extent));
    }
    at += alias_counts[a];
  }
  return base;
}

// The number of elements of a reduce-scatter input: the sum of the blocks of every alias rank.
int total(const int *counts, int n) {
  int t = 0;
  for (int r = 0; r < n; ++r) t += counts[r];
  return t;
}

}  // namespace

int barrier(Alias &alias) {
  return run(alias, describe(CallId::MPI_Barrier),
             [&](const Substitute &s, int, MPI_Request *req) { return PMPI_Ibarrier(s.comm, req); });
}

namespace coll {

int post_MPI_Barrier(Alias &alias, const CallDesc &, MPI_Comm) { return barrier(alias); }

int post_MPI_Bcast(Alias &alias, const CallDesc &call, void *buf, int count, MPI_Datatype type, int, MPI_Comm) {
  return run(alias, call, [&](const Substitute &s, int r, MPI_Request *req) {
    return PMPI_Ibcast(buf, count, type, r, s.comm, req);
  });
}

int post_MPI_Reduce(Alias &alias, const CallDesc &call, const void *sendbuf, void *recvbuf, int count,
                    MPI_Datatype type, MPI_Op op, int, MPI_Comm) {
  ReductionInput in(sendbuf, recvbuf, count, type);  // MPI_IN_PLACE is only valid at the root
  return run(alias, call, [&](const Substitute &s, int r, MPI_Request *req) {
    return PMPI_Ireduce(in.data(), recvbuf, count, type, op, r, s.comm, req);
  });
}

int post_MPI_Allreduce(Alias &alias, const CallDesc &call, const void *sendbuf, void *recvbuf, int count,
                       MPI_Datatype type, MPI_Op op, MPI_Comm) {
  ReductionInput in(sendbuf, recvbuf, count, type);
  return run(alias, call, [&](const Substitute &s, int, MPI_Request *req) {
    return PMPI_Iallreduce(in.data(), recvbuf, count, type, op, s.comm, req);
  });
}

int post_MPI_Scan(Alias &alias, const CallDesc &call, const void *sendbuf, void *recvbuf, int count,
                  MPI_Datatype type, MPI_Op op, MPI_Comm) {
  // NOTE: the substitute keeps the alias's rank order, so its prefix is the prefix over the live ranks
  // in original order.
  ReductionInput in(sendbuf, recvbuf, count, type);
  return run(alias, call, [&](const Substitute &s, int, MPI_Request *req) {
    return PMPI_Iscan(in.data(), recvbuf, count, type, op, s.comm, req);
  });
}

int post_MPI_Gather(Alias &alias, const CallDesc &call, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                    void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm) {
  std::optional<ReceiveSlots> slots;
  if (alias_rank(alias) == root) slots.emplace(recvbuf, uniform_span(alias_size(alias), recvcount, recvtype));
  return run(alias, call, [&](const Substitute &s, int r, MPI_Request *req) {
    if (slots) slots->before_post();
    if (s.map.complete())
      return PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, r, s.comm, req);
    PositionalLayout &l = s.layout(0);
    l.uniform(s.map, recvcount);
    return PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, l.counts.data(), l.displs.data(), recvtype, r,
                         s.comm, req);
  });
}

int post_MPI_Scatter(Alias &alias, const CallDesc &call, const void *sendbuf, int sendcount,
                     MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int, MPI_Comm) {
  return run(alias, call, [&](const Substitute &s, int r, MPI_Request *req) {
    if (s.map.complete())
      return PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, r, s.comm, req);
    PositionalLayout &l = s.layout(0);
    l.uniform(s.map, sendcount);
    return PMPI_Iscatterv(sendbuf, l.counts.data(), l.displs.data(), sendtype, recvbuf, recvcount, recvtype, r,
                          s.comm, req);
  });
}

int post_MPI_Allgather(Alias &alias, const CallDesc &call, const void *sendbuf, int sendcount,
                       MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm) {
  ReceiveSlots slots(recvbuf, uniform_span(alias_size(alias), recvcount, recvtype));
  return run(alias, call, [&](const Substitute &s, int, MPI_Request *req) {
    slots.before_post();
    if (s.map.complete())
      return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, s.comm, req);
    PositionalLayout &l = s.layout(0);
    l.uniform(s.map, recvcount);
    return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, l.counts.data(), l.displs.data(), recvtype,
                            s.comm, req);
  });
}


int post_MPI_Gatherv(Alias &alias, const CallDesc &call, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                     void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                     MPI_Comm) {
  const bool at_root = alias_rank(alias) == root;  // recvcounts and displs are significant at the root only
  std::optional<ReceiveSlots> slots;
  if (at_root) slots.emplace(recvbuf, v_span(alias_size(alias), recvcounts, displs, recvtype));
  return run(alias, call, [&](const Substitute &s, int r, MPI_Request *req) {
    if (slots) slots->before_post();
    if (s.map.complete() || !at_root)
      return PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, r, s.comm, req);
    PositionalLayout &l = s.layout(0);
    l.select(s.map, recvcounts, displs);
    return PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, l.counts.data(), l.displs.data(), recvtype, r,
                         s.comm, req);
  });
}

int post_MPI_Scatterv(Alias &alias, const CallDesc &call, const void *sendbuf, const int sendcounts[],
                      const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                      int root, MPI_Comm) {
  const bool at_root = alias_rank(alias) == root;  // sendcounts and displs are significant at the root only
  return run(alias, call, [&](const Substitute &s, int r, MPI_Request *req) {
    if (s.map.complete() || !at_root)
      return PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, r, s.comm, req);
    PositionalLayout &l = s.layout(0);
    l.select(s.map, sendcounts, displs);
    return PMPI_Iscatterv(sendbuf, l.counts.data(), l.displs.data(), sendtype, recvbuf, recvcount, recvtype, r,
                          s.comm, req);
  });
}

int post_MPI_Allgatherv(Alias &alias, const CallDesc &call, const void *sendbuf, int sendcount,
                        MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[],
                        MPI_Datatype recvtype, MPI_Comm) {
  ReceiveSlots slots(recvbuf, v_span(alias_size(alias), recvcounts, displs, recvtype));
  return run(alias, call, [&](const Substitute &s, int, MPI_Request *req) {
    slots.before_post();
    if (s.map.complete())
      return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, s.comm, req);
    PositionalLayout &l = s.layout(0);
    l.select(s.map, recvcounts, displs);
    return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, l.counts.data(), l.displs.data(), recvtype,
                            s.comm, req);
  });
}

int post_MPI_Alltoall(Alias &alias, const CallDesc &call, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                      void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm) {
  // NOTE: under MPI_IN_PLACE the input is recvbuf itself: restoring its span before a retry restores it too.
  ReceiveSlots slots(recvbuf, uniform_span(alias_size(alias), recvcount, recvtype));
  return run(alias, call, [&](const Substitute &s, int, MPI_Request *req) {
    slots.before_post();
    if (s.map.complete())
      return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, s.comm, req);
    PositionalLayout &snd = s.layout(1), &rcv = s.layout(0);
    snd.uniform(s.map, sendcount);
    rcv.uniform(s.map, recvcount);
    return PMPI_Ialltoallv(sendbuf, snd.counts.data(), snd.displs.data(), sendtype, recvbuf, rcv.counts.data(),
                           rcv.displs.data(), recvtype, s.comm, req);
  });
}

int post_MPI_Alltoallv(Alias &alias, const CallDesc &call, const void *sendbuf, const int sendcounts[],
                       const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                       const int rdispls[], MPI_Datatype recvtype, MPI_Comm) {
  ReceiveSlots slots(recvbuf, v_span(alias_size(alias), recvcounts, rdispls, recvtype));
  const bool in_place = sendbuf == MPI_IN_PLACE;  // then sendcounts, sdispls and sendtype are ignored
  return run(alias, call, [&](const Substitute &s, int, MPI_Request *req) {
    slots.before_post();
    if (s.map.complete())
      return PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, s.comm,
                             req);
    PositionalLayout &snd = s.layout(1), &rcv = s.layout(0);
    rcv.select(s.map, recvcounts, rdispls);
    if (!in_place) snd.select(s.map, sendcounts, sdispls);
    const PositionalLayout &sl = in_place ? rcv : snd;
    return PMPI_Ialltoallv(sendbuf, sl.counts.data(), sl.displs.data(), sendtype, recvbuf, rcv.counts.data(),
                           rcv.displs.data(), recvtype, s.comm, req);
  });
}

int post_MPI_Alltoallw(Alias &alias, const CallDesc &call, const void *sendbuf, const int sendcounts[],
                       const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                       const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm) {
  Span span;  // rdispls are in bytes
  for (int r = 0; r < alias_size(alias); ++r) span.add(rdispls[r], recvcounts[r], recvtypes[r]);
  ReceiveSlots slots(recvbuf, span);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  return run(alias, call, [&](const Substitute &s, int, MPI_Request *req) {
    slots.before_post();
    if (s.map.complete())
      return PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                             s.comm, req);
    PositionalLayout &snd = s.layout(1), &rcv = s.layout(0);
    std::vector<MPI_Datatype> &st = s.layout_types(1), &rt = s.layout_types(0);
    rcv.select(s.map, recvcounts, rdispls);
    members_of(s.map, recvtypes, &rt);
    if (!in_place) {
      snd.select(s.map, sendcounts, sdispls);
      members_of(s.map, sendtypes, &st);
    }
    const PositionalLayout &sl = in_place ? rcv : snd;
    return PMPI_Ialltoallw(sendbuf, sl.counts.data(), sl.displs.data(), in_place ? rt.data() : st.data(), recvbuf,
                           rcv.counts.data(), rcv.displs.data(), rt.data(), s.comm, req);
  });
}

int post_MPI_Reduce_scatter(Alias &alias, const CallDesc &call, const void *sendbuf, void *recvbuf,
                            const int recvcounts[], MPI_Datatype type, MPI_Op op, MPI_Comm) {
  ReductionInput in(sendbuf, recvbuf, total(recvcounts, alias_size(alias)), type);
  return run(alias, call, [&](const Substitute &s, int, MPI_Request *req) {
    if (s.map.complete()) return PMPI_Ireduce_scatter(in.data(), recvbuf, recvcounts, type, op, s.comm, req);
    PositionalLayout &l = s.layout(0);
    members_of(s.map, recvcounts, &l.counts);
    return PMPI_Ireduce_scatter(pack_members(s, in.data(), recvcounts, type), recvbuf, l.counts.data(), type, op,
                                s.comm, req);
  });
}

int post_MPI_Reduce_scatter_block(Alias &alias, const CallDesc &call, const void *sendbuf, void *recvbuf,
                                  int recvcount, MPI_Datatype type, MPI_Op op, MPI_Comm) {
  const int n = alias_size(alias);
  ReductionInput in(sendbuf, recvbuf, n * recvcount, type);
  return run(alias, call, [&](const Substitute &s, int, MPI_Request *req) {
    if (s.map.complete()) return PMPI_Ireduce_scatter_block(in.data(), recvbuf, recvcount, type, op, s.comm, req);
    std::vector<int> counts(static_cast<std::size_t>(n), recvcount);
    return PMPI_Ireduce_scatter_block(pack_members(s, in.data(), counts.data(), type), recvbuf, recvcount, type, op,
                                      s.comm, req);
  });
}

int post_MPI_Exscan(Alias &alias, const CallDesc &call, const void *sendbuf, void *recvbuf, int count,
                    MPI_Datatype type, MPI_Op op, MPI_Comm) {
  // NOTE: substitute rank 0 is the first live rank: its prefix is empty and MPI leaves its output
  // undefined, so it receives into scratch and the program's buffer stays untouched.
  ReductionInput in(sendbuf, recvbuf, count, type);
  return run(alias, call, [&](const Substitute &s, int, MPI_Request *req) {
    void *out = recvbuf;
    if (s.rank == 0) {
      Span span;
      span.add(0, count, type);
      s.scratch().resize(static_cast<std::size_t>(span.hi - span.lo) + 1);
      out = s.scratch().data() - span.lo;
    }
    return PMPI_Iexscan(in.data(), out, count, type, op, s.comm, req);
  });
}

}  // namespace coll
}  // namespace cohort::wrap

// ---- The entry points, generated from wrap/calls.def (rows with entry `driver`) ----
// Each counts the call, passes communicators cohort did not create through to PMPI_X, describes the call
// from its row and hands it to its post function above. (They live in this object file, which MPI_Init's
// object needs anyway, so that a static libcohort always provides them, also to libraries linked after it.)
using namespace cohort::wrap;  // NOLINT: the generated extern "C" entry points below

#define COHORT_ROOT_root root
#define COHORT_ROOT_none -1
#define COHORT_ENTRY_own(name, params, args, root)
#define COHORT_ENTRY_driver(name, params, args, root)                                                   \
  extern "C" int __wrap_##name params {                                                                 \
    count_call(CallId::name);                                                                           \
    Alias *a = find_alias(comm);                                                                        \
    if (a == nullptr) return P##name args;                                                              \
    return coll::post_##name(*a, describe(CallId::name, COHORT_ROOT_##root), COHORT_UNPAREN args);      \
  }
#define COHORT_CALL(name, cls, params, args, note, root, dead_root, outputs, completion, entry) \
  COHORT_ENTRY_##entry(name, params, args, root)
#include "wrap/calls.def"
#undef COHORT_CALL

extern "C" int __wrap_MPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype type, MPI_Op op) {
  count_call(CallId::MPI_Reduce_local);
  return PMPI_Reduce_local(inbuf, inoutbuf, count, type, op);
}
