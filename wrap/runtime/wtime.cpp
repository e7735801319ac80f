// The entry points of MPI_Wtime and MPI_Wtick (MPI 4.0, 9.6). Without replication they pass straight to
// MPI (one relaxed load more than MPI's own, no call counting: programs read the clock in tight loops);
// under replication they are the leader's values (wrap/replica/wtime.cpp).
#include "wrap/calls.h"
#include "wrap/replica/replica.hpp"

using cohort::wrap::CallId;

extern "C" double __wrap_MPI_Wtime(void) {
  if (!cohort::wrap::replica::on()) return __real_MPI_Wtime();
  cohort::wrap::count_call(CallId::MPI_Wtime);
  return cohort::wrap::replica::wtime();
}

extern "C" double __wrap_MPI_Wtick(void) {
  if (!cohort::wrap::replica::on()) return __real_MPI_Wtick();
  cohort::wrap::count_call(CallId::MPI_Wtick);
  return cohort::wrap::replica::wtick();
}
