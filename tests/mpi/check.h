/* Helpers for multi-rank test programs: a rank that finds a wrong value prints one FAIL line and exits 1;
 * a rank that checked everything prints `cohort-test: rank R PASS`, which tests/mpi/run.sh counts. */
#ifndef COHORT_TEST_CHECK_H
#define COHORT_TEST_CHECK_H
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int check_world_rank(void) {
  int r = -1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

/* One line, written with a single write(2), so that ranks' lines never interleave. */
static void check_line(const char *head, const char *detail) {
  char line[2048];
  int n = snprintf(line, sizeof line, "cohort-test: rank %d %s%s\n", check_world_rank(), head, detail);
  if (n > (int)sizeof line - 1) n = (int)sizeof line - 1;
  fflush(stdout);
  if (write(1, line, (size_t)n) < 0) {
  }
}

/* Sleeps ms milliseconds whatever signals arrive: MPICH's hydra sends SIGUSR1 to the survivors when a rank
 * dies, which cuts sleep(3) and usleep(3) short. */
static inline void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) == -1) {
  }
}

/* A set of ranks written "1+2+5" (the fault tests' STEP arguments), as a bit mask (bit r = rank r). */
static inline unsigned parse_ranks(const char *s) {
  unsigned m = 0;
  while (*s && *s != ',') {
    m |= 1u << atoi(s);
    while (*s && *s != '+' && *s != ',') ++s;
    if (*s == '+') ++s;
  }
  return m;
}

#define CHECK(cond, ...)                                                                \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      char check_head_[512], check_detail_[1024];                                       \
      snprintf(check_head_, sizeof check_head_, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      snprintf(check_detail_, sizeof check_detail_, __VA_ARGS__);                       \
      check_line(check_head_, check_detail_);                                           \
      exit(1);                                                                          \
    }                                                                                   \
  } while (0)

/* One STEP argument of the fault tests: none | before:V[+V...] | during:V[+V...] | before:V[+V...],during:V[+V...].
 * Sets the ranks killed right before the step (*before) and those that may die during it (*may); the rank
 * in *before kills itself here. (Uses CHECK, below.) */
#define PARSE_STEP(arg, rank, before, may)                                              \
  do {                                                                                  \
    *(before) = 0;                                                                      \
    *(may) = 0;                                                                         \
    if (!strncmp((arg), "before:", 7)) {                                                \
      *(before) = parse_ranks((arg) + 7);                                               \
      if (strstr((arg), ",during:")) *(may) = parse_ranks(strstr((arg), ",during:") + 8); \
    } else if (!strncmp((arg), "during:", 7)) *(may) = parse_ranks((arg) + 7);            \
    else CHECK(!strcmp((arg), "none"), "bad step '%s'", (arg));                         \
    if ((*(before) >> (rank)) & 1) raise(SIGKILL);                                      \
  } while (0)

#define TEST_PASS(...)                                              \
  do {                                                              \
    char check_detail_[1024];                                       \
    snprintf(check_detail_, sizeof check_detail_, __VA_ARGS__);     \
    check_line("PASS ", check_detail_);                             \
  } while (0)
/* Every survivor of MPI_COMM_WORLD got the same outcome `mine` of a call a rank died in (the dead ranks'
 * entries stay -1). At most 64 ranks. */
static inline void check_same_outcome(int mine, const char *call) {
  int outcomes[64], size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int r = 0; r < size && r < 64; ++r) outcomes[r] = -1;
  CHECK(size <= 64 && MPI_Allgather(&mine, 1, MPI_INT, outcomes, 1, MPI_INT, MPI_COMM_WORLD) == MPI_SUCCESS,
        "%s: Allgather of the outcomes", call);
  for (int r = 0; r < size; ++r)
    CHECK(outcomes[r] == -1 || outcomes[r] == mine, "%s: rank %d got outcome %d, I %d", call, r, outcomes[r], mine);
}
#endif
