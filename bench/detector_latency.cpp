// detector_latency: real failure detection on real ranks (used by bench/run_detector.sh).
//
//   detector_latency kill VICTIM DELAY_MS   rank 0 picks a wall-clock kill time DELAY_MS ahead; VICTIM
//                                           raises SIGKILL at that time; every survivor prints how long
//                                           after it it learned the failure (detector::learned_at_us).
//   detector_latency host V1,V2,... DELAY_MS the victims are killed from outside (a lost host: bench/
//                                           run_detector.sh --hosts-only kills every process of their
//                                           namespace host): rank 0 picks the time DELAY_MS ahead and
//                                           writes it (wall µs) to the file $DETECTOR_BENCH_KILL_FILE;
//                                           every survivor prints, per victim, when it learned it.
//   detector_latency idle SECONDS           no failure: every rank prints the CPU time its detector
//                                           thread used (getrusage RUSAGE_THREAD) over SECONDS.
// Output lines: `detector-bench: rank R key value ...`; a victim line ends with `at_us W`, the wall-clock
// µs (CLOCK_REALTIME) at which the survivor learned it. Ranks share one machine (the namespace hosts of
// scripts/cohort-hosts too), hence one wall clock.
#include <mpi.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <algorithm>

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
    if (rank == 0) std::fprintf(stderr, "usage: detector_latency kill VICTIM DELAY_MS | host V1,V2,... DELAY_MS | idle SECONDS\n");
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
  // kill: one victim raises SIGKILL; host: the victims are killed from outside.
  bool external = std::strcmp(argv[1], "host") == 0;
  if ((!external && std::strcmp(argv[1], "kill") != 0) || argc < 4) {
    if (rank == 0) std::fprintf(stderr, "detector_latency: unknown mode '%s' or missing DELAY_MS\n", argv[1]);
    MPI_Finalize();
    return 2;
  }
  std::vector<int> victims;
  for (const char *p = argv[2]; *p;) {
    char *end;
    long v = std::strtol(p, &end, 10);
    if (end == p || v < 0 || v >= size) {
      if (rank == 0) std::fprintf(stderr, "detector_latency: bad victim list '%s' (ranks 0..%d)\n", argv[2], size - 1);
      MPI_Finalize();
      return 2;
    }
    victims.push_back(static_cast<int>(v));
    p = *end == ',' ? end + 1 : end;
  }
  bool is_victim = std::find(victims.begin(), victims.end(), rank) != victims.end();
  long long t_kill = wall_us() + std::atoll(argv[3]) * 1000;
  MPI_Bcast(&t_kill, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  if (external && rank == 0) {
    const char *f = std::getenv("DETECTOR_BENCH_KILL_FILE");
    FILE *fp = f ? std::fopen(f, "w") : nullptr;
    if (fp) {
      std::fprintf(fp, "%lld\n", t_kill);
      std::fclose(fp);
    } else {
      std::fprintf(stderr, "detector_latency: rank 0 cannot write the kill time to '%s'\n", f ? f : "(DETECTOR_BENCH_KILL_FILE unset)");
    }
  }
  if (is_victim) {
    sleep_us(t_kill - wall_us());
    if (!external) raise(SIGKILL);
    sleep_us(120LL * 1000000);  // killed from outside
    _exit(3);
  }
  long long deadline = t_kill + 60LL * 1000000;
  while (cohort_failed_count() < static_cast<int>(victims.size()) && wall_us() < deadline) sleep_us(200);
  for (int victim : victims) {
    long long learned = cohort::detector::learned_at_us(victim);
    if (learned < 0) {
      std::printf("detector-bench: rank %d victim %d latency_us -1\n", rank, victim);
    } else {
      long long at = learned + cohort::detector::wall_minus_monotonic_us();
      std::printf("detector-bench: rank %d victim %d latency_us %lld at_us %lld\n", rank, victim, at - t_kill, at);
    }
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
