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

#include <atomic>
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
#include "wrap/nbc.hpp"
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
  // A send on exchange was abandoned: never free it. Shared with the nonblocking ones in flight.
  std::shared_ptr<std::atomic<bool>> abandoned = std::make_shared<std::atomic<bool>>(false);
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
  if (t->exchange != MPI_COMM_NULL && !t->abandoned->load()) PMPI_Comm_free(&t->exchange);
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

// The messages of one neighbourhood collective: receive j from in-neighbour sources[j], send k to out-neighbour
// destinations[k] (ranks of the program's communicator; a request stays MPI_REQUEST_NULL where nothing was
// posted: MPI_PROC_NULL, or a neighbour known dead at the post).
struct Exchange {
  std::vector<int> sources, destinations;
  std::vector<MPI_Request> recvs, sends;
  std::vector<int> recv_world, send_world;        // the peers' MPI_COMM_WORLD ranks (-1: nothing posted)
  std::vector<char> cancelled;                    // receive j withdrawn (PMPI_Cancel issued)
  std::shared_ptr<std::atomic<bool>> abandoned;   // the topology's flag
};

// Posts the messages of the program's call `id` on comm (topology t): block out(k) goes to out-neighbour k,
// in-neighbour j's block into in(j); then reaches the call's inject point ("neighbor_alltoall.posted").
// Returns MPI_SUCCESS or an MPI error code.
int post_exchange(Alias &a, Topology &t, CallId id, MPI_Comm comm, FunctionRef<Block(int)> out,
                  FunctionRef<Block(int)> in, Exchange *x) {
  if (t.exchange == MPI_COMM_NULL) {
    int rc = private_dup(a, id, &t.exchange, &t.map);
    if (rc != MPI_SUCCESS) return rc;
  }
  x->sources = t.in;
  x->destinations = t.out;
  x->abandoned = t.abandoned;
  if (t.cartesian) {
    int me = 0;
    PMPI_Comm_rank(comm, &me);
    x->sources.clear();
    for (int d = 0; d < t.grid.ndims(); ++d) {
      int s = 0, r = 0;
      t.grid.shift(me, d, 1, &s, &r);
      x->sources.push_back(s == Cartesian::kNone ? MPI_PROC_NULL : s);
      x->sources.push_back(r == Cartesian::kNone ? MPI_PROC_NULL : r);
    }
    x->destinations = x->sources;
  }
  // A peer takes part when it is in the duplicate and not known dead now.
  auto peer_of = [&](int r) { return r == MPI_PROC_NULL || a.known_failed(r) ? -1 : t.map.to_sub(r); };
  const RankMap &m = a.current().map;
  x->recvs.assign(x->sources.size(), MPI_REQUEST_NULL);
  x->sends.assign(x->destinations.size(), MPI_REQUEST_NULL);
  x->recv_world.assign(x->sources.size(), -1);
  x->send_world.assign(x->destinations.size(), -1);
  x->cancelled.assign(x->sources.size(), 0);
  int rc = MPI_SUCCESS;
  for (std::size_t j = 0; j < x->sources.size() && rc == MPI_SUCCESS; ++j) {
    int p = peer_of(x->sources[j]);
    Block b = in(static_cast<int>(j));
    if (p < 0) continue;
    rc = PMPI_Irecv(b.buf, b.count, b.type, p, t.cartesian ? static_cast<int>(j) : 0, t.exchange, &x->recvs[j]);
    x->recv_world[j] = m.to_world(x->sources[j]);
  }
  for (std::size_t k = 0; k < x->destinations.size() && rc == MPI_SUCCESS; ++k) {
    int p = peer_of(x->destinations[k]);
    Block b = out(static_cast<int>(k));
    if (p < 0) continue;
    rc = PMPI_Isend(b.buf, b.count, b.type, p, t.cartesian ? static_cast<int>(k ^ 1) : 0, t.exchange, &x->sends[k]);
    x->send_world[k] = m.to_world(x->destinations[k]);
  }
  inject::point(posted_hook(id));  // e.g. "neighbor_alltoall.posted": every receive and send posted
  return rc;
}

// A request of an exchange that MPI ended with an error: under the ulfm backend MPI fails a request whose peer
// died, and that block is then missing, as when the detector sees the death first; any other error is the
// call's (*rc, the first one).
void request_failed(MPI_Request *req, int error, int *rc) {
  if (repair::error_kind(error) != repair::ErrorKind::proc_failed && *rc == MPI_SUCCESS) *rc = error;
  if (*req != MPI_REQUEST_NULL && *rc == MPI_SUCCESS) PMPI_Request_free(req);
  *req = MPI_REQUEST_NULL;
}

// One neighbourhood collective, blocking: posts, then waits for each request, never on a dead neighbour.
// Returns MPI_SUCCESS or an MPI error code (passed to comm's error handler).
int neighbour_exchange(MPI_Comm comm, Alias &a, Topology &t, CallId id, FunctionRef<Block(int)> out,
                       FunctionRef<Block(int)> in) {
  Exchange x;
  int rc = post_exchange(a, t, id, comm, out, in, &x);
  auto settle = [&](std::vector<MPI_Request> &reqs, const std::vector<int> &peers, bool receive) {
    for (std::size_t i = 0; i < reqs.size() && rc == MPI_SUCCESS; ++i) {
      if (reqs[i] == MPI_REQUEST_NULL) continue;
      int peer = peers[i], error = MPI_SUCCESS;
      Watch watch{[&] { return a.known_failed(peer); }};
      switch (wait(&reqs[i], MPI_STATUS_IGNORE, watch, &error)) {
        case WaitResult::completed: break;
        case WaitResult::failed: request_failed(&reqs[i], error, &rc); break;
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
            x.abandoned->store(true);
          }
      }
    }
  };
  settle(x.recvs, x.sources, true);
  settle(x.sends, x.destinations, false);
  if (rc != MPI_SUCCESS) return comm_error(comm, rc);
  return MPI_SUCCESS;
}

// One pass over an exchange's requests without waiting (the nonblocking neighbourhood collectives' step, run by
// every wait and test call: wrap/nbc.hpp): a request completes, or once its peer is known dead (after the
// failure grace, as the blocking waits) a receive is cancelled (a block that arrived before the death still
// completes it) and a send is abandoned. True once no request is left; *rc: the first error.
bool exchange_step(Exchange &x, int *rc) {
  bool left = false;
  auto pass = [&](std::vector<MPI_Request> &reqs, const std::vector<int> &world, bool receive) {
    for (std::size_t i = 0; i < reqs.size(); ++i) {
      if (reqs[i] == MPI_REQUEST_NULL) continue;
      int flag = 0;
      int error = PMPI_Test(&reqs[i], &flag, MPI_STATUS_IGNORE);
      if (error != MPI_SUCCESS) {
        request_failed(&reqs[i], error, rc);
        continue;
      }
      if (flag) continue;
      left = true;
      if ((receive && x.cancelled[i]) || !detector::is_failed(world[i]) || !failure_grace_over()) continue;
      if (receive) {
        int done = 0;
        PMPI_Request_get_status(reqs[i], &done, MPI_STATUS_IGNORE);
        if (!done) PMPI_Cancel(&reqs[i]);
        x.cancelled[i] = 1;  // the next tests complete it, cancelled or received
      } else {
        x.abandoned->store(true);  // NOTE: as the blocking one: MPI may still use it, never freed
        reqs[i] = MPI_REQUEST_NULL;
      }
    }
  };
  pass(x.recvs, x.recv_world, true);
  pass(x.sends, x.send_world, false);
  return !left;
}

// One neighbourhood collective, nonblocking: posts now; *request completes (wrap/nbc.hpp, a local operation)
// once every request did, or was withdrawn for a dead neighbour. Returns MPI_SUCCESS or an MPI error code
// (passed to comm's error handler).
int neighbour_exchange_nb(MPI_Comm comm, Alias &a, Topology &t, CallId id, FunctionRef<Block(int)> out,
                          FunctionRef<Block(int)> in, MPI_Request *request) {
  auto x = std::make_shared<Exchange>();
  int rc = post_exchange(a, t, id, comm, out, in, x.get());
  if (rc == MPI_SUCCESS) rc = nbc::start_local([x](int *out_rc) { return exchange_step(*x, out_rc); }, request);
  if (rc != MPI_SUCCESS) {
    // NOTE: what was posted is left to MPI (never freed here: it may still use the buffers)
    *request = MPI_REQUEST_NULL;
    return comm_error(comm, rc);
  }
  return MPI_SUCCESS;
}

// One neighbourhood collective, blocking (request null) or nonblocking (*request: the program's request).
int neighbour_call(MPI_Comm comm, Alias &a, Topology &t, CallId id, FunctionRef<Block(int)> out,
                   FunctionRef<Block(int)> in, MPI_Request *request) {
  return request == nullptr ? neighbour_exchange(comm, a, t, id, out, in)
                            : neighbour_exchange_nb(comm, a, t, id, out, in, request);
}

// The blocks of each neighbourhood collective, shared by the blocking call and its nonblocking twin.
int allgather_blocks(MPI_Comm comm, Alias &a, Topology &t, CallId id, const void *sendbuf, int sendcount,
                     MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Request *request) {
  return neighbour_call(
      comm, a, t, id, [&](int) { return Block{const_cast<void *>(sendbuf), sendcount, sendtype}; },
      [&](int j) { return Block{at(recvbuf, j * recvcount, recvtype), recvcount, recvtype}; }, request);
}
int allgatherv_blocks(MPI_Comm comm, Alias &a, Topology &t, CallId id, const void *sendbuf, int sendcount,
                      MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[],
                      MPI_Datatype recvtype, MPI_Request *request) {
  return neighbour_call(
      comm, a, t, id, [&](int) { return Block{const_cast<void *>(sendbuf), sendcount, sendtype}; },
      [&](int j) { return Block{at(recvbuf, displs[j], recvtype), recvcounts[j], recvtype}; }, request);
}
int alltoall_blocks(MPI_Comm comm, Alias &a, Topology &t, CallId id, const void *sendbuf, int sendcount,
                    MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Request *request) {
  return neighbour_call(
      comm, a, t, id, [&](int k) { return Block{at(sendbuf, k * sendcount, sendtype), sendcount, sendtype}; },
      [&](int j) { return Block{at(recvbuf, j * recvcount, recvtype), recvcount, recvtype}; }, request);
}
int alltoallv_blocks(MPI_Comm comm, Alias &a, Topology &t, CallId id, const void *sendbuf, const int sendcounts[],
                     const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                     const int rdispls[], MPI_Datatype recvtype, MPI_Request *request) {
  return neighbour_call(
      comm, a, t, id, [&](int k) { return Block{at(sendbuf, sdispls[k], sendtype), sendcounts[k], sendtype}; },
      [&](int j) { return Block{at(recvbuf, rdispls[j], recvtype), recvcounts[j], recvtype}; }, request);
}
// (displacements in bytes, one datatype per neighbour)
int alltoallw_blocks(MPI_Comm comm, Alias &a, Topology &t, CallId id, const void *sendbuf, const int sendcounts[],
                     const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Request *request) {
  return neighbour_call(
      comm, a, t, id,
      [&](int k) {
        return Block{static_cast<char *>(const_cast<void *>(sendbuf)) + sdispls[k], sendcounts[k], sendtypes[k]};
      },
      [&](int j) { return Block{static_cast<char *>(recvbuf) + rdispls[j], recvcounts[j], recvtypes[j]}; }, request);
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

// ---- The neighbourhood collectives and, below each, its nonblocking twin (the same messages, posted at the
// call; the request completes through the wait and test calls: wrap/nbc.hpp, a local operation, no
// confirmation, as the blocking ones have none). The first one on a communicator, blocking or not, makes its
// private duplicate (collectively, as MPI_Comm_dup) inside the call.

extern "C" int __wrap_MPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                             int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  count_call(CallId::MPI_Neighbor_allgather);
  Alias *a = nullptr;
  Topology *t = neighbourhood_of(comm, &a);
  if (t == nullptr) return PMPI_Neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  return allgather_blocks(comm, *a, *t, CallId::MPI_Neighbor_allgather, sendbuf, sendcount, sendtype, recvbuf,
                          recvcount, recvtype, nullptr);
}

extern "C" int __wrap_MPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                              int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                              MPI_Request *request) {
  count_call(CallId::MPI_Ineighbor_allgather);
  Alias *a = nullptr;
  Topology *t = neighbourhood_of(comm, &a);
  if (t == nullptr)
    return PMPI_Ineighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  return allgather_blocks(comm, *a, *t, CallId::MPI_Ineighbor_allgather, sendbuf, sendcount, sendtype, recvbuf,
                          recvcount, recvtype, request);
}

extern "C" int __wrap_MPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                              const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                                              MPI_Comm comm) {
  count_call(CallId::MPI_Neighbor_allgatherv);
  Alias *a = nullptr;
  Topology *t = neighbourhood_of(comm, &a);
  if (t == nullptr)
    return PMPI_Neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
  return allgatherv_blocks(comm, *a, *t, CallId::MPI_Neighbor_allgatherv, sendbuf, sendcount, sendtype, recvbuf,
                           recvcounts, displs, recvtype, nullptr);
}

extern "C" int __wrap_MPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                               void *recvbuf, const int recvcounts[], const int displs[],
                                               MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
  count_call(CallId::MPI_Ineighbor_allgatherv);
  Alias *a = nullptr;
  Topology *t = neighbourhood_of(comm, &a);
  if (t == nullptr)
    return PMPI_Ineighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                                     request);
  return allgatherv_blocks(comm, *a, *t, CallId::MPI_Ineighbor_allgatherv, sendbuf, sendcount, sendtype, recvbuf,
                           recvcounts, displs, recvtype, request);
}

extern "C" int __wrap_MPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                            int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  count_call(CallId::MPI_Neighbor_alltoall);
  Alias *a = nullptr;
  Topology *t = neighbourhood_of(comm, &a);
  if (t == nullptr) return PMPI_Neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  return alltoall_blocks(comm, *a, *t, CallId::MPI_Neighbor_alltoall, sendbuf, sendcount, sendtype, recvbuf,
                         recvcount, recvtype, nullptr);
}

extern "C" int __wrap_MPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                             int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                             MPI_Request *request) {
  count_call(CallId::MPI_Ineighbor_alltoall);
  Alias *a = nullptr;
  Topology *t = neighbourhood_of(comm, &a);
  if (t == nullptr)
    return PMPI_Ineighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  return alltoall_blocks(comm, *a, *t, CallId::MPI_Ineighbor_alltoall, sendbuf, sendcount, sendtype, recvbuf,
                         recvcount, recvtype, request);
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
  return alltoallv_blocks(comm, *a, *t, CallId::MPI_Neighbor_alltoallv, sendbuf, sendcounts, sdispls, sendtype,
                          recvbuf, recvcounts, rdispls, recvtype, nullptr);
}

extern "C" int __wrap_MPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                              MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                              const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                              MPI_Request *request) {
  count_call(CallId::MPI_Ineighbor_alltoallv);
  Alias *a = nullptr;
  Topology *t = neighbourhood_of(comm, &a);
  if (t == nullptr)
    return PMPI_Ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                    comm, request);
  return alltoallv_blocks(comm, *a, *t, CallId::MPI_Ineighbor_alltoallv, sendbuf, sendcounts, sdispls, sendtype,
                          recvbuf, recvcounts, rdispls, recvtype, request);
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
  return alltoallw_blocks(comm, *a, *t, CallId::MPI_Neighbor_alltoallw, sendbuf, sendcounts, sdispls, sendtypes,
                          recvbuf, recvcounts, rdispls, recvtypes, nullptr);
}

extern "C" int __wrap_MPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                              const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                                              const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                              MPI_Request *request) {
  count_call(CallId::MPI_Ineighbor_alltoallw);
  Alias *a = nullptr;
  Topology *t = neighbourhood_of(comm, &a);
  if (t == nullptr)
    return PMPI_Ineighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                                    comm, request);
  return alltoallw_blocks(comm, *a, *t, CallId::MPI_Ineighbor_alltoallw, sendbuf, sendcounts, sdispls, sendtypes,
                          recvbuf, recvcounts, rdispls, recvtypes, request);
}
