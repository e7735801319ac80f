/* replica_comms: communicators other than MPI_COMM_WORLD, probes, send modes and MPI_Waitsome/Testsome,
 * for the replication tests (tests/mpi/replica_tests.cmake). Each round, on communicators made anew:
 * MPI_Comm_dup, MPI_Comm_split (ranks reversed by key), MPI_Comm_split_type (MPI_COMM_TYPE_SHARED: the test
 * runs on one host), MPI_Comm_create and MPI_Comm_create_group over a
 * group of MPI_Comm_group, MPI_Comm_dup_with_info and MPI_Comm_idup, compared with MPI_Comm_compare and
 * freed (or disconnected); point-to-point (a ring) and
 * Bcast/Allreduce/Allgather on them; MPI_COMM_SELF; MPI_Probe/MPI_Iprobe (named and MPI_ANY_SOURCE),
 * MPI_Mprobe/MPI_Mrecv and MPI_Improbe/MPI_Imrecv; MPI_Ssend/Issend, MPI_Rsend/Irsend, MPI_Bsend/Ibsend
 * (with MPI_Buffer_attach); MPI_Waitsome and MPI_Testsome. Rank 0 prints a checksum every 10 rounds;
 * every rank checks what it received, and rank 0 prints `cohort-test: rank 0 PASS` when all did. The output
 * is the same for any number of replicas and any replica deaths that leave each logical rank a replica.
 * (MPI 4.0: 7.4 communicator constructors and 7.3.1 group translation; 3.8 probes; 3.4 send modes; 3.7.5
 * Waitsome/Testsome.)
 *   replica_comms [rounds]   (default 60) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "replica_program.h"

static long long value(int rank, int round, int what) {
  return (long long)rank * 1000003LL + (long long)round * 7919LL + what * 104729LL;
}

static int ok = 1;
static unsigned long long sum = 0;
static void check(int cond, const char *what, int round) {
  if (!cond && ok) {
    fprintf(stderr, "check failed: %s (round %d)\n", what, round);
    ok = 0;
  }
}

/* A ring and three collectives on comm (rank numbering of comm); adds to the checksum. */
static void exercise(MPI_Comm comm, int round, int what) {
  int r, n;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &n);
  long long mine = value(r, round, what), got = -1;
  MPI_Status st;
  MPI_Sendrecv(&mine, 1, MPI_LONG_LONG, (r + 1) % n, 11, &got, 1, MPI_LONG_LONG, (r + n - 1) % n, 11, comm, &st);
  check(got == value((r + n - 1) % n, round, what) && st.MPI_SOURCE == (r + n - 1) % n, "ring on a communicator", round);
  long long b = r == n - 1 ? mine : 0;
  MPI_Bcast(&b, 1, MPI_LONG_LONG, n - 1, comm);
  check(b == value(n - 1, round, what), "bcast on a communicator", round);
  long long total = 0;
  MPI_Allreduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM, comm);
  long long all[64];
  MPI_Allgather(&mine, 1, MPI_LONG_LONG, all, 1, MPI_LONG_LONG, comm);
  long long want = 0;
  for (int i = 0; i < n && i < 64; ++i) {
    check(all[i] == value(i, round, what), "allgather on a communicator", round);
    want += all[i];
  }
  check(total == want, "allreduce on a communicator", round);
  sum = sum * 31 + (unsigned long long)total + (unsigned long long)n;
}

/* made as a duplicate of (or congruent to) comm: compared, then exercised */
static void congruent(MPI_Comm comm, MPI_Comm made, int round, int what, const char *name) {
  int cmp = -1;
  MPI_Comm_compare(comm, made, &cmp);
  check(cmp == MPI_CONGRUENT, name, round);
  exercise(made, round, what);
}

int main(int argc, char **argv) {
  int rank, size;
  int rounds = replica_program_start(&argc, &argv, &rank, &size, 60);
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  static char bsend_buf[1 << 16];
  MPI_Buffer_attach(bsend_buf, sizeof bsend_buf);
  MPI_Group world_group;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  for (int round = 0; round < rounds; ++round) {
    /* communicators */
    MPI_Comm dup, rev, created, grouped;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int cmp = -1;
    congruent(MPI_COMM_WORLD, dup, round, 1, "dup is congruent");
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
    int rr;
    MPI_Comm_rank(rev, &rr);
    check(rr == size - 1 - rank, "split reverses by key", round);
    MPI_Comm_compare(dup, rev, &cmp);
    check(cmp == (size > 1 ? MPI_SIMILAR : MPI_CONGRUENT), "split is similar", round);
    exercise(rev, round, 2);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    exercise(node, round, 8);
    MPI_Comm_free(&node);
    /* a group of the ranks but the last (all of them with one rank), in reverse order */
    int m = size > 1 ? size - 1 : 1, ranks[64];
    for (int i = 0; i < m; ++i) ranks[i] = m - 1 - i;
    MPI_Group part;
    MPI_Group_incl(world_group, m, ranks, &part);
    MPI_Comm_create(MPI_COMM_WORLD, part, &created);
    check((rank < m) == (created != MPI_COMM_NULL), "create: members only", round);
    if (created != MPI_COMM_NULL) {
      MPI_Group g;
      MPI_Comm_group(created, &g);
      int zero = 0, in_world = -1;
      MPI_Group_translate_ranks(g, 1, &zero, world_group, &in_world);
      check(in_world == m - 1, "group translation", round);
      MPI_Group_free(&g);
      exercise(created, round, 3);
      MPI_Comm_create_group(created, part, 5, &grouped);
      congruent(created, grouped, round, 4, "create_group is congruent");
      MPI_Comm_free(&grouped);
      MPI_Comm_free(&created);
    }
    MPI_Group_free(&part);
    /* point-to-point on MPI_COMM_SELF */
    long long self = value(rank, round, 5), self_got = -1;
    MPI_Sendrecv(&self, 1, MPI_LONG_LONG, 0, 1, &self_got, 1, MPI_LONG_LONG, 0, 1, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    check(self_got == self, "self", round);
    /* probes, on the dup: named Probe, ANY_SOURCE Probe, an Iprobe loop, Mprobe/Mrecv, Improbe/Imrecv */
    long long mine = value(rank, round, 6), got = -1;
    MPI_Status st;
    int count = 0, flag = 0;
    MPI_Send(&mine, 1, MPI_LONG_LONG, next, 21, dup);
    MPI_Probe(prev, 21, dup, &st);
    MPI_Get_count(&st, MPI_LONG_LONG, &count);
    check(count == 1 && st.MPI_SOURCE == prev && st.MPI_TAG == 21, "probe", round);
    MPI_Recv(&got, 1, MPI_LONG_LONG, prev, 21, dup, MPI_STATUS_IGNORE);
    check(got == value(prev, round, 6), "probed message", round);
    if (rank == 0) {
      long long total = 0;
      for (int k = 1; k < size; ++k) {
        MPI_Probe(MPI_ANY_SOURCE, 22, dup, &st);
        int src = st.MPI_SOURCE;
        MPI_Recv(&got, 1, MPI_LONG_LONG, MPI_ANY_SOURCE, 22, dup, &st);
        check(st.MPI_SOURCE == src && got == value(src, round, 7), "probe then MPI_ANY_SOURCE receive", round);
        total += got;
      }
      sum = sum * 31 + (unsigned long long)total;
    } else {
      long long v = value(rank, round, 7);
      MPI_Send(&v, 1, MPI_LONG_LONG, 0, 22, dup);
    }
    MPI_Send(&mine, 1, MPI_LONG_LONG, prev, 23, dup);
    flag = 0;
    while (!flag) MPI_Iprobe(MPI_ANY_SOURCE, 23, dup, &flag, &st);
    check(st.MPI_SOURCE == next, "iprobe source", round);
    MPI_Message msg;
    MPI_Mprobe(next, 23, dup, &msg, &st);
    MPI_Mrecv(&got, 1, MPI_LONG_LONG, &msg, MPI_STATUS_IGNORE);
    check(got == value(next, round, 6) && msg == MPI_MESSAGE_NULL, "mprobe/mrecv", round);
    MPI_Send(&mine, 1, MPI_LONG_LONG, next, 24, dup);
    flag = 0;
    while (!flag) MPI_Improbe(prev, 24, dup, &flag, &msg, &st);
    MPI_Request rq;
    MPI_Imrecv(&got, 1, MPI_LONG_LONG, &msg, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    check(got == value(prev, round, 6), "improbe/imrecv", round);
    /* send modes: the receives are posted first (Rsend needs them), then a barrier */
    long long in[6] = {-1, -1, -1, -1, -1, -1}, out[6];
    MPI_Request rr6[6], sr[3];
    for (int i = 0; i < 6; ++i) {
      out[i] = value(rank, round, 10 + i);
      MPI_Irecv(&in[i], 1, MPI_LONG_LONG, prev, 30 + i, dup, &rr6[i]);
    }
    MPI_Barrier(dup);
    MPI_Ssend(&out[0], 1, MPI_LONG_LONG, next, 30, dup);
    MPI_Rsend(&out[1], 1, MPI_LONG_LONG, next, 31, dup);
    MPI_Bsend(&out[2], 1, MPI_LONG_LONG, next, 32, dup);
    MPI_Issend(&out[3], 1, MPI_LONG_LONG, next, 33, dup, &sr[0]);
    MPI_Irsend(&out[4], 1, MPI_LONG_LONG, next, 34, dup, &sr[1]);
    MPI_Ibsend(&out[5], 1, MPI_LONG_LONG, next, 35, dup, &sr[2]);
    /* Waitsome over the receives, then a Testsome loop over the sends */
    int done = 0, outcount, idx[6];
    while (done < 6) {
      MPI_Waitsome(6, rr6, &outcount, idx, MPI_STATUSES_IGNORE);
      check(outcount >= 1, "waitsome returns one at least", round);
      done += outcount;
    }
    for (int i = 0; i < 6; ++i) check(in[i] == value(prev, round, 10 + i), "send modes", round);
    done = 0;
    while (done < 3) {
      MPI_Testsome(3, sr, &outcount, idx, MPI_STATUSES_IGNORE);
      if (outcount != MPI_UNDEFINED) done += outcount;
    }
    sum = sum * 31 + (unsigned long long)in[0];
    /* the other duplicates: with info, nonblocking, and disconnected */
    MPI_Comm dinfo, didup;
    MPI_Request dreq;
    MPI_Comm_dup_with_info(rev, MPI_INFO_NULL, &dinfo);
    MPI_Comm_idup(dinfo, &didup, &dreq);
    MPI_Wait(&dreq, MPI_STATUS_IGNORE);
    congruent(rev, didup, round, 9, "dup_with_info and idup are congruent");
    MPI_Comm_free(&dinfo);
    MPI_Comm_disconnect(&didup);
    MPI_Comm_free(&rev);
    MPI_Comm_free(&dup);
    if (rank == 0 && (round + 1) % 10 == 0) {
      printf("round %d: checksum %016llx\n", round + 1, sum);
      fflush(stdout);
    }
    usleep(2000);
  }
  void *b;
  int bs;
  MPI_Buffer_detach(&b, &bs);
  MPI_Group_free(&world_group);
  return replica_program_finish(ok);
}
