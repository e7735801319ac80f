// Small collectives and the confirmations of all collectives on cohort's own point-to-point schedules
// (topology/schedule.hpp) instead of the MPI library's nonblocking collectives.
//
// Why: a wrapped collective cannot block (it must never wait on a dead rank), and the MPI libraries'
// nonblocking collectives are slow for short messages. bench/schedule_floors (8 B, polled to completion,
// against the blocking call): Open MPI 4.1's MPI_Ireduce is 10.5x its MPI_Reduce at 4 ranks, its MPI_Ibcast
// 4.3x at 2; the same schedules over MPI_Isend/MPI_Irecv cost 0.54-1.37x the blocking calls
// (bench/results/schedule-floors-summary.md).
//
// Where: only on a substitute communicator that cohort created (after a shrink, and MPI_COMM_WORLD's
// from the start), never on the program's own communicator, whose point-to-point traffic it would share.
// Every member decides alike (substitute, payload size, op and settings are the same on all), so all
// members of a call run the same schedule or all run MPI's collective.
//
// Thread-safety: an Op is driven by one thread at a time; acquire/release/lose are thread-safe.
#pragma once
#include <mpi.h>

#include <memory>
#include <vector>

#include "topology/schedule.hpp"

namespace cohort::wrap {

class Alias;
struct Substitute;

namespace small {

/// A Barrier, Bcast, Reduce or Allreduce (or their nonblocking twins) as the schedule needs it.
struct Call {
  topology::CollKind kind;
  const void *in = nullptr;  ///< bcast: the buffer (read at the root); reduce, allreduce: the input (never MPI_IN_PLACE)
  void *out = nullptr;       ///< bcast: the buffer; reduce: recvbuf (read only at the root); allreduce: recvbuf
  int count = 0;
  MPI_Datatype type = MPI_BYTE;
  MPI_Op op = MPI_OP_NULL;
};

/// COHORT_P2P_COLL_MAX_BYTES: the largest payload (bytes per rank) that takes the schedule; 0: never.
long max_bytes();
/// COHORT_P2P_CONFIRM: confirm collectives with a dissemination barrier of messages (1, the default) or
/// with MPI_Ibarrier (0).
bool confirm_by_messages();
/// Reads and checks both settings (at MPI_Init: an invalid value ends the job with a one-line message).
void check_settings();

/// What eligible() read of a call's datatype, handed to Op::start so that it asks MPI once per call.
struct Layout {
  MPI_Aint extent = 0, true_lb = 0, true_extent = 0;
  bool known = false;
};

/// call may run on its schedule on sub (the alias's current substitute): a cohort-made substitute,
/// no ULFM mode, a payload within max_bytes() without holes (its span is
/// count x type size bytes), a commutative op.
/// *layout (if given): the datatype's extents, for Op::start.
bool eligible(const Alias &alias, const Substitute &sub, const Call &call, Layout *layout = nullptr);
/// A collective's confirmation on sub may be a barrier of messages (a cohort-made substitute, no ULFM
/// mode, COHORT_P2P_CONFIRM=1).
bool confirm_eligible(const Alias &alias, const Substitute &sub);

/// One run of a schedule. Its buffers stay with it: an abandoned Op (a member died) must be lost, never
/// freed, since MPI may still write into them.
class Op {
 public:
  /// Posts the first round on comm (size n, this rank me; root for bcast and reduce) with `tag`. Returns
  /// MPI_SUCCESS or the code of a failed post.
  /// layout: call.type's extents as eligible() read them, or null (read here).
  int start(const Call &call, MPI_Comm comm, int n, int me, int root, int tag, const Layout *layout = nullptr);
  /// Advances the rounds; true once the last one completed (its result copied to call.out; *rc is
  /// MPI_SUCCESS or the first error a message completed with, e.g. MPI_ERR_TRUNCATE) or an MPI error of a
  /// post or a test ended it (*rc is that error).
  bool test(int *rc);
  /// Requests of this Op may still be active (a completed Op has none).
  bool active() const { return pending_ > 0 || failed_; }
  /// The kind of the schedule it holds.
  topology::CollKind kind() const { return kind_; }

 private:
  int post_round();
  void finish();

  Call call_{};
  MPI_Comm comm_ = MPI_COMM_NULL;
  int tag_ = 0, me_ = 0, root_ = 0;
  std::vector<topology::CollStep> steps_;  // the schedule of (kind_, n_, me_of_steps_, root_of_steps_)
  topology::CollKind kind_ = topology::CollKind::barrier;
  int n_ = -1, me_of_steps_ = -1, root_of_steps_ = -1;
  std::size_t span_ = 0;  // bytes of the data (true extent of count elements); the copy starts at true_lb_
  MPI_Aint true_lb_ = 0;
  std::size_t pos_ = 0;
  std::vector<char> acc_, tmp_;
  char *acc_base_ = nullptr, *tmp_base_ = nullptr;
  bool combine_ = false, failed_ = false;
  int pending_ = 0, error_ = MPI_SUCCESS;
  MPI_Request reqs_[72];
};

/// An Op for the calling thread, preferably the one last used for `kind` (reused: no allocation and no
/// new schedule once warm).
std::unique_ptr<Op> acquire(topology::CollKind kind);
/// Gives back an Op that is not active().
void release(std::unique_ptr<Op> op);
/// Keeps an abandoned Op for the life of the process.
void lose(std::unique_ptr<Op> op);

/// The tag of call number call_no's messages (confirm: its confirmation's).
int tag(unsigned long long call_no, bool confirm);

}  // namespace small
}  // namespace cohort::wrap
