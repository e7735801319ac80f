// Communicator calls: rank and size of the alias (never change), and dup/split/free through the driver.
//
// MPI_Comm_dup and MPI_Comm_split of a degraded communicator build over its survivors (as Legio does):
// the new communicator's size is the number of survivors and its ranks are renumbered 0..size-1 in the
// old rank order (split: by key, then old rank). From then on it is an alias of its own: its ranks and
// size never change again.
#include <mpi.h>

#include <algorithm>
#include <thread>
#include <utility>
#include <vector>

#include "wrap/calls.h"
#include "repair/repair.hpp"
#include "wrap/driver.hpp"
#include "wrap/errors.hpp"
#include "wrap/nbc.hpp"
#include "wrap/ulfm_api.hpp"

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
// error handler, and is registered with repair (same id on every member, as repair requires).
void adopt(const Alias &parent, const Substitute *made_on, MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return;
  repair::register_comm(comm, made_on->comm);
  if (made_on->comm != parent.handle()) copy_errhandler(parent.handle(), comm);
  register_alias(comm);
  ulfm::inherit(parent.handle(), comm);
}

// MPI_Comm_create_group has no nonblocking variant: a helper thread runs the blocking call and completes
// a generalized request, which the driver polls like any other. If a member dies meanwhile, the request
// is abandoned and the thread stays blocked in MPI forever (leaked with its job).
struct CreateJob {
  MPI_Comm parent;
  MPI_Group group;
  int tag;
  MPI_Comm *out;
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
  delete static_cast<CreateJob *>(job);
  return MPI_SUCCESS;
}
int greq_cancel(void *, int) { return MPI_SUCCESS; }

// Posts MPI_Comm_create_group(parent, group, tag) (takes over group); *out is written on completion.
int post_create_group(MPI_Comm parent, MPI_Group group, int tag, MPI_Comm *out, MPI_Request *req) {
  auto *job = new CreateJob{parent, group, tag, out};
  int rc = PMPI_Grequest_start(greq_query, greq_free, greq_cancel, job, &job->greq);
  if (rc != MPI_SUCCESS) {
    PMPI_Group_free(&job->group);
    delete job;
    return rc;
  }
  *req = job->greq;
  std::thread([job] {
    PMPI_Comm_create_group(job->parent, job->group, job->tag, job->out);
    PMPI_Group_free(&job->group);
    PMPI_Grequest_complete(job->greq);  // MPI frees the job (greq_free) when the request is completed
  }).detach();
  return MPI_SUCCESS;
}

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

}  // namespace
}  // namespace cohort::wrap

using namespace cohort::wrap;  // NOLINT: the rest of this file only defines the extern "C" entry points

extern "C" int __wrap_MPI_Comm_rank(MPI_Comm comm, int *rank) {
  count_call(CallId::MPI_Comm_rank);
  return PMPI_Comm_rank(comm, rank);  // an alias is a real communicator with the program's numbering
}

extern "C" int __wrap_MPI_Comm_size(MPI_Comm comm, int *size) {
  count_call(CallId::MPI_Comm_size);
  return PMPI_Comm_size(comm, size);
}

// Both creations run in two steps. First a resilient collective (a barrier for dup, an allgather of the
// colors and keys for split) lets the survivors agree that every member of the substitute is alive; only
// then is the communicator created on it (CallDesc::creates_communicator explains why).
extern "C" int __wrap_MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm) {
  count_call(CallId::MPI_Comm_dup);
  Alias *a = find_alias(comm);
  if (a == nullptr) return PMPI_Comm_dup(comm, newcomm);
  *newcomm = MPI_COMM_NULL;
  int rc = run(*a, describe(CallId::MPI_Comm_dup),
               [&](const Substitute &s, int, MPI_Request *req) { return PMPI_Ibarrier(s.comm, req); });
  if (rc != MPI_SUCCESS) return rc;
  CommSlots slots;
  const Substitute *made_on = nullptr;
  CallDesc create = describe(CallId::MPI_Comm_dup);
  create.posted_hook = nullptr;
  create.creates_communicator = true;
  rc = run(*a, create, [&](const Substitute &s, int, MPI_Request *req) {
    made_on = &s;
    return PMPI_Comm_idup(s.comm, slots.next(), req);
  });
  if (rc != MPI_SUCCESS) return rc;
  *newcomm = slots.take_last();
  adopt(*a, made_on, *newcomm);
  return MPI_SUCCESS;
}

extern "C" int __wrap_MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm) {
  count_call(CallId::MPI_Comm_split);
  Alias *a = find_alias(comm);
  if (a == nullptr) return PMPI_Comm_split(comm, color, key, newcomm);
  *newcomm = MPI_COMM_NULL;
  int n = a->current().map.alias_size();
  std::vector<int> colors_keys(2 * static_cast<std::size_t>(n), MPI_UNDEFINED);
  int mine[2] = {color, key};
  int rc = run(*a, describe(CallId::MPI_Comm_split),
               [&](const Substitute &s, int, MPI_Request *req) {
                 if (s.map.complete())
                   return PMPI_Iallgather(mine, 2, MPI_INT, colors_keys.data(), 2, MPI_INT, s.comm, req);
                 PositionalLayout &l = s.layout(0);
                 l.uniform(s.map, 2);
                 return PMPI_Iallgatherv(mine, 2, MPI_INT, colors_keys.data(), l.counts.data(), l.displs.data(),
                                         MPI_INT, s.comm, req);
               });
  if (rc != MPI_SUCCESS) return rc;
  CommSlots slots;
  const Substitute *made_on = nullptr;
  CallDesc create = describe(CallId::MPI_Comm_split);
  create.posted_hook = nullptr;
  create.creates_communicator = true;
  int tag = 0;
  rc = run(*a, create, [&](const Substitute &s, int, MPI_Request *req) {
    made_on = &s;
    MPI_Comm *slot = slots.next();
    if (color == MPI_UNDEFINED) return MPI_SUCCESS;  // *req stays MPI_REQUEST_NULL: nothing to create here
    // NOTE: a new tag per attempt, so that a retry never matches an abandoned attempt's messages.
    return post_create_group(s.comm, split_group(s, colors_keys, color), tag++, slot, req);
  });
  if (rc != MPI_SUCCESS) return rc;
  *newcomm = slots.take_last();
  adopt(*a, made_on, *newcomm);
  return MPI_SUCCESS;
}

extern "C" int __wrap_MPI_Comm_free(MPI_Comm *comm) {
  count_call(CallId::MPI_Comm_free);
  if (comm == nullptr) return PMPI_Comm_free(comm);
  // NOTE: pending operations on a freed communicator complete normally (MPI 4.0, 7.4.3): its nonblocking
  // collectives finish before the alias goes.
  if (Alias *a = find_alias(*comm)) nbc::finish_all(*a);
  switch (unregister_alias(*comm)) {
    case Unregistered::unknown:
    case Unregistered::free_handle: return PMPI_Comm_free(comm);
    case Unregistered::keep_handle: *comm = MPI_COMM_NULL; return MPI_SUCCESS;
  }
  return MPI_SUCCESS;
}
