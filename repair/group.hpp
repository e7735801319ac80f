// Non-collective repair over a group: only the group's members take part, ranks outside it are never
// sent a message nor waited for (Rocco and Palermo, "Fault-Aware Non-Collective Communication Creation
// and Reparation in MPI", arXiv:2209.01849, 2022: "group agree", "group shrink", and the liveness
// discovery behind MPI_Comm_create_group; our design, see repair/liveness.hpp).
//
// `group` is any MPI group (of any communicator); its members are identified by their MPI_COMM_WORLD
// ranks, so the parent communicator plays no part and may hold dead ranks. Every live member of group
// calls the same function with the same group (same members, same order) and tag, in the same order
// as its other group calls with that group and tag, like MPI_Comm_create_group. Thread-safe; several
// threads may run group calls with different (group, tag) concurrently.
//
// Backends: heartbeat (repair/group.cpp: the agreement of repair/agreement.hpp over the group's members,
// on cohort's private communicator, under an id of its own per (group, tag, call number), so that its
// messages never mix with a communicator's agreements); ulfm (repair/group_ulfm.cpp: a documented
// fallback).
#pragma once
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "detector/log.hpp"
#include "detector/world.hpp"

namespace cohort::repair {

/// Uniform agreement among the group's survivors: on return every live member holds the AND of the live
/// members' *flag (and of members that died after contributing) and the same failed set (sorted group
/// ranks). Failure-free cost: 2(n-1) messages for a group of n. Returns MPI_SUCCESS, MPI_ERR_GROUP if
/// this rank is not in group (one line logged), MPI_ERR_OTHER outside MPI_Init/MPI_Finalize.
int group_agree(MPI_Group group, int tag, int *flag, std::vector<int> *failed, const char *call = "cohort_group_agree");

/// A new communicator over the group's live members, in group order (the group shrink): liveness
/// discovery and MPI_Comm_create_group over MPI_COMM_WORLD (repair/liveness.hpp); a member dying during
/// the call makes the others retry without it. The new communicator is registered with repair.
/// `failed`, if not null, gets the members left out (sorted group ranks). Failure-free cost: one
/// MPI_Comm_create_group and one agreement over the group. Returns MPI_SUCCESS, MPI_ERR_GROUP (not a
/// member), MPI_ERR_OTHER (outside MPI_Init/MPI_Finalize), or the MPI error of MPI_Comm_create_group if
/// it failed 5 times with no new failure (one line logged each).
/// `call` names the caller in log lines.
int group_create(MPI_Group group, int tag, MPI_Comm *newcomm, std::vector<int> *failed,
                 const char *call = "cohort_group_shrink");

/// MPI_COMM_WORLD ranks of group's members in group order (MPI_UNDEFINED for a process outside world).
inline std::vector<int> world_ranks_of_group(MPI_Group group) {
  MPI_Group world;
  PMPI_Comm_group(cohort::world(), &world);
  int n = 0;
  PMPI_Group_size(group, &n);
  std::vector<int> local(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) local[static_cast<std::size_t>(i)] = i;
  PMPI_Group_translate_ranks(group, n, local.data(), world, out.data());
  PMPI_Group_free(&world);
  return out;
}

/// FNV-1a (64 bits) of a list of ranks, in order: the same value on every process that holds the same list
/// (no pointers, no seed). Names things that belong to a set of ranks (a group's creation, an alias).
inline std::uint64_t ranks_fingerprint(const std::vector<int> &ranks) {
  std::uint64_t h = 1469598103934665603ULL;
  for (int r : ranks) h = (h ^ static_cast<std::uint32_t>(r)) * 1099511628211ULL;
  return h;
}

/// This rank's position in world (group order), or -1 with one line logged naming `call` if it is not a
/// member.
inline int member_position(const std::vector<int> &world, const char *call) {
  int me = 0;
  PMPI_Comm_rank(cohort::world(), &me);
  for (std::size_t i = 0; i < world.size(); ++i) {
    if (world[i] == me) return static_cast<int>(i);
  }
  COHORT_LOG_ERROR("%s: this rank is not a member of the group (MPI_ERR_GROUP)", call);
  return -1;
}

namespace detail {
// Primitives of the heartbeat backend (repair/mpi_only.cpp) for repair/group.cpp.
bool live();
/// The engine's id of this rank's next call of `kind` over (world, tag), added to the engine.
std::uint64_t add_group(const std::vector<int> &world, int tag, int kind);
bool known_dead(int world);
void agree_over(std::uint64_t id, int *flag, std::vector<int> *failed);
/// MPI_Comm_create_group(MPI_COMM_WORLD) over `world`, abandoned if one of them dies (MPI_ERR_PENDING);
/// its tag is derived from (id, failed).
int create_over(const std::vector<int> &world, std::uint64_t id, std::size_t failed, MPI_Comm *out);
void register_created(MPI_Comm comm, std::uint64_t id);
}  // namespace detail

}  // namespace cohort::repair
