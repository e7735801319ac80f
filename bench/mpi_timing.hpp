// Timing helpers shared by the MPI benchmarks: a monotonic clock in µs, the MPI's name for CSV rows, the
// slowest rank's time of one call, percentiles.
#pragma once
#include <mpi.h>
#include <time.h>

#include <algorithm>
#include <vector>

inline double now_us() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

inline const char *mpi_name() {
#if defined(OPEN_MPI) && defined(COHORT_USE_ULFM)
  return "openmpi5-ulfm";
#elif defined(OPEN_MPI) && OMPI_MAJOR_VERSION >= 5
  return "openmpi5";
#elif defined(OPEN_MPI)
  return "openmpi";
#elif defined(MPICH)
  return "mpich";
#else
  return "mpi";
#endif
}

/// Time of op() on the slowest rank of comm, in µs: a barrier before and a max-reduction after, both
/// outside the timed region.
template <typename Op>
double timed_on(MPI_Comm comm, Op op) {
  PMPI_Barrier(comm);
  double t0 = now_us();
  op();
  double mine = now_us() - t0, slowest = 0;
  PMPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
  return slowest;
}

/// The p-quantile (0..1) of v, nearest rank below.
inline double pct(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}
