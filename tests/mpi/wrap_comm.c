/* The communicator constructors and queries beyond dup/split: MPI_Comm_create,
 * MPI_Comm_split_type, MPI_Comm_idup, MPI_Comm_dup_with_info, MPI_Comm_compare, MPI_Comm_group,
 * MPI_Comm_disconnect.
 *
 *   wrap_comm equiv        fault-free: each constructor gives the communicator raw MPI (PMPI_*) gives
 *                          (MPI_CONGRUENT: same members in the same order), the queries answer as MPI's
 *   wrap_comm degraded V   rank V kills itself first; once the survivors know it (a barrier), the same
 *                          calls on the degraded MPI_COMM_WORLD and on a duplicate made before the death:
 *                          sizes, members, compare and group answers asserted on every survivor. */
#include <mpi.h>
#include <signal.h>
#include <string.h>

#include <cohort/cohort.h>

#include "check.h"

static int rank, size;

/* The communicator's members as MPI_COMM_WORLD ranks, in its rank order, through the wrapped Allgather. */
static void world_ranks(MPI_Comm c, int *out, int *n) {
  MPI_Comm_size(c, n);
  CHECK(MPI_Allgather(&rank, 1, MPI_INT, out, 1, MPI_INT, c) == MPI_SUCCESS, "Allgather on the new communicator");
}

static void same_as_raw(MPI_Comm ours, MPI_Comm raw, const char *what) {
  CHECK((ours == MPI_COMM_NULL) == (raw == MPI_COMM_NULL), "%s: null %d, raw MPI null %d", what, ours == MPI_COMM_NULL,
        raw == MPI_COMM_NULL);
  if (ours == MPI_COMM_NULL) return;
  int cmp = -1;
  PMPI_Comm_compare(ours, raw, &cmp);
  CHECK(cmp == MPI_CONGRUENT, "%s: raw MPI_Comm_compare with raw MPI's communicator gave %d", what, cmp);
  int w[64], n;
  world_ranks(ours, w, &n); /* and it works for a collective */
  PMPI_Comm_free(&raw);
}

static MPI_Group reversed_group(MPI_Comm comm, int parity) {
  int ranks[64], n = 0;
  for (int r = size - 1; r >= 0; --r)
    if (parity < 0 || r % 2 == parity) ranks[n++] = r;
  MPI_Group all, g;
  MPI_Comm_group(comm, &all);
  MPI_Group_incl(all, n, ranks, &g);
  MPI_Group_free(&all);
  return g;
}

static void equiv(void) {
  MPI_Comm ours, raw;
  /* MPI_Comm_create: the same group everywhere, then disjoint groups by parity, then a group without me */
  MPI_Group g = reversed_group(MPI_COMM_WORLD, -1);
  CHECK(MPI_Comm_create(MPI_COMM_WORLD, g, &ours) == MPI_SUCCESS, "MPI_Comm_create");
  PMPI_Comm_create(MPI_COMM_WORLD, g, &raw);
  same_as_raw(ours, raw, "create (all, reversed)");
  MPI_Comm_free(&ours);
  MPI_Group_free(&g);
  g = reversed_group(MPI_COMM_WORLD, rank % 2);
  CHECK(MPI_Comm_create(MPI_COMM_WORLD, g, &ours) == MPI_SUCCESS, "MPI_Comm_create (disjoint)");
  PMPI_Comm_create(MPI_COMM_WORLD, g, &raw);
  same_as_raw(ours, raw, "create (by parity)");
  MPI_Comm_free(&ours);
  MPI_Group_free(&g);
  g = reversed_group(MPI_COMM_WORLD, 0);
  CHECK(MPI_Comm_create(MPI_COMM_WORLD, g, &ours) == MPI_SUCCESS, "MPI_Comm_create (even ranks only)");
  PMPI_Comm_create(MPI_COMM_WORLD, g, &raw);
  same_as_raw(ours, raw, "create (even ranks)");
  if (ours != MPI_COMM_NULL) MPI_Comm_free(&ours);
  MPI_Group_free(&g);

  /* MPI_Comm_split_type: shared, with keys reversing the order; undefined */
  CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, size - rank, MPI_INFO_NULL, &ours) == MPI_SUCCESS,
        "MPI_Comm_split_type");
  PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, size - rank, MPI_INFO_NULL, &raw);
  same_as_raw(ours, raw, "split_type shared");
  /* a split of the new alias works too */
  MPI_Comm sub;
  CHECK(MPI_Comm_split_type(ours, rank == 0 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &sub) ==
            MPI_SUCCESS, "MPI_Comm_split_type of an alias");
  PMPI_Comm_split_type(ours, rank == 0 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &raw);
  same_as_raw(sub, raw, "split_type with MPI_UNDEFINED at rank 0");
  if (sub != MPI_COMM_NULL) MPI_Comm_free(&sub);
  MPI_Comm_free(&ours);
#ifdef OMPI_MAJOR_VERSION
  /* Open MPI's OMPI_COMM_TYPE_HOST: one host, as shared */
  CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, OMPI_COMM_TYPE_HOST, rank, MPI_INFO_NULL, &ours) == MPI_SUCCESS,
        "MPI_Comm_split_type host");
  PMPI_Comm_split_type(MPI_COMM_WORLD, OMPI_COMM_TYPE_HOST, rank, MPI_INFO_NULL, &raw);
  same_as_raw(ours, raw, "split_type host");
  MPI_Comm_free(&ours);
#endif

  /* MPI_Comm_idup, MPI_Comm_dup_with_info: congruent to the parent and to raw MPI's */
  MPI_Request req;
  CHECK(MPI_Comm_idup(MPI_COMM_WORLD, &ours, &req) == MPI_SUCCESS, "MPI_Comm_idup");
  CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS && req == MPI_REQUEST_NULL, "MPI_Wait on idup's request");
  PMPI_Comm_dup(MPI_COMM_WORLD, &raw);
  same_as_raw(ours, raw, "idup");
  MPI_Comm dup2;
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "mpi_assert_no_any_source", "true");
  CHECK(MPI_Comm_dup_with_info(ours, info, &dup2) == MPI_SUCCESS, "MPI_Comm_dup_with_info");
  MPI_Info_free(&info);
  PMPI_Comm_dup(MPI_COMM_WORLD, &raw);
  same_as_raw(dup2, raw, "dup_with_info");

  /* MPI_Comm_compare: identical, congruent (also a duplicate of a duplicate), similar, unequal */
  int cmp;
  MPI_Comm_compare(ours, ours, &cmp);
  CHECK(cmp == MPI_IDENT, "compare(idup, idup) = %d", cmp);
  MPI_Comm_compare(MPI_COMM_WORLD, dup2, &cmp);
  CHECK(cmp == MPI_CONGRUENT, "compare(world, dup of idup) = %d", cmp);
  MPI_Comm rev, half;
  MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &rev);
  MPI_Comm_compare(MPI_COMM_WORLD, rev, &cmp);
  CHECK(cmp == (size > 1 ? MPI_SIMILAR : MPI_CONGRUENT), "compare(world, reversed split) = %d", cmp);
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, 0, &half);
  MPI_Comm_compare(MPI_COMM_WORLD, half, &cmp);
  CHECK(cmp == (size > 1 ? MPI_UNEQUAL : MPI_CONGRUENT), "compare(world, half) = %d", cmp);

  /* MPI_Comm_group: as MPI's */
  MPI_Group ga, gb;
  MPI_Comm_group(dup2, &ga);
  PMPI_Comm_group(MPI_COMM_WORLD, &gb);
  MPI_Group_compare(ga, gb, &cmp);
  CHECK(cmp == MPI_IDENT, "group of dup_with_info vs world's: %d", cmp);
  MPI_Group_free(&ga);
  MPI_Group_free(&gb);

  /* MPI_Comm_disconnect */
  CHECK(MPI_Comm_disconnect(&dup2) == MPI_SUCCESS && dup2 == MPI_COMM_NULL, "MPI_Comm_disconnect");
  CHECK(MPI_Comm_disconnect(&ours) == MPI_SUCCESS && ours == MPI_COMM_NULL, "MPI_Comm_disconnect");
  MPI_Comm_free(&rev);
  MPI_Comm_free(&half);
#ifdef OMPI_MAJOR_VERSION
  const int split_types = 3; /* with OMPI_COMM_TYPE_HOST */
#else
  const int split_types = 2;
#endif
  CHECK(cohort_call_count("MPI_Comm_create") == 3 && cohort_call_count("MPI_Comm_split_type") == split_types &&
            cohort_call_count("MPI_Comm_idup") == 1 && cohort_call_count("MPI_Comm_dup_with_info") == 1 &&
            cohort_call_count("MPI_Comm_disconnect") == 2 && cohort_call_count("MPI_Comm_compare") == 4,
        "wrappers entered");
}

static void degraded(int victim) {
  MPI_Comm before;
  CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &before) == MPI_SUCCESS, "MPI_Comm_dup");
  if (rank == victim) raise(SIGKILL);
  CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS, "barrier after the death");
  CHECK(MPI_Barrier(before) == MPI_SUCCESS, "barrier on the duplicate made before the death");
  const int live = size - 1;
  int n, w[64], me;

  /* sizes and ranks of the old communicators never change; their groups still hold the dead rank */
  MPI_Comm_size(before, &n);
  MPI_Comm_rank(before, &me);
  CHECK(n == size && me == rank, "old duplicate: size %d rank %d", n, me);
  MPI_Group g, wg;
  MPI_Comm_group(before, &g);
  MPI_Group_size(g, &n);
  CHECK(n == size, "group of the old duplicate has %d members", n);
  MPI_Comm_group(MPI_COMM_WORLD, &wg);
  int in = victim, out = -1;
  MPI_Group_translate_ranks(wg, 1, &in, g, &out);
  CHECK(out == victim, "the dead rank %d is rank %d of the group", victim, out);
  MPI_Group_free(&g);

  /* new communicators hold the survivors, in order */
  MPI_Comm made[4];
  MPI_Request req;
  CHECK(MPI_Comm_create(MPI_COMM_WORLD, wg, &made[0]) == MPI_SUCCESS, "MPI_Comm_create (whole group)");
  CHECK(MPI_Comm_split_type(before, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &made[1]) == MPI_SUCCESS,
        "MPI_Comm_split_type");
  CHECK(MPI_Comm_idup(before, &made[2], &req) == MPI_SUCCESS && MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS,
        "MPI_Comm_idup");
  CHECK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &made[3]) == MPI_SUCCESS, "MPI_Comm_dup_with_info");
  for (int k = 0; k < 4; ++k) {
    world_ranks(made[k], w, &n);
    CHECK(n == live, "constructor %d: size %d of %d survivors", k, n, live);
    for (int i = 0; i < n; ++i)
      CHECK(w[i] == (i < victim ? i : i + 1), "constructor %d: member %d is world rank %d", k, i, w[i]);
  }
  MPI_Group_free(&wg);

  /* compare: duplicates stay congruent although they hold the survivors only */
  int cmp;
  MPI_Comm_compare(before, before, &cmp);
  CHECK(cmp == MPI_IDENT, "compare(old dup, itself) = %d", cmp);
  MPI_Comm_compare(MPI_COMM_WORLD, before, &cmp);
  CHECK(cmp == MPI_CONGRUENT, "compare(world, old dup) = %d", cmp);
  MPI_Comm_compare(MPI_COMM_WORLD, made[3], &cmp);
  CHECK(cmp == MPI_CONGRUENT, "compare(world, dup_with_info after the death) = %d", cmp);
  MPI_Comm_compare(before, made[2], &cmp);
  CHECK(cmp == MPI_CONGRUENT, "compare(old dup, its idup after the death) = %d", cmp);
  MPI_Comm_compare(MPI_COMM_WORLD, made[0], &cmp);
  CHECK(cmp == MPI_UNEQUAL, "compare(world, create over the survivors) = %d", cmp);

  /* disconnect of a communicator with a dead member returns (a barrier among the survivors) */
  CHECK(MPI_Comm_disconnect(&before) == MPI_SUCCESS && before == MPI_COMM_NULL, "MPI_Comm_disconnect");
  for (int k = 0; k < 4; ++k) CHECK(MPI_Comm_disconnect(&made[k]) == MPI_SUCCESS, "MPI_Comm_disconnect %d", k);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(argc >= 2 && size <= 64, "usage: wrap_comm equiv | degraded V");
  if (!strcmp(argv[1], "equiv")) {
    equiv();
  } else {
    CHECK(!strcmp(argv[1], "degraded") && argc == 3, "usage: wrap_comm equiv | degraded V");
    degraded(atoi(argv[2]));
  }
  TEST_PASS("wrap_comm %s", argv[1]);
  MPI_Finalize();
  return 0;
}
