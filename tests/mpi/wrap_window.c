/* Deferred confirmation (COHORT_CONFIRM_WINDOW, wrap/core/deferred.hpp): a loop of small collectives on
 * MPI_COMM_WORLD while a rank dies with calls still unconfirmed, and every survivor's buffers checked
 * against the uniform outcome.
 *
 *   wrap_window ITER PATTERN [lag=R[+R...]]
 *     PATTERN mixed: call i is Bcast (root 0), Allreduce, Reduce (root 3) or Barrier by i % 4;
 *             mixed_alltoall: call i is Barrier, Bcast, Reduce, Alltoall or Allreduce by i % 5 (an
 *             Alltoall is never deferred: its confirmation confirms the Bcast and Reduce pending before it);
 *             bcast: every call is a Bcast from root 0 (the root runs up to W calls ahead);
 *             allreduce, reduce, barrier: every call is of that kind (fault-free loops: the count
 *             reports that confirm them must reach every rank, also at the settle point after the loop);
 *     lag     these ranks sleep 1 ms before each call, so that the others run ahead in their window and
 *             the survivors stand at different window positions when the failure comes.
 * The failure comes from the environment: COHORT_INJECT_FAILURE=rank=V,at=confirm.deferred,hit=k (V dies
 * right after returning from a call whose confirmation is still pending) or at=bcast.posted.
 * Set COHORT_ON_DEAD_ROOT=skip: a Bcast whose root died before any survivor got its data leaves the buffer
 * untouched on every survivor.
 *
 * Assertions on every survivor, for every call i: a Bcast gave the root's value 1000 + i, or (root dead)
 * the untouched -1; an Allreduce of 1 << rank, and a Reduce at a surviving root, contain every final
 * survivor; and all survivors hold the same Bcast and Allreduce results (MPI_Allgather at the end). */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

#define MAXITER 256

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(argc >= 3, "usage: wrap_window ITER mixed|mixed_alltoall|bcast|allreduce|reduce|barrier [lag=R+R]");
  int iter = atoi(argv[1]);
  CHECK(iter > 0 && iter <= MAXITER, "ITER in 1..%d", MAXITER);
  static const char *const kinds[] = {"bcast", "allreduce", "reduce", "barrier"};
  int only = -1;
  for (int k = 0; k < 4; ++k) {
    if (strcmp(argv[2], kinds[k]) == 0) only = k;
  }
  const int mixed = strcmp(argv[2], "mixed_alltoall") == 0 ? 5 : 4;
  CHECK(only >= 0 || strcmp(argv[2], "mixed") == 0 || mixed == 5, "unknown pattern %s", argv[2]);
  unsigned lag = argc > 3 && strncmp(argv[3], "lag=", 4) == 0 ? parse_ranks(argv[3] + 4) : 0;
  const int reduce_root = size - 1;
  long long hist[MAXITER];
  int kind[MAXITER];
  for (int i = 0; i < iter; ++i) {
    if (lag & (1u << rank)) usleep(1000);
    static const int with_alltoall[5] = {3, 0, 2, 4, 1};
    int k = only >= 0 ? only : mixed == 5 ? with_alltoall[i % 5] : i % 4;
    kind[i] = k;
    long long v = -1;
    int rc = MPI_SUCCESS;
    if (k == 0) {
      if (rank == 0) v = 1000 + i;
      rc = MPI_Bcast(&v, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    } else if (k == 1) {
      long long mine = 1LL << rank;
      rc = MPI_Allreduce(&mine, &v, 1, MPI_LONG_LONG, MPI_BOR, MPI_COMM_WORLD);
    } else if (k == 2) {
      long long mine = 1LL << rank;
      rc = MPI_Reduce(&mine, &v, 1, MPI_LONG_LONG, MPI_BOR, reduce_root, MPI_COMM_WORLD);
    } else if (k == 3) {
      rc = MPI_Barrier(MPI_COMM_WORLD);
    } else {
      long long out[64], in[64];
      for (int r = 0; r < size; ++r) out[r] = 1LL << rank, in[r] = 0;
      rc = MPI_Alltoall(out, 1, MPI_LONG_LONG, in, 1, MPI_LONG_LONG, MPI_COMM_WORLD);
      v = 0;
      for (int r = 0; r < size; ++r) v |= in[r];
    }
    CHECK(rc == MPI_SUCCESS, "call %d (kind %d) returned %d", i, k, rc);
    hist[i] = v;
  }
  /* The final survivors, then everyone's history (a collective that settles every confirmation). */
  long long mine = 1LL << rank, survivors = 0;
  MPI_Allreduce(&mine, &survivors, 1, MPI_LONG_LONG, MPI_BOR, MPI_COMM_WORLD);
  CHECK(survivors & mine, "this rank is not among the survivors %#llx", survivors);
  long long *all = malloc(sizeof(long long) * (size_t)iter * (size_t)size);
  for (int i = 0; i < iter * size; ++i) all[i] = -2;
  CHECK(MPI_Allgather(hist, iter, MPI_LONG_LONG, all, iter, MPI_LONG_LONG, MPI_COMM_WORLD) == MPI_SUCCESS, "allgather");
  int root_alive = (survivors & 1) != 0, reduce_root_alive = (survivors >> reduce_root) & 1;
  for (int i = 0; i < iter; ++i) {
    long long v = hist[i];
    if (kind[i] == 0) {
      CHECK(v == 1000 + i || (!root_alive && v == -1), "Bcast %d gave %lld", i, v);
    } else if (kind[i] == 1) {
      CHECK((v & survivors) == survivors && (v >> size) == 0, "Allreduce %d: contributors %#llx, survivors %#llx", i,
            v, survivors);
    } else if (kind[i] == 4) {
      CHECK((v & survivors) == survivors && (v >> size) == 0, "Alltoall %d: senders %#llx, survivors %#llx", i, v,
            survivors);
    } else if (kind[i] == 2 && rank == reduce_root) {
      CHECK((v & survivors) == survivors && (v >> size) == 0, "Reduce %d: contributors %#llx, survivors %#llx", i, v,
            survivors);
    }
    for (int r = 0; r < size; ++r) {
      if (!((survivors >> r) & 1) || kind[i] > 1) continue;
      CHECK(all[r * iter + i] == v, "call %d: rank %d has %lld, this rank %lld (not uniform)", i, r, all[r * iter + i], v);
    }
  }
  free(all);
  TEST_PASS("%d calls, survivors %#llx", iter, survivors);
  MPI_Finalize();
  return 0;
}
