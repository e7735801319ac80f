// MPI_Comm_create_group and the C API's group calls (include/cohort/cohort.h), over repair/group.hpp.
//
// MPI_Comm_create_group involves only the group's members, so its repair must too: the members find
// out among themselves which of them are alive and create the communicator over those
// (repair/liveness.hpp). Like MPI_Comm_dup and MPI_Comm_split of a degraded communicator, the new
// communicator holds the live members only (size = live members, ranks renumbered in group order) and is
// an alias of its own from then on. The parent communicator takes no part (it may hold dead ranks).
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "cohort/cohort.h"
#include "repair/group.hpp"
#include "wrap/calls.h"
#include "wrap/core/driver.hpp"
#include "wrap/runtime/init.hpp"

using namespace cohort;  // NOLINT: this file only defines extern "C" entry points

extern "C" int __wrap_MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm) {
  wrap::count_call(wrap::CallId::MPI_Comm_create_group);
  if (newcomm == nullptr) return PMPI_Comm_create_group(comm, group, tag, newcomm);  // MPI reports it
  int rc = repair::group_create(group, tag, newcomm, nullptr, "MPI_Comm_create_group");
  if (rc != MPI_SUCCESS) {
    PMPI_Comm_call_errhandler(comm, rc);
    return rc;
  }
  MPI_Errhandler eh;
  PMPI_Comm_get_errhandler(comm, &eh);
  PMPI_Comm_set_errhandler(*newcomm, eh);
  PMPI_Errhandler_free(&eh);
  wrap::register_alias(*newcomm);
  return MPI_SUCCESS;
}

namespace {
// The int tag of MPI_Comm_create_from_group's string tag: FNV-1a (32 bits) into 2^30..2^31-1, so it never meets
// a program's MPI_Comm_create_group tag below 2^30 on the same group. Two string tags with the same hash used
// on the same group by concurrent threads would share one call sequence; MPI asks for distinct tags there.
int string_tag(const char *tag) {
  std::uint32_t h = 2166136261u;
  for (const char *c = tag; *c != '\0'; ++c) h = (h ^ static_cast<unsigned char>(*c)) * 16777619u;
  return static_cast<int>((h & 0x3fffffffu) | 0x40000000u);
}
}  // namespace

// MPI_Comm_create_from_group (MPI 4.0 section 11.4.2; MPICH 4, Open MPI 5): the same liveness discovery as
// MPI_Comm_create_group over the group's members, also for the group of a session's process set (cohort's
// world communicator then comes from its own session: wrap/runtime/session.cpp). Its errors go to MPI_COMM_SELF's
// handler under the World Model (errors not tied to a handle); under the Sessions model alone there is no
// such handle, and they are returned. The new communicator gets `errhandler` and `info`.
extern "C" int __wrap_MPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info,
                                                 MPI_Errhandler errhandler, MPI_Comm *newcomm) {
  wrap::count_call(wrap::CallId::MPI_Comm_create_from_group);
  if (newcomm == nullptr || stringtag == nullptr || !wrap::running()) {
    // MPI reports the bad argument; or cohort is not running (a session opened after it stopped).
#if !defined(COHORT_HAVE_COMM_CREATE_FROM_GROUP)
    if (&PMPI_Comm_create_from_group == nullptr) return MPI_ERR_OTHER;  // this MPI has no such call
#endif
    return PMPI_Comm_create_from_group(group, stringtag, info, errhandler, newcomm);
  }
  int rc = repair::group_create(group, string_tag(stringtag), newcomm, nullptr, "MPI_Comm_create_from_group");
  if (rc != MPI_SUCCESS) {
    if (wrap::world_model()) PMPI_Comm_call_errhandler(MPI_COMM_SELF, rc);
    return rc;
  }
  if (info != MPI_INFO_NULL) PMPI_Comm_set_info(*newcomm, info);
  PMPI_Comm_set_errhandler(*newcomm, errhandler);
  wrap::register_alias(*newcomm);
  return MPI_SUCCESS;
}

extern "C" int cohort_group_agree(MPI_Group group, int tag, int *flag, int *failed, int max_failed, int *nfailed) {
  if (flag == nullptr || nfailed == nullptr || (failed == nullptr && max_failed > 0)) return MPI_ERR_ARG;
  std::vector<int> out;
  int rc = repair::group_agree(group, tag, flag, &out);
  if (rc != MPI_SUCCESS) return rc;
  *nfailed = static_cast<int>(out.size());
  for (int i = 0; i < max_failed && i < *nfailed; ++i) failed[i] = out[static_cast<std::size_t>(i)];
  return MPI_SUCCESS;
}

extern "C" int cohort_group_shrink(MPI_Group group, int tag, MPI_Comm *newcomm) {
  if (newcomm == nullptr) return MPI_ERR_ARG;
  return repair::group_create(group, tag, newcomm, nullptr);
}
