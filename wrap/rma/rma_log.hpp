// The RMA operations of one fence epoch, carried as two-sided messages. Pure data: no MPI, no
// threads; unit-tested in tests/unit/wrap_rma_log_test.cpp.
//
// Why: MPI's only remote completion (MPI_Win_flush, MPI_Win_unlock, MPI_Win_fence) never returns when its
// target dies, so on RMA every fence costs a handoff to a helper thread that may be abandoned (wrap/rma/helper_batch.hpp).
// A fence epoch needs no remote completion from MPI: every member takes part in the fence. So an origin
// keeps the epoch's operations in one log per target and, at the fence, every member sends every other
// member its log (an empty one too: a target cannot know who wrote to it), receives theirs and applies them
// to its own memory, in origin rank order and in each log's order. Operations that return data (get,
// get-accumulate, fetch-and-op, compare-and-swap) produce a reply, sent back in a second round. Every
// message is a nonblocking point-to-point call that cohort can stop waiting for when its peer dies, and a
// log lost with a dead origin is lost whole (its puts and its accumulates together).
// This is the active-target scheme of MPI implementations that emulate RMA over messages (Open MPI's
// osc/pt2pt, MPICH's ch3 RMA), without their locks: cohort only takes this path in fence epochs.
//
// Log format, per operation: a Header, then its payload (put, accumulate, get-accumulate: count elements;
// compare-and-swap: the new value, then the compare value; get: nothing). A reply is the fetched data of
// each fetching operation, in log order (count elements each; compare-and-swap: one).
// A large put (kBulk) carries no payload in the log: its data follows as a message of its own, sent from the
// origin's buffer and received straight into the target's memory (bulk_regions), so neither side copies it.
//
// Thread-safety: none (the caller owns the buffers).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace cohort::wrap::rma_log {

enum class Kind : std::uint8_t { put = 1, get = 2, accumulate = 3, get_accumulate = 4, compare_and_swap = 5 };

/// Op codes that apply() handles itself; every other code goes to Apply::accumulate.
constexpr int kOpReplace = 0;
constexpr int kOpNoOp = 1;

/// Header::flags: the put's data is a message of its own (see above).
constexpr std::uint8_t kBulk = 1;

struct Header {
  std::uint8_t kind;
  std::uint8_t type;  ///< the caller's datatype code (wrap/rma/fence_exchange.cpp's table of predefined datatypes)
  std::uint8_t op;    ///< accumulates: the op code (kOpReplace, kOpNoOp or the caller's)
  std::uint8_t flags;  ///< kBulk or 0
  std::int32_t count;  ///< elements of the target datatype
  std::int64_t disp;   ///< target displacement, in the target's displacement units
  std::int64_t bytes;  ///< payload bytes that follow
};

/// Appends one operation to `log`: its header, then `payload` (payload_bytes), then `payload2`
/// (compare-and-swap's compare value; payload2_bytes).
void append(std::vector<char> *log, Kind kind, int type, int op, int count, std::int64_t disp, const void *payload,
            std::size_t payload_bytes, const void *payload2 = nullptr, std::size_t payload2_bytes = 0);

/// Appends a bulk put of `count` elements at `disp` (no payload: its data is a message of its own).
void append_bulk_put(std::vector<char> *log, int type, int count, std::int64_t disp);

/// Bytes of reply that an operation of `kind` on `count` elements of `elem_size` bytes yields at its
/// target (0 for put and accumulate).
std::size_t reply_bytes(Kind kind, int count, std::size_t elem_size);

/// The target's memory: this rank's part of the window.
struct Memory {
  char *base = nullptr;
  std::int64_t size = 0;  ///< bytes
  int disp_unit = 1;      ///< bytes
};

struct Apply {
  /// Bytes of one element of datatype code `type` (0: unknown code).
  std::function<std::size_t(int type)> elem_size;
  /// inout[i] = in[i] op inout[i] for `count` elements of `type` (MPI_Reduce_local); false on an error.
  std::function<bool(int type, int op, const void *in, void *inout, int count)> accumulate;
};

/// Where each bulk put of a log lands in the target's memory, in log order: `offset` bytes from the base,
/// or -1 when the put falls outside the memory or its datatype is unknown (the target then receives the
/// data into scratch and drops it; apply() reports the error). A truncated log ends the list there.
struct Region {
  std::int64_t offset;
  std::size_t bytes;
};
std::vector<Region> bulk_regions(const char *log, std::size_t len, const Memory &mem, const Apply &fx);

/// Applies the operations of one origin's log to `mem` in order and appends the fetched data to
/// `reply`. An operation outside the memory, of an unknown datatype, or with a malformed payload is
/// skipped (its reply is zeros of the expected size, so that the origin's layout holds) and the first such
/// error is described in the returned text ("" when every operation applied). A truncated log stops the
/// walk there.
std::string apply(const char *log, std::size_t len, const Memory &mem, const Apply &fx, std::vector<char> *reply);

}  // namespace cohort::wrap::rma_log
