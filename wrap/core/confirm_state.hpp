// The state of deferred confirmation that the engine shares (see wrap/core/deferred.hpp for the
// protocol): the settings, one communicator's window of unconfirmed calls (owned by its Alias) with its
// count reports, and the counts agreement that the operation adapter runs in their place.
#pragma once
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "wrap/core/confirm_window.hpp"
#include "wrap/core/policy.hpp"
#include "wrap/core/progress.hpp"

namespace cohort::wrap {
struct Substitute;

namespace deferred {

/// other: any other blocking collective of wrap/coll, never deferred: its own confirmation confirms the
/// calls pending before it (deferred::run).
enum class Kind { barrier, bcast, reduce, allreduce, other };
/// What deferred confirmation (wrap/core/deferred.hpp) needs of a blocking Barrier, Bcast, Reduce or Allreduce
/// (Kind::other: nothing).
struct Buffers {
  Kind kind = Kind::barrier;
  const void *input = nullptr;  ///< Reduce/Allreduce: sendbuf (may be MPI_IN_PLACE); Bcast: the buffer
  void *result = nullptr;       ///< Bcast: the buffer; Reduce: recvbuf (root); Allreduce: recvbuf
  int count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
};

/// COHORT_CONFIRM_WINDOW: calls that may be unconfirmed per communicator, 1 .. kMaxWindow (63); 1 confirms
/// every collective before it returns (cohort's behaviour before windows). Read once.
int window();
/// COHORT_CONFIRM_MAX_BYTES: the largest payload (bytes per rank) confirmed late; 0 .. 1 MiB.
long max_bytes();
/// The tag of count reports on a substitute (above wrap/core/small_coll.hpp's tags, below MPI's minimum
/// MPI_TAG_UB of 32767).
constexpr int kReportTag = 32001;
/// One logged call (a replay's material).
struct Record {
  Kind kind = Kind::barrier;
  const char *name = "";                ///< the call ("MPI_Bcast"), for its dead-root policy
  Policy dead_root = Policy::abort;     ///< its default dead-root policy
  int root = -1;        ///< alias rank
  int count = 0, type_index = -1, op_index = -1;
  int flag = 0;         ///< 2: data is the call's result; 1: data is this rank's input; 0: nothing
  std::vector<char> data;
};

/// One count report in flight: the count, and its sends to every other member.
struct SentReport {
  std::uint64_t count = 0;
  std::vector<MPI_Request> reqs;
};

/// The window of one communicator (owned by its Alias) and the count reports that confirm it.
struct State {
  State();
  ~State();  ///< cancels the pending receive of reports (the alias is being freed)
  std::recursive_mutex mu;  // (a replay inside run() notes its agreement's span: note_span)
  ConfirmWindowT<Record> win;
  const Substitute *report_sub = nullptr;  ///< the substitute the reports below travel on
  MPI_Request report_recv = MPI_REQUEST_NULL;  ///< MPI_ANY_SOURCE, tag kReportTag, into report_in
  std::uint64_t report_in = 0;
  std::vector<std::uint64_t> heard;  ///< per rank of report_sub: the highest count it reported
  std::deque<std::unique_ptr<SentReport>> sent;  ///< reports whose sends may still be active
  std::atomic<bool> counted{false};  ///< counted in g_unsettled (changed under mu; read by settle_all)
  std::uint64_t idle_seen = ~0ULL;  ///< win.completed() at the detector thread's last look (report_idle)
  /// Logged calls that an agreement of a call that is not deferred (note_span) left to replay as a holder,
  /// once the substitute is shrunk (deferred::run)
  std::vector<LogEntryT<Record>> held;
  Watch watch;                       ///< what a call's wait watches: a member of watch_sub failed
  const Substitute *watch_sub = nullptr;  ///< (made again only when the substitute changes: not per call)
};

/// Drops what travels on an earlier substitute: its pending receive is cancelled, its sends are left to MPI
/// (a send to a dead rank may never complete: the report is lost, never freed).
void leave_substitute(State &st);
/// Agrees on the first `words` words of *code over comm's survivors (repair::agree, one word after the
/// other): on return each of those words is the survivors' AND, and *failed the union of the agreed failed
/// sets (ranks of comm, ascending). Returns MPI_SUCCESS or the first agreement's error. Collective over comm.
int agree_code(MPI_Comm comm, AgreementCode *code, int words, std::vector<int> *failed);
/// A counts-mode agreement of the driver (wrap/core/collective_op.hpp use_counts) read `span` on the
/// alias whose window is st: the calls in it that this rank has not completed become replays; those it
/// completed in [span.low, completed) go to st.held, to be replayed after the shrink.
void note_span(State &st, const CompletedSpan &span);

}  // namespace deferred
}  // namespace cohort::wrap
