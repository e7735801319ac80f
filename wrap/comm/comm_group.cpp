// MPI_Comm_create_group and the C API's group calls (include/cohort/cohort.h), over repair/group.hpp.
//
// MPI_Comm_create_group involves only the group's members, so its repair must too: the members find
// out among themselves which of them are alive and create the communicator over those
// (repair/liveness.hpp). Like MPI_Comm_dup and MPI_Comm_split of a degraded communicator, the new
// communicator holds the live members only (size = live members, ranks renumbered in group order) and is
// an alias of its own from then on. The parent communicator takes no part (it may hold dead ranks).
#include <mpi.h>

#include <vector>

#include "cohort/cohort.h"
#include "repair/group.hpp"
#include "wrap/calls.h"
#include "wrap/core/driver.hpp"
#include "wrap/replica/replica.hpp"

using namespace cohort;  // NOLINT: this file only defines extern "C" entry points

extern "C" int __wrap_MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm) {
  wrap::count_call(wrap::CallId::MPI_Comm_create_group);
  if (wrap::replica::on()) return wrap::replica::comm_create_group(comm, group, tag, newcomm);
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
