#include "wrap/p2p/p2p_peers.hpp"

#include <memory>
#include <mutex>
#include <vector>

#include "detector/runtime.hpp"
#include "wrap/core/driver.hpp"
#include "wrap/p2p/p2p_peer_map.hpp"
#include "detector/world.hpp"

namespace cohort::wrap::p2p {
namespace {

// NOTE: one mutex around get-or-build-and-set: two threads setting the attribute of one communicator at
// once would make MPI delete the map that the other one is reading.
std::mutex g_mu;
int g_keyval = MPI_KEYVAL_INVALID;

int delete_map(MPI_Comm, int, void *value, void *) {
  delete static_cast<PeerMap *>(value);
  return MPI_SUCCESS;
}

PeerMap *build(MPI_Comm comm) {
  // A communicator with holes: its peers in the program's numbering, the holes' world ranks included.
  if (any_alias_with_holes()) {
    const Alias *a = find_alias(comm);
    if (a != nullptr && a->has_holes()) {
      const RankMap &m = a->current().map;
      std::vector<int> world(static_cast<std::size_t>(m.alias_size()));
      for (int r = 0; r < m.alias_size(); ++r) world[static_cast<std::size_t>(r)] = m.to_world(r);
      return new PeerMap(std::move(world), a->rank());
    }
  }
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  MPI_Group peers, world;
  if (inter) {
    PMPI_Comm_remote_group(comm, &peers);
  } else {
    PMPI_Comm_group(comm, &peers);
  }
  PMPI_Comm_group(cohort::world(), &world);
  int n = 0, self = -1;
  PMPI_Group_size(peers, &n);
  if (!inter) PMPI_Comm_rank(comm, &self);
  std::vector<int> ranks(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) ranks[static_cast<std::size_t>(i)] = i;
  PMPI_Group_translate_ranks(peers, n, ranks.data(), world, out.data());
  for (int &w : out) {
    if (w == MPI_UNDEFINED) w = -1;
  }
  PMPI_Group_free(&peers);
  PMPI_Group_free(&world);
  return new PeerMap(std::move(out), self);
}

// Runs f(map) under the lock with comm's cached map (built on first use).
template <typename F>
auto with_map(MPI_Comm comm, F f) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_keyval == MPI_KEYVAL_INVALID) {
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_map, &g_keyval, nullptr);
  }
  void *value = nullptr;
  int found = 0;
  PMPI_Comm_get_attr(comm, g_keyval, &value, &found);
  if (!found) {
    value = build(comm);
    PMPI_Comm_set_attr(comm, g_keyval, value);
  }
  return f(*static_cast<const PeerMap *>(value));
}

bool is_failed(int world) { return world >= 0 && detector::is_failed(world); }

}  // namespace

int world_rank(MPI_Comm comm, int rank) {
  return with_map(comm, [rank](const PeerMap &m) { return m.world_rank(rank); });
}

int handle_rank_with_holes(MPI_Comm comm, int rank) {
  const Alias *a = find_alias(comm);
  return a == nullptr ? rank : a->to_handle(rank);
}

void program_source_with_holes(MPI_Comm comm, MPI_Status *status) {
  const Alias *a = find_alias(comm);
  if (a != nullptr && a->has_holes()) status->MPI_SOURCE = a->to_program(status->MPI_SOURCE);
}

bool peer_dead_after_failures(MPI_Comm comm, int rank) {
  if (rank == MPI_ANY_SOURCE) {
    return with_map(comm, [](const PeerMap &m) { return m.no_live_sender(is_failed); });
  }
  return is_failed(world_rank(comm, rank));
}

}  // namespace cohort::wrap::p2p
