// Communicator calls: rank and size of the alias (never change), and dup/split/free through the driver.
//
// MPI_Comm_dup and MPI_Comm_split of a degraded communicator build over its survivors (as Legio does):
// the new communicator's size is the number of survivors and its ranks are renumbered 0..size-1 in the
// old rank order (split: by key, then old rank). From then on it is an alias of its own: its ranks and
// size never change again.
#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "wrap/calls.h"
#include "repair/group.hpp"
#include "repair/repair.hpp"
#include "wrap/comm/comm.hpp"
#include "wrap/core/driver.hpp"
#include "wrap/core/errors.hpp"
#include "wrap/core/nbc.hpp"
#include "wrap/core/ulfm_mode.hpp"
#include "wrap/replica/replica.hpp"

namespace cohort::wrap {
namespace {

// Every attempt gets its own heap slot for the new communicator: an abandoned attempt's request may
// still write its slot later, so slots of abandoned attempts are leaked, never reused.
class CommSlots {
 public:
  MPI_Comm *next() {
    slots_.push_back(new MPI_Comm(MPI_COMM_NULL));
    return slots_.back();
  }
  /// The last attempt's communicator (the one all survivors agreed on).
  MPI_Comm take_last() {
    if (slots_.empty()) return MPI_COMM_NULL;
    MPI_Comm c = *slots_.back();
    delete slots_.back();
    slots_.pop_back();
    return c;
  }

 private:
  std::vector<MPI_Comm *> slots_;
};

// The new communicator (made on the substitute `made_on`) becomes an alias of its own, with the program's
// error handler, and is registered with repair (same id on every member, as repair requires). Its first
// substitute is a private communicator over its members (one repair::shrink, the fast path of a dup and an
// agreement) unless COHORT_P2P_COLL_MAX_BYTES=0 and COHORT_P2P_CONFIRM=0 ask for none of cohort's schedules.
// program_world: the new communicator's ranks as the program numbers them (MPI_COMM_WORLD ranks, dead ones
// included), for a communicator with holes; nullptr: its survivors, renumbered.
void adopt(const Alias &parent, const Substitute *made_on, MPI_Comm comm,
           const std::vector<int> *program_world = nullptr) {
  if (comm == MPI_COMM_NULL) return;
  repair::register_comm(comm, made_on->comm);
  if (made_on->comm != parent.handle()) copy_errhandler(parent.handle(), comm);
  // (a private first substitute: the program's small collectives on comm take cohort's schedules at once)
  const bool private_substitute = small::max_bytes() > 0 || small::confirm_by_messages();
  if (program_world != nullptr) register_alias_with_holes(comm, *program_world, private_substitute);
  else register_alias(comm, private_substitute);
  ulfm::inherit(parent.handle(), comm);
}

// MPI_Comm_create_group (and MPI_Intercomm_create) have no nonblocking variant: a helper thread runs the
// blocking calls and completes a generalized request, which the driver polls like any other. If a member
// dies meanwhile, the request is abandoned and the thread stays blocked in MPI forever (leaked with its job).
struct ThreadJob {
  std::function<void()> body;
  MPI_Request greq = MPI_REQUEST_NULL;
};

int greq_query(void *, MPI_Status *status) {
  PMPI_Status_set_elements(status, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_UNDEFINED;
  status->MPI_TAG = MPI_UNDEFINED;
  return MPI_SUCCESS;
}
// NOTE: no MPI call in the callbacks: MPICH runs them inside PMPI_Test and asserts on nested calls.
int greq_free(void *job) {
  delete static_cast<ThreadJob *>(job);
  return MPI_SUCCESS;
}
int greq_cancel(void *, int) { return MPI_SUCCESS; }

}  // namespace

int post_on_thread(std::function<void()> body, MPI_Request *req) {
  auto *job = new ThreadJob{std::move(body)};
  int rc = PMPI_Grequest_start(greq_query, greq_free, greq_cancel, job, &job->greq);
  if (rc != MPI_SUCCESS) {
    delete job;
    return rc;
  }
  *req = job->greq;
  std::thread([job] {
    job->body();
    PMPI_Grequest_complete(job->greq);  // MPI frees the job (greq_free) when the request is completed
  }).detach();
  return MPI_SUCCESS;
}

namespace {

// Posts MPI_Comm_create_group(parent, group, tag) (takes over group); *out is written on completion.
int post_create_group(MPI_Comm parent, MPI_Group group, int tag, MPI_Comm *out, MPI_Request *req) {
  int rc = post_on_thread([parent, group, tag, out]() mutable {
    PMPI_Comm_create_group(parent, group, tag, out);
    PMPI_Group_free(&group);
  }, req);
  if (rc != MPI_SUCCESS) PMPI_Group_free(&group);
  return rc;
}

// Duplicates (dup, dup_with_info, idup) share a lineage with the communicator they were made from, so
// that MPI_Comm_compare answers MPI_CONGRUENT for them also when one holds the survivors only.
// Ids, not handles: MPI reuses a freed handle's value.
std::mutex g_lineage_mu;
std::map<MPI_Comm, unsigned long> g_lineage;  // guarded by g_lineage_mu
unsigned long g_next_lineage = 1;

void note_duplicate(MPI_Comm parent, MPI_Comm child) {
  if (child == MPI_COMM_NULL) return;
  std::lock_guard<std::mutex> lock(g_lineage_mu);
  auto it = g_lineage.find(parent);
  unsigned long id = it != g_lineage.end() ? it->second : (g_lineage[parent] = g_next_lineage++);
  g_lineage[child] = id;
}

bool same_lineage(MPI_Comm a, MPI_Comm b) {
  std::lock_guard<std::mutex> lock(g_lineage_mu);
  auto ia = g_lineage.find(a), ib = g_lineage.find(b);
  return ia != g_lineage.end() && ib != g_lineage.end() && ia->second == ib->second;
}

void forget_lineage(MPI_Comm c) {
  std::lock_guard<std::mutex> lock(g_lineage_mu);
  g_lineage.erase(c);
}

int greq_free_nothing(void *) { return MPI_SUCCESS; }

// The members of my color in split order (key, then rank), as a group of sub's communicator.
// colors_keys holds (color, key) per alias rank (dead ranks' entries are ignored).
MPI_Group split_group(const Substitute &sub, const std::vector<int> &colors_keys, int color) {
  std::vector<std::pair<int, int>> order;  // (key, sub rank)
  for (int s = 0; s < sub.map.sub_size(); ++s) {
    int a = sub.map.to_alias(s);
    if (colors_keys[2 * a] == color) order.emplace_back(colors_keys[2 * a + 1], s);
  }
  std::stable_sort(order.begin(), order.end());
  std::vector<int> ranks;
  for (auto &o : order) ranks.push_back(o.second);
  MPI_Group all, mine;
  PMPI_Comm_group(sub.comm, &all);
  PMPI_Group_incl(all, static_cast<int>(ranks.size()), ranks.data(), &mine);
  PMPI_Group_free(&all);
  return mine;
}

// Both creations run in two steps. First a resilient collective (a barrier for dup, an allgather of the
// colors and keys for split) lets the survivors agree that every member of the substitute is alive; only
// then is the communicator created on it (CallDesc::creates_communicator explains why).
// `id` names the program's call (log lines, inject hook "<call>.posted" in the first step).
// The duplicate of a's substitute (the substitute it was made on in *made_on), created once every
// member is agreed alive.
int duplicate(Alias &a, CallId id, MPI_Comm *out, const Substitute **made_on) {
  *out = MPI_COMM_NULL;
  CallDesc agree = describe(id);
  agree.shape = Shape::communicator;  // also for a private duplicate made inside another call
  int rc = run(a, agree, [&](const Substitute &s, int, MPI_Request *req) { return PMPI_Ibarrier(s.comm, req); });
  if (rc != MPI_SUCCESS) return rc;
  CommSlots slots;
  CallDesc create = agree;
  create.posted_hook = nullptr;
  create.creates_communicator = true;
  rc = run(a, create, [&](const Substitute &s, int, MPI_Request *req) {
    *made_on = &s;
    return PMPI_Comm_idup(s.comm, slots.next(), req);
  });
  if (rc != MPI_SUCCESS) return rc;
  *out = slots.take_last();
  return MPI_SUCCESS;
}

int dup_alias(Alias &a, CallId id, MPI_Comm *newcomm) {
  const Substitute *made_on = nullptr;
  int rc = duplicate(a, id, newcomm, &made_on);
  if (rc != MPI_SUCCESS) return rc;
  adopt(a, made_on, *newcomm);
  note_duplicate(a.handle(), *newcomm);
  return MPI_SUCCESS;
}

}  // namespace

int private_dup(Alias &a, CallId id, MPI_Comm *out, RankMap *map) {
  const Substitute *made_on = nullptr;
  int rc = duplicate(a, id, out, &made_on);
  if (rc == MPI_SUCCESS) *map = made_on->map;
  return rc;
}

namespace {

// A resilient MPI_Allgather of `n` elements of `type` per alias rank into `all` (alias_size() rows; the
// rows of ranks dead before the call stay as they were). Returns the substitute the allgather completed
// on (its members' rows are the agreed ones) in *on.
int allgather_rows(Alias &a, const CallDesc &call, const void *mine, int n, MPI_Datatype type, void *all,
                   const Substitute **on) {
  return run(a, call, [&](const Substitute &s, int, MPI_Request *req) {
    *on = &s;
    if (s.map.complete()) return PMPI_Iallgather(mine, n, type, all, n, type, s.comm, req);
    PositionalLayout &l = s.layout(0);
    l.uniform(s.map, n);
    return PMPI_Iallgatherv(mine, n, type, all, l.counts.data(), l.displs.data(), type, s.comm, req);
  });
}

}  // namespace

int split_alias(Alias &a, CallId id, int color, int key, MPI_Comm *newcomm, const std::vector<int> *program_world) {
  *newcomm = MPI_COMM_NULL;
  int n = a.current().map.alias_size();
  std::vector<int> colors_keys(2 * static_cast<std::size_t>(n), MPI_UNDEFINED);
  int mine[2] = {color, key};
  const Substitute *gathered_on = nullptr;
  int rc = allgather_rows(a, describe(id), mine, 2, MPI_INT, colors_keys.data(), &gathered_on);
  if (rc != MPI_SUCCESS) return rc;
  CommSlots slots;
  const Substitute *made_on = nullptr;
  CallDesc create = describe(id);
  create.posted_hook = nullptr;
  create.creates_communicator = true;
  int tag = 0;
  rc = run(a, create, [&](const Substitute &s, int, MPI_Request *req) {
    made_on = &s;
    MPI_Comm *slot = slots.next();
    if (color == MPI_UNDEFINED) return MPI_SUCCESS;  // *req stays MPI_REQUEST_NULL: nothing to create here
    // NOTE: a new tag per attempt, so that a retry never matches an abandoned attempt's messages.
    return post_create_group(s.comm, split_group(s, colors_keys, color), tag++, slot, req);
  });
  if (rc != MPI_SUCCESS) return rc;
  *newcomm = slots.take_last();
  adopt(a, made_on, *newcomm, program_world);
  return MPI_SUCCESS;
}

namespace {

// MPI_COMM_TYPE_SHARED: the color is the lowest alias rank on my node (same MPI_Get_processor_name)
// among the ranks the names' allgather completed on, which every survivor computes alike.
int shared_color(Alias &a, int *color) {
  int n = a.current().map.alias_size();
  std::vector<char> names(static_cast<std::size_t>(n) * MPI_MAX_PROCESSOR_NAME, '\0');
  char mine[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  PMPI_Get_processor_name(mine, &len);
  const Substitute *on = nullptr;
  CallDesc call = describe(CallId::MPI_Comm_split_type);
  call.posted_hook = nullptr;  // reached in the split that follows
  int rc = allgather_rows(a, call, mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names.data(), &on);
  if (rc != MPI_SUCCESS) return rc;
  for (int r : on->map.members()) {
    if (std::strncmp(&names[static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME], mine, MPI_MAX_PROCESSOR_NAME) == 0) {
      *color = r;  // members() is ascending: the first match is the lowest
      return MPI_SUCCESS;
    }
  }
  *color = MPI_UNDEFINED;  // not reached: this rank is a member and matches itself
  return MPI_SUCCESS;
}

}  // namespace
}  // namespace cohort::wrap

using namespace cohort::wrap;  // NOLINT: the rest of this file only defines the extern "C" entry points

extern "C" int __wrap_MPI_Comm_rank(MPI_Comm comm, int *rank) {
  count_call(CallId::MPI_Comm_rank);
  if (cohort::wrap::replica::on()) return cohort::wrap::replica::comm_rank(comm, rank);
  if (any_alias_with_holes()) {  // (a communicator with holes: its handle lacks them)
    const Alias *a = find_alias(comm);
    if (a != nullptr && a->has_holes()) {
      *rank = a->rank();
      return MPI_SUCCESS;
    }
  }
  return PMPI_Comm_rank(comm, rank);  // an alias is a real communicator with the program's numbering
}

extern "C" int __wrap_MPI_Comm_size(MPI_Comm comm, int *size) {
  count_call(CallId::MPI_Comm_size);
  if (cohort::wrap::replica::on()) return cohort::wrap::replica::comm_size(comm, size);
  if (any_alias_with_holes()) {
    const Alias *a = find_alias(comm);
    if (a != nullptr && a->has_holes()) {
      *size = a->size();
      return MPI_SUCCESS;
    }
  }
  return PMPI_Comm_size(comm, size);
}

// A communicator that is no alias may still be revoked (an intercommunicator cohort made, through its
// union): then the creation call is refused, as on a revoked alias (ULFM 17.3.1).
static bool refused_revoked(MPI_Comm comm, const char *call, int *rc) {
  if (!ulfm::revoked(comm)) return false;
  *rc = ulfm::raise(comm, ulfm::Failure::revoked, call);
  return true;
}

extern "C" int __wrap_MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm) {
  count_call(CallId::MPI_Comm_dup);
  if (cohort::wrap::replica::on()) return cohort::wrap::replica::comm_dup(comm, newcomm);
  Alias *a = find_alias(comm);
  int rc = MPI_SUCCESS;
  if (a == nullptr && refused_revoked(comm, "MPI_Comm_dup", &rc)) return rc;
  if (a == nullptr) return PMPI_Comm_dup(comm, newcomm);
  return dup_alias(*a, CallId::MPI_Comm_dup, newcomm);
}

extern "C" int __wrap_MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm) {
  count_call(CallId::MPI_Comm_dup_with_info);
  if (cohort::wrap::replica::on()) return cohort::wrap::replica::comm_dup_with_info(comm, info, newcomm);
  Alias *a = find_alias(comm);
  int rc0 = MPI_SUCCESS;
  if (a == nullptr && refused_revoked(comm, "MPI_Comm_dup_with_info", &rc0)) return rc0;
  if (a == nullptr) return PMPI_Comm_dup_with_info(comm, info, newcomm);
  int rc = dup_alias(*a, CallId::MPI_Comm_dup_with_info, newcomm);
  if (rc != MPI_SUCCESS || info == MPI_INFO_NULL) return rc;
  return PMPI_Comm_set_info(*newcomm, info);
}

// NOTE: the duplicate is made at once (as MPI_Comm_dup) and the request returned already complete: a
// program may only use the new communicator after completing the request, which it then may at once.
extern "C" int __wrap_MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request) {
  count_call(CallId::MPI_Comm_idup);
  if (cohort::wrap::replica::on()) return cohort::wrap::replica::comm_idup(comm, newcomm, request);
  Alias *a = find_alias(comm);
  if (a == nullptr) return PMPI_Comm_idup(comm, newcomm, request);
  int rc = dup_alias(*a, CallId::MPI_Comm_idup, newcomm);
  if (rc != MPI_SUCCESS) return rc;
  rc = PMPI_Grequest_start(greq_query, greq_free_nothing, greq_cancel, nullptr, request);
  if (rc != MPI_SUCCESS) return rc;
  return PMPI_Grequest_complete(*request);
}

extern "C" int __wrap_MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm) {
  count_call(CallId::MPI_Comm_split);
  if (cohort::wrap::replica::on()) return cohort::wrap::replica::comm_split(comm, color, key, newcomm, "MPI_Comm_split");
  Alias *a = find_alias(comm);
  if (a == nullptr) return PMPI_Comm_split(comm, color, key, newcomm);
  return split_alias(*a, CallId::MPI_Comm_split, color, key, newcomm);
}

// A split whose color is the group (its first member's MPI_COMM_WORLD rank: MPI allows disjoint groups
// on different ranks) and whose key is the rank's position in it.
extern "C" int __wrap_MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm) {
  count_call(CallId::MPI_Comm_create);
  if (cohort::wrap::replica::on()) return cohort::wrap::replica::comm_create(comm, group, newcomm);
  Alias *a = find_alias(comm);
  if (a == nullptr || newcomm == nullptr || group == MPI_GROUP_NULL) return PMPI_Comm_create(comm, group, newcomm);
  int position = MPI_UNDEFINED, color = MPI_UNDEFINED;
  PMPI_Group_rank(group, &position);
  if (position != MPI_UNDEFINED) color = cohort::repair::world_ranks_of_group(group).front();
  return split_alias(*a, CallId::MPI_Comm_create, color, position, newcomm);
}

namespace {
// The split types whose groups are the ranks of one node. The others (Open MPI's OMPI_COMM_TYPE_SOCKET,
// _NUMA, _L3CACHE, ..., MPI 4.0's MPI_COMM_TYPE_HW_GUIDED/UNGUIDED) follow each process's binding and the
// hardware's locality (hwloc), which cohort's runtime does not link: they pass through to MPI.
bool node_split_type(int split_type) {
#ifdef OMPI_MAJOR_VERSION
  if (split_type == OMPI_COMM_TYPE_HOST) return true;  // Open MPI: the same host, as OMPI_COMM_TYPE_NODE
#endif
  return split_type == MPI_COMM_TYPE_SHARED;
}
}  // namespace

extern "C" int __wrap_MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm) {
  count_call(CallId::MPI_Comm_split_type);
  if (cohort::wrap::replica::on()) return cohort::wrap::replica::comm_split_type(comm, split_type, key, info, newcomm);
  Alias *a = find_alias(comm);
  if (a == nullptr || (!node_split_type(split_type) && split_type != MPI_UNDEFINED))
    return PMPI_Comm_split_type(comm, split_type, key, info, newcomm);
  int color = MPI_UNDEFINED;
  int rc = shared_color(*a, &color);  // every member takes part, also those with MPI_UNDEFINED
  if (rc != MPI_SUCCESS) return rc;
  if (split_type == MPI_UNDEFINED) color = MPI_UNDEFINED;
  rc = split_alias(*a, CallId::MPI_Comm_split_type, color, key, newcomm);
  if (rc != MPI_SUCCESS || info == MPI_INFO_NULL || *newcomm == MPI_COMM_NULL) return rc;
  return PMPI_Comm_set_info(*newcomm, info);
}

// An alias is a real communicator over its original members: its group is the original one, dead
// members included, and comparing two aliases answers for their original groups; but a duplicate made
// after a failure holds the survivors only, so it is recognised as a duplicate (congruent) by lineage.
extern "C" int __wrap_MPI_Comm_group(MPI_Comm comm, MPI_Group *group) {
  count_call(CallId::MPI_Comm_group);
  if (cohort::wrap::replica::on()) return cohort::wrap::replica::comm_group(comm, group);
  if (any_alias_with_holes()) {  // (a communicator with holes: its group in the program's numbering, holes included)
    const Alias *a = find_alias(comm);
    if (a != nullptr && a->has_holes()) {
      const RankMap &m = a->current().map;
      std::vector<int> world(static_cast<std::size_t>(m.alias_size()));
      for (int r = 0; r < m.alias_size(); ++r) world[static_cast<std::size_t>(r)] = m.to_world(r);
      MPI_Group all;
      PMPI_Comm_group(cohort::world(), &all);
      int rc = PMPI_Group_incl(all, m.alias_size(), world.data(), group);
      PMPI_Group_free(&all);
      return rc;
    }
  }
  return PMPI_Comm_group(comm, group);
}

extern "C" int __wrap_MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result) {
  count_call(CallId::MPI_Comm_compare);
  if (cohort::wrap::replica::on()) return cohort::wrap::replica::comm_compare(comm1, comm2, result);
  int rc = PMPI_Comm_compare(comm1, comm2, result);
  if (rc == MPI_SUCCESS && *result != MPI_IDENT && same_lineage(comm1, comm2)) *result = MPI_CONGRUENT;
  return rc;
}

namespace {
int free_alias(MPI_Comm *comm) {
  // NOTE: pending operations on a freed communicator complete normally (MPI 4.0, 7.4.3): its nonblocking
  // collectives finish before the alias goes.
  if (Alias *a = find_alias(*comm)) nbc::finish_all(*a);
  forget_lineage(*comm);
  forget_topology(*comm);
  free_intercomm(*comm);  // then freed below as any communicator cohort did not create
  switch (unregister_alias(*comm)) {
    case Unregistered::unknown:
    case Unregistered::free_handle: return PMPI_Comm_free(comm);
    case Unregistered::keep_handle: *comm = MPI_COMM_NULL; return MPI_SUCCESS;
  }
  return MPI_SUCCESS;
}
}  // namespace

extern "C" int __wrap_MPI_Comm_free(MPI_Comm *comm) {
  count_call(CallId::MPI_Comm_free);
  if (cohort::wrap::replica::on()) {
    if (comm != nullptr) forget_topology(*comm);
    return cohort::wrap::replica::comm_free(comm);
  }
  if (comm == nullptr) return PMPI_Comm_free(comm);
  return free_alias(comm);
}

// MPI_Comm_disconnect waits for the communicator's pending communication: a barrier among the survivors
// (which never waits on a dead rank), then as MPI_Comm_free.
extern "C" int __wrap_MPI_Comm_disconnect(MPI_Comm *comm) {
  count_call(CallId::MPI_Comm_disconnect);
  if (cohort::wrap::replica::on()) {
    if (comm != nullptr) forget_topology(*comm);
    return cohort::wrap::replica::comm_disconnect(comm);
  }
  Alias *a = comm == nullptr || *comm == MPI_COMM_WORLD ? nullptr : find_alias(*comm);
  int rc = MPI_SUCCESS;
  if (a == nullptr && (comm == nullptr || !intercomm_barrier(*comm, &rc))) return PMPI_Comm_disconnect(comm);
  if (a != nullptr) rc = barrier(*a);
  if (rc != MPI_SUCCESS) return rc;
  return free_alias(comm);
}
