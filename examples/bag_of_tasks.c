/* bag_of_tasks: a master/worker screening run that finishes its whole bag although workers die.
 *
 * Every item of the input (one protein sequence per line) is scored against a panel of reference
 * sequences: its score is the best Smith-Waterman local alignment score (match +3, mismatch -1, gap -2)
 * over the panel. Rank 0 is the master: it hands out item numbers with the item's residues (MPI_Send),
 * collects (item, score) results with MPI_Recv(MPI_ANY_SOURCE) and hands the next item to whoever answered.
 *
 *   bag_of_tasks [--input FILE] [--items N] [--panel K] [--verify]
 *     --input FILE  items, one sequence per line ('#' lines ignored); default: N synthetic items
 *     --items N     number of synthetic items when there is no --input (default 120)
 *     --panel K     reference sequences in the panel (default 12; the work per item grows with K)
 *     --verify      the master recomputes every score alone at the end and compares
 *
 * Surviving worker failures:
 *  - With cohort on the link line, a send to a dead worker returns, and MPI_Recv(MPI_ANY_SOURCE) keeps
 *    taking results from the live workers. The master asks cohort which ranks died (cohort_failed_ranks,
 *    the optional API, compiled in only when <cohort/cohort.h> is there) and hands a dead worker's item to
 *    another worker at once.
 *  - Whatever it knows, the master never leaves a live worker idle while results are missing: once the
 *    bag is empty it hands out backup copies of the items still out (the first result wins). So its
 *    MPI_Recv(MPI_ANY_SOURCE) always has a live worker that will answer, and an item held by a worker
 *    that died unnoticed is still finished by another.
 * The same source builds and runs without cohort (plain MPI, no failures survived).
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep, strdup */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__has_include)
#if __has_include(<cohort/cohort.h>)
#include <cohort/cohort.h>
#endif
#endif

enum { TAG_TASK = 1, TAG_RESULT = 2, MAX_LEN = 1024, PANEL_LEN = 200 };

typedef struct {
  int item; /* -1: stop */
  int len;
  char seq[MAX_LEN];
} Task;

typedef struct {
  int item;
  int score;
} Result;

static const char kResidues[] = "ACDEFGHIKLMNPQRSTVWY";

/* A small deterministic generator (numerical recipes' LCG), so every rank builds the same panel. */
static unsigned next_rand(unsigned *state) {
  *state = *state * 1664525u + 1013904223u;
  return *state >> 8;
}

static void random_seq(unsigned *state, char *out, int len) {
  for (int i = 0; i < len; ++i) out[i] = kResidues[next_rand(state) % 20];
}

/* Best local alignment score of a against b (Smith-Waterman, linear gaps), O(len(b)) memory. */
static int smith_waterman(const char *a, int na, const char *b, int nb, int *row) {
  int best = 0;
  memset(row, 0, sizeof(int) * (size_t)(nb + 1));
  for (int i = 1; i <= na; ++i) {
    int diag = 0; /* H[i-1][j-1] */
    for (int j = 1; j <= nb; ++j) {
      int up = row[j]; /* H[i-1][j] */
      int h = diag + (a[i - 1] == b[j - 1] ? 3 : -1);
      if (up - 2 > h) h = up - 2;
      if (row[j - 1] - 2 > h) h = row[j - 1] - 2;
      if (h < 0) h = 0;
      diag = up;
      row[j] = h;
      if (h > best) best = h;
    }
  }
  return best;
}

static int score_item(const char *seq, int len, char **panel, int panel_size) {
  static int row[PANEL_LEN + 1];
  int best = 0;
  for (int k = 0; k < panel_size; ++k) {
    int s = smith_waterman(seq, len, panel[k], PANEL_LEN, row);
    if (s > best) best = s;
  }
  return best;
}

/* Items: from a file (one sequence per line) or synthetic. Returns the count; *items[i] NUL-terminated. */
static int load_items(const char *path, int n_synthetic, char ***items) {
  int cap = 64, n = 0;
  *items = malloc(sizeof(char *) * (size_t)cap);
  if (path == NULL) {
    unsigned state = 12345u;
    for (; n < n_synthetic; ++n) {
      if (n == cap) *items = realloc(*items, sizeof(char *) * (size_t)(cap *= 2));
      int len = 120 + (int)(next_rand(&state) % 140);
      (*items)[n] = calloc((size_t)len + 1, 1);
      random_seq(&state, (*items)[n], len);
    }
    return n;
  }
  FILE *f = fopen(path, "r");
  if (f == NULL) return -1;
  char line[MAX_LEN + 2];
  while (fgets(line, sizeof line, f) != NULL) {
    size_t len = strcspn(line, "\r\n");
    line[len] = '\0';
    if (len == 0 || line[0] == '#') continue;
    if (n == cap) *items = realloc(*items, sizeof(char *) * (size_t)(cap *= 2));
    (*items)[n++] = strdup(line);
  }
  fclose(f);
  return n;
}

static int worker(char **panel, int panel_size) {
  int done = 0;
  for (;;) {
    Task t;
    MPI_Status st;
    MPI_Recv(&t, (int)sizeof t, MPI_BYTE, 0, TAG_TASK, MPI_COMM_WORLD, &st);
    if (t.item < 0) break;
    Result r = {t.item, score_item(t.seq, t.len, panel, panel_size)};
    MPI_Send(&r, 2, MPI_INT, 0, TAG_RESULT, MPI_COMM_WORLD);
    ++done;
  }
  return done;
}

typedef struct {
  int n_items, n_workers;
  int *score, *copies;     /* per item: score (-1 until known), workers holding it now */
  int *holds, *alive;      /* per rank: item it works on (-1: idle), 0 once known dead */
  int *queue, head, tail;  /* items not handed out yet, or handed back */
  int done, reassigned, backups, lost;
} Master;

static void give(Master *m, int w, char **items) {
  int item = -1;
  if (m->head < m->tail) {
    item = m->queue[m->head++];
  } else {
    /* NOTE: the bag is empty: a backup copy of the item still out with the fewest holders keeps this
     * worker busy, so that a result always comes back from someone alive. */
    for (int i = 0; i < m->n_items; ++i) {
      if (m->score[i] < 0 && (item < 0 || m->copies[i] < m->copies[item])) item = i;
    }
    if (item < 0) return;
    ++m->backups;
  }
  Task t;
  t.item = item;
  t.len = (int)strlen(items[item]);
  memcpy(t.seq, items[item], (size_t)t.len);
  MPI_Send(&t, (int)(2 * sizeof(int)) + t.len, MPI_BYTE, w, TAG_TASK, MPI_COMM_WORLD);
  m->holds[w] = item;
  m->copies[item]++;
}

/* A dead worker's item goes back to the front of the bag (cohort's optional API). */
static void reclaim_dead_workers(Master *m) {
#ifdef COHORT_API
  int dead[256];
  int n = cohort_failed_ranks(dead, 256);
  for (int k = 0; k < n; ++k) {
    int w = dead[k];
    if (w <= 0 || w > m->n_workers || !m->alive[w]) continue;
    m->alive[w] = 0;
    m->lost++;
    int item = m->holds[w];
    m->holds[w] = -1;
    if (item >= 0 && m->score[item] < 0 && --m->copies[item] == 0) {
      m->queue[--m->head] = item;
      m->reassigned++;
    }
  }
#else
  (void)m;
#endif
}

/* Workers still busy with backup copies send one more result: take it, so that no message is left
 * unreceived, but with MPI_Iprobe and a deadline: a blocking receive could wait on a worker that dies. */
static void drain_backups(Master *m) {
  double deadline = MPI_Wtime() + 2.0;
  for (;;) {
    reclaim_dead_workers(m);
    int busy = 0;
    for (int w = 1; w <= m->n_workers; ++w) busy += m->alive[w] && m->holds[w] >= 0;
    if (busy == 0 || MPI_Wtime() > deadline) return;
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &flag, &st);
    if (!flag) {
      struct timespec ts = {0, 200 * 1000};
      nanosleep(&ts, NULL);
      continue;
    }
    Result r;
    /* NOTE: the message is here: receiving it completes even if its sender has died since. */
    MPI_Recv(&r, 2, MPI_INT, st.MPI_SOURCE, TAG_RESULT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (st.MPI_SOURCE > 0 && st.MPI_SOURCE <= m->n_workers) m->holds[st.MPI_SOURCE] = -1;
  }
}

/* Runs the bag; returns every item's score (malloc'ed). */
static int *master(char **items, int n_items, int n_workers) {
  double t0 = MPI_Wtime();
  Master m;
  memset(&m, 0, sizeof m);
  m.n_items = n_items;
  m.n_workers = n_workers;
  m.score = malloc(sizeof(int) * (size_t)n_items);
  m.copies = calloc((size_t)n_items, sizeof(int));
  m.holds = malloc(sizeof(int) * (size_t)(n_workers + 1));
  m.alive = malloc(sizeof(int) * (size_t)(n_workers + 1));
  /* room in front of the queue for every handed-back item */
  m.queue = malloc(sizeof(int) * (size_t)(2 * n_items + n_workers));
  m.head = m.tail = n_items + n_workers;
  for (int i = 0; i < n_items; ++i) {
    m.score[i] = -1;
    m.queue[m.tail++] = i;
  }
  for (int w = 0; w <= n_workers; ++w) {
    m.holds[w] = -1;
    m.alive[w] = 1;
  }
  while (m.done < n_items) {
    reclaim_dead_workers(&m);
    for (int w = 1; w <= n_workers; ++w) {
      if (m.alive[w] && m.holds[w] < 0) give(&m, w, items);
    }
    Result r;
    MPI_Status st;
    MPI_Recv(&r, 2, MPI_INT, MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &st);
    int w = st.MPI_SOURCE;
    if (w <= 0 || w > n_workers || r.item < 0 || r.item >= n_items) {
      fprintf(stderr, "bag_of_tasks: bad result (item %d) from rank %d\n", r.item, w);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (m.holds[w] == r.item) m.holds[w] = -1;
    m.copies[r.item]--;
    if (m.score[r.item] < 0) {
      m.score[r.item] = r.score;
      m.done++;
    }
  }
  drain_backups(&m);
  Task stop;
  stop.item = -1;
  stop.len = 0;
  for (int w = 1; w <= n_workers; ++w) {
    if (m.alive[w]) MPI_Send(&stop, (int)(2 * sizeof(int)), MPI_BYTE, w, TAG_TASK, MPI_COMM_WORLD);
  }
  long checksum = 0;
  int best = 0;
  for (int i = 0; i < n_items; ++i) {
    checksum = (checksum * 31 + m.score[i]) % 1000000007L;
    if (m.score[i] > m.score[best]) best = i;
  }
  printf("bag_of_tasks: all %d tasks scored by %d workers (%d lost, %d items reassigned, %d backup copies); "
         "best item %d score %d; checksum %ld; %.2f s\n",
         n_items, n_workers, m.lost, m.reassigned, m.backups, best, m.score[best], checksum, MPI_Wtime() - t0);
  fflush(stdout);
  free(m.copies);
  free(m.holds);
  free(m.alive);
  free(m.queue);
  return m.score;
}

int main(int argc, char **argv) {
  const char *input = NULL;
  int n_synthetic = 120, panel_size = 12, verify = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--input") == 0 && i + 1 < argc) input = argv[++i];
    else if (strcmp(argv[i], "--items") == 0 && i + 1 < argc) n_synthetic = atoi(argv[++i]);
    else if (strcmp(argv[i], "--panel") == 0 && i + 1 < argc) panel_size = atoi(argv[++i]);
    else if (strcmp(argv[i], "--verify") == 0) verify = 1;
    else {
      fprintf(stderr, "usage: bag_of_tasks [--input FILE] [--items N] [--panel K] [--verify]\n");
      return 2;
    }
  }
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2 || panel_size < 1 || n_synthetic < 1) {
    if (rank == 0) fprintf(stderr, "bag_of_tasks: needs 2 or more ranks, --panel >= 1 and --items >= 1\n");
    MPI_Finalize();
    return 2;
  }
  char **panel = malloc(sizeof(char *) * (size_t)panel_size);
  unsigned state = 2024u;
  for (int k = 0; k < panel_size; ++k) {
    panel[k] = malloc(PANEL_LEN);
    random_seq(&state, panel[k], PANEL_LEN);
  }
  int status = 0;
  if (rank == 0) {
    char **items = NULL;
    int n = load_items(input, n_synthetic, &items);
    if (n <= 0) {
      fprintf(stderr, "bag_of_tasks: cannot read items from %s\n", input);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int *scores = master(items, n, size - 1);
    if (verify) {
      int wrong = 0;
      for (int i = 0; i < n; ++i) {
        int s = score_item(items[i], (int)strlen(items[i]), panel, panel_size);
        if (s != scores[i]) {
          if (wrong++ < 5) fprintf(stderr, "bag_of_tasks: item %d scored %d, expected %d\n", i, scores[i], s);
        }
      }
      printf("bag_of_tasks: %s (%d of %d scores differ from the master's own computation)\n",
             wrong ? "VERIFY FAILED" : "verified", wrong, n);
      status = wrong ? 1 : 0;
    }
  } else {
    worker(panel, panel_size);
  }
  MPI_Finalize();
  return status;
}
