/* bench/instructions: the code paths that bench/pingpong times, reduced to work that never waits, so that
 * an instruction count (valgrind --tool=callgrind) is the same from run to run whatever the machine does.
 * One rank sends 8 B messages to itself, the matching call always posted first:
 *   send-recv         MPI_Irecv + MPI_Send + MPI_Wait, then MPI_Isend + MPI_Recv + MPI_Wait
 *                     (one message each way: both ends of a blocking round trip, in one rank);
 *   isend-irecv-wait  twice MPI_Irecv + MPI_Isend + MPI_Wait (send) + MPI_Wait (receive);
 *   entry             MPI_Comm_rank (a wrapper that only counts the call; what entering cohort costs);
 *   collectives       MPI_Bcast + MPI_Allreduce of one double on MPI_COMM_WORLD (run with 1 rank: cohort's
 *                     whole collective path, the confirming barrier included, with nothing to wait for).
 * Each loop runs once through cohort (MPI_X) and once through the MPI library (real: __real_MPI_X under
 * --wrap, PMPI_X in the preload build). Built twice, as bench/entry: `instructions` (linked with --wrap)
 * and `instructions_preload` (plain; run under `cohort-run --preload`).
 *
 *   instructions [iterations]   (default 2000; warm-up of iterations/10 first, not measured)
 *
 * The measured loops are the functions measure_<case>_<cohort|real> (callgrind --toggle-collect=measure_*:
 * bench/run_preload.sh divides their inclusive counts by the iterations, printed by rank 0 as
 * `instructions <mpi> iterations N`). Without valgrind it prints ns per iteration (noisy, for a look). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*send_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
typedef int (*recv_fn)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *);
typedef int (*isend_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
typedef int (*irecv_fn)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
typedef int (*wait_fn)(MPI_Request *, MPI_Status *);
typedef int (*rank_fn)(MPI_Comm, int *);
typedef int (*bcast_fn)(void *, int, MPI_Datatype, int, MPI_Comm);
typedef int (*allreduce_fn)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);

struct impl {
  send_fn send;
  recv_fn recv;
  isend_fn isend;
  irecv_fn irecv;
  wait_fn wait;
  rank_fn rank;
  bcast_fn bcast;
  allreduce_fn allreduce;
};

#ifdef COHORT_BENCH_PRELOAD
/* instructions_preload: MPI_X is libcohort-preload.so's entry point, PMPI_X the MPI library's own. */
#define REAL(x) P##x
#else
int __real_MPI_Send(const void *, int, MPI_Datatype, int, int, MPI_Comm);
int __real_MPI_Recv(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *);
int __real_MPI_Isend(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
int __real_MPI_Irecv(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
int __real_MPI_Wait(MPI_Request *, MPI_Status *);
int __real_MPI_Comm_rank(MPI_Comm, int *);
int __real_MPI_Bcast(void *, int, MPI_Datatype, int, MPI_Comm);
int __real_MPI_Allreduce(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
#define REAL(x) __real_##x
#endif

static const struct impl cohort = {MPI_Send,  MPI_Recv,      MPI_Isend, MPI_Irecv,
                                   MPI_Wait,  MPI_Comm_rank, MPI_Bcast, MPI_Allreduce};
static const struct impl real = {REAL(MPI_Send),      REAL(MPI_Recv),  REAL(MPI_Isend),
                                 REAL(MPI_Irecv),     REAL(MPI_Wait),  REAL(MPI_Comm_rank),
                                 REAL(MPI_Bcast),     REAL(MPI_Allreduce)};

static int self;
static char out[8], in[8];

/* NOTE: noinline and called through volatile pointers, so that each measured loop is one function whose
 * inclusive count is exactly its iterations (callgrind attributes by function). */
#define LOOP __attribute__((noinline))

static LOOP void send_recv(const struct impl *m, int n) {
  MPI_Request r;
  for (int i = 0; i < n; ++i) {
    m->irecv(in, 8, MPI_CHAR, self, 1, MPI_COMM_WORLD, &r);
    m->send(out, 8, MPI_CHAR, self, 1, MPI_COMM_WORLD);
    m->wait(&r, MPI_STATUS_IGNORE);
    m->isend(out, 8, MPI_CHAR, self, 2, MPI_COMM_WORLD, &r);
    m->recv(in, 8, MPI_CHAR, self, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    m->wait(&r, MPI_STATUS_IGNORE);
  }
}

static LOOP void isend_irecv_wait(const struct impl *m, int n) {
  MPI_Request s, r;
  for (int i = 0; i < 2 * n; ++i) {
    m->irecv(in, 8, MPI_CHAR, self, 3, MPI_COMM_WORLD, &r);
    m->isend(out, 8, MPI_CHAR, self, 3, MPI_COMM_WORLD, &s);
    m->wait(&s, MPI_STATUS_IGNORE);
    m->wait(&r, MPI_STATUS_IGNORE);
  }
}

static LOOP void entry(const struct impl *m, int n) {
  int r;
  for (int i = 0; i < n; ++i) m->rank(MPI_COMM_WORLD, &r);
}

static LOOP void collectives(const struct impl *m, int n) {
  double x = 1.0, sum = 0.0;
  for (int i = 0; i < n; ++i) {
    m->bcast(&x, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    m->allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
}

/* The measured functions: one per case and path (their names are what callgrind selects). */
static int iterations;
LOOP void measure_sendrecv_cohort(void) { send_recv(&cohort, iterations); }
LOOP void measure_sendrecv_real(void) { send_recv(&real, iterations); }
LOOP void measure_isendirecvwait_cohort(void) { isend_irecv_wait(&cohort, iterations); }
LOOP void measure_isendirecvwait_real(void) { isend_irecv_wait(&real, iterations); }
LOOP void measure_entry_cohort(void) { entry(&cohort, iterations); }
LOOP void measure_entry_real(void) { entry(&real, iterations); }
LOOP void measure_collectives_cohort(void) { collectives(&cohort, iterations); }
LOOP void measure_collectives_real(void) { collectives(&real, iterations); }

static void (*volatile const measured[])(void) = {measure_sendrecv_cohort,       measure_sendrecv_real,
                                                  measure_isendirecvwait_cohort, measure_isendirecvwait_real,
                                                  measure_entry_cohort,          measure_entry_real,
                                                  measure_collectives_cohort,    measure_collectives_real};
static const char *const names[] = {"send-recv cohort",        "send-recv real", "isend-irecv-wait cohort",
                                    "isend-irecv-wait real",   "entry cohort",   "entry real",
                                    "collectives cohort",      "collectives real"};

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  iterations = argc > 1 ? atoi(argv[1]) : 2000;
  if (iterations < 1) iterations = 2000;
  PMPI_Comm_rank(MPI_COMM_WORLD, &self);
  /* warm-up: first calls allocate (cohort's per-thread counters, MPI's request pools, connections) */
  send_recv(&cohort, iterations / 10 + 1);
  send_recv(&real, iterations / 10 + 1);
  isend_irecv_wait(&cohort, iterations / 10 + 1);
  isend_irecv_wait(&real, iterations / 10 + 1);
  entry(&cohort, iterations / 10 + 1);
  entry(&real, iterations / 10 + 1);
  collectives(&cohort, iterations / 10 + 1);
  collectives(&real, iterations / 10 + 1);
  if (self == 0) printf("instructions %s iterations %d\n",
#ifdef OPEN_MPI
                        "openmpi",
#else
                        "mpich",
#endif
                        iterations);
  for (int k = 0; k < 8; ++k) {
    double t0 = PMPI_Wtime();
    measured[k]();
    if (self == 0) printf("instructions %-24s %.1f ns per iteration\n", names[k], (PMPI_Wtime() - t0) * 1e9 / iterations);
  }
  MPI_Finalize();
  return 0;
}
