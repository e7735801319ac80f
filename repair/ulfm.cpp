// The ulfm backend of repair.hpp (-DCOHORT_DETECTOR=ulfm): the MPI's own User Level Failure Mitigation
// (Bland et al. 2013; MPIX_Comm_agree/shrink/revoke/failure_ack). For Open MPI >= 5 configured
// --with-ft=ulfm and MPICH built with the ch3 device; MPICH's ch4 only declares these calls (they abort),
// so there this file is a compile check (cmake/CohortULFM.cmake, COHORT_ULFM_ALLOW_STUBS).
//
// agree: MPIX_Comm_agree gives the AND of the flags and raises MPIX_ERR_PROC_FAILED at every survivor
// alike while a failure is not acknowledged everywhere; the loop acknowledges and retries. Its failed set
// is then made uniform with more agreements over bit masks (the AND of the complements of the members'
// acknowledged sets is the complement of their union), 32 members per agreement.
#include <mpi.h>
#if defined(OPEN_MPI)
#include <mpi-ext.h>
#endif

#include <algorithm>
#include <cstdint>

#include "detector/log.hpp"
#include "detector/runtime.hpp"
#include "repair/repair.hpp"
#include "detector/world.hpp"

// NOTE: library code calls the profiling names where the MPI declares them, so that a later wrapper of
// MPIX_* cannot redirect cohort's own calls.
#if defined(MPICH)
#define COHORT_MPIX(name) PMPIX_##name
#else
#define COHORT_MPIX(name) MPIX_##name
#endif

namespace cohort::repair {
namespace {

// MPIX calls report failures through the error handler: cohort wants codes, whatever the program set.
class ErrorsReturn {
 public:
  explicit ErrorsReturn(MPI_Comm comm) : comm_(comm) {
    PMPI_Comm_get_errhandler(comm_, &saved_);
    PMPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  }
  ~ErrorsReturn() {
    PMPI_Comm_set_errhandler(comm_, saved_);
    PMPI_Errhandler_free(&saved_);
  }
  ErrorsReturn(const ErrorsReturn &) = delete;
  ErrorsReturn &operator=(const ErrorsReturn &) = delete;

 private:
  MPI_Comm comm_;
  MPI_Errhandler saved_ = MPI_ERRHANDLER_NULL;
};

int error_class(int rc) {
  int cls = rc;
  PMPI_Error_class(rc, &cls);
  return cls;
}

// The acknowledged failed members (sorted comm ranks).
std::vector<int> acked_members(MPI_Comm comm) {
  MPI_Group failed, group;
  std::vector<int> out;
  if (COHORT_MPIX(Comm_failure_get_acked)(comm, &failed) != MPI_SUCCESS) return out;
  PMPI_Comm_group(comm, &group);
  int n = 0;
  PMPI_Group_size(failed, &n);
  std::vector<int> in(static_cast<std::size_t>(n));
  out.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) in[static_cast<std::size_t>(i)] = i;
  PMPI_Group_translate_ranks(failed, n, in.data(), group, out.data());
  PMPI_Group_free(&failed);
  PMPI_Group_free(&group);
  out.erase(std::remove(out.begin(), out.end(), MPI_UNDEFINED), out.end());
  std::sort(out.begin(), out.end());
  return out;
}

// One round: the flag, then the union of the acknowledged sets. MPI_SUCCESS, or the first error.
int agree_round(MPI_Comm comm, int size, int input, int *flag, std::vector<int> *failed) {
  int rc = COHORT_MPIX(Comm_agree)(comm, &input);
  if (rc != MPI_SUCCESS) return rc;
  *flag = input;
  std::vector<int> mine = acked_members(comm);
  failed->clear();
  for (int base = 0; base < size; base += 32) {
    std::uint32_t bits = 0;
    for (int m : mine) {
      if (m >= base && m < base + 32) bits |= std::uint32_t{1} << (m - base);
    }
    int word = static_cast<int>(~bits);
    rc = COHORT_MPIX(Comm_agree)(comm, &word);
    if (rc != MPI_SUCCESS) return rc;
    std::uint32_t any = ~static_cast<std::uint32_t>(word);
    for (int b = 0; b < 32 && base + b < size; ++b) {
      if (any & (std::uint32_t{1} << b)) failed->push_back(base + b);
    }
  }
  return MPI_SUCCESS;
}

// The failures ULFM reported become cohort's too (cohort_failed_ranks and the wrappers read them from
// the detector runtime).
void publish(MPI_Comm comm, const std::vector<int> &failed) {
  if (failed.empty()) return;
  MPI_Group group, world;
  PMPI_Comm_group(comm, &group);
  PMPI_Comm_group(cohort::world(), &world);
  std::vector<int> ranks(failed.size());
  PMPI_Group_translate_ranks(group, static_cast<int>(failed.size()), failed.data(), world, ranks.data());
  PMPI_Group_free(&group);
  PMPI_Group_free(&world);
  for (int r : ranks) {
    if (r != MPI_UNDEFINED && !detector::is_failed(r)) detector::declare_failed(r);
  }
}

}  // namespace

void init() {}
void finalize() {}
void register_comm(MPI_Comm, MPI_Comm) {}

int agree(MPI_Comm comm, int *flag, std::vector<int> *failed) {
  ErrorsReturn scope(comm);
  detector::ProgressHold hold;  // (the detector thread stays out of MPI's progress: see loop_ulfm)
  int size = 0, input = *flag;
  PMPI_Comm_size(comm, &size);
  for (;;) {
    COHORT_MPIX(Comm_failure_ack)(comm);
    int rc = agree_round(comm, size, input, flag, failed);
    if (rc == MPI_SUCCESS) {
      publish(comm, *failed);
      return MPI_SUCCESS;
    }
    if (error_class(rc) != MPIX_ERR_PROC_FAILED) {
      COHORT_LOG_ERROR("repair::agree: MPIX_Comm_agree failed (code %d)", rc);
      return rc;
    }
  }
}

int shrink(MPI_Comm comm, MPI_Comm *newcomm) {
  ErrorsReturn scope(comm);
  detector::ProgressHold hold;  // (the detector thread stays out of MPI's progress: see loop_ulfm)
  // NOTE: ULFM's shrink keeps the survivors in comm's rank order, as repair.hpp promises.
  int rc = COHORT_MPIX(Comm_shrink)(comm, newcomm);
  if (rc != MPI_SUCCESS) COHORT_LOG_ERROR("repair::shrink: MPIX_Comm_shrink failed (code %d)", rc);
  return rc;
}

int revoke(MPI_Comm comm) {
  ErrorsReturn scope(comm);
  detector::ProgressHold hold;  // (the detector thread stays out of MPI's progress: see loop_ulfm)
  int rc = COHORT_MPIX(Comm_revoke)(comm);
  return rc == MPI_SUCCESS || error_class(rc) == MPIX_ERR_REVOKED ? MPI_SUCCESS : rc;
}

bool is_revoked(MPI_Comm comm) {
  // NOTE: a nonblocking probe is the portable local test: ULFM fails it with MPIX_ERR_REVOKED once comm
  // is revoked, and it never consumes a message.
  ErrorsReturn scope(comm);
  int found = 0;
  int rc = PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &found, MPI_STATUS_IGNORE);
  return rc != MPI_SUCCESS && error_class(rc) == MPIX_ERR_REVOKED;
}

// NOTE: the notice is ULFM's revocation of comm itself, so only for a communicator of cohort's own (under
// this backend every substitute is one: wrap/core/driver.cpp); comm is being shrunk anyway.
void ask_to_join(MPI_Comm comm, bool private_comm) {
  if (private_comm) revoke(comm);
}
bool revoke_seen() { return false; }

bool asked_to_join(MPI_Comm comm) { return is_revoked(comm); }

ErrorKind error_kind(int rc) {
  if (rc == MPI_SUCCESS) return ErrorKind::none;
  int cls = error_class(rc);
  if (cls == MPIX_ERR_REVOKED) return ErrorKind::revoked;
  if (cls == MPIX_ERR_PROC_FAILED || cls == MPIX_ERR_PROC_FAILED_PENDING) {
    detector::refresh();
    return ErrorKind::proc_failed;
  }
  return ErrorKind::none;
}

bool failure_pending(int rc) { return rc != MPI_SUCCESS && error_class(rc) == MPIX_ERR_PROC_FAILED_PENDING; }

int ack_failed(MPI_Comm comm) {
  ErrorsReturn scope(comm);
  return COHORT_MPIX(Comm_failure_ack)(comm);
}

int get_failed(MPI_Comm comm, std::vector<int> *acked) {
  ErrorsReturn scope(comm);
  *acked = acked_members(comm);
  publish(comm, *acked);
  return MPI_SUCCESS;
}

}  // namespace cohort::repair
