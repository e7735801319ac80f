// The post functions of the collectives (wrap/coll/coll.hpp): each describes nothing (its wrap/calls.def row
// does) and only posts the nonblocking variant on the substitute it is given, with the bookkeeping that
// its data layout needs. Positional calls post their v-variant with a PositionalLayout once a rank is
// gone, the plain call while the substitute is complete (the fast path).
#include "wrap/coll/coll.hpp"
#include "wrap/comm/intercomm.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <list>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "repair/repair.hpp"
#include "wrap/calls.h"
#include "wrap/core/driver.hpp"
#include "wrap/core/nbc.hpp"
#include "wrap/core/datatype_holder.hpp"
#include "wrap/core/ulfm_mode.hpp"
#include "wrap/core/reduce_local.hpp"
#include "wrap/replica/replica.hpp"

namespace cohort::wrap {
namespace {

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
// the input. The caller's own block is left out of the copy where own_block() allows (every post writes it
// again from the send buffer): at 2 ranks that halves the copy, and took Open MPI's 64 KiB Alltoall from
// 1.41x to 1.24x MPI's own. Uses a per-thread buffer unless given one: one such ReceiveSlots per thread at a
// time.
class ReceiveSlots {
 public:
  /// own: the caller's own block (own_block()), left out of the saved copy; may be empty.
  ReceiveSlots(void *buf, Span span, Span own, std::vector<char> *own_storage) : buf_(static_cast<char *>(buf)) {
    thread_local std::vector<char> per_thread;
    std::vector<char> &storage = own_storage != nullptr ? *own_storage : per_thread;
    if (span.hi > span.lo) {
      if (own.hi > own.lo && own.lo >= span.lo && own.hi <= span.hi) {
        parts_[0] = {span.lo, own.lo};
        parts_[1] = {own.hi, span.hi};
      } else {
        parts_[0] = {span.lo, span.hi};
      }
    }
    std::size_t n = 0;
    for (const Part &p : parts_) n += p.bytes();
    if (storage.size() < n) storage.resize(n);
    saved_ = storage.data();
    copy(true);
  }
  /// Called at the start of every post: restores the span from the second post on.
  void before_post() {
    if (posts_++ > 0) copy(false);
  }

 private:
  struct Part {
    MPI_Aint lo = 0, hi = 0;
    std::size_t bytes() const { return hi > lo ? static_cast<std::size_t>(hi - lo) : 0; }
  };
  void copy(bool save) {
    char *at = saved_;
    for (const Part &p : parts_) {
      if (p.bytes() == 0) continue;
      if (save) std::memcpy(at, buf_ + p.lo, p.bytes());
      else std::memcpy(buf_ + p.lo, at, p.bytes());
      at += p.bytes();
    }
  }
  char *buf_;
  Part parts_[2];
  char *saved_ = nullptr;
  int posts_ = 0;
};

// What a post function's attempts share (its saved input, its receive slots, the scratch of each post),
// and where it lives: on the post function's stack for a blocking call; for a nonblocking one, owned by the
// operation (wrap/core/nbc.hpp), with a PostScratch per attempt instead of the substitute's.
class PostState : public nbc::OpState {
 public:
  explicit PostState(bool owned) : owned_(owned) {}
  /// The input of a reduction: sendbuf, or under MPI_IN_PLACE a saved copy of recvbuf (SavedInput).
  const void *input(const void *sendbuf, const void *recvbuf, int count, MPI_Datatype type) {
    if (sendbuf != MPI_IN_PLACE) return sendbuf;
    return saved_.emplace(recvbuf, count, type, owned_ ? &input_bytes_ : nullptr).data();
  }
  ReceiveSlots *slots(void *buf, Span span, Span own = Span{}) {
    return &slots_.emplace(buf, span, own, owned_ ? &slot_bytes_ : nullptr);
  }
  /// The call as a point-to-point schedule may run it (CallDesc::small), kept as long as the operation.
  const small::Call *schedule(const small::Call &call) {
    schedule_ = call;
    return &schedule_;
  }
  /// A datatype as this call's posts use it. A nonblocking call's derived one is held for the operation's
  /// life (HeldType: cohort's duplicate): the program may free its own once the call returned (MPI
  /// allows it), and a retry after a failure posts again. Otherwise the program's.
  /// significant: false for an argument MPI ignores at this rank (a Gather's recvtype at a non-root, a
  /// Scatter's sendtype at a non-root, the send side under MPI_IN_PLACE): it may name no datatype at all
  /// (an uninitialised handle), so it is passed on as it is and never queried.
  MPI_Datatype keep(MPI_Datatype t, bool significant = true) {
    if (!owned_ || !significant || !derived(t)) return t;
    types_.push_back(hold_type(t));
    return types_.back()->get();
  }
  /// The same for an array of n (the w variants' sendtypes, recvtypes).
  const MPI_Datatype *keep(const MPI_Datatype *types, int n) {
    if (!owned_ || types == nullptr) return types;
    return arrays_.emplace_back(types, n).get();
  }
  /// The scratch of the post on s: the substitute's (blocking), or the attempt's own (one per substitute
  /// posted on: every retry is on a new one).
  PostScratch &scratch(const Substitute &s) {
    if (!owned_) return s.post_scratch();
    if (scratch_.empty() || scratch_.back().first != &s) scratch_.emplace_back(&s, PostScratch{});
    return scratch_.back().second;
  }

 private:
  bool owned_;
  std::optional<SavedInput> saved_;
  std::optional<ReceiveSlots> slots_;
  small::Call schedule_{};
  std::vector<char> input_bytes_, slot_bytes_;
  std::list<std::pair<const Substitute *, PostScratch>> scratch_;
  std::vector<TypeRef> types_;                // keep()
  std::list<HeldTypes> arrays_;              // keep() of arrays
};

// Runs a post function's attempts: to the end (run(), blocking), or as a nonblocking collective whose
// request is call.request (nbc::start), which then owns the PostState and the post lambda.
class Launch {
 public:
  explicit Launch(const CallDesc &call) : call_(call) {
    if (call.request != nullptr) owned_ = std::make_unique<PostState>(true);
  }
  PostState &state() { return owned_ ? *owned_ : local_; }
  /// post: captures by value, and the state by reference.
  template <typename F>
  int run(Alias &alias, F &&post) {
    if (!owned_) return cohort::wrap::run(alias, call_, post);
    return nbc::start(alias, call_, std::move(owned_), nbc::OwnedPostFn(std::forward<F>(post)));
  }

 private:
  const CallDesc &call_;
  PostState local_{false};
  std::unique_ptr<PostState> owned_;
};

// The caller's own block in a positional receive buffer (rank `me` of uniform or v blocks), when saving
// around it is safe: not under MPI_IN_PLACE (then the block is the input), and a dense type (no holes, so
// the block's bytes hold nothing of another rank's). Empty otherwise. Every post writes this block again
// from the caller's own send buffer, so a retry needs no saved copy of it.
Span own_block(bool in_place, MPI_Aint first_byte, int count, MPI_Datatype type) {
  Span s;
  if (in_place || count <= 0) return s;
  MPI_Aint lb, extent, true_lb, true_extent;
  int size = 0;
  PMPI_Type_get_extent(type, &lb, &extent);
  PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
  PMPI_Type_size(type, &size);
  if (lb != 0 || true_lb != 0 || true_extent != extent || static_cast<MPI_Aint>(size) != extent) return s;
  s.add(first_byte, count, type);
  return s;
}

// own_block of rank me's block in uniform blocks of `count` elements, or in blocks given per rank.
Span own_uniform(const void *sendbuf, int me, int count, MPI_Datatype type) {
  return own_block(sendbuf == MPI_IN_PLACE, static_cast<MPI_Aint>(me) * count * extent_of(type), count, type);
}
Span own_v(const void *sendbuf, int me, const int *counts, const int *displs, MPI_Datatype type) {
  return own_block(sendbuf == MPI_IN_PLACE, static_cast<MPI_Aint>(displs[me]) * extent_of(type), counts[me], type);
}

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

// A blocking Barrier, Bcast, Reduce or Allreduce carries its buffers for deferred confirmation
// (wrap/core/deferred.hpp); nonblocking ones, and cohort's own composed calls (confirm_now), are confirmed as
// always.
CallDesc deferrable(const CallDesc &call, const deferred::Buffers &b) {
  CallDesc c = call;
  if (call.request == nullptr && !call.confirm_now) c.defer = &b;
  return c;
}

int alias_size(const Alias &a) { return a.current().map.alias_size(); }
int alias_rank(const Alias &a) { return a.rank(); }


// Reduce_scatter's input without the blocks of dead ranks: `in` holds alias rank r's block of
// alias_counts[r] elements after the blocks of ranks 0..r-1; the members' blocks are copied, in substitute
// rank order, into out (byte for byte over their true extent). Returns the packed input.
const void *pack_members(const Substitute &s, std::vector<char> &out, const void *in, const int *alias_counts,
                         MPI_Datatype type) {
  MPI_Aint lb, extent, true_lb, true_extent;
  PMPI_Type_get_extent(type, &lb, &extent);
  PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
  const RankMap &m = s.map;
  std::vector<MPI_Aint> first(static_cast<std::size_t>(m.alias_size()) + 1, 0);
  for (int r = 0; r < m.alias_size(); ++r) first[r + 1] = first[r] + alias_counts[r];
  MPI_Aint packed = 0;
  for (int a : m.members()) packed += alias_counts[a];
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

// NOTE: in ULFM mode the communicator may be revoked, or hold requests abandoned at a failure: a barrier
// posted on it could match those. cohort's agreement runs on the repair engine's own messages, never on
// the program's communicator, and is itself a barrier of the survivors.
int survivors_barrier(Alias &alias) {
  if (!ulfm::active(alias.handle())) return barrier(alias);
  nbc::finish_all(alias);
  int flag = 1;
  std::vector<int> failed;
  return repair::agree(alias.handle(), &flag, &failed);
}

namespace coll {
namespace {
const Composed *g_composed = nullptr;  // set at MPI_Init, read-only after
}  // namespace

void set_composed(const Composed *c) { g_composed = c; }

int post_MPI_Barrier(Alias &alias, const CallDesc &call, MPI_Comm) {
  if (call.request == nullptr && g_composed != nullptr && g_composed->applies(alias, MPI_BOR))
    return g_composed->barrier();
  const deferred::Buffers b{deferred::Kind::barrier};
  CallDesc c = deferrable(call, b);
  c.self_confirming = call.request == nullptr;
  Launch launch(c);
  c.small = launch.state().schedule({topology::CollKind::barrier});
  return launch.run(alias, [](const Substitute &s, int, MPI_Request *req) { return PMPI_Ibarrier(s.comm, req); });
}

int post_MPI_Bcast(Alias &alias, const CallDesc &call, void *buf, int count, MPI_Datatype type, int, MPI_Comm) {
  const deferred::Buffers b{deferred::Kind::bcast, buf, buf, count, type};
  CallDesc c = deferrable(call, b);
  Launch launch(c);
  type = launch.state().keep(type);
  c.small = launch.state().schedule({topology::CollKind::bcast, buf, buf, count, type});
  return launch.run(alias, [=](const Substitute &s, int r, MPI_Request *req) {
    return PMPI_Ibcast(buf, count, type, r, s.comm, req);
  });
}

int post_MPI_Reduce(Alias &alias, const CallDesc &call, const void *sendbuf, void *recvbuf, int count,
                    MPI_Datatype type, MPI_Op op, int, MPI_Comm) {
  const deferred::Buffers b{deferred::Kind::reduce, sendbuf, recvbuf, count, type, op};
  CallDesc c = deferrable(call, b);
  Launch launch(c);
  PostState &x = launch.state();
  type = x.keep(type);
  const void *in = x.input(sendbuf, recvbuf, count, type);  // MPI_IN_PLACE is only valid at the root
  c.small = x.schedule({topology::CollKind::reduce, in, recvbuf, count, type, op});
  return launch.run(alias, [=, &x](const Substitute &s, int r, MPI_Request *req) {
    return PMPI_Ireduce(in, recvbuf, count, type, op, r, s.comm, req);
  });
}

int post_MPI_Allreduce(Alias &alias, const CallDesc &call, const void *sendbuf, void *recvbuf, int count,
                       MPI_Datatype type, MPI_Op op, MPI_Comm) {
  if (call.request == nullptr && g_composed != nullptr && g_composed->applies(alias, op)) {
    return g_composed->allreduce(sendbuf, recvbuf, count, type, op);
  }
  const deferred::Buffers b{deferred::Kind::allreduce, sendbuf, recvbuf, count, type, op};
  CallDesc c = deferrable(call, b);
  Launch launch(c);
  PostState &x = launch.state();
  type = x.keep(type);
  const void *in = x.input(sendbuf, recvbuf, count, type);
  c.small = x.schedule({topology::CollKind::allreduce, in, recvbuf, count, type, op});
  return launch.run(alias, [=, &x](const Substitute &s, int, MPI_Request *req) {
    return PMPI_Iallreduce(in, recvbuf, count, type, op, s.comm, req);
  });
}

int post_MPI_Scan(Alias &alias, const CallDesc &call, const void *sendbuf, void *recvbuf, int count,
                  MPI_Datatype type, MPI_Op op, MPI_Comm) {
  Launch launch(call);
  PostState &x = launch.state();
  type = x.keep(type);
  // NOTE: the substitute keeps the alias's rank order, so its prefix is the prefix over the live ranks
  // in original order.
  const void *in = x.input(sendbuf, recvbuf, count, type);
  return launch.run(alias, [=, &x](const Substitute &s, int, MPI_Request *req) {
    return PMPI_Iscan(in, recvbuf, count, type, op, s.comm, req);
  });
}

int post_MPI_Gather(Alias &alias, const CallDesc &call, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                    void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm) {
  Launch launch(call);
  PostState &x = launch.state();
  const int me = alias_rank(alias);
  sendtype = x.keep(sendtype, me != root || sendbuf != MPI_IN_PLACE);
  recvtype = x.keep(recvtype, me == root);
  ReceiveSlots *slots =
      me == root ? x.slots(recvbuf, uniform_span(alias_size(alias), recvcount, recvtype),
                           own_uniform(sendbuf, me, recvcount, recvtype))
                 : nullptr;
  return launch.run(alias, [=, &x](const Substitute &s, int r, MPI_Request *req) {
    if (slots) slots->before_post();
    if (s.map.complete())
      return PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, r, s.comm, req);
    PositionalLayout &l = x.scratch(s).layouts[0];
    l.uniform(s.map, recvcount);
    return PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, l.counts.data(), l.displs.data(), recvtype, r,
                         s.comm, req);
  });
}

int post_MPI_Scatter(Alias &alias, const CallDesc &call, const void *sendbuf, int sendcount,
                     MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm) {
  Launch launch(call);
  PostState &x = launch.state();
  const bool at_root = alias_rank(alias) == root;  // sendtype is significant at the root only
  sendtype = x.keep(sendtype, at_root);
  recvtype = x.keep(recvtype, !at_root || recvbuf != MPI_IN_PLACE);
  return launch.run(alias, [=, &x](const Substitute &s, int r, MPI_Request *req) {
    if (s.map.complete())
      return PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, r, s.comm, req);
    PositionalLayout &l = x.scratch(s).layouts[0];
    l.uniform(s.map, sendcount);
    return PMPI_Iscatterv(sendbuf, l.counts.data(), l.displs.data(), sendtype, recvbuf, recvcount, recvtype, r,
                          s.comm, req);
  });
}

int post_MPI_Allgather(Alias &alias, const CallDesc &call, const void *sendbuf, int sendcount,
                       MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm) {
  Launch launch(call);
  PostState &x = launch.state();
  sendtype = x.keep(sendtype, sendbuf != MPI_IN_PLACE);
  recvtype = x.keep(recvtype);
  const int me = alias_rank(alias);
  ReceiveSlots *slots =
      x.slots(recvbuf, uniform_span(alias_size(alias), recvcount, recvtype),
              own_uniform(sendbuf, me, recvcount, recvtype));
  return launch.run(alias, [=, &x](const Substitute &s, int, MPI_Request *req) {
    slots->before_post();
    if (s.map.complete())
      return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, s.comm, req);
    PositionalLayout &l = x.scratch(s).layouts[0];
    l.uniform(s.map, recvcount);
    return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, l.counts.data(), l.displs.data(), recvtype,
                            s.comm, req);
  });
}


int post_MPI_Gatherv(Alias &alias, const CallDesc &call, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                     void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                     MPI_Comm) {
  Launch launch(call);
  PostState &x = launch.state();
  const int me = alias_rank(alias);
  const bool at_root = me == root;  // recvcounts, displs and recvtype are significant at the root only
  sendtype = x.keep(sendtype, !at_root || sendbuf != MPI_IN_PLACE);
  recvtype = x.keep(recvtype, at_root);
  ReceiveSlots *slots =
      at_root ? x.slots(recvbuf, v_span(alias_size(alias), recvcounts, displs, recvtype),
                        own_v(sendbuf, me, recvcounts, displs, recvtype))
              : nullptr;
  return launch.run(alias, [=, &x](const Substitute &s, int r, MPI_Request *req) {
    if (slots) slots->before_post();
    if (s.map.complete() || !at_root)
      return PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, r, s.comm, req);
    PositionalLayout &l = x.scratch(s).layouts[0];
    l.select(s.map, recvcounts, displs);
    return PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, l.counts.data(), l.displs.data(), recvtype, r,
                         s.comm, req);
  });
}

int post_MPI_Scatterv(Alias &alias, const CallDesc &call, const void *sendbuf, const int sendcounts[],
                      const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                      int root, MPI_Comm) {
  Launch launch(call);
  PostState &x = launch.state();
  const bool at_root = alias_rank(alias) == root;  // sendcounts, displs and sendtype: at the root only
  sendtype = x.keep(sendtype, at_root);
  recvtype = x.keep(recvtype, !at_root || recvbuf != MPI_IN_PLACE);
  return launch.run(alias, [=, &x](const Substitute &s, int r, MPI_Request *req) {
    if (s.map.complete() || !at_root)
      return PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, r, s.comm, req);
    PositionalLayout &l = x.scratch(s).layouts[0];
    l.select(s.map, sendcounts, displs);
    return PMPI_Iscatterv(sendbuf, l.counts.data(), l.displs.data(), sendtype, recvbuf, recvcount, recvtype, r,
                          s.comm, req);
  });
}

int post_MPI_Allgatherv(Alias &alias, const CallDesc &call, const void *sendbuf, int sendcount,
                        MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[],
                        MPI_Datatype recvtype, MPI_Comm) {
  Launch launch(call);
  PostState &x = launch.state();
  sendtype = x.keep(sendtype, sendbuf != MPI_IN_PLACE);
  recvtype = x.keep(recvtype);
  const int me = alias_rank(alias);
  ReceiveSlots *slots =
      x.slots(recvbuf, v_span(alias_size(alias), recvcounts, displs, recvtype),
              own_v(sendbuf, me, recvcounts, displs, recvtype));
  return launch.run(alias, [=, &x](const Substitute &s, int, MPI_Request *req) {
    slots->before_post();
    if (s.map.complete())
      return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, s.comm, req);
    PositionalLayout &l = x.scratch(s).layouts[0];
    l.select(s.map, recvcounts, displs);
    return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, l.counts.data(), l.displs.data(), recvtype,
                            s.comm, req);
  });
}

int post_MPI_Alltoall(Alias &alias, const CallDesc &call, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                      void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm) {
  Launch launch(call);
  PostState &x = launch.state();
  sendtype = x.keep(sendtype, sendbuf != MPI_IN_PLACE);
  recvtype = x.keep(recvtype);
  // NOTE: under MPI_IN_PLACE the input is recvbuf itself: restoring its span before a retry restores it too.
  const int me = alias_rank(alias);
  ReceiveSlots *slots =
      x.slots(recvbuf, uniform_span(alias_size(alias), recvcount, recvtype),
              own_uniform(sendbuf, me, recvcount, recvtype));
  return launch.run(alias, [=, &x](const Substitute &s, int, MPI_Request *req) {
    slots->before_post();
    if (s.map.complete())
      return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, s.comm, req);
    PositionalLayout &snd = x.scratch(s).layouts[1], &rcv = x.scratch(s).layouts[0];
    snd.uniform(s.map, sendcount);
    rcv.uniform(s.map, recvcount);
    return PMPI_Ialltoallv(sendbuf, snd.counts.data(), snd.displs.data(), sendtype, recvbuf, rcv.counts.data(),
                           rcv.displs.data(), recvtype, s.comm, req);
  });
}

int post_MPI_Alltoallv(Alias &alias, const CallDesc &call, const void *sendbuf, const int sendcounts[],
                       const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                       const int rdispls[], MPI_Datatype recvtype, MPI_Comm) {
  Launch launch(call);
  PostState &x = launch.state();
  sendtype = x.keep(sendtype, sendbuf != MPI_IN_PLACE);
  recvtype = x.keep(recvtype);
  const int me = alias_rank(alias);
  const bool in_place = sendbuf == MPI_IN_PLACE;  // then sendcounts, sdispls and sendtype are ignored
  ReceiveSlots *slots = x.slots(recvbuf, v_span(alias_size(alias), recvcounts, rdispls, recvtype),
                                own_v(sendbuf, me, recvcounts, rdispls, recvtype));
  return launch.run(alias, [=, &x](const Substitute &s, int, MPI_Request *req) {
    slots->before_post();
    if (s.map.complete())
      return PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, s.comm,
                             req);
    PositionalLayout &snd = x.scratch(s).layouts[1], &rcv = x.scratch(s).layouts[0];
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
  Launch launch(call);
  PostState &x = launch.state();
  recvtypes = x.keep(recvtypes, alias_size(alias));
  if (sendbuf != MPI_IN_PLACE) sendtypes = x.keep(sendtypes, alias_size(alias));
  Span span;  // rdispls are in bytes
  for (int r = 0; r < alias_size(alias); ++r) span.add(rdispls[r], recvcounts[r], recvtypes[r]);
  const int me = alias_rank(alias);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  ReceiveSlots *slots = x.slots(recvbuf, span, own_block(in_place, rdispls[me], recvcounts[me], recvtypes[me]));
  return launch.run(alias, [=, &x](const Substitute &s, int, MPI_Request *req) {
    slots->before_post();
    if (s.map.complete())
      return PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                             s.comm, req);
    PositionalLayout &snd = x.scratch(s).layouts[1], &rcv = x.scratch(s).layouts[0];
    std::vector<MPI_Datatype> &st = x.scratch(s).types[1], &rt = x.scratch(s).types[0];
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
  Launch launch(call);
  PostState &x = launch.state();
  type = x.keep(type);
  const void *in = x.input(sendbuf, recvbuf, total(recvcounts, alias_size(alias)), type);
  return launch.run(alias, [=, &x](const Substitute &s, int, MPI_Request *req) {
    if (s.map.complete()) return PMPI_Ireduce_scatter(in, recvbuf, recvcounts, type, op, s.comm, req);
    PositionalLayout &l = x.scratch(s).layouts[0];
    members_of(s.map, recvcounts, &l.counts);
    return PMPI_Ireduce_scatter(pack_members(s, x.scratch(s).bytes, in, recvcounts, type), recvbuf, l.counts.data(),
                                type, op, s.comm, req);
  });
}

int post_MPI_Reduce_scatter_block(Alias &alias, const CallDesc &call, const void *sendbuf, void *recvbuf, int recvcount,
                                  MPI_Datatype type, MPI_Op op, MPI_Comm) {
  Launch launch(call);
  PostState &x = launch.state();
  type = x.keep(type);
  const int n = alias_size(alias);
  const void *in = x.input(sendbuf, recvbuf, n * recvcount, type);
  return launch.run(alias, [=, &x](const Substitute &s, int, MPI_Request *req) {
    if (s.map.complete()) return PMPI_Ireduce_scatter_block(in, recvbuf, recvcount, type, op, s.comm, req);
    std::vector<int> counts(static_cast<std::size_t>(n), recvcount);
    return PMPI_Ireduce_scatter_block(pack_members(s, x.scratch(s).bytes, in, counts.data(), type), recvbuf, recvcount,
                                      type, op, s.comm, req);
  });
}

int post_MPI_Exscan(Alias &alias, const CallDesc &call, const void *sendbuf, void *recvbuf, int count,
                    MPI_Datatype type, MPI_Op op, MPI_Comm) {
  Launch launch(call);
  PostState &x = launch.state();
  type = x.keep(type);
  // NOTE: substitute rank 0 is the first live rank: its prefix is empty and MPI leaves its output
  // undefined, so it receives into scratch and the program's buffer stays untouched.
  const void *in = x.input(sendbuf, recvbuf, count, type);
  return launch.run(alias, [=, &x](const Substitute &s, int, MPI_Request *req) {
    void *out = recvbuf;
    if (s.rank == 0) {
      Span span;
      span.add(0, count, type);
      x.scratch(s).bytes.resize(static_cast<std::size_t>(span.hi - span.lo) + 1);
      out = x.scratch(s).bytes.data() - span.lo;
    }
    return PMPI_Iexscan(in, out, count, type, op, s.comm, req);
  });
}

// ---- The nonblocking collectives: each runs its blocking twin's post function with the program's request
// (CallDesc::request), which makes it a nonblocking operation (wrap/core/nbc.hpp) instead of running it to the end.

namespace {
CallDesc nonblocking(const CallDesc &call, MPI_Request *request) {
  CallDesc d = call;
  d.request = request;
  return d;
}
}  // namespace
int post_MPI_Ibarrier(Alias &alias, const CallDesc &call, MPI_Comm comm, MPI_Request *request) {
  return post_MPI_Barrier(alias, nonblocking(call, request), comm);
}
int post_MPI_Ibcast(Alias &alias, const CallDesc &call, void *buffer, int count, MPI_Datatype datatype, int root,
                    MPI_Comm comm, MPI_Request *request) {
  return post_MPI_Bcast(alias, nonblocking(call, request), buffer, count, datatype, root, comm);
}
int post_MPI_Ireduce(Alias &alias, const CallDesc &call, const void *sendbuf, void *recvbuf, int count,
                     MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, MPI_Request *request) {
  return post_MPI_Reduce(alias, nonblocking(call, request), sendbuf, recvbuf, count, datatype, op, root, comm);
}
int post_MPI_Iallreduce(Alias &alias, const CallDesc &call, const void *sendbuf, void *recvbuf, int count,
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request) {
  return post_MPI_Allreduce(alias, nonblocking(call, request), sendbuf, recvbuf, count, datatype, op, comm);
}
int post_MPI_Iscan(Alias &alias, const CallDesc &call, const void *sendbuf, void *recvbuf, int count,
                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request) {
  return post_MPI_Scan(alias, nonblocking(call, request), sendbuf, recvbuf, count, datatype, op, comm);
}
int post_MPI_Iexscan(Alias &alias, const CallDesc &call, const void *sendbuf, void *recvbuf, int count,
                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request) {
  return post_MPI_Exscan(alias, nonblocking(call, request), sendbuf, recvbuf, count, datatype, op, comm);
}
int post_MPI_Igather(Alias &alias, const CallDesc &call, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                     void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                     MPI_Request *request) {
  return post_MPI_Gather(alias, nonblocking(call, request), sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                         root, comm);
}
int post_MPI_Igatherv(Alias &alias, const CallDesc &call, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                      void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                      MPI_Comm comm, MPI_Request *request) {
  return post_MPI_Gatherv(alias, nonblocking(call, request), sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                          recvtype, root, comm);
}
int post_MPI_Iscatter(Alias &alias, const CallDesc &call, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                      void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                      MPI_Request *request) {
  return post_MPI_Scatter(alias, nonblocking(call, request), sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                          root, comm);
}
int post_MPI_Iscatterv(Alias &alias, const CallDesc &call, const void *sendbuf, const int sendcounts[],
                       const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                       int root, MPI_Comm comm, MPI_Request *request) {
  return post_MPI_Scatterv(alias, nonblocking(call, request), sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                           recvtype, root, comm);
}
int post_MPI_Iallgather(Alias &alias, const CallDesc &call, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                        void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
  return post_MPI_Allgather(alias, nonblocking(call, request), sendbuf, sendcount, sendtype, recvbuf, recvcount,
                            recvtype, comm);
}
int post_MPI_Iallgatherv(Alias &alias, const CallDesc &call, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                         void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                         MPI_Comm comm, MPI_Request *request) {
  return post_MPI_Allgatherv(alias, nonblocking(call, request), sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                             displs, recvtype, comm);
}
int post_MPI_Ialltoall(Alias &alias, const CallDesc &call, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                       void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
  return post_MPI_Alltoall(alias, nonblocking(call, request), sendbuf, sendcount, sendtype, recvbuf, recvcount,
                           recvtype, comm);
}
int post_MPI_Ialltoallv(Alias &alias, const CallDesc &call, const void *sendbuf, const int sendcounts[],
                        const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                        const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
  return post_MPI_Alltoallv(alias, nonblocking(call, request), sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                            recvcounts, rdispls, recvtype, comm);
}
int post_MPI_Ialltoallw(Alias &alias, const CallDesc &call, const void *sendbuf, const int sendcounts[],
                        const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                        const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request) {
  return post_MPI_Alltoallw(alias, nonblocking(call, request), sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                            recvcounts, rdispls, recvtypes, comm);
}
int post_MPI_Ireduce_scatter(Alias &alias, const CallDesc &call, const void *sendbuf, void *recvbuf,
                             const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                             MPI_Request *request) {
  return post_MPI_Reduce_scatter(alias, nonblocking(call, request), sendbuf, recvbuf, recvcounts, datatype, op, comm);
}
int post_MPI_Ireduce_scatter_block(Alias &alias, const CallDesc &call, const void *sendbuf, void *recvbuf,
                                   int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                   MPI_Request *request) {
  return post_MPI_Reduce_scatter_block(alias, nonblocking(call, request), sendbuf, recvbuf, recvcount, datatype, op,
                                       comm);
}

}  // namespace coll
}  // namespace cohort::wrap

// ---- The entry points, generated from wrap/calls.def (rows with entry `driver`) ----
// Each counts the call, hands it to replication when the job is replicated, passes communicators cohort did not create through to PMPI_X, describes the call
// from its row and hands it to its post function above. (They live in this object file, which MPI_Init's
// object needs anyway, so that a static libcohort always provides them, also to libraries linked after it.)
using namespace cohort::wrap;  // NOLINT: the generated extern "C" entry points below

#define COHORT_ROOT_root root
#define COHORT_ROOT_none -1
#define COHORT_ENTRY_own(name, params, args, root)
#define COHORT_ENTRY_driver(name, params, args, root)                                              \
  extern "C" int __wrap_##name params {                                                            \
    count_call(CallId::name);                                                                      \
    if (replica::on()) return replica::collective(CallId::name, COHORT_UNPAREN args);              \
    Alias *a = find_alias(comm);                                                                   \
    if (a == nullptr) {                                                                            \
      int inter_rc = MPI_SUCCESS; /* an intercommunicator cohort made (wrap/comm/intercomm.hpp)? */      \
      if (inter::collective(CallId::name, &inter_rc, COHORT_UNPAREN args)) return inter_rc;        \
      if (ulfm::revoked(comm)) return ulfm::raise(comm, ulfm::Failure::revoked, #name);            \
      return P##name args;                                                                         \
    }                                                                                              \
    return coll::post_##name(*a, describe(CallId::name, COHORT_ROOT_##root), COHORT_UNPAREN args); \
  }
#define COHORT_CALL(name, cls, params, args, note, root, dead_root, outputs, completion, entry, chapter, result) \
  COHORT_ENTRY_##entry(name, params, args, root)
#include "wrap/calls.def"
#undef COHORT_CALL

extern "C" int __wrap_MPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype type, MPI_Op op) {
  count_call(CallId::MPI_Reduce_local);
  return reduce_local(inbuf, inoutbuf, count, type, op, "MPI_Reduce_local");
}
