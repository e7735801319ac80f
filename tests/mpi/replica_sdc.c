/* replica_sdc: a program for silent data corruption checking under replication (docs/design/sdc.md;
 * tests/mpi/replica_sdc.sh). Its control flow does not depend on the data, so that a corrupted value
 * changes what it prints, never which calls it makes. Each round: a ring exchange of a long long array
 * (MPI_Send/MPI_Recv), MPI_Sendrecv of a double, MPI_Isend/MPI_Irecv/MPI_Waitall; a vector datatype with
 * holes whose gaps are never initialised; a struct type with padding (uninitialised); MPI_Bcast,
 * MPI_Reduce and MPI_Allreduce of doubles (floating-point sums), MPI_Gather, MPI_Allgather, MPI_Barrier.
 * Every rank folds what it received into a checksum; rank 0 prints every rank's checksum at the end,
 * then `cohort-test: rank 0 PASS` when the data were as computed (FAIL otherwise).
 *   replica_sdc [rounds]   (default 20; each round sleeps 2 ms) */
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "replica_program.h"

struct rec {
  char c;   /* 7 bytes of padding follow, never initialised */
  double d;
  int i;    /* 4 more at the end */
};

static uint64_t fold(uint64_t sum, const void *p, size_t n) {
  const unsigned char *b = (const unsigned char *)p;
  for (size_t k = 0; k < n; ++k) sum = (sum ^ b[k]) * 1099511628211ULL;
  return sum;
}

int main(int argc, char **argv) {
  int rank, size;
  int rounds = replica_program_start(&argc, &argv, &rank, &size, 20);
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  int ok = 1;
  uint64_t sum = 1469598103934665603ULL;

  /* the vector type: 4 ints at stride 2 (the odd slots are holes) */
  MPI_Datatype vec;
  MPI_Type_vector(4, 1, 2, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  /* the struct type, its extent with the padding */
  MPI_Datatype rec_t;
  int lens[3] = {1, 1, 1};
  MPI_Aint disp[3] = {offsetof(struct rec, c), offsetof(struct rec, d), offsetof(struct rec, i)};
  MPI_Datatype types[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
  MPI_Type_create_struct(3, lens, disp, types, &rec_t);
  MPI_Datatype rec_r;
  MPI_Type_create_resized(rec_t, 0, sizeof(struct rec), &rec_r);
  MPI_Type_commit(&rec_r);

  for (int round = 0; round < rounds; ++round) {
    long long a[4], b[4];
    for (int k = 0; k < 4; ++k) a[k] = (long long)rank * 1000003LL + round * 31 + k;
    if (rank % 2 == 0) {
      MPI_Send(a, 4, MPI_LONG_LONG, next, 1, MPI_COMM_WORLD);
      MPI_Recv(b, 4, MPI_LONG_LONG, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(b, 4, MPI_LONG_LONG, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(a, 4, MPI_LONG_LONG, next, 1, MPI_COMM_WORLD);
    }
    if (b[3] != (long long)prev * 1000003LL + round * 31 + 3) ok = 0;
    sum = fold(sum, b, sizeof b);

    double x = rank + round / 7.0, y = 0;
    MPI_Sendrecv(&x, 1, MPI_DOUBLE, next, 2, &y, 1, MPI_DOUBLE, prev, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    sum = fold(sum, &y, sizeof y);

    int out = rank * 7 + round, in = -1;
    MPI_Request rq[2];
    MPI_Status st[2];
    MPI_Irecv(&in, 1, MPI_INT, prev, 3, MPI_COMM_WORLD, &rq[0]);
    MPI_Isend(&out, 1, MPI_INT, next, 3, MPI_COMM_WORLD, &rq[1]);
    MPI_Waitall(2, rq, st);
    if (in != prev * 7 + round) ok = 0;
    sum = fold(sum, &in, sizeof in);

    /* holes never initialised: only the even slots are written */
    int *v = malloc(8 * sizeof(int)), *w = malloc(8 * sizeof(int));
    for (int k = 0; k < 8; k += 2) v[k] = rank * 100 + round + k;
    for (int k = 0; k < 8; k += 2) w[k] = 0;
    MPI_Sendrecv(v, 1, vec, next, 4, w, 1, vec, prev, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int k = 0; k < 8; k += 2) {
      if (w[k] != prev * 100 + round + k) ok = 0;
      sum = fold(sum, &w[k], sizeof w[k]);
    }
    free(v);
    free(w);

    /* the struct: its padding never initialised */
    struct rec *r = malloc(2 * sizeof *r), *s = malloc(2 * sizeof *s);
    for (int k = 0; k < 2; ++k) {
      r[k].c = (char)('a' + rank + k);
      r[k].d = rank + round * 0.25 + k;
      r[k].i = rank * 3 + k;
    }
    MPI_Request rr[2];
    MPI_Irecv(s, 2, rec_r, prev, 5, MPI_COMM_WORLD, &rr[0]);
    MPI_Isend(r, 2, rec_r, next, 5, MPI_COMM_WORLD, &rr[1]);
    MPI_Status rs[2];
    MPI_Waitall(2, rr, rs);
    for (int k = 0; k < 2; ++k) {
      if (s[k].i != prev * 3 + k || s[k].c != (char)('a' + prev + k)) ok = 0;
      sum = fold(sum, &s[k].c, 1);
      sum = fold(sum, &s[k].d, sizeof s[k].d);
      sum = fold(sum, &s[k].i, sizeof s[k].i);
    }
    free(r);
    free(s);

    /* collectives: floating-point sums in every reduction */
    double bc[3] = {round * 0.1, round * 0.2, round * 0.3};
    MPI_Bcast(bc, 3, MPI_DOUBLE, round % size, MPI_COMM_WORLD);
    sum = fold(sum, bc, sizeof bc);
    double contrib[2] = {rank * 0.1 + round / 3.0, 1.0 / (rank + round + 1)}, red[2] = {0, 0}, all[2] = {0, 0};
    MPI_Reduce(contrib, red, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) sum = fold(sum, red, sizeof red);
    MPI_Allreduce(contrib, all, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    sum = fold(sum, all, sizeof all);
    int mine[2] = {rank, round}, *gath = malloc(2 * size * sizeof(int));
    MPI_Gather(mine, 2, MPI_INT, gath, 2, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) sum = fold(sum, gath, 2 * size * sizeof(int));
    MPI_Allgather(mine, 2, MPI_INT, gath, 2, MPI_INT, MPI_COMM_WORLD);
    for (int k = 0; k < size; ++k)
      if (gath[2 * k] != k || gath[2 * k + 1] != round) ok = 0;
    sum = fold(sum, gath, 2 * size * sizeof(int));
    free(gath);
    MPI_Barrier(MPI_COMM_WORLD);
    /* NOTE: a replica fenced early must be known dead before its twin prints (docs/design/replication.md,
     * "Output"): the rounds take a moment each. */
    struct timespec pause = {0, 2000000};
    nanosleep(&pause, NULL);
  }
  unsigned long long *sums = malloc(size * sizeof *sums), me = sum;
  MPI_Gather(&me, 1, MPI_UNSIGNED_LONG_LONG, sums, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  if (rank == 0)
    for (int k = 0; k < size; ++k) printf("rank %d checksum %016llx\n", k, sums[k]);
  free(sums);
  MPI_Type_free(&vec);
  MPI_Type_free(&rec_t);
  MPI_Type_free(&rec_r);
  return replica_program_finish(ok);
}
