// Process topologies: Cartesian communicators (MPI_Cart_create, MPI_Cart_sub), graphs (MPI_Graph_create) and
// distributed graphs (MPI_Dist_graph_create, MPI_Dist_graph_create_adjacent), their queries and mapping calls,
// and the neighbourhood collectives on all of them.
//
// A topology communicator is an alias like any other (its ranks and size never change), made like
// MPI_Comm_split (wrap/comm/comm.hpp: resilient, over the survivors), with one difference: it keeps the
// numbering and size of the topology the program asked for, as if made just before the deaths (MPI 4.0,
// 8.5.1, 8.5.3, 8.5.4 and 8.5.7 define the ranks by the old communicator's, reorder aside). A rank of the old
// communicator that is already dead is a hole: it keeps its rank and its place in the grid or the graph,
// and counts in the size, but is not in the handle MPI holds (Alias::has_holes); it behaves as a peer
// that died after the creation (point-to-point policies, neighbourhood collectives below). So a grid made
// after a death works like the same grid made a moment before it. MPI has no nonblocking MPI_Cart_create,
// so the communicator carries no MPI topology: cohort keeps the grid (topology/cartesian.hpp) and the
// graph and answers the queries (MPI_Cart_coords/rank/shift/get, MPI_Cartdim_get, MPI_Topo_test,
// MPI_Graphdims_get, MPI_Graph_get, MPI_Graph_neighbors(_count), MPI_Dist_graph_neighbors(_count)) in the
// program's numbering; ranks are never reordered (reorder is ignored, which MPI allows, and MPI_Cart_map and
// MPI_Graph_map answer so). MPI_Dist_graph_create gathers every rank's edges: a dead rank names none.
//
// Neighbourhood collectives (MPI 4.0, sections 8.6-8.8) move blocks between neighbours only, so they run as
// point-to-point messages on a private duplicate of the communicator (made at the first one, collectively,
// as MPI_Comm_dup): every in-neighbour's block lands at its slot, a dead neighbour's slot stays untouched
// (unless its block arrived before it died), and nothing waits on a dead rank (wrap/core/progress.hpp). No
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
#include "wrap/coll/coll.hpp"
#include "wrap/comm/comm.hpp"
#include "wrap/replica/replica.hpp"
#include "wrap/core/driver.hpp"
#include "wrap/core/nbc.hpp"
#include "wrap/core/progress.hpp"

namespace cohort::wrap {
namespace {

using topology::Cartesian;

// What cohort keeps for a communicator with a topology. Immutable once registered, except the private
// duplicate, which the neighbourhood collectives (serialised by the program, like every collective on
// one communicator) create and use.
struct Topology {
  bool cartesian = false;
  bool graph = false;                        // MPI_Graph_create's (in = out: the node's neighbours)
  Cartesian grid;                            // cartesian
  std::vector<int> index, edges;             // graph: the program's arrays
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

// This process's rank and the size in the program's numbering (a communicator with holes: not its handle's).
int program_rank(MPI_Comm comm) {
  int me = 0;
  if (replica::on()) {
    replica::comm_rank(comm, &me);
    return me;
  }
  const Alias *a = find_alias(comm);
  if (a != nullptr) return a->rank();
  PMPI_Comm_rank(comm, &me);
  return me;
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

// Registers the grid of *newcomm, just made by split_alias.
void adopt_grid(const Cartesian &g, MPI_Comm newcomm) {
  if (newcomm == MPI_COMM_NULL) return;
  auto t = std::make_unique<Topology>();
  t->cartesian = true;
  t->grid = g;
  set_topology(newcomm, std::move(t));
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
    const int me = a.rank();
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
// every wait and test call: wrap/core/nbc.hpp): a request completes, or once its peer is known dead (after the
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

// One neighbourhood collective, nonblocking: posts now; *request completes (wrap/core/nbc.hpp, a local operation)
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

// MPI_Cart_create under replication: the logical communicator's first grid-size ranks, in order
// (reorder ignored), split off and given the grid; the others get MPI_COMM_NULL (MPI 4.0, 8.5.1).
int replica_cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], bool valid,
                        MPI_Comm *newcomm) {
  if (!valid) return comm_error(comm, MPI_ERR_ARG);
  Cartesian g(std::vector<int>(dims, dims + ndims), std::vector<bool>(periods, periods + ndims));
  int me = 0, n = 0;
  replica::comm_rank(comm, &me);
  replica::comm_size(comm, &n);
  if (g.size() > n) {
    COHORT_LOG_ERROR("MPI_Cart_create: a %s grid needs %d ranks, the communicator has %d; MPI_ERR_DIMS",
                     shape(g).c_str(), g.size(), n);
    return comm_error(comm, MPI_ERR_DIMS);
  }
  int rc = replica::comm_split(comm, me < g.size() ? 0 : MPI_UNDEFINED, me, newcomm, "MPI_Cart_create");
  if (rc == MPI_SUCCESS) adopt_grid(g, *newcomm);
  return rc;
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
  bool valid = newcomm != nullptr && ndims >= 0 && (ndims == 0 || (dims != nullptr && periods != nullptr));
  for (int i = 0; valid && i < ndims; ++i) valid = dims[i] > 0;
  if (replica::on()) return replica_cart_create(comm, ndims, dims, periods, valid, newcomm);
  Alias *a = find_alias(comm);
  if (a == nullptr || !valid) return PMPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm);  // MPI reports it
  Cartesian g(std::vector<int>(dims, dims + ndims), std::vector<bool>(periods, periods + ndims));
  const int me = a->rank(), n = a->size();
  if (g.size() > n) {
    COHORT_LOG_ERROR("MPI_Cart_create: a %s grid needs %d ranks, the communicator has %d; MPI_ERR_DIMS",
                     shape(g).c_str(), g.size(), n);
    return comm_error(comm, MPI_ERR_DIMS);
  }
  // The grid's ranks are the old communicator's first g.size(), holes included (MPI 4.0, 8.5.1).
  std::vector<int> world;
  for (int r = 0; r < g.size(); ++r) world.push_back(a->current().map.to_world(r));
  int rc = split_alias(*a, CallId::MPI_Cart_create, me < g.size() ? 0 : MPI_UNDEFINED, me, newcomm, &world);
  if (rc != MPI_SUCCESS) return rc;
  adopt_grid(g, *newcomm);
  return MPI_SUCCESS;
}

extern "C" int __wrap_MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm) {
  count_call(CallId::MPI_Cart_sub);
  Cartesian g;
  if (replica::on()) {
    if (!find_grid(comm, &g) || remain_dims == nullptr || newcomm == nullptr) return comm_error(comm, MPI_ERR_ARG);
    std::vector<bool> remain(remain_dims, remain_dims + g.ndims());
    const int me = program_rank(comm);
    int rc = replica::comm_split(comm, g.sub_color(me, remain), g.sub_rank(me, remain), newcomm, "MPI_Cart_sub");
    if (rc == MPI_SUCCESS) adopt_grid(g.sub(remain), *newcomm);
    return rc;
  }
  Alias *a = find_alias(comm);
  if (a == nullptr || !find_grid(comm, &g) || remain_dims == nullptr || newcomm == nullptr)
    return PMPI_Cart_sub(comm, remain_dims, newcomm);
  std::vector<bool> remain(remain_dims, remain_dims + g.ndims());
  const int me = a->rank(), color = g.sub_color(me, remain);
  // My sub-grid's ranks, in its numbering, holes included (MPI 4.0, 8.5.7).
  Cartesian sub = g.sub(remain);
  std::vector<int> world(static_cast<std::size_t>(sub.size()), -1);
  for (int r = 0; r < g.size(); ++r) {
    if (g.sub_color(r, remain) == color)
      world[static_cast<std::size_t>(g.sub_rank(r, remain))] = a->current().map.to_world(r);
  }
  int rc = split_alias(*a, CallId::MPI_Cart_sub, color, g.sub_rank(me, remain), newcomm, &world);
  if (rc != MPI_SUCCESS) return rc;
  adopt_grid(sub, *newcomm);
  return MPI_SUCCESS;
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
  const int me = program_rank(comm);
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
  std::vector<int> c = g.coords(program_rank(comm));
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
  *status = t->cartesian ? MPI_CART : t->graph ? MPI_GRAPH : MPI_DIST_GRAPH;
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
  // The graph's ranks are the old communicator's, holes included (MPI 4.0, 8.5.4).
  std::vector<int> world;
  for (int r = 0; r < a->size(); ++r) world.push_back(a->current().map.to_world(r));
  int rc = split_alias(*a, CallId::MPI_Dist_graph_create_adjacent, 0, a->rank(), newcomm, &world);
  if (rc != MPI_SUCCESS) return rc;
  if (info != MPI_INFO_NULL) PMPI_Comm_set_info(*newcomm, info);
  set_topology(*newcomm, std::move(t));
  return MPI_SUCCESS;
}

extern "C" int __wrap_MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[],
                                            const int destinations[], const int weights[], MPI_Info info, int reorder,
                                            MPI_Comm *newcomm) {
  count_call(CallId::MPI_Dist_graph_create);
  Alias *a = find_alias(comm);
  bool valid = newcomm != nullptr && n >= 0 && (n == 0 || (sources != nullptr && degrees != nullptr));
  long long m = 0;
  for (int i = 0; valid && i < n; ++i) {
    valid = degrees[i] >= 0;
    m += degrees[i];
  }
  if (a == nullptr || !valid || m > (1 << 28))
    return PMPI_Dist_graph_create(comm, n, sources, degrees, destinations, weights, info, reorder, newcomm);
  // Every rank's edges (source, destination, weight) reach every survivor: a resilient MPI_Allgather of the
  // counts, then an MPI_Allgatherv of the edges (a hole's row stays empty, MPI 4.0 8.5.4).
  const bool weighted = weights != unweighted();
  std::vector<int> mine;
  for (int i = 0, e = 0; i < n; ++i) {
    for (int k = 0; k < degrees[i]; ++k, ++e) {
      mine.insert(mine.end(), {sources[i], destinations[e], weighted && weights != nullptr ? weights[e] : 1});
    }
  }
  const int size = a->size(), me = a->rank();
  std::vector<int> counts(static_cast<std::size_t>(size), 0), displs(static_cast<std::size_t>(size), 0);
  int count = static_cast<int>(mine.size());
  int rc = coll::post_MPI_Allgather(*a, describe(CallId::MPI_Allgather), &count, 1, MPI_INT, counts.data(), 1,
                                    MPI_INT, comm);
  if (rc != MPI_SUCCESS) return rc;
  long long total = 0;
  for (int r = 0; r < size; ++r) {
    if (!a->member(r)) counts[static_cast<std::size_t>(r)] = 0;
    displs[static_cast<std::size_t>(r)] = static_cast<int>(total);
    total += counts[static_cast<std::size_t>(r)];
  }
  std::vector<int> all(static_cast<std::size_t>(total) + 1, 0);
  rc = coll::post_MPI_Allgatherv(*a, describe(CallId::MPI_Allgatherv), mine.data(), count, MPI_INT, all.data(),
                                 counts.data(), displs.data(), MPI_INT, comm);
  if (rc != MPI_SUCCESS) return rc;
  auto t = std::make_unique<Topology>();
  t->weighted = weighted;
  // (the neighbours in the order of the ranks that named the edges, then their order there; the edges of a
  // rank that died during the exchange are in on none or on every survivor: the collectives are agreed)
  for (int r = 0; r < size; ++r) {
    if (!a->member(r)) continue;
    const int first = displs[static_cast<std::size_t>(r)], end = first + counts[static_cast<std::size_t>(r)];
    for (int e = first; e < end; e += 3) {
      const int src = all[static_cast<std::size_t>(e)], dst = all[static_cast<std::size_t>(e) + 1],
                w = all[static_cast<std::size_t>(e) + 2];
      if (dst == me) {
        t->in.push_back(src);
        t->in_w.push_back(w);
      }
      if (src == me) {
        t->out.push_back(dst);
        t->out_w.push_back(w);
      }
    }
  }
  if (!weighted) t->in_w.clear(), t->out_w.clear();
  std::vector<int> world;
  for (int r = 0; r < size; ++r) world.push_back(a->current().map.to_world(r));
  rc = split_alias(*a, CallId::MPI_Dist_graph_create, 0, me, newcomm, &world);
  if (rc != MPI_SUCCESS) return rc;
  if (info != MPI_INFO_NULL) PMPI_Comm_set_info(*newcomm, info);
  set_topology(*newcomm, std::move(t));
  return MPI_SUCCESS;
}

extern "C" int __wrap_MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[], int reorder,
                                       MPI_Comm *newcomm) {
  count_call(CallId::MPI_Graph_create);
  Alias *a = find_alias(comm);
  bool valid = newcomm != nullptr && nnodes >= 0 && (nnodes == 0 || index != nullptr);
  for (int i = 0; valid && i < nnodes; ++i) valid = index[i] >= (i == 0 ? 0 : index[i - 1]);
  const int nedges = nnodes > 0 && valid ? index[nnodes - 1] : 0;
  for (int e = 0; valid && e < nedges; ++e) valid = edges != nullptr && edges[e] >= 0 && edges[e] < nnodes;
  if (a == nullptr || !valid) return PMPI_Graph_create(comm, nnodes, index, edges, reorder, newcomm);  // MPI reports it
  const int me = a->rank();
  if (nnodes > a->size()) {
    COHORT_LOG_ERROR("MPI_Graph_create: a graph of %d nodes needs %d ranks, the communicator has %d; MPI_ERR_ARG",
                     nnodes, nnodes, a->size());
    return comm_error(comm, MPI_ERR_ARG);
  }
  auto t = std::make_unique<Topology>();
  t->graph = true;
  t->index.assign(index, index + nnodes);
  t->edges.assign(edges, edges + nedges);
  if (me < nnodes) {
    for (int e = me == 0 ? 0 : index[me - 1]; e < index[me]; ++e) t->in.push_back(edges[e]);
    t->out = t->in;
  }
  // The graph's node i is the old communicator's rank i, holes included (MPI 4.0, 8.5.3).
  std::vector<int> world;
  for (int r = 0; r < nnodes; ++r) world.push_back(a->current().map.to_world(r));
  int rc = split_alias(*a, CallId::MPI_Graph_create, me < nnodes ? 0 : MPI_UNDEFINED, me, newcomm, &world);
  if (rc != MPI_SUCCESS) return rc;
  if (*newcomm != MPI_COMM_NULL) set_topology(*newcomm, std::move(t));
  return MPI_SUCCESS;
}

namespace {
Topology *find_graph(MPI_Comm comm) {
  Topology *t = find_topology(comm);
  return t != nullptr && t->graph ? t : nullptr;
}
}  // namespace

extern "C" int __wrap_MPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges) {
  count_call(CallId::MPI_Graphdims_get);
  Topology *t = find_graph(comm);
  if (t == nullptr) return PMPI_Graphdims_get(comm, nnodes, nedges);
  *nnodes = static_cast<int>(t->index.size());
  *nedges = static_cast<int>(t->edges.size());
  return MPI_SUCCESS;
}

extern "C" int __wrap_MPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]) {
  count_call(CallId::MPI_Graph_get);
  Topology *t = find_graph(comm);
  if (t == nullptr) return PMPI_Graph_get(comm, maxindex, maxedges, index, edges);
  for (int i = 0; i < maxindex && i < static_cast<int>(t->index.size()); ++i)
    index[i] = t->index[static_cast<std::size_t>(i)];
  for (int e = 0; e < maxedges && e < static_cast<int>(t->edges.size()); ++e)
    edges[e] = t->edges[static_cast<std::size_t>(e)];
  return MPI_SUCCESS;
}

extern "C" int __wrap_MPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors) {
  count_call(CallId::MPI_Graph_neighbors_count);
  Topology *t = find_graph(comm);
  if (t == nullptr) return PMPI_Graph_neighbors_count(comm, rank, nneighbors);
  if (rank < 0 || rank >= static_cast<int>(t->index.size())) return comm_error(comm, MPI_ERR_RANK);
  const std::size_t r = static_cast<std::size_t>(rank);
  *nneighbors = t->index[r] - (rank == 0 ? 0 : t->index[r - 1]);
  return MPI_SUCCESS;
}

extern "C" int __wrap_MPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]) {
  count_call(CallId::MPI_Graph_neighbors);
  Topology *t = find_graph(comm);
  if (t == nullptr) return PMPI_Graph_neighbors(comm, rank, maxneighbors, neighbors);
  if (rank < 0 || rank >= static_cast<int>(t->index.size())) return comm_error(comm, MPI_ERR_RANK);
  const int first = rank == 0 ? 0 : t->index[static_cast<std::size_t>(rank) - 1];
  for (int k = 0; k < maxneighbors && first + k < t->index[static_cast<std::size_t>(rank)]; ++k)
    neighbors[k] = t->edges[static_cast<std::size_t>(first + k)];
  return MPI_SUCCESS;
}

// MPI_Cart_map and MPI_Graph_map (MPI 4.0, 8.5.8): the placement cohort's constructors make, as if called
// with reorder = 0 (the program's rank when it is in the topology, else MPI_UNDEFINED), in the program's
// numbering of a communicator with holes too.
extern "C" int __wrap_MPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank) {
  count_call(CallId::MPI_Cart_map);
  Alias *a = find_alias(comm);
  long long n = 1;
  bool valid = newrank != nullptr && ndims >= 0 && (ndims == 0 || dims != nullptr);
  for (int i = 0; valid && i < ndims; ++i) {
    valid = dims[i] > 0;
    n *= valid ? dims[i] : 1;
  }
  if (a == nullptr || !valid) return PMPI_Cart_map(comm, ndims, dims, periods, newrank);
  if (n > a->size()) return comm_error(comm, MPI_ERR_DIMS);
  *newrank = a->rank() < n ? a->rank() : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

extern "C" int __wrap_MPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank) {
  count_call(CallId::MPI_Graph_map);
  Alias *a = find_alias(comm);
  if (a == nullptr || newrank == nullptr || nnodes < 0) return PMPI_Graph_map(comm, nnodes, index, edges, newrank);
  if (nnodes > a->size()) return comm_error(comm, MPI_ERR_ARG);
  *newrank = a->rank() < nnodes ? a->rank() : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

extern "C" int __wrap_MPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted) {
  count_call(CallId::MPI_Dist_graph_neighbors_count);
  Topology *t = find_topology(comm);
  if (t == nullptr || t->cartesian || t->graph)
    return PMPI_Dist_graph_neighbors_count(comm, indegree, outdegree, weighted);
  *indegree = static_cast<int>(t->in.size());
  *outdegree = static_cast<int>(t->out.size());
  *weighted = t->weighted ? 1 : 0;
  return MPI_SUCCESS;
}

extern "C" int __wrap_MPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                                               int maxoutdegree, int destinations[], int destweights[]) {
  count_call(CallId::MPI_Dist_graph_neighbors);
  Topology *t = find_topology(comm);
  if (t == nullptr || t->cartesian || t->graph)
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
// call; the request completes through the wait and test calls: wrap/core/nbc.hpp, a local operation, no
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
