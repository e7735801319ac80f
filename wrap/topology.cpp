// Process topologies: Cartesian communicators (MPI_Cart_create, MPI_Cart_sub) and distributed graphs
// (MPI_Dist_graph_create_adjacent), their queries, and the neighbourhood collectives on both.
//
// A Cartesian communicator is made like MPI_Comm_split (wrap/comm.hpp: resilient, over the survivors)
// and is an alias like any other: its ranks and size never change. MPI has no nonblocking
// MPI_Cart_create, so the communicator carries no MPI topology; cohort keeps the grid
// (topology/cartesian.hpp) and answers MPI_Cart_coords/rank/shift/get, MPI_Cartdim_get and
// MPI_Topo_test from it in the numbering the program created it with (ranks are never reordered, which
// MPI allows). A dead rank keeps its place: MPI_Cart_shift towards it gives its number, and the
// point-to-point policy applies to what the program then sends or receives.
// A grid needs all its points: made from a communicator that has lost ranks it would not fit, and the call
// fails with MPI_ERR_DIMS (one line logged) on the members of the grids that lost ranks. A distributed
// graph names its neighbours in the old communicator's ranks, so it likewise needs every rank
// (MPI_ERR_TOPOLOGY).
//
// Neighbourhood collectives (MPI 3.1, section 7.6) move blocks between neighbours only, so they run as
// point-to-point messages on a private duplicate of the communicator (made at the first one, collectively,
// as MPI_Comm_dup): every in-neighbour's block lands at its slot, a dead neighbour's slot stays untouched
// (unless its block arrived before it died), and nothing waits on a dead rank (wrap/progress.hpp). No
// agreement: as in MPI, each rank only depends on its neighbours. On a Cartesian grid a message's tag is
// the receiver's slot, so that the two blocks between the same two ranks of a periodic dimension of size 1
// or 2 land in the right slots; on a graph, duplicate edges match in order, as in MPI.
#include <dlfcn.h>
#include <mpi.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "detector/inject.hpp"
#include "detector/log.hpp"
#include "repair/repair.hpp"
#include "topology/cartesian.hpp"
#include "wrap/calls.h"
#include "wrap/comm.hpp"
#include "wrap/driver.hpp"
#include "wrap/progress.hpp"

namespace cohort::wrap {
namespace {

using topology::Cartesian;

// What cohort keeps for a communicator with a topology. Immutable once registered, except the private
// duplicate, which the neighbourhood collectives (serialised by the program, like every collective on
// one communicator) create and use.
struct Topology {
  bool cartesian = false;
  Cartesian grid;                            // cartesian
  std::vector<int> in, out, in_w, out_w;     // distributed graph: ranks and weights
  bool weighted = false;
  MPI_Comm exchange = MPI_COMM_NULL;         // private duplicate for the neighbourhood collectives
  RankMap map;                               // program rank -> rank of exchange
  bool abandoned = false;                    // a send on exchange was abandoned: never free it
};

std::mutex g_topologies_mu;
std::map<MPI_Comm, std::unique_ptr<Topology>> g_topologies;  // guarded by g_topologies_mu

Topology *find_topology(MPI_Comm comm) {
  std::lock_guard<std::mutex> lock(g_topologies_mu);
  auto it = g_topologies.find(comm);
  return it == g_topologies.end() ? nullptr : it->second.get();
}

bool find_grid(MPI_Comm comm, Cartesian *out) {
  Topology *t = find_topology(comm);
  if (t == nullptr || !t->cartesian) return false;
  *out = t->grid;
  return true;
}

void set_topology(MPI_Comm comm, std::unique_ptr<Topology> t) {
  std::lock_guard<std::mutex> lock(g_topologies_mu);
  g_topologies[comm] = std::move(t);
}

// NOTE: MPICH's MPI_UNWEIGHTED is a variable of the MPI library: referencing it would be the one MPI_X
// symbol in cohort (test build.preload_symbols), so its value is looked up once at run time.
const int *unweighted() {
#ifdef MPICH_VERSION
  static const int *value = [] {
    void *p = dlsym(RTLD_DEFAULT, "MPI_UNWEIGHTED");
    return p != nullptr ? *static_cast<int *const *>(p) : nullptr;
  }();
  return value;
#else
  return MPI_UNWEIGHTED;
#endif
}

int comm_error(MPI_Comm comm, int code) {
  PMPI_Comm_call_errhandler(comm, code);
  return code;
}

std::string shape(const Cartesian &g) {
  std::string s;
  for (int d : g.dims()) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s.empty() ? "0-dimensional" : s;
}

// Registers the grid of *newcomm, just made by split_alias, or fails the call when ranks are missing.
int adopt_grid(MPI_Comm parent, const Cartesian &g, MPI_Comm *newcomm, const char *call) {
  if (*newcomm == MPI_COMM_NULL) return MPI_SUCCESS;
  int n = 0;
  PMPI_Comm_size(*newcomm, &n);
  if (n != g.size()) {
    COHORT_LOG_ERROR("%s: %d of the %d ranks of a %s grid are alive (the communicator had lost ranks); MPI_ERR_DIMS",
                     call, n, g.size(), shape(g).c_str());
    __wrap_MPI_Comm_free(newcomm);
    return comm_error(parent, MPI_ERR_DIMS);
  }
  auto t = std::make_unique<Topology>();
  t->cartesian = true;
  t->grid = g;
  set_topology(*newcomm, std::move(t));
  return MPI_SUCCESS;
}

}  // namespace

void forget_topology(MPI_Comm comm) {
  std::unique_ptr<Topology> t;
  {
    std::lock_guard<std::mutex> lock(g_topologies_mu);
    auto it = g_topologies.find(comm);
    if (it == g_topologies.end()) return;
    t = std::move(it->second);
    g_topologies.erase(it);
  }
  // NOTE: a duplicate with an abandoned send is leaked: MPI may still match messages on it.
  if (t->exchange != MPI_COMM_NULL && !t->abandoned) PMPI_Comm_free(&t->exchange);
}

namespace {

struct Block {
  void *buf;
  int count;
  MPI_Datatype type;
};
char *at(const void *buf, int displ, MPI_Datatype type) {
  MPI_Aint lb = 0, extent = 0;
  PMPI_Type_get_extent(type, &lb, &extent);
  return static_cast<char *>(const_cast<void *>(buf)) + displ * extent;
}

// One neighbourhood collective of the program's call `id` on comm (topology t): block out(k) goes to
// out-neighbour k, in-neighbour j's block into in(j). Returns MPI_SUCCESS or an MPI error code (passed to
// comm's error handler).
int neighbour_exchange(MPI_Comm comm, Alias &a, Topology &t, CallId id, FunctionRef<Block(int)> out,
                       FunctionRef<Block(int)> in) {
  if (t.exchange == MPI_COMM_NULL) {
    int rc = private_dup(a, id, &t.exchange, &t.map);
    if (rc != MPI_SUCCESS) return rc;
  }
  std::vector<int> sources = t.in, destinations = t.out;
  if (t.cartesian) {
    int me = 0;
    PMPI_Comm_rank(comm, &me);
    sources.clear();
    for (int d = 0; d < t.grid.ndims(); ++d) {
      int s = 0, r = 0;
      t.grid.shift(me, d, 1, &s, &r);
      sources.push_back(s == Cartesian::kNone ? MPI_PROC_NULL : s);
      sources.push_back(r == Cartesian::kNone ? MPI_PROC_NULL : r);
    }
    destinations = sources;
  }
  // A peer takes part when it is in the duplicate and not known dead now.
  auto peer_of = [&](int r) { return r == MPI_PROC_NULL || a.known_failed(r) ? -1 : t.map.to_sub(r); };
  std::vector<MPI_Request> recvs(sources.size(), MPI_REQUEST_NULL), sends(destinations.size(), MPI_REQUEST_NULL);
  int rc = MPI_SUCCESS;
  for (std::size_t j = 0; j < sources.size() && rc == MPI_SUCCESS; ++j) {
    int p = peer_of(sources[j]);
    Block b = in(static_cast<int>(j));
    if (p >= 0) rc = PMPI_Irecv(b.buf, b.count, b.type, p, t.cartesian ? static_cast<int>(j) : 0, t.exchange, &recvs[j]);
  }
  for (std::size_t k = 0; k < destinations.size() && rc == MPI_SUCCESS; ++k) {
    int p = peer_of(destinations[k]);
    Block b = out(static_cast<int>(k));
    if (p >= 0)
      rc = PMPI_Isend(b.buf, b.count, b.type, p, t.cartesian ? static_cast<int>(k ^ 1) : 0, t.exchange, &sends[k]);
  }
  inject::point(posted_hook(id));  // e.g. "neighbor_alltoall.posted": every receive and send posted
  auto settle = [&](std::vector<MPI_Request> &reqs, const std::vector<int> &peers, bool receive) {
    for (std::size_t i = 0; i < reqs.size() && rc == MPI_SUCCESS; ++i) {
      if (reqs[i] == MPI_REQUEST_NULL) continue;
      int peer = peers[i], error = MPI_SUCCESS;
      Watch watch{[&] { return a.known_failed(peer); }};
      switch (wait(&reqs[i], MPI_STATUS_IGNORE, watch, &error)) {
        case WaitResult::completed: break;
        case WaitResult::failed:
          // NOTE: under the ulfm backend MPI fails a request whose peer died: that peer's block is missing,
          // as when the watch sees the death first.
          if (repair::error_kind(error) != repair::ErrorKind::proc_failed) rc = error;
          if (reqs[i] != MPI_REQUEST_NULL && rc == MPI_SUCCESS) PMPI_Request_free(&reqs[i]);
          break;
        case WaitResult::broken:
        case WaitResult::revoked:
          if (receive) {  // withdrawn; a block that arrived before the death still completes it
            // NOTE: under the ulfm backend MPI may have failed it already, and Open MPI 5 then refuses to
            // cancel it (MPI_ERR_REQUEST): only a receive still pending is cancelled.
            int done = 0;
            PMPI_Request_get_status(reqs[i], &done, MPI_STATUS_IGNORE);
            if (!done) PMPI_Cancel(&reqs[i]);
            PMPI_Wait(&reqs[i], MPI_STATUS_IGNORE);
          } else {  // NOTE: MPI cancels no send to a dead rank: abandoned, the duplicate is never freed
            t.abandoned = true;
          }
      }
    }
  };
  settle(recvs, sources, true);
  settle(sends, destinations, false);
  if (rc != MPI_SUCCESS) return comm_error(comm, rc);
  return MPI_SUCCESS;
}

// The topology of a communicator cohort made, for the neighbourhood collectives (nullptr: pass through).
Topology *neighbourhood_of(MPI_Comm comm, Alias **a) {
  *a = find_alias(comm);
  return *a == nullptr ? nullptr : find_topology(comm);
}

}  // namespace

}  // namespace cohort::wrap

using namespace cohort::wrap;  // NOLINT: the rest of this file only defines the extern "C" entry points
using cohort::topology::Cartesian;

extern "C" int __wrap_MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder,
                                      MPI_Comm *newcomm) {
  count_call(CallId::MPI_Cart_create);
  Alias *a = find_alias(comm);
  bool valid = newcomm != nullptr && ndims >= 0 && (ndims == 0 || (dims != nullptr && periods != nullptr));
  for (int i = 0; valid && i < ndims; ++i) valid = dims[i] > 0;
  if (a == nullptr || !valid) return PMPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm);  // MPI reports it
  Cartesian g(std::vector<int>(dims, dims + ndims), std::vector<bool>(periods, periods + ndims));
  int me = 0, n = 0;
  PMPI_Comm_rank(comm, &me);
  PMPI_Comm_size(comm, &n);
  if (g.size() > n) {
    COHORT_LOG_ERROR("MPI_Cart_create: a %s grid needs %d ranks, the communicator has %d; MPI_ERR_DIMS",
                     shape(g).c_str(), g.size(), n);
    return comm_error(comm, MPI_ERR_DIMS);
  }
  int rc = split_alias(*a, CallId::MPI_Cart_create, me < g.size() ? 0 : MPI_UNDEFINED, me, newcomm);
  if (rc != MPI_SUCCESS) return rc;
  return adopt_grid(comm, g, newcomm, "MPI_Cart_create");
}

extern "C" int __wrap_MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm) {
  count_call(CallId::MPI_Cart_sub);
  Cartesian g;
  Alias *a = find_alias(comm);
  if (a == nullptr || !find_grid(comm, &g) || remain_dims == nullptr || newcomm == nullptr)
    return PMPI_Cart_sub(comm, remain_dims, newcomm);
  std::vector<bool> remain(remain_dims, remain_dims + g.ndims());
  int me = 0;
  PMPI_Comm_rank(comm, &me);
  int rc = split_alias(*a, CallId::MPI_Cart_sub, g.sub_color(me, remain), g.sub_rank(me, remain), newcomm);
  if (rc != MPI_SUCCESS) return rc;
  return adopt_grid(comm, g.sub(remain), newcomm, "MPI_Cart_sub");
}

extern "C" int __wrap_MPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]) {
  count_call(CallId::MPI_Cart_coords);
  Cartesian g;
  if (!find_grid(comm, &g)) return PMPI_Cart_coords(comm, rank, maxdims, coords);
  if (rank < 0 || rank >= g.size()) return comm_error(comm, MPI_ERR_RANK);
  if (maxdims < g.ndims()) return comm_error(comm, MPI_ERR_ARG);
  std::vector<int> c = g.coords(rank);
  for (int i = 0; i < g.ndims(); ++i) coords[i] = c[static_cast<std::size_t>(i)];
  return MPI_SUCCESS;
}

extern "C" int __wrap_MPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank) {
  count_call(CallId::MPI_Cart_rank);
  Cartesian g;
  if (!find_grid(comm, &g)) return PMPI_Cart_rank(comm, coords, rank);
  int r = g.rank(std::vector<int>(coords, coords + g.ndims()));
  if (r == Cartesian::kNone) return comm_error(comm, MPI_ERR_ARG);
  *rank = r;
  return MPI_SUCCESS;
}

extern "C" int __wrap_MPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest) {
  count_call(CallId::MPI_Cart_shift);
  Cartesian g;
  if (!find_grid(comm, &g)) return PMPI_Cart_shift(comm, direction, disp, rank_source, rank_dest);
  if (direction < 0 || direction >= g.ndims()) return comm_error(comm, MPI_ERR_ARG);
  int me = 0;
  PMPI_Comm_rank(comm, &me);
  g.shift(me, direction, disp, rank_source, rank_dest);
  if (*rank_source == Cartesian::kNone) *rank_source = MPI_PROC_NULL;
  if (*rank_dest == Cartesian::kNone) *rank_dest = MPI_PROC_NULL;
  return MPI_SUCCESS;
}

extern "C" int __wrap_MPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]) {
  count_call(CallId::MPI_Cart_get);
  Cartesian g;
  if (!find_grid(comm, &g)) return PMPI_Cart_get(comm, maxdims, dims, periods, coords);
  if (maxdims < g.ndims()) return comm_error(comm, MPI_ERR_ARG);
  int me = 0;
  PMPI_Comm_rank(comm, &me);
  std::vector<int> c = g.coords(me);
  for (std::size_t i = 0; i < c.size(); ++i) {
    dims[i] = g.dims()[i];
    periods[i] = g.periodic()[i] ? 1 : 0;
    coords[i] = c[i];
  }
  return MPI_SUCCESS;
}

extern "C" int __wrap_MPI_Cartdim_get(MPI_Comm comm, int *ndims) {
  count_call(CallId::MPI_Cartdim_get);
  Cartesian g;
  if (!find_grid(comm, &g)) return PMPI_Cartdim_get(comm, ndims);
  *ndims = g.ndims();
  return MPI_SUCCESS;
}

extern "C" int __wrap_MPI_Topo_test(MPI_Comm comm, int *status) {
  count_call(CallId::MPI_Topo_test);
  Topology *t = find_topology(comm);
  if (t == nullptr) return PMPI_Topo_test(comm, status);
  *status = t->cartesian ? MPI_CART : MPI_DIST_GRAPH;
  return MPI_SUCCESS;
}

extern "C" int __wrap_MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
                                                     const int sourceweights[], int outdegree,
                                                     const int destinations[], const int destweights[],
                                                     MPI_Info info, int reorder, MPI_Comm *newcomm) {
  count_call(CallId::MPI_Dist_graph_create_adjacent);
  Alias *a = find_alias(comm);
  if (a == nullptr || newcomm == nullptr || indegree < 0 || outdegree < 0)
    return PMPI_Dist_graph_create_adjacent(comm, indegree, sources, sourceweights, outdegree, destinations,
                                           destweights, info, reorder, newcomm);
  auto t = std::make_unique<Topology>();
  t->in.assign(sources, sources + indegree);
  t->out.assign(destinations, destinations + outdegree);
  t->weighted = sourceweights != unweighted();
  if (t->weighted && indegree > 0) t->in_w.assign(sourceweights, sourceweights + indegree);
  if (t->weighted && outdegree > 0) t->out_w.assign(destweights, destweights + outdegree);
  int me = 0, n = 0, made = 0;
  PMPI_Comm_rank(comm, &me);
  PMPI_Comm_size(comm, &n);
  int rc = split_alias(*a, CallId::MPI_Dist_graph_create_adjacent, 0, me, newcomm);
  if (rc != MPI_SUCCESS) return rc;
  PMPI_Comm_size(*newcomm, &made);
  if (made != n) {
    COHORT_LOG_ERROR("MPI_Dist_graph_create_adjacent: %d of the %d ranks are alive (the communicator had lost ranks); "
                     "MPI_ERR_TOPOLOGY", made, n);
    __wrap_MPI_Comm_free(newcomm);
    return comm_error(comm, MPI_ERR_TOPOLOGY);
  }
  if (info != MPI_INFO_NULL) PMPI_Comm_set_info(*newcomm, info);
  set_topology(*newcomm, std::move(t));
  return MPI_SUCCESS;
}

extern "C" int __wrap_MPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted) {
  count_call(CallId::MPI_Dist_graph_neighbors_count);
  Topology *t = find_topology(comm);
  if (t == nullptr || t->cartesian) return PMPI_Dist_graph_neighbors_count(comm, indegree, outdegree, weighted);
  *indegree = static_cast<int>(t->in.size());
  *outdegree = static_cast<int>(t->out.size());
  *weighted = t->weighted ? 1 : 0;
  return MPI_SUCCESS;
}

extern "C" int __wrap_MPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                                               int maxoutdegree, int destinations[], int destweights[]) {
  count_call(CallId::MPI_Dist_graph_neighbors);
  Topology *t = find_topology(comm);
  if (t == nullptr || t->cartesian)
    return PMPI_Dist_graph_neighbors(comm, maxindegree, sources, sourceweights, maxoutdegree, destinations,
                                     destweights);
  for (int j = 0; j < maxindegree && j < static_cast<int>(t->in.size()); ++j) {
    sources[j] = t->in[static_cast<std::size_t>(j)];
    if (t->weighted && sourceweights != unweighted()) sourceweights[j] = t->in_w[static_cast<std::size_t>(j)];
  }
  for (int k = 0; k < maxoutdegree && k < static_cast<int>(t->out.size()); ++k) {
    destinations[k] = t->out[static_cast<std::size_t>(k)];
    if (t->weighted && destweights != unweighted()) destweights[k] = t->out_w[static_cast<std::size_t>(k)];
  }
  return MPI_SUCCESS;
}

extern "C" int __wrap_MPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                             int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  count_call(CallId::MPI_Neighbor_allgather);
  Alias *a = nullptr;
  Topology *t = neighbourhood_of(comm, &a);
  if (t == nullptr) return PMPI_Neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  return neighbour_exchange(
      comm, *a, *t, CallId::MPI_Neighbor_allgather,
      [&](int) { return Block{const_cast<void *>(sendbuf), sendcount, sendtype}; },
      [&](int j) { return Block{at(recvbuf, j * recvcount, recvtype), recvcount, recvtype}; });
}

extern "C" int __wrap_MPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                              const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                                              MPI_Comm comm) {
  count_call(CallId::MPI_Neighbor_allgatherv);
  Alias *a = nullptr;
  Topology *t = neighbourhood_of(comm, &a);
  if (t == nullptr)
    return PMPI_Neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
  return neighbour_exchange(
      comm, *a, *t, CallId::MPI_Neighbor_allgatherv,
      [&](int) { return Block{const_cast<void *>(sendbuf), sendcount, sendtype}; },
      [&](int j) { return Block{at(recvbuf, displs[j], recvtype), recvcounts[j], recvtype}; });
}

extern "C" int __wrap_MPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                            int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  count_call(CallId::MPI_Neighbor_alltoall);
  Alias *a = nullptr;
  Topology *t = neighbourhood_of(comm, &a);
  if (t == nullptr) return PMPI_Neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  return neighbour_exchange(
      comm, *a, *t, CallId::MPI_Neighbor_alltoall,
      [&](int k) { return Block{at(sendbuf, k * sendcount, sendtype), sendcount, sendtype}; },
      [&](int j) { return Block{at(recvbuf, j * recvcount, recvtype), recvcount, recvtype}; });
}

extern "C" int __wrap_MPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  count_call(CallId::MPI_Neighbor_alltoallv);
  Alias *a = nullptr;
  Topology *t = neighbourhood_of(comm, &a);
  if (t == nullptr)
    return PMPI_Neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                   comm);
  return neighbour_exchange(
      comm, *a, *t, CallId::MPI_Neighbor_alltoallv,
      [&](int k) { return Block{at(sendbuf, sdispls[k], sendtype), sendcounts[k], sendtype}; },
      [&](int j) { return Block{at(recvbuf, rdispls[j], recvtype), recvcounts[j], recvtype}; });
}

extern "C" int __wrap_MPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                             const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                                             const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  count_call(CallId::MPI_Neighbor_alltoallw);
  Alias *a = nullptr;
  Topology *t = neighbourhood_of(comm, &a);
  if (t == nullptr)
    return PMPI_Neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                                   comm);
  // displacements in bytes, one datatype per neighbour
  return neighbour_exchange(
      comm, *a, *t, CallId::MPI_Neighbor_alltoallw,
      [&](int k) {
        return Block{static_cast<char *>(const_cast<void *>(sendbuf)) + sdispls[k], sendcounts[k], sendtypes[k]};
      },
      [&](int j) { return Block{static_cast<char *>(recvbuf) + rdispls[j], recvcounts[j], recvtypes[j]}; });
}
