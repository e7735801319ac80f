// Declarations generated from wrap/calls.def (the one list of calls) by the preprocessor:
// __wrap_MPI_X (defined by cohort), __real_MPI_X (the MPI library's own, resolved by the linker's --wrap),
// the CallId enumeration used to count calls, and kCallInfo, each wrapped call's columns as data.
// COHORT_PASSTHROUGH rows produce nothing here. The same objects make libcohort-preload.so, where
// wrap/runtime/preload.cpp generates the MPI_X entry points and __real_MPI_X (= PMPI_X) from the same table.
#pragma once
#include <mpi.h>

#include <atomic>
#include <string_view>

#include "detector/runtime.hpp"
#include "wrap/core/policy.hpp"
#include "wrap/core/replica_mode.hpp"

extern "C" {
#if !defined(COHORT_HAVE_COMM_CREATE_FROM_GROUP)
// MPI 4.0's call, absent from Open MPI 4.1 (cmake/CohortMPI.cmake checks): declared weak, so the objects
// that name it link there; it is only called where the MPI has it (a null address otherwise).
int PMPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info, MPI_Errhandler errhandler,
                                MPI_Comm *newcomm) __attribute__((weak));
#endif
#if !defined(COHORT_HAVE_SESSIONS)
// MPI 4.0's Sessions, absent from Open MPI 4.1: the handle type (so that the session rows of calls.def
// declare) and the PMPI_ names the preload build's entry points forward to, weak; nothing calls them there.
typedef struct cohort_no_session_ *MPI_Session;
int PMPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session) __attribute__((weak));
int PMPI_Session_finalize(MPI_Session *session) __attribute__((weak));
#endif
#if !defined(COHORT_HAVE_PERSISTENT_COLL)
// MPI 4.0's persistent collectives (MPI_Allreduce_init & co.), absent from Open MPI 4.1: their PMPI_ names
// are declared weak so that the preload build's pass-through entry points link; cohort never calls them
// (wrap/coll/persistent_coll.cpp), and a program built against Open MPI 4.1 cannot name them.
#define COHORT_WEAK_local(name, params)
#define COHORT_WEAK_blocking(name, params)
#define COHORT_WEAK_nonblocking(name, params)
#define COHORT_WEAK_persistent(name, params) int P##name params __attribute__((weak));
#define COHORT_CALL(name, cls, params, args, note, root, dead_root, outputs, completion, entry, chapter, result) \
  COHORT_WEAK_##completion(name, params)
#include "wrap/calls.def"
#undef COHORT_CALL
#undef COHORT_WEAK_local
#undef COHORT_WEAK_blocking
#undef COHORT_WEAK_nonblocking
#undef COHORT_WEAK_persistent
#endif
#define COHORT_CALL(name, cls, params, args, note, root, dead_root, outputs, completion, entry, chapter, result) \
  result __wrap_##name params;                                                                              \
  result __real_##name params;
#include "wrap/calls.def"
#undef COHORT_CALL
// ULFM's API (COHORT_MPIX rows; wrap/ulfm/ulfm_api.cpp defines them, except in the ulfm build).
#define COHORT_MPIX(name, params, args, note) int __wrap_##name params;
#define COHORT_CALL(...)
#include "wrap/calls.def"
#undef COHORT_CALL
#undef COHORT_MPIX
}

namespace cohort::wrap {

enum class CallId : int {
#define COHORT_CALL(name, cls, params, args, note, ...) name,
#include "wrap/calls.def"
#undef COHORT_CALL
  count_
};

/// Data-movement class of a call (the class column of wrap/calls.def).
enum class Shape { local, one_to_all, all_to_one, all_to_all, positional, point_to_point, request, communicator };

/// One row of wrap/calls.def as data (see the column descriptions there).
struct CallInfo {
  const char *name;      ///< "MPI_Gather"
  Shape shape;           ///< class
  bool rooted;           ///< root is a parameter
  Policy dead_root;      ///< default dead-root policy (rooted calls)
  bool output_at_root;   ///< outputs is recvbuf_at_root
  bool nonblocking;      ///< completion is nonblocking
};

namespace calls_detail {
constexpr Shape shape(std::string_view c) {
  return c == "one-to-all"       ? Shape::one_to_all
         : c == "all-to-one"     ? Shape::all_to_one
         : c == "all-to-all"     ? Shape::all_to_all
         : c == "positional"     ? Shape::positional
         : c == "point-to-point" ? Shape::point_to_point
         : c == "request"        ? Shape::request
         : c == "communicator"   ? Shape::communicator
                                 : Shape::local;
}
constexpr Policy policy(std::string_view p) { return p == "skip" ? Policy::skip : Policy::abort; }
}  // namespace calls_detail

// NOTE: #cls stringizes `one-to-all` as written (no spaces), so the class is compared as text.
inline constexpr CallInfo kCallInfo[] = {
#define COHORT_CALL(name, cls, params, args, note, root, dead_root, outputs, completion, entry, chapter, result) \
  {#name,                                                                                       \
   calls_detail::shape(#cls),                                                                   \
   std::string_view(#root) != "none",                                                           \
   calls_detail::policy(#dead_root),                                                            \
   std::string_view(#outputs) == "recvbuf_at_root",                                             \
   std::string_view(#completion) == "nonblocking"},
#include "wrap/calls.def"
#undef COHORT_CALL
};
static_assert(sizeof kCallInfo / sizeof kCallInfo[0] == static_cast<int>(CallId::count_));

inline const CallInfo &info(CallId id) { return kCallInfo[static_cast<int>(id)]; }

/// The inject point of a call, reached once per call after its first post: the name without "MPI_",
/// lower case, then ".posted" ("MPI_Comm_dup" -> "comm_dup.posted"). For COHORT_INJECT_FAILURE=...,at=.
const char *posted_hook(CallId id);

namespace deferred {
/// Communicators with pending deferred confirmations (wrap/core/deferred.hpp); count_call settles them before a
/// point-to-point or request call.
inline std::atomic<int> g_unsettled{0};
void settle_before_call();
}  // namespace deferred

/// Per-thread call counters (see count_call), summed by cohort_call_count.
struct CallCounters {
  std::atomic<long> n[static_cast<int>(CallId::count_)];
};
CallCounters *new_thread_counters();  // registers a zeroed block for the calling thread
inline thread_local CallCounters *t_call_counters = nullptr;

/// Counts one entry into the wrapper of `id`. The counters are the calling thread's own: a relaxed load
/// and store, no atomic read-modify-write on every wrapped call (inlined). Point-to-point and request calls
/// first complete pending deferred confirmations (a settle point, wrap/core/deferred.hpp). Under replication a call
/// that wrap/replica/ does not handle stops the program here (wrap/core/replica_mode.hpp).
inline void count_call(CallId id) {
  detector::note_progress();
  if (replica_mode::g_on.load(std::memory_order_relaxed)) replica_mode::check_call(static_cast<int>(id));
  if (deferred::g_unsettled.load(std::memory_order_relaxed) != 0) {
    const Shape s = info(id).shape;
    if (s == Shape::point_to_point || s == Shape::request) deferred::settle_before_call();
  }
  CallCounters *c = t_call_counters;
  if (c == nullptr) c = t_call_counters = new_thread_counters();
  std::atomic<long> &n = c->n[static_cast<int>(id)];
  n.store(n.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

}  // namespace cohort::wrap
