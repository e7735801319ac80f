// detector_latency: real failure detection on real ranks (used by bench/run_detector.sh).
//
//   detector_latency kill VICTIM DELAY_MS   rank 0 picks a wall-clock kill time DELAY_MS ahead; VICTIM
//                                           raises SIGKILL at that time; every survivor prints how long
//                                           after it it learned the failure (detector::learned_at_us).
//   detector_latency idle SECONDS           no failure: every rank prints the CPU time its detector
//                                           thread used (getrusage RUSAGE_THREAD) over SECONDS.
// Output lines: `detector-bench: rank R key value ...`. Ranks share one host, hence one wall clock.
#include <mpi.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cohort/cohort.h"
#include "detector/runtime.hpp"
#include "detector/stats.hpp"

namespace {

long long wall_us() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

void sleep_us(long long us) {
  if (us <= 0) return;
  struct timespec ts = {static_cast<time_t>(us / 1000000), static_cast<long>((us % 1000000) * 1000)};
  while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
  }
}

void print_stats(int rank) {
  cohort::detector::Stats s = cohort::detector::stats();
  std::printf("detector-bench: rank %d cpu_us %lld wall_us %lld iterations %llu sent %llu received %llu dropped %llu\n",
              rank, static_cast<long long>(s.thread_cpu_us), static_cast<long long>(s.thread_wall_us),
              static_cast<unsigned long long>(s.iterations), static_cast<unsigned long long>(s.sent),
              static_cast<unsigned long long>(s.received), static_cast<unsigned long long>(s.dropped));
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 3) {
    if (rank == 0) std::fprintf(stderr, "usage: detector_latency kill VICTIM DELAY_MS | idle SECONDS\n");
    MPI_Finalize();
    return 2;
  }
  if (std::strcmp(argv[1], "idle") == 0) {
    MPI_Barrier(MPI_COMM_WORLD);
    sleep_us(std::atoll(argv[2]) * 1000000LL);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();  // stops the detector, which records its final CPU time
    print_stats(rank);
    return 0;
  }
  int victim = std::atoi(argv[2]);
  long long t_kill = wall_us() + std::atoll(argv[3]) * 1000;
  MPI_Bcast(&t_kill, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  if (rank == victim) {
    sleep_us(t_kill - wall_us());
    raise(SIGKILL);
  }
  long long deadline = t_kill + 60LL * 1000000;
  while (cohort_failed_count() < 1 && wall_us() < deadline) sleep_us(200);
  long long learned = cohort::detector::learned_at_us(victim);
  if (learned < 0) {
    std::printf("detector-bench: rank %d victim %d latency_us -1\n", rank, victim);
  } else {
    long long at = learned + cohort::detector::wall_minus_monotonic_us();
    std::printf("detector-bench: rank %d victim %d latency_us %lld\n", rank, victim, at - t_kill);
  }
  std::fflush(stdout);
  // Stay in the ring until the others learned it too (a survivor that leaves early would take the
  // notices it still has to forward with it), then leave it properly and skip PMPI_Finalize, which may
  // hang once a rank died (see tests/mpi/detector_failures.c).
  const char *t = std::getenv("COHORT_HB_TIMEOUT_MS");
  sleep_us((t ? std::atoll(t) : 1000) * 1000);
  cohort::detector::stop();
  _exit(0);
}
