// Placeholder until repair/ lands (issue 4): fault-free only.
#include "repair/repair.hpp"

namespace cohort::repair {
void init() {}
void finalize() {}
int agree(MPI_Comm comm, int *flag, std::vector<int> *failed) {
  int in = *flag;
  failed->clear();
  return PMPI_Allreduce(&in, flag, 1, MPI_INT, MPI_BAND, comm);
}
int shrink(MPI_Comm comm, MPI_Comm *newcomm) { return PMPI_Comm_dup(comm, newcomm); }
int revoke(MPI_Comm) { return MPI_SUCCESS; }
bool is_revoked(MPI_Comm) { return false; }
int ack_failed(MPI_Comm) { return MPI_SUCCESS; }
int get_failed(MPI_Comm, std::vector<int> *acked) {
  acked->clear();
  return MPI_SUCCESS;
}
}  // namespace cohort::repair
