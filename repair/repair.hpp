// Repair of communicators over the survivors: agree, shrink, revoke, ack/get failed.
// The interface mirrors ULFM (MPIX_Comm_agree/shrink/revoke/failure_ack) so that a later issue can
// expose MPIX_* on top of it. Backends: heartbeat (MPI-only, over the detector) or ulfm (configure time).
//
// All ranks are ranks of `comm` unless said otherwise. Collective calls (agree, shrink) must be called by
// every live member of comm, in the same order, like any MPI collective.
#pragma once
#include <mpi.h>

#include <vector>

namespace cohort::repair {

/// Called from the MPI_Init wrappers after detector::start (collective over MPI_COMM_WORLD, while every
/// rank is alive): sets up the backend's private communication. finalize() is local and never blocks.
void init();
void finalize();

/// Status codes (beside MPI_SUCCESS) returned by this interface.
enum Status : int {
  kRevoked = -101,  ///< comm was revoked (by any member) before or during the call
};

/// Uniform agreement among the survivors of comm: on return every survivor holds the bitwise AND of the
/// survivors' *flag and the same set of failed members (sorted comm ranks), the union of what anyone knew
/// when the decision was made. Never waits on a dead rank. Returns MPI_SUCCESS or kRevoked.
int agree(MPI_Comm comm, int *flag, std::vector<int> *failed);

/// A new communicator over the survivors of comm, in comm's rank order (Legio's P.7). Retries with the
/// larger failed set if another member dies during the call. Returns MPI_SUCCESS.
int shrink(MPI_Comm comm, MPI_Comm *newcomm);

/// Marks comm revoked on every member (asynchronously). Local call; never blocks.
int revoke(MPI_Comm comm);
bool is_revoked(MPI_Comm comm);

/// ULFM's failure_ack / failure_get_acked: acknowledge the failures known now; get them (comm ranks).
int ack_failed(MPI_Comm comm);
int get_failed(MPI_Comm comm, std::vector<int> *acked);

}  // namespace cohort::repair
