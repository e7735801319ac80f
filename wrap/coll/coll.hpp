// The post functions of the collectives that the driver runs (entry `driver` in wrap/calls.def): for each
// such call MPI_X, the bottom of wrap/coll/coll.cpp generates __wrap_MPI_X, which counts the call, lets communicators cohort
// did not create pass through to PMPI_X, and otherwise calls
//   int cohort::wrap::coll::post_MPI_X(Alias &alias, const CallDesc &call, <MPI_X's parameters>);
// with call = describe(CallId::MPI_X, root). The post function (wrap/coll/coll.cpp) hands the driver (run())
// a lambda that posts the nonblocking variant on a substitute, and does the call's own bookkeeping
// (saved inputs, positional layouts). Returns what MPI_X returns.
#pragma once
#include <mpi.h>

#include "wrap/calls.h"
#include "wrap/core/driver.hpp"

#define COHORT_UNPAREN(...) __VA_ARGS__

namespace cohort::wrap::coll {

#define COHORT_POST_DECL_own(name, params)
#define COHORT_POST_DECL_driver(name, params) \
  int post_##name(Alias &alias, const CallDesc &call, COHORT_UNPAREN params);
#define COHORT_CALL(name, cls, params, args, note, root, dead_root, outputs, completion, entry, chapter, result) \
  COHORT_POST_DECL_##entry(name, params)
#include "wrap/calls.def"
#undef COHORT_CALL
#undef COHORT_POST_DECL_own
#undef COHORT_POST_DECL_driver

/// A composed form of the blocking MPI_Barrier and MPI_Allreduce that replaces the flat one where it
/// applies: Legio's hierarchy (wrap/coll/hierarchy.hpp), which runs its stages through the post functions
/// above, installs it at MPI_Init once it is built.
struct Composed {
  bool (*applies)(const Alias &alias, MPI_Op op);
  int (*barrier)();
  int (*allreduce)(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op);
};
/// Installs c (static storage), or none with nullptr. At MPI_Init, before any collective of the program.
void set_composed(const Composed *c);

}  // namespace cohort::wrap::coll
