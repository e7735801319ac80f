// Ping-pong between ranks 0 and 1: cohort's wrappers (MPI_Send/MPI_Recv, and Isend/Irecv/Wait) against
// the MPI library's own calls (__real_MPI_*) and against the floor of cohort's design (nb: PMPI_Isend /
// PMPI_Irecv completed by a PMPI_Test loop) in the same process, trials interleaved so that all three see
// the same machine state. Other ranks, if any, idle in a barrier.
//
//   pingpong [--csv FILE] [--trials T] [--small-iters N] [--large-iters N]
//
// CSV columns: mpi,bytes,mode,impl (wrapped|real|nb),trial,iters,us_per_roundtrip. Rank 0 prints one
// summary line per (bytes, mode): medians of wrapped, real and nb, nb/real, and wrapped/real last.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "wrap/calls.h"

namespace {

struct Impl {
  const char *name;
  int (*send)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
  int (*recv)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *);
  int (*isend)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
  int (*irecv)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
  int (*wait)(MPI_Request *, MPI_Status *);
};

// The floor of cohort's design: the MPI's own nonblocking calls, completed by a PMPI_Test loop (cohort's
// blocking calls are their nonblocking variants polled together with the detector).
int poll_wait(MPI_Request *r, MPI_Status *st) {
  int done = 0, rc = MPI_SUCCESS;
  while (!done && rc == MPI_SUCCESS) rc = PMPI_Test(r, &done, st);
  return rc;
}
int nb_send(const void *b, int n, MPI_Datatype t, int peer, int tag, MPI_Comm c) {
  MPI_Request r;
  PMPI_Isend(b, n, t, peer, tag, c, &r);
  return poll_wait(&r, MPI_STATUS_IGNORE);
}
int nb_recv(void *b, int n, MPI_Datatype t, int peer, int tag, MPI_Comm c, MPI_Status *st) {
  MPI_Request r;
  PMPI_Irecv(b, n, t, peer, tag, c, &r);
  return poll_wait(&r, st);
}

const Impl kWrapped = {"wrapped", MPI_Send, MPI_Recv, MPI_Isend, MPI_Irecv, MPI_Wait};
#ifdef COHORT_BENCH_PRELOAD
// pingpong_preload: built without cohort, run with `cohort-run --preload` (bench/run_preload.sh): MPI_X is
// libcohort-preload.so's entry point, PMPI_X the MPI library's own.
const Impl kReal = {"real", PMPI_Send, PMPI_Recv, PMPI_Isend, PMPI_Irecv, PMPI_Wait};
#else
const Impl kReal = {"real", __real_MPI_Send, __real_MPI_Recv, __real_MPI_Isend, __real_MPI_Irecv, __real_MPI_Wait};
#endif
const Impl kFloor = {"nb", nb_send, nb_recv, PMPI_Isend, PMPI_Irecv, poll_wait};

// One timed trial: `iters` round trips of `bytes` between ranks 0 and 1; µs per round trip.
double trial(const Impl &impl, bool nonblocking, int rank, std::vector<char> &buf, int iters) {
  int n = static_cast<int>(buf.size());
  int peer = 1 - rank;
  PMPI_Barrier(MPI_COMM_WORLD);
  double t0 = PMPI_Wtime();
  for (int i = 0; i < iters; ++i) {
    if (nonblocking) {
      MPI_Request r;
      if (rank == 0) {
        impl.isend(buf.data(), n, MPI_CHAR, peer, 1, MPI_COMM_WORLD, &r);
        impl.wait(&r, MPI_STATUS_IGNORE);
        impl.irecv(buf.data(), n, MPI_CHAR, peer, 1, MPI_COMM_WORLD, &r);
        impl.wait(&r, MPI_STATUS_IGNORE);
      } else {
        impl.irecv(buf.data(), n, MPI_CHAR, peer, 1, MPI_COMM_WORLD, &r);
        impl.wait(&r, MPI_STATUS_IGNORE);
        impl.isend(buf.data(), n, MPI_CHAR, peer, 1, MPI_COMM_WORLD, &r);
        impl.wait(&r, MPI_STATUS_IGNORE);
      }
    } else if (rank == 0) {
      impl.send(buf.data(), n, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
      impl.recv(buf.data(), n, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      impl.recv(buf.data(), n, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      impl.send(buf.data(), n, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
    }
  }
  double t = PMPI_Wtime() - t0;
  return t * 1e6 / iters;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int arg_int(int argc, char **argv, const char *name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return std::atoi(argv[i + 1]);
  }
  return fallback;
}

const char *arg_str(int argc, char **argv, const char *name, const char *fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  }
  return fallback;
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) {
    if (rank == 0) std::fprintf(stderr, "pingpong: needs 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int trials = arg_int(argc, argv, "--trials", 15);
  int small_iters = arg_int(argc, argv, "--small-iters", 20000);
  int large_iters = arg_int(argc, argv, "--large-iters", 300);
  const char *csv_path = arg_str(argc, argv, "--csv", nullptr);
#ifdef MPICH_VERSION
  const char *mpi = "mpich";
#else
  const char *mpi = "openmpi";
#endif
  FILE *csv = nullptr;
  if (rank == 0 && csv_path != nullptr) {
    csv = std::fopen(csv_path, "w");
    if (csv == nullptr) {
      std::fprintf(stderr, "pingpong: cannot write %s\n", csv_path);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    std::fprintf(csv, "mpi,bytes,mode,impl,trial,iters,us_per_roundtrip\n");
  }
  if (rank < 2) {
    for (int bytes : {8, 1 << 20}) {
      int iters = bytes == 8 ? small_iters : large_iters;
      std::vector<char> buf(static_cast<size_t>(bytes), 'x');
      for (int nb = 0; nb < 2; ++nb) {
        const char *mode = nb ? "isend-irecv-wait" : "send-recv";
        trial(kReal, nb, rank, buf, iters / 10 + 1);  // warm-up: connections, registration caches
        trial(kWrapped, nb, rank, buf, iters / 10 + 1);
        trial(kFloor, nb, rank, buf, iters / 10 + 1);
        std::vector<double> w, r, f;
        for (int t = 0; t < trials; ++t) {
          // NOTE: rotate which goes first so that none always runs right after another.
          const Impl *order[3] = {&kWrapped, &kReal, &kFloor};
          std::rotate(order, order + t % 3, order + 3);
          for (const Impl *impl : order) {
            double us = trial(*impl, nb, rank, buf, iters);
            (impl == &kWrapped ? w : impl == &kReal ? r : f).push_back(us);
            if (csv) std::fprintf(csv, "%s,%d,%s,%s,%d,%d,%.4f\n", mpi, bytes, mode, impl->name, t, iters, us);
          }
        }
        if (rank == 0) {
          double mw = median(w), mr = median(r), mf = median(f);
          // NOTE: the ratio (wrapped / real) stays the last field: bench/run_pingpong.sh reads it there.
          std::printf("pingpong %s %8d B %-17s wrapped %10.3f us  real %10.3f us  nb %10.3f us  nb/real %.3f  ratio %.3f\n",
                      mpi, bytes, mode, mw, mr, mf, mf / mr, mw / mr);
          std::fflush(stdout);
        }
      }
    }
  }
  if (csv) std::fclose(csv);
  PMPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
