/* ep: the NPB EP benchmark kernel as an unmodified MPI program (see ep_kernel.h).
 *
 *   ep [S|W|A|B|C]     (default S)
 *
 * Fault-free it verifies its sums against NPB's reference (relative error <= 1e-8). Linked with cohort,
 * it finishes on the survivors when ranks die: the dead ranks' batches are missing, and rank 0 reports
 * which fraction of the pairs was counted ((n-f)/n of the ranks' shares) beside the sums. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ep_kernel.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const EpClass *cls = ep_class(argc > 1 ? argv[1][0] : 'S');
  if (cls == NULL || (argc > 1 && argv[1][1] != '\0')) {
    if (rank == 0) fprintf(stderr, "usage: ep [S|W|A|B|C]\n");
    MPI_Finalize();
    return 2;
  }
  EpShare *shares = malloc(sizeof(EpShare) * (size_t)size);
  EpResult res;
  int rc = ep_run(cls, MPI_COMM_WORLD, shares, &res);
  int status = rc == MPI_SUCCESS ? 0 : 1;
  if (rank == 0) {
    double ex = fabs((res.sx - cls->sx_ref) / cls->sx_ref), ey = fabs((res.sy - cls->sy_ref) / cls->sy_ref);
    printf("EP class %c: 2^%d pairs in %ld batches on %d ranks, %.3f s\n", cls->name, cls->m, res.total, size,
           res.seconds);
    printf("sx = %.15e (reference %.15e, relative error %.1e)\n", res.sx, cls->sx_ref, ex);
    printf("sy = %.15e (reference %.15e, relative error %.1e)\n", res.sy, cls->sy_ref, ey);
    printf("counts:");
    for (int i = 0; i < EP_NQ; ++i) printf(" %.0f", res.q[i]);
    printf("\npairs counted: %ld of %ld batches = %.6f; ranks: (n-f)/n = (%d-%d)/%d = %.6f\n", res.counted,
           res.total, (double)res.counted / (double)res.total, size, res.absent, size,
           (double)(size - res.absent) / size);
    if (res.absent == 0) {
      int ok = ex <= 1e-8 && ey <= 1e-8;
      printf("verification: %s\n", ok ? "SUCCESSFUL" : "FAILED");
      if (!ok) status = 1;
    } else {
      printf("verification: not applicable (%d of %d ranks' shares missing)\n", res.absent, size);
    }
  }
  free(shares);
  MPI_Finalize();
  return status;
}
