/* replica_ring: a program whose output depends on every message, for the replication tests
 * (tests/mpi/replica_tests.cmake). Each round: a token goes round the ring (MPI_Send/MPI_Recv); neighbours
 * exchange with MPI_Sendrecv, with MPI_Isend/MPI_Irecv/MPI_Waitall, and with MPI_Waitany, MPI_Testall and
 * MPI_Testany; rank 0 collects one value from every other rank with MPI_ANY_SOURCE receives and waits for
 * one more with an MPI_Test loop; Barrier, Bcast, Reduce, Allreduce and Gather run over all ranks. Rank 0
 * prints a checksum every 25 rounds; every rank checks what it received against what the senders
 * computed, and rank 0 prints `cohort-test: rank 0 PASS` when all did (FAIL otherwise). The output is the
 * same for any number of replicas and any replica deaths that leave each logical rank a replica
 * (docs/design/replication.md).
 *   replica_ring [rounds]   (default 200; each round sleeps 2 ms, so that a timed kill lands mid-run) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "replica_program.h"

static long long value(int rank, int round) { return (long long)rank * 1000003LL + (long long)round * 7919LL; }

int main(int argc, char **argv) {
  int rank, size;
  int rounds = replica_program_start(&argc, &argv, &rank, &size, 200);
  int ok = 1;
  unsigned long long sum = 0;
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  for (int round = 0; round < rounds; ++round) {
    /* the token: rank 0 starts it, each rank adds its value */
    long long token = 0;
    if (rank == 0) {
      token = value(0, round);
      MPI_Send(&token, 1, MPI_LONG_LONG, next, 1, MPI_COMM_WORLD);
      MPI_Recv(&token, 1, MPI_LONG_LONG, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      long long want = 0;
      for (int r = 0; r < size; ++r) want += value(r, round);
      if (token != want) ok = 0;
    } else {
      MPI_Recv(&token, 1, MPI_LONG_LONG, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      token += value(rank, round);
      MPI_Send(&token, 1, MPI_LONG_LONG, next, 1, MPI_COMM_WORLD);
    }
    sum = sum * 31 + (unsigned long long)token;
    /* neighbours: Sendrecv, then Isend/Irecv/Waitall */
    long long mine = value(rank, round), got = -1, got2 = -1;
    MPI_Status st;
    MPI_Sendrecv(&mine, 1, MPI_LONG_LONG, next, 2, &got, 1, MPI_LONG_LONG, prev, 2, MPI_COMM_WORLD, &st);
    if (got != value(prev, round) || st.MPI_SOURCE != prev || st.MPI_TAG != 2) ok = 0;
    MPI_Request reqs[2];
    MPI_Irecv(&got2, 1, MPI_LONG_LONG, next, 3, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(&mine, 1, MPI_LONG_LONG, prev, 3, MPI_COMM_WORLD, &reqs[1]);
    MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    if (got2 != value(next, round)) ok = 0;
    /* MPI_Waitany over two receives, then an MPI_Testall loop and an MPI_Testany loop */
    long long a = -1, c = -1, d = -1;
    MPI_Request rq[4], r1;
    MPI_Irecv(&a, 1, MPI_LONG_LONG, prev, 6, MPI_COMM_WORLD, &rq[0]);
    MPI_Irecv(&c, 1, MPI_LONG_LONG, next, 7, MPI_COMM_WORLD, &rq[1]);
    MPI_Isend(&mine, 1, MPI_LONG_LONG, next, 6, MPI_COMM_WORLD, &rq[2]);
    MPI_Isend(&mine, 1, MPI_LONG_LONG, prev, 7, MPI_COMM_WORLD, &rq[3]);
    int idx = -1, fl = 0;
    MPI_Waitany(2, rq, &idx, MPI_STATUS_IGNORE);
    if ((idx != 0 && idx != 1) || rq[idx] != MPI_REQUEST_NULL) ok = 0;
    while (!fl) MPI_Testall(4, rq, &fl, MPI_STATUSES_IGNORE);
    if (a != value(prev, round) || c != value(next, round)) ok = 0;
    MPI_Irecv(&d, 1, MPI_LONG_LONG, prev, 8, MPI_COMM_WORLD, &r1);
    MPI_Send(&mine, 1, MPI_LONG_LONG, next, 8, MPI_COMM_WORLD);
    fl = 0;
    while (!fl) MPI_Testany(1, &r1, &idx, &fl, MPI_STATUS_IGNORE);
    if (idx != 0 || d != value(prev, round)) ok = 0;
    /* MPI_ANY_SOURCE at rank 0: the sum does not depend on the order of arrival */
    if (rank == 0) {
      long long total = 0;
      for (int k = 1; k < size; ++k) {
        long long v;
        MPI_Recv(&v, 1, MPI_LONG_LONG, MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &st);
        if (v != value(st.MPI_SOURCE, round) + 1) ok = 0;
        total += v;
      }
      sum = sum * 31 + (unsigned long long)total;
    } else {
      long long v = value(rank, round) + 1;
      MPI_Send(&v, 1, MPI_LONG_LONG, 0, 4, MPI_COMM_WORLD);
    }
    /* an MPI_Test loop: rank 0's replicas follow their leader's flags */
    if (rank == 0 && size > 1) {
      long long v = -1;
      int flag = 0;
      MPI_Request r;
      MPI_Irecv(&v, 1, MPI_LONG_LONG, size - 1, 5, MPI_COMM_WORLD, &r);
      while (!flag) MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
      if (v != value(size - 1, round) * 2) ok = 0;
    } else if (rank == size - 1 && size > 1) {
      long long v = value(rank, round) * 2;
      MPI_Send(&v, 1, MPI_LONG_LONG, 0, 5, MPI_COMM_WORLD);
    }
    /* collectives */
    MPI_Barrier(MPI_COMM_WORLD);
    long long b = rank == 0 ? value(0, round) + 5 : 0;
    MPI_Bcast(&b, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    if (b != value(0, round) + 5) ok = 0;
    double x = 1.0 / (double)(rank + 1 + round), red = 0, all = 0;
    MPI_Reduce(&x, &red, 1, MPI_DOUBLE, MPI_SUM, size - 1, MPI_COMM_WORLD);
    MPI_Allreduce(&x, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rank == size - 1 && red != all) ok = 0;
    int g[64];
    int me = rank * 10 + round % 10;
    MPI_Gather(&me, 1, MPI_INT, g, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      for (int r = 0; r < size && r < 64; ++r)
        if (g[r] != r * 10 + round % 10) ok = 0;
      unsigned long long bits;
      memcpy(&bits, &all, sizeof bits);
      sum = sum * 31 + bits;
    }
    if (rank == 0 && (round + 1) % 25 == 0) {
      printf("round %d: checksum %016llx\n", round + 1, sum);
      fflush(stdout);
    }
    usleep(2000);
  }
  return replica_program_finish(ok);
}
