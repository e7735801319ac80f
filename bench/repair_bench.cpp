// Repair benchmarks. Writes CSV rows to stdout (rank 0), prefixed `csv,`:
//
//   repair_bench free [reps]   fault-free latency, interleaved in one run on MPI_COMM_WORLD:
//                              MPI_Allreduce of one int, repair::agree, MPI_Comm_dup, repair::shrink,
//                              MPI_Comm_idup polled with MPI_Test and sched_yield (op idup: what
//                              shrink's failure-free path posts before its agreement), MPI_Iallreduce of
//                              one int polled the same way (op iallreduce: what an agreement built on
//                              MPI's own nonblocking collective would cost at least), and, where the
//                              MPI has ULFM (Open MPI 5), MPIX_Comm_agree and MPIX_Comm_shrink (ops
//                              ulfm_agree, ulfm_shrink).
//                              Before each timed call a barrier; the time of a call is the slowest rank's.
//                              csv,free,<mpi>,<np>,<op>,<median us>,<p10 us>,<p90 us>
//   repair_bench repair K|half after K ranks die by SIGKILL (1: rank 1; 2: ranks 1 and N/2; half: the
//                              odd ranks), the survivors call repair::shrink at once. Repair time = from
//                              the last survivor's detection of the last failure to the last survivor
//                              holding the shrunk communicator (after an MPI_Allreduce on it).
//                              csv,repair,<mpi>,<np>,<k>,<repair ms>,<detection ms>
#include <mpi.h>
#if defined(OPEN_MPI)
#include <mpi-ext.h>
#endif
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench/mpi_timing.hpp"
#include "detector/runtime.hpp"
#include "repair/repair.hpp"

#if defined(OMPI_HAVE_MPI_EXT_FTMPI) && OMPI_HAVE_MPI_EXT_FTMPI
#define COHORT_BENCH_NATIVE_ULFM 1
constexpr int kOps = 8;
#else
constexpr int kOps = 6;
#endif

namespace {

int me, n;

// Time of one call on the slowest rank of MPI_COMM_WORLD, in µs.
template <typename Op>
double timed(Op op) {
  return timed_on(MPI_COMM_WORLD, op);
}

void fault_free(int reps) {
  const char *names[] = {"allreduce", "agree", "dup", "shrink", "idup", "iallreduce", "ulfm_agree", "ulfm_shrink"};
  std::vector<double> t[kOps];
  for (int rep = -reps / 10 - 5; rep < reps; ++rep) {  // the first ones warm up
    double d[kOps];
    d[0] = timed([] {
      int in = me, out;
      PMPI_Allreduce(&in, &out, 1, MPI_INT, MPI_BAND, MPI_COMM_WORLD);
    });
    d[1] = timed([] {
      int flag = me | 1;
      std::vector<int> failed;
      cohort::repair::agree(MPI_COMM_WORLD, &flag, &failed);
    });
    MPI_Comm c;
    d[2] = timed([&c] { PMPI_Comm_dup(MPI_COMM_WORLD, &c); });
    PMPI_Comm_free(&c);
    d[3] = timed([&c] { cohort::repair::shrink(MPI_COMM_WORLD, &c); });
    PMPI_Comm_free(&c);
    d[4] = timed([&c] {
      MPI_Request req;
      PMPI_Comm_idup(MPI_COMM_WORLD, &c, &req);
      for (int done = 0; PMPI_Test(&req, &done, MPI_STATUS_IGNORE), !done;) sched_yield();
    });
    PMPI_Comm_free(&c);
    d[5] = timed([] {
      int in = me | 1, out = 0, done = 0;
      MPI_Request req;
      PMPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_BAND, MPI_COMM_WORLD, &req);
      while (PMPI_Test(&req, &done, MPI_STATUS_IGNORE), !done) sched_yield();
    });
#if defined(COHORT_BENCH_NATIVE_ULFM)
    // NOTE: the profiling names: the program is linked with cohort's --wrap=MPIX_* (its ULFM API on every
    // MPI), which would otherwise time cohort's own calls here.
    d[6] = timed([] {
      int flag = me | 1;
      PMPIX_Comm_agree(MPI_COMM_WORLD, &flag);
    });
    d[7] = timed([&c] { PMPIX_Comm_shrink(MPI_COMM_WORLD, &c); });
    PMPI_Comm_free(&c);
#endif
    if (rep >= 0) {
      for (int i = 0; i < kOps; ++i) t[i].push_back(d[i]);
    }
  }
  if (me != 0) return;
  for (int i = 0; i < kOps; ++i) {
    std::printf("csv,free,%s,%d,%s,%.2f,%.2f,%.2f\n", mpi_name(), n, names[i], pct(t[i], 0.5), pct(t[i], 0.1),
                pct(t[i], 0.9));
  }
  std::printf("summary: %s np=%d agree/allreduce=%.2f shrink/dup=%.2f (medians of %d)\n", mpi_name(), n,
              pct(t[1], 0.5) / pct(t[0], 0.5), pct(t[3], 0.5) / pct(t[2], 0.5), reps);
}

void repair(const char *k) {
  std::vector<int> dead;
  if (std::strcmp(k, "half") == 0) {
    for (int r = 1; r < n; r += 2) dead.push_back(r);
  } else if (std::atoi(k) == 1) {
    dead = {1};
  } else {
    dead = {1, n / 2};
  }
  PMPI_Barrier(MPI_COMM_WORLD);
  double t_kill = now_us();
  if (std::find(dead.begin(), dead.end(), me) != dead.end()) raise(SIGKILL);
  std::atomic<double> t_detect{0};
  std::atomic<bool> stop{false};
  std::thread watcher([&] {
    while (!stop.load()) {
      bool all = true;
      for (int r : dead) all = all && cohort::detector::is_failed(r);
      if (all) {
        t_detect.store(now_us());
        return;
      }
      usleep(50);
    }
  });
  MPI_Comm s;
  cohort::repair::shrink(MPI_COMM_WORLD, &s);
  int x = 1, sum = 0;
  PMPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, s);
  double t_done = now_us();
  watcher.join();  // the shrink cannot finish before every failure is known here
  double mine[2] = {t_detect.load(), t_done}, last[2];
  PMPI_Allreduce(mine, last, 2, MPI_DOUBLE, MPI_MAX, s);
  int srank;
  PMPI_Comm_rank(s, &srank);
  if (srank == 0) {
    std::printf("csv,repair,%s,%d,%zu,%.3f,%.3f\n", mpi_name(), n, dead.size(), (last[1] - last[0]) / 1e3,
                (last[0] - t_kill) / 1e3);
    std::fflush(stdout);
  }
  int flag = 1;
  std::vector<int> failed;
  cohort::repair::agree(s, &flag, &failed);  // nobody leaves while another still needs its answers
  usleep(200 * 1000);
  _exit(sum == n - static_cast<int>(dead.size()) ? 0 : 1);
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  PMPI_Comm_rank(MPI_COMM_WORLD, &me);
  PMPI_Comm_size(MPI_COMM_WORLD, &n);
  if (argc >= 2 && std::strcmp(argv[1], "free") == 0) {
    fault_free(argc >= 3 ? std::atoi(argv[2]) : 200);
    std::fflush(stdout);
    MPI_Finalize();
    return 0;
  }
  if (argc >= 3 && std::strcmp(argv[1], "repair") == 0) repair(argv[2]);
  if (me == 0) std::fprintf(stderr, "usage: repair_bench free [reps] | repair 1|2|half\n");
  MPI_Abort(MPI_COMM_WORLD, 2);
}
