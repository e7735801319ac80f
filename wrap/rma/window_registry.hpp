// The record cohort keeps of each window the program made on a communicator cohort protects, the registry
// of those records, and what every part of the window code uses with them: a target's substitute rank,
// the dead-target policy, the survivors' confirmation and the generalized requests that cohort completes.
//
// The program's MPI_Win is the first window cohort made (the alias); cohort keeps a record: the
// communicator alias it was made on, the memory (base, size, displacement unit, info), the substitute
// window it works on now and the substitute communicator that one was made on (its rank map translates the
// program's target ranks). MPI_Win_allocate takes its memory from MPI_Alloc_mem and makes the window with
// MPI_Win_create, so that a substitute made later covers the same memory and the program's pointer stays
// valid (wrap/rma/win.cpp: the entry points; wrap/rma/fence.hpp: the window made again over the survivors).
//
// Thread-safety: the registry is thread-safe; calls on one window follow MPI's rules.
#pragma once
#include <mpi.h>

#include <functional>
#include <memory>
#include <set>
#include <vector>

#include "wrap/calls.h"
#include "wrap/core/alias.hpp"

namespace cohort::wrap::win {

struct Exchange;  // wrap/rma/fence_exchange.hpp

// One step of a batch that the helper thread runs on w.win (win::guarded): an RMA operation or a
// synchronisation (flush, unlock). `world` is the MPI_COMM_WORLD rank it needs alive (-1: none); with
// `every_member`, it needs every member of the window's substitute communicator.
struct WinStep {
  int target = -1;  // a rank of the window's communicator (the program's numbering); -1: every member
  int world = -1;
  bool every_member = false;
  const char *call = nullptr;  // the RMA call of an operation step (its name); null for a synchronisation
  bool returns_data = false;   // the operation writes the origin's buffer (Get, Fetch_and_op, ...)
  // An accumulate-family operation, whose MPI may wait inside it on a lock at the target that a member held
  // when it died (Open MPI 4.1's osc/rdma: the target's accumulate lock).
  bool lock_wait = false;
  std::function<int(MPI_Win)> run;
};

struct WinRecord {
  Alias *alias = nullptr;             // the communicator the window was made on
  void *base = nullptr;               // the window's memory (this rank's part)
  MPI_Aint size = 0;
  int disp_unit = 1;
  MPI_Info info = MPI_INFO_NULL;      // a duplicate of the program's, for substitutes
  bool owns_memory = false;           // MPI_Win_allocate: cohort's MPI_Alloc_mem
  const Substitute *made_on = nullptr;  // the substitute communicator `win` was made on
  MPI_Win handle = MPI_WIN_NULL;      // the program's window: the first one cohort made
  MPI_Win win = MPI_WIN_NULL;         // the substitute window, where RMA goes (handle until a recreation)
  int recreations = 0;                // times the window was made again over the survivors
  std::vector<MPI_Win> retired;       // windows replaced by a recreation: left to MPI, never freed
  bool fence_open = false;            // cohort's lock_all of a fence epoch is held on win
  bool lock_all = false;              // the program's MPI_Win_lock_all is held on win
  bool left_to_mpi = false;           // a guarded call on win was abandoned: never free it
  std::set<int> locked;               // the program's locked targets (ranks of its communicator)
  MPI_Errhandler program_eh = MPI_ERRHANDLER_NULL;  // the window's handler at creation (cohort's is ERRORS_RETURN)
  std::vector<WinStep> pending;          // RMA operations deferred to the epoch's next synchronisation
  std::set<int> dirty;                // targets (program ranks) sent operations since their last flush
  // Fence epochs on messages (wrap/rma/rma_log.hpp): per substitute rank of made_on, this rank's logged
  // operations to it and where their replies go; exchanged on xcomm, cohort's duplicate of made_on->comm.
  MPI_Comm xcomm = MPI_COMM_NULL;
  bool xabandoned = false;            // an exchange request on xcomm was abandoned: never free it
  std::shared_ptr<Exchange> x;
};

/// The record of the program's window `win`, or nullptr when cohort does not keep one (a window on a
/// communicator cohort does not protect, or not a window).
WinRecord *find_win(MPI_Win win);

/// Keeps `w` under its program handle (w->handle).
void add_window(std::unique_ptr<WinRecord> w);

/// Forgets the record of the program's window `win`.
void remove_window(MPI_Win win);

// The dead-peer policy for an RMA call whose target `target` (a rank of the window's communicator) is
// dead: send-like calls (Put, Accumulate) take COHORT_ON_DEAD_PEER_SEND, the others _RECV.
int dead_target(const WinRecord &w, MPI_Win handle, bool send, const char *call, int target);

constexpr int kDeadTarget = -0x7fffffff;  // distinct from MPI_PROC_NULL (-1 in MPICH, -2 in Open MPI)

// The substitute rank of target in w.win (MPI_PROC_NULL stays), or kDeadTarget when the target is dead
// (agreed or known here).
int sub_target(const WinRecord &w, int target);

// The survivors confirm (the driver: completes among the survivors, shrinks on a failure).
int confirm(WinRecord &w, CallId id);

// A generalized request that the caller completes (PMPI_Grequest_complete); its status is empty.
int start_request(MPI_Request *request);

}  // namespace cohort::wrap::win
