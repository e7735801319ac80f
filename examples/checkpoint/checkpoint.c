/* checkpoint: a solver that checkpoints into one shared file (the "real use" of MPI-IO).
 *
 * Each rank relaxes its own block of a 1-D heat equation (Jacobi sweeps, ends held fixed) and every step
 * the ranks sum their residuals with MPI_Allreduce. Every K steps each rank writes its state with
 * MPI_File_write_at_all into ONE file, DIR/state.ckpt, at a place fixed by (checkpoint, original rank), so
 * that no offset depends on who is alive:
 *     record (c, r) at ((c * NRANKS) + r) * RECORD, c = step / K - 1
 *     RECORD = header {magic, step, rank, length, checksum} (5 x 8 bytes) + payload (the block, L doubles)
 * With --log, each rank also appends one line per checkpoint to DIR/log.txt with MPI_File_write_shared, and
 * one last line with MPI_File_write_ordered. Plain MPI; nothing cohort-specific. Under cohort a rank that
 * dies leaves its records up to its death; the survivors keep relaxing and checkpointing.
 *
 *   checkpoint DIR STEPS K [--log]
 *   checkpoint --verify DIR NRANKS STEPS K [--log] [--dead R:C]
 *
 * --verify (no MPI) reads the files back and checks them byte for byte against a recomputation: every
 * record of every live rank present with its exact payload and checksum; with --dead R:C, rank R's
 * records of checkpoints 0..C-1 present and the later ones absent (all zeros); no record torn. The log: each
 * live rank's line of each checkpoint exactly once (R's before checkpoint C-1, none from C on, that one at
 * most once), the last lines in rank order after them, no other bytes. Prints `checkpoint: verified ...`
 * and exits 0, or one line naming what is wrong and exits 1. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define L 1024                      /* cells per rank */
#define HEADER 5                    /* 8-byte words */
#define RECORD (HEADER * 8 + L * 8) /* bytes */
#define MAGIC 0x74706b636f686f63ULL /* "cohockpt" */
#define LINE 64                     /* bytes per log line (fixed: a torn line is visible) */

static void initial(int rank, double *u) {
  for (int i = 0; i < L; ++i) u[i] = (double)((rank * 7919 + i * 104729) % 1000) / 10.0;
}

/* One Jacobi sweep; returns the block's residual (sum of squared changes). */
static double sweep(double *u, double *tmp) {
  double res = 0;
  tmp[0] = u[0];
  tmp[L - 1] = u[L - 1];
  for (int i = 1; i < L - 1; ++i) {
    tmp[i] = 0.5 * (u[i - 1] + u[i + 1]);
    res += (tmp[i] - u[i]) * (tmp[i] - u[i]);
  }
  memcpy(u, tmp, sizeof(double) * L);
  return res;
}

static uint64_t fnv1a(const unsigned char *p, size_t n) {
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ULL;
  return h;
}

static void make_record(int step, int rank, const double *u, unsigned char *out) {
  uint64_t h[HEADER] = {MAGIC, (uint64_t)step, (uint64_t)rank, (uint64_t)L * 8, fnv1a((const unsigned char *)u, L * 8)};
  memcpy(out, h, sizeof h);
  memcpy(out + sizeof h, u, (size_t)L * 8);
}

static void make_line(int ckpt, int rank, double res, char *out) {
  char tmp[LINE + 1];
  snprintf(tmp, sizeof tmp, "ckpt %4d rank %4d residual %.9e", ckpt, rank, res);
  memset(out, ' ', LINE);
  memcpy(out, tmp, strlen(tmp));
  out[LINE - 1] = '\n';
}

static void make_last(int rank, int steps, char *out) {
  char tmp[LINE + 1];
  snprintf(tmp, sizeof tmp, "done rank %4d after %d steps", rank, steps);
  memset(out, ' ', LINE);
  memcpy(out, tmp, strlen(tmp));
  out[LINE - 1] = '\n';
}

static int run(const char *dir, int steps, int k, int log) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char path[4096], logpath[4096];
  snprintf(path, sizeof path, "%s/state.ckpt", dir);
  snprintf(logpath, sizeof logpath, "%s/log.txt", dir);
  if (rank == 0) {
    remove(path);
    remove(logpath);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File fh, lh = MPI_FILE_NULL;
  if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh) != MPI_SUCCESS ||
      (log && MPI_File_open(MPI_COMM_WORLD, logpath, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &lh) !=
                  MPI_SUCCESS)) {
    fprintf(stderr, "checkpoint: rank %d cannot open %s\n", rank, dir);
    return 1;
  }
  double *u = malloc(sizeof(double) * L), *tmp = malloc(sizeof(double) * L), total = 0, res = 0;
  unsigned char *rec = malloc(RECORD);
  initial(rank, u);
  for (int s = 1; s <= steps; ++s) {
    res = sweep(u, tmp);
    MPI_Allreduce(&res, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (s % k != 0) continue;
    int c = s / k - 1;
    make_record(s, rank, u, rec);
    MPI_Status st;
    if (MPI_File_write_at_all(fh, ((MPI_Offset)c * size + rank) * RECORD, rec, RECORD, MPI_BYTE, &st) !=
        MPI_SUCCESS) {
      fprintf(stderr, "checkpoint: rank %d: MPI_File_write_at_all of checkpoint %d failed\n", rank, c);
      return 1;
    }
    if (log) {
      char line[LINE];
      make_line(c, rank, res, line);
      MPI_File_write_shared(lh, line, LINE, MPI_CHAR, &st);
    }
  }
  if (log) {
    char line[LINE];
    MPI_Status st;
    MPI_Barrier(MPI_COMM_WORLD); /* MPI: the program orders independent and collective shared-pointer calls */
    make_last(rank, steps, line);
    MPI_File_write_ordered(lh, line, LINE, MPI_CHAR, &st);
    MPI_File_close(&lh);
  }
  MPI_File_close(&fh);
  if (rank == 0) printf("checkpoint: %d steps, %d checkpoints, global residual %.6e\n", steps, steps / k, total);
  printf("cohort-test: rank %d PASS checkpoint: wrote %d checkpoints\n", rank, steps / k);
  free(u);
  free(tmp);
  free(rec);
  return 0;
}

/* ---- --verify ---- */
static unsigned char *slurp(const char *path, long *n) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  *n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *b = calloc((size_t)*n + 1, 1);
  if (*n > 0 && fread(b, 1, (size_t)*n, f) != (size_t)*n) *n = -1;
  fclose(f);
  return b;
}

#define FAIL(...)                         \
  do {                                    \
    fprintf(stderr, "checkpoint: FAIL "); \
    fprintf(stderr, __VA_ARGS__);         \
    fprintf(stderr, "\n");                \
    return 1;                             \
  } while (0)

static int verify(const char *dir, int nranks, int steps, int k, int log, int dead, int dead_ckpts) {
  int nckpt = steps / k;
  char path[4096];
  snprintf(path, sizeof path, "%s/state.ckpt", dir);
  long n = 0;
  unsigned char *b = slurp(path, &n);
  if (b == NULL || n < 0) FAIL("cannot read %s", path);
  if (n > (long)nckpt * nranks * RECORD) FAIL("%s has %ld bytes, more than %d records", path, n, nckpt * nranks);
  double *u = malloc(sizeof(double) * L), *tmp = malloc(sizeof(double) * L);
  double *res = malloc(sizeof(double) * (size_t)nranks * (size_t)nckpt);
  unsigned char *want = malloc(RECORD), *zero = calloc(RECORD, 1), *got = calloc(RECORD, 1);
  int present = 0;
  for (int r = 0; r < nranks; ++r) {
    initial(r, u);
    for (int s = 1; s <= steps; ++s) {
      double x = sweep(u, tmp);
      if (s % k != 0) continue;
      int c = s / k - 1;
      res[r * nckpt + c] = x;
      make_record(s, r, u, want);
      long at = ((long)c * nranks + r) * RECORD;
      memset(got, 0, RECORD);
      if (at < n) memcpy(got, b + at, (size_t)(n - at < RECORD ? n - at : RECORD));
      int live = r != dead || c < dead_ckpts;
      if (live && memcmp(got, want, RECORD) != 0)
        FAIL("checkpoint %d (step %d): rank %d's record is %s", c, s, r,
             memcmp(got, zero, RECORD) == 0 ? "missing" : "not what it computed (torn or wrong)");
      if (!live && memcmp(got, zero, RECORD) != 0)
        FAIL("checkpoint %d: rank %d was dead but bytes are there", c, r);
      present += live;
    }
  }
  free(b);
  int lines = 0;
  if (log) {
    snprintf(path, sizeof path, "%s/log.txt", dir);
    b = slurp(path, &n);
    if (b == NULL || n < 0) FAIL("cannot read %s", path);
    if (n % LINE != 0) FAIL("%s: %ld bytes, not whole %d-byte lines", path, n, LINE);
    int *seen = calloc((size_t)nranks * (size_t)nckpt, sizeof(int));
    long nl = n / LINE, i = 0;
    char line[LINE];
    for (; i < nl; ++i) {
      const char *p = (const char *)b + i * LINE;
      int c = -1, r = -1;
      if (sscanf(p, "ckpt %d rank %d", &c, &r) != 2) break;
      if (c < 0 || c >= nckpt || r < 0 || r >= nranks) FAIL("log line %ld names checkpoint %d rank %d", i, c, r);
      make_line(c, r, res[r * nckpt + c], line);
      if (memcmp(p, line, LINE) != 0) FAIL("log line %ld (checkpoint %d, rank %d) is torn or wrong", i, c, r);
      if (seen[r * nckpt + c]++) FAIL("log line of checkpoint %d, rank %d is there twice", c, r);
    }
    for (int r = 0; r < nranks; ++r)
      for (int c = 0; c < nckpt; ++c) {
        int must = r != dead || c < dead_ckpts - 1, may = r == dead && c == dead_ckpts - 1;
        if (must && !seen[r * nckpt + c]) FAIL("log line of checkpoint %d, rank %d is missing", c, r);
        if (!must && !may && seen[r * nckpt + c]) FAIL("log line of checkpoint %d from dead rank %d", c, r);
      }
    for (int r = 0; r < nranks; ++r) { /* the write_ordered lines: the survivors in rank order, then the end */
      if (r == dead) continue;
      make_last(r, steps, line);
      if (i >= nl || memcmp(b + i * LINE, line, LINE) != 0) FAIL("log line %ld: not rank %d's last line", i, r);
      ++i;
    }
    if (i != nl) FAIL("log: %ld lines, %ld expected", nl, i);
    lines = (int)nl;
    free(seen);
    free(b);
  }
  printf("checkpoint: verified %d records of %d ranks x %d checkpoints and %d log lines\n", present, nranks, nckpt,
         lines);
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 6 && !strcmp(argv[1], "--verify")) {
    int log = 0, dead = -1, dead_ckpts = 0;
    for (int i = 6; i < argc; ++i) {
      if (!strcmp(argv[i], "--log")) log = 1;
      else if (!strcmp(argv[i], "--dead") && i + 1 < argc && sscanf(argv[++i], "%d:%d", &dead, &dead_ckpts) == 2) continue;
      else {
        fprintf(stderr, "checkpoint: bad argument '%s'\n", argv[i]);
        return 2;
      }
    }
    return verify(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), log, dead, dead_ckpts);
  }
  if (argc < 4) {
    fprintf(stderr, "usage: checkpoint DIR STEPS K [--log] | checkpoint --verify DIR NRANKS STEPS K [--log] [--dead R:C]\n");
    return 2;
  }
  MPI_Init(&argc, &argv);
  int steps = atoi(argv[2]), k = atoi(argv[3]), log = argc > 4 && !strcmp(argv[4], "--log");
  int rc = steps > 0 && k > 0 ? run(argv[1], steps, k, log) : 2;
  MPI_Finalize();
  return rc;
}
