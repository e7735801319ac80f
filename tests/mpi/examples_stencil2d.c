/* examples/stencil2d under rank deaths: every survivor's tile and the final residual must equal those of an
 * independent serial computation of the same degraded problem.
 *
 *   examples_stencil2d N ITERATIONS [before:R@K | during:R@K]...
 *     before:R@K  rank R kills itself (SIGKILL) at the start of iteration K (0-based), before its halo
 *                 exchange
 *     during:R@K  rank R dies inside iteration K's MPI_Allreduce, after its exchange and update; the test's
 *                 environment arranges it (COHORT_INJECT_FAILURE=rank=R,at=allreduce.posted,hit=K+1)
 *
 * The degraded problem: a rank whose last halo exchange was in iteration E (E = K-1 for before, K for
 * during) is frozen at the values it sent then, i.e. its tile after E updates; its neighbours use them as
 * a fixed boundary. The reference is a plain Jacobi sweep over the whole (N+2)^2 grid that stops updating
 * a tile from iteration E on; the last residual sums the tiles alive in the last iteration (every death
 * must be before it). Tile values are compared exactly (the same arithmetic in the same order), the
 * residual to 1e-12 relative (the survivors add it up in another order). */
#include <math.h>
#include <signal.h>
#include <string.h>

#include <cohort/cohort.h>

#include "check.h"
#include "stencil2d.h"

#define MAXR 64

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(argc >= 3 && size <= MAXR, "usage: examples_stencil2d N ITERATIONS [before:R@K|during:R@K]...");
  int n = atoi(argv[1]), iterations = atoi(argv[2]);
  int frozen_from[MAXR], kill_at[MAXR]; /* per rank: first iteration it does not update in; SIGKILL at */
  for (int r = 0; r < MAXR; ++r) frozen_from[r] = iterations, kill_at[r] = -1;
  for (int i = 3; i < argc; ++i) {
    int r = -1, k = -1, before = !strncmp(argv[i], "before:", 7);
    CHECK((before || !strncmp(argv[i], "during:", 7)) && sscanf(argv[i] + 7, "%d@%d", &r, &k) == 2 && r >= 0 &&
              r < size && k >= 0 && k < iterations - 1,
          "bad death '%s' (the last iteration must be after every death)", argv[i]);
    frozen_from[r] = before ? k - 1 : k;
    if (before) kill_at[r] = k;
  }

  stencil2d s;
  CHECK(stencil2d_setup(&s, n, MPI_COMM_WORLD) == MPI_SUCCESS, "stencil2d_setup");
  double residual = -1;
  for (int it = 0; it < iterations; ++it) {
    if (kill_at[rank] == it) raise(SIGKILL);
    residual = stencil2d_step(&s);
    CHECK(residual >= 0, "iteration %d: an MPI call failed", it);
  }

  /* The reference: the whole grid, serially; owner[] maps an interior point to its rank. */
  size_t w = (size_t)n + 2;
  double *g = calloc(w * w, sizeof(double)), *h = calloc(w * w, sizeof(double));
  int *owner = calloc(w * w, sizeof(int));
  CHECK(g && h && owner, "out of memory");
  for (int i = 0; i < n + 2; ++i)
    for (int j = 0; j < n + 2; ++j)
      if (i == 0 || j == 0 || i == n + 1 || j == n + 1) g[i * w + j] = stencil2d_boundary(n, i, j);
  for (int c0 = 0; c0 < s.dims[0]; ++c0)
    for (int c1 = 0; c1 < s.dims[1]; ++c1) {
      int r0, nr, q0, nq, coords[2] = {c0, c1}, r = -1;
      MPI_Cart_rank(s.grid, coords, &r);
      stencil2d_block(n, s.dims[0], c0, &r0, &nr);
      stencil2d_block(n, s.dims[1], c1, &q0, &nq);
      for (int i = r0 + 1; i <= r0 + nr; ++i)
        for (int j = q0 + 1; j <= q0 + nq; ++j) owner[i * w + j] = r;
    }
  double want = 0;
  for (int it = 0; it < iterations; ++it) {
    memcpy(h, g, w * w * sizeof(double));
    double sum = 0;
    for (int i = 1; i <= n; ++i)
      for (int j = 1; j <= n; ++j) {
        if (it >= frozen_from[owner[i * w + j]]) continue;
        double v = 0.25 * (g[(i - 1) * w + j] + g[(i + 1) * w + j] + g[i * w + j - 1] + g[i * w + j + 1]);
        sum += (v - g[i * w + j]) * (v - g[i * w + j]);
        h[i * w + j] = v;
      }
    double *t = g;
    g = h, h = t;
    want = sum;
  }

  /* my tile, exactly; the residual of the last iteration */
  double mine = 0;
  for (int i = s.row0 + 1; i <= s.row0 + s.rows; ++i)
    for (int j = s.col0 + 1; j <= s.col0 + s.cols; ++j) mine += g[i * w + j];
  double got = stencil2d_tile_sum(&s);
  CHECK(got == mine, "tile sum %.17g, reference %.17g", got, mine);
  CHECK(fabs(residual - want) <= 1e-12 * fabs(want), "residual %.17g, reference %.17g", residual, want);
  int dead = 0;
  for (int r = 0; r < size; ++r) dead += frozen_from[r] < iterations;
  CHECK(cohort_failed_count() == dead, "%d failures known, %d expected", cohort_failed_count(), dead);
  TEST_PASS("stencil2d %dx%d, %d iterations: residual %.6e as the reference, %d ranks dead", n, n, iterations,
            residual, dead);
  free(g), free(h), free(owner);
  stencil2d_free(&s);
  MPI_Finalize();
  return 0;
}
