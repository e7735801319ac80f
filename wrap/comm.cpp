// Communicator calls: rank and size of the alias (never change), and dup/split/free through the driver.
//
// MPI_Comm_dup and MPI_Comm_split of a degraded communicator build over its survivors (as Legio does):
// the new communicator's size is the number of survivors and its ranks are renumbered 0..size-1 in the
// old rank order (split: by key, then old rank). From then on it is an alias of its own: its ranks and
// size never change again.
#include <mpi.h>

#include <thread>
#include <vector>

#include "wrap/calls.h"
#include "wrap/driver.hpp"

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

// The new communicator becomes an alias of its own, with the program's error handler.
void adopt(const Alias &parent, MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return;
  if (parent.current().comm != parent.handle()) {
    MPI_Errhandler eh;
    PMPI_Comm_get_errhandler(parent.handle(), &eh);
    PMPI_Comm_set_errhandler(comm, eh);
    PMPI_Errhandler_free(&eh);
  }
  register_alias(comm);
}

// MPI_Comm_split has no nonblocking variant: a helper thread runs the blocking call and completes a
// generalized request, which the driver polls like any other. If a member dies meanwhile, the request
// is abandoned and the thread stays blocked in MPI forever (leaked with its job).
struct SplitJob {
  MPI_Comm parent;
  int color, key;
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
int greq_free(void *job) {
  delete static_cast<SplitJob *>(job);
  return MPI_SUCCESS;
}
int greq_cancel(void *, int) { return MPI_SUCCESS; }

int post_split(MPI_Comm parent, int color, int key, MPI_Comm *out, MPI_Request *req) {
  auto *job = new SplitJob{parent, color, key, out};
  int rc = PMPI_Grequest_start(greq_query, greq_free, greq_cancel, job, &job->greq);
  if (rc != MPI_SUCCESS) {
    delete job;
    return rc;
  }
  *req = job->greq;
  std::thread([job] {
    PMPI_Comm_split(job->parent, job->color, job->key, job->out);
    PMPI_Grequest_complete(job->greq);  // MPI frees the job (greq_free) when the request is completed
  }).detach();
  return MPI_SUCCESS;
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

extern "C" int __wrap_MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm) {
  count_call(CallId::MPI_Comm_dup);
  Alias *a = find_alias(comm);
  if (a == nullptr) return PMPI_Comm_dup(comm, newcomm);
  CommSlots slots;
  int rc = run(*a, CallDesc{"MPI_Comm_dup", "comm_dup.posted", Shape::communicator},
               [&](const Substitute &s, int, MPI_Request *req) { return PMPI_Comm_idup(s.comm, slots.next(), req); });
  *newcomm = rc == MPI_SUCCESS ? slots.take_last() : MPI_COMM_NULL;
  adopt(*a, *newcomm);
  return rc;
}

extern "C" int __wrap_MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm) {
  count_call(CallId::MPI_Comm_split);
  Alias *a = find_alias(comm);
  if (a == nullptr) return PMPI_Comm_split(comm, color, key, newcomm);
  CommSlots slots;
  int rc = run(*a, CallDesc{"MPI_Comm_split", "comm_split.posted", Shape::communicator},
               [&](const Substitute &s, int, MPI_Request *req) {
                 return post_split(s.comm, color, key, slots.next(), req);
               });
  *newcomm = rc == MPI_SUCCESS ? slots.take_last() : MPI_COMM_NULL;
  adopt(*a, *newcomm);
  return rc;
}

extern "C" int __wrap_MPI_Comm_free(MPI_Comm *comm) {
  count_call(CallId::MPI_Comm_free);
  if (comm == nullptr) return PMPI_Comm_free(comm);
  switch (unregister_alias(*comm)) {
    case Unregistered::unknown:
    case Unregistered::free_handle: return PMPI_Comm_free(comm);
    case Unregistered::keep_handle: *comm = MPI_COMM_NULL; return MPI_SUCCESS;
  }
  return MPI_SUCCESS;
}
