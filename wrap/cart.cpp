// Cartesian communicators (MPI_Cart_create, MPI_Cart_sub) and their queries.
//
// A Cartesian communicator is made like MPI_Comm_split (wrap/comm.hpp: resilient, over the survivors)
// and is an alias like any other: its ranks and size never change. MPI has no nonblocking
// MPI_Cart_create, so the communicator carries no MPI topology; cohort keeps the grid
// (topology/cartesian.hpp) and answers MPI_Cart_coords/rank/shift/get, MPI_Cartdim_get and
// MPI_Topo_test from it in the numbering the program created it with (ranks are never reordered, which
// MPI allows). A dead rank keeps its place: MPI_Cart_shift towards it gives its number, and the
// point-to-point policy applies to what the program then sends or receives.
// A grid needs all its points: made from a communicator that has lost ranks it would not fit, and the call
// fails with MPI_ERR_DIMS (one line logged) on the members of the grids that lost ranks.
#include <mpi.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "detector/log.hpp"
#include "topology/cartesian.hpp"
#include "wrap/calls.h"
#include "wrap/comm.hpp"
#include "wrap/driver.hpp"

namespace cohort::wrap {
namespace {

using topology::Cartesian;

std::mutex g_grids_mu;
std::map<MPI_Comm, Cartesian> g_grids;  // guarded by g_grids_mu

bool find_grid(MPI_Comm comm, Cartesian *out) {
  std::lock_guard<std::mutex> lock(g_grids_mu);
  auto it = g_grids.find(comm);
  if (it == g_grids.end()) return false;
  *out = it->second;
  return true;
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
  std::lock_guard<std::mutex> lock(g_grids_mu);
  g_grids[*newcomm] = g;
  return MPI_SUCCESS;
}

}  // namespace

void forget_topology(MPI_Comm comm) {
  std::lock_guard<std::mutex> lock(g_grids_mu);
  g_grids.erase(comm);
}

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
  Cartesian g;
  if (!find_grid(comm, &g)) return PMPI_Topo_test(comm, status);
  *status = MPI_CART;
  return MPI_SUCCESS;
}
