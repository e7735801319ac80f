/* work_counter: a one-sided bag of tasks. Rank 0's window holds a shared counter; every rank takes the next
 * task with MPI_Fetch_and_op (+1) until the tasks run out, does it, and keeps what it did. Under cohort a
 * rank that dies takes the tasks it held with it: the survivors find them (an MPI_Allreduce of what each
 * did) and share them out again through a second counter, until every task is done.
 * Plain MPI; nothing cohort-specific.
 *
 * One MPI_Allreduce per round carries both what each rank did and the sum of its results, and the last one
 * is the answer. NOTE: a rank can die between two collectives; had the tasks done and the results been
 * added up by separate calls, its share could be in the first and missing from the second (a task done
 * "0 times", or a checksum short by its results).
 *
 *   work_counter [TASKS]      (default 200)
 *
 * Prints `work_counter: TASKS tasks done, each once by a survivor, checksum C` on rank 0, and
 * `cohort-test: rank R PASS ...` on every rank whose check passed: each task counted exactly once by the
 * last round's MPI_Allreduce, the checksum of the results equal to the sum computed directly. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the "work": about 0.1 ms of arithmetic, so that every rank takes tasks while the pool lasts */
static long task(long t) {
  unsigned long x = (unsigned long)t + 1;
  for (int i = 0; i < 20000; ++i) x = x * 6364136223846793005UL + 1442695040888963407UL;
  return (long)(x % 1000003UL);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long ntasks = argc > 1 ? atol(argv[1]) : 200;
  long *counter = NULL;  /* slot r: the counter of round r (rank 0's window; 8 rounds at most) */
  MPI_Win win;
  MPI_Win_allocate(rank == 0 ? 8 * (MPI_Aint)sizeof(long) : 0, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &counter, &win);
  if (rank == 0) memset(counter, 0, 8 * sizeof(long));
  MPI_Barrier(MPI_COMM_WORLD);
  /* mine[t]: 1 if this rank did task t; mine[ntasks]: the sum of its results. acc: the same added up over
   * the ranks that took part in the round's MPI_Allreduce (a dead rank's share is absent) */
  long *mine = calloc((size_t)ntasks + 1, sizeof(long)), *acc = calloc((size_t)ntasks + 1, sizeof(long));
  long *todo = malloc((size_t)ntasks * sizeof(long)), ntodo = ntasks;
  for (long t = 0; t < ntasks; ++t) todo[t] = t;
  long one = 1;
  int round = 0;
  while (ntodo > 0 && round < 8) {
    MPI_Win_lock_all(0, win);
    for (;;) {
      long i = -1;
      MPI_Fetch_and_op(&one, &i, MPI_LONG, 0, round, MPI_SUM, win);
      MPI_Win_flush(0, win);
      if (i >= ntodo) break;
      mine[ntasks] += task(todo[i]);
      mine[todo[i]] = 1;
    }
    MPI_Win_unlock_all(win);
    MPI_Allreduce(mine, acc, (int)ntasks + 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    ntodo = 0;
    for (long t = 0; t < ntasks; ++t)
      if (!acc[t]) todo[ntodo++] = t;
    ++round;
  }
  /* the check, on the last round's sums (the same on every survivor) */
  long total = acc[ntasks], want = 0;
  for (long t = 0; t < ntasks; ++t) want += task(t);
  long bad = -1;
  for (long t = 0; t < ntasks && bad < 0; ++t)
    if (acc[t] != 1) bad = t;
  if (rank == 0)
    printf("work_counter: %ld tasks done, %s, checksum %ld (%d rounds)\n", ntasks,
           bad < 0 ? "each once by a survivor" : "NOT each once", total, round);
  if (bad >= 0) printf("cohort-test: rank %d FAIL task %ld done %ld times\n", rank, bad, acc[bad]);
  else if (total != want) printf("cohort-test: rank %d FAIL checksum %ld, want %ld\n", rank, total, want);
  else printf("cohort-test: rank %d PASS %ld tasks, each once\n", rank, ntasks);
  fflush(stdout);
  MPI_Win_free(&win);
  MPI_Finalize();
  return bad < 0 && total == want ? 0 : 1;
}
