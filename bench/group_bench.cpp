// Non-collective creation beside the raw call, interleaved in one run. CSV rows on stdout
// (rank 0), prefixed `csv,`:
//
//   group_bench free [reps]   the group is every rank: raw PMPI_Comm_create_group vs cohort's
//                             group shrink (cohort_group_shrink, what the wrapped MPI_Comm_create_group runs)
//   group_bench dead [reps]   rank n-1 is dead (SIGKILL, then detected everywhere): raw
//                             PMPI_Comm_create_group over the live ranks (the raw call cannot include a
//                             dead one: it hangs) vs cohort's group shrink over all n ranks
//   -> csv,group,<mpi>,<np>,<case>,<op>,<median us>,<p10 us>,<p90 us>
// The time of a call is the slowest rank's (barrier before, max-reduction after, both untimed).
#include <mpi.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bench/mpi_timing.hpp"
#include "cohort/cohort.h"
#include "detector/runtime.hpp"

namespace {

int me, n;


MPI_Group group_of(const std::vector<int> &ranks) {
  MPI_Group world, g;
  PMPI_Comm_group(MPI_COMM_WORLD, &world);
  PMPI_Group_incl(world, static_cast<int>(ranks.size()), ranks.data(), &g);
  PMPI_Group_free(&world);
  return g;
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  PMPI_Comm_rank(MPI_COMM_WORLD, &me);
  PMPI_Comm_size(MPI_COMM_WORLD, &n);
  bool dead = argc > 1 && std::strcmp(argv[1], "dead") == 0;
  int reps = argc > 2 ? std::atoi(argv[2]) : 100;
  std::vector<int> all, live;
  for (int r = 0; r < n; ++r) all.push_back(r);
  live = all;
  if (dead) {
    live.pop_back();
    PMPI_Barrier(MPI_COMM_WORLD);
    if (me == n - 1) raise(SIGKILL);
    while (!cohort::detector::is_failed(n - 1)) usleep(1000);
  }
  MPI_Group whole = group_of(all), survivors = group_of(live);
  MPI_Comm timing;  // barriers and reductions of the harness, over the live ranks
  PMPI_Comm_create_group(MPI_COMM_WORLD, survivors, 9999, &timing);
  std::vector<double> raw, ours;
  for (int rep = -5; rep < reps; ++rep) {
    MPI_Comm a = MPI_COMM_NULL, b = MPI_COMM_NULL;
    double t1 = timed_on(timing, [&] { PMPI_Comm_create_group(MPI_COMM_WORLD, survivors, 1, &a); });
    double t2 = timed_on(timing, [&] { cohort_group_shrink(whole, 2, &b); });
    int size = 0;
    PMPI_Comm_size(b, &size);
    if (size != static_cast<int>(live.size())) {
      std::fprintf(stderr, "group_bench: rank %d: cohort_group_shrink gave %d members, expected %zu\n", me, size,
                   live.size());
      std::_Exit(1);
    }
    PMPI_Comm_free(&a);
    PMPI_Comm_free(&b);
    if (rep < 0) continue;
    raw.push_back(t1);
    ours.push_back(t2);
  }
  if (me == 0) {
    const char *kase = dead ? "dead" : "free";
    std::printf("csv,group,%s,%d,%s,raw,%.1f,%.1f,%.1f\n", mpi_name(), n, kase, pct(raw, 0.5), pct(raw, 0.1),
                pct(raw, 0.9));
    std::printf("csv,group,%s,%d,%s,cohort,%.1f,%.1f,%.1f\n", mpi_name(), n, kase, pct(ours, 0.5), pct(ours, 0.1),
                pct(ours, 0.9));
    std::fflush(stdout);
  }
  int flag = 1, failed[4], nfailed = 0;
  cohort_group_agree(whole, 3, &flag, failed, 4, &nfailed);  // nobody leaves while another needs answers
  usleep(300 * 1000);
  if (dead) std::_Exit(0);
  MPI_Finalize();
  return 0;
}
