// The fence exchange: the operations of a fence epoch carried as two-sided messages.
//
// Fence epochs travel as two-sided messages (wrap/rma/rma_log.hpp): between two fences, operations on
// predefined datatypes go into a log per target; at the fence every member sends each live member its
// log and applies the logs it receives, fetched data comes back in a second round, all nonblocking
// and polled with the detector (FenceExchange); then MPI_Win_sync. No MPI RMA call, no helper thread, no
// flush that a dying target could hold. The exchange is the fence's request in the driver and, like
// MPI_Barrier's, confirms itself (every member's log proves that every member entered the fence; fence());
// with deferred confirmation or ULFM the survivors confirm with an MPI_Ibarrier while it travels.
// Other operations in a fence epoch (derived datatypes, MPI_Rput, MPI_Rget) use cohort's
// passive-target epoch (MPI_Win_lock_all with MPI_MODE_NOCHECK, opened at the first fence), flushed at
// the fence: a flush whose target dies meanwhile is abandoned.
//
// Thread-safety: none; calls on one window follow MPI's rules.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "wrap/calls.h"
#include "wrap/core/rankmap.hpp"
#include "wrap/rma/rma_log.hpp"
#include "wrap/rma/window_registry.hpp"

namespace cohort::wrap::win {

// Where the data that an operation of the fence exchange fetches goes (a reply's next `bytes`).
struct Fetch {
  void *addr;
  std::size_t bytes;
  CallId id;   // the call, for the policy when its target dies before replying
  int target;  // a rank of the window's communicator
};

// The data of a bulk put (rma_log::kBulk): the program's buffer, sent as it is at the fence.
struct Bulk {
  const void *addr;
  std::size_t bytes;
};

// The fence exchange of a window (wrap/rma/rma_log.hpp): the epoch's logs until the fence, then the fence's
// buffers and requests. Kept from fence to fence (the buffers keep their capacity); when a peer dies during a
// fence its requests are abandoned, MPI may still read or write these buffers, and the whole object is kept
// for good (g_lost_exchanges) and replaced. Indexed by substitute rank of the window's made_on.
struct Exchange {
  std::vector<std::vector<char>> out;       // this rank's log to each member
  std::vector<std::vector<Bulk>> bulk;      // and the data of its bulk puts (the program's buffers)
  std::vector<std::vector<Fetch>> fetch;    // where the replies of its fetching operations go
  std::vector<std::unique_ptr<char[]>> in;  // round 1: each member's log to this rank (in_len bytes)
  std::vector<std::size_t> in_len, in_cap;
  std::vector<std::vector<char>> scratch;   // bulk data that falls outside this rank's memory (dropped)
  std::vector<std::vector<char>> reply, got;  // round 2: the replies to it (its fetches) and from it (ours)
  std::vector<MPI_Request> recv, rrecv;       // the receive of each member's log (round 1), reply (round 2)
  std::vector<std::vector<MPI_Request>> more, rmore;  // sends and bulk receives of each round
};

// The fence exchange's communicator over the members of comm (collective over them).
int make_exchange_comm(MPI_Comm comm, MPI_Comm *xcomm);

// Empty exchange logs, one per member of the substitute the window was made on (w.x made if none).
void reset_logs(WinRecord &w);

// The predefined datatypes that the exchange carries: those whose size is their extent (no holes), so that
// `count` elements are count * size contiguous bytes. A datatype's code: -1 when the exchange does not
// carry it.
int xtype(MPI_Datatype d);
// Bytes of one element of a datatype's code (0: unknown code).
std::size_t xsize(int code);
// The predefined operation's code (rma_log::kOpReplace and rma_log::kOpNoOp first), or -1.
int xop(MPI_Op op);

// True while the window is in cohort's fence epoch: its operations on the exchange's datatypes are logged.
bool exchanged(const WinRecord &w);

// Logs one operation to target. `result`/`result_bytes`: where the fetched data goes (0: the operation
// fetches nothing).
int log_op(WinRecord &w, MPI_Win handle, CallId id, bool send, int target, rma_log::Kind kind, int type, int op, int count,
           MPI_Aint disp, const void *payload, std::size_t bytes, const void *payload2, std::size_t bytes2,
           void *result, std::size_t result_bytes);

// A put of at least kBulkBytes is a bulk put: its data goes from the program's buffer straight into the
// target's memory as a message of its own (no copy on either side), where a smaller one is copied into the
// log (one message per target per fence, whatever the number of operations).
constexpr std::size_t kBulkBytes = 4096;

// Logs a bulk put of `bytes` from `data` to target.
int log_bulk_put(WinRecord &w, MPI_Win handle, int target, int type, int count, MPI_Aint disp, const void *data,
                 std::size_t bytes);

// A member's state in one round of the exchange: the receive of its log (round 1; receiving_rest: the part
// beyond kLogInline) or of its reply (round 2).
enum class Peer : std::uint8_t { receiving, receiving_rest, received, lost };

// One fence's exchange (wrap/rma/rma_log.hpp), on the fence's stack. The constructor posts the receive of every
// live member's log, then sends each its log; progress() advances the receipt of theirs (one pass; the fence
// calls it while the survivors confirm, so that bulk data flows meanwhile); finish() completes that, applies
// the logs to this rank's memory in member order, then exchanges the replies of the operations that fetch,
// and returns MPI_SUCCESS or the policy's result for a fetch whose target died before it replied.
class FenceExchange {
 public:
  FenceExchange(WinRecord &w, MPI_Win handle);
  /// A self-confirming fence's request (fence.cpp): completes once every member's log arrived.
  int start(MPI_Request *req);
  void progress();
  int finish();

 private:
  bool pass(bool logs);
  template <typename Done>
  void wait(Done done);
  int receive_rest(int s);
  int post_bulk(int s);
  void apply_logs();
  int replies();

  WinRecord &w_;
  MPI_Win handle_;
  const RankMap &map_;
  const int n_, me_;
  Exchange &x_;
  rma_log::Memory mem_;
  std::vector<Peer> state_;
  std::vector<bool> settled_;
  bool abandoned_ = false;
  MPI_Request request_ = MPI_REQUEST_NULL;  // start()
  bool request_completed_ = false;
};

}  // namespace cohort::wrap::win
