/* stencil2d: Jacobi iterations on a Cartesian communicator (the kernel: stencil2d.h), reporting the
 * residual as it goes.
 *
 *   stencil2d [n] [iterations]        (defaults 256 and 500)
 *
 * Linked with cohort and run with COHORT_ON_DEAD_PEER=skip, it keeps iterating when a rank dies: the dead
 * rank's tile stays frozen at the values it last sent, which its neighbours use as a fixed boundary, and the
 * residual sums the survivors' tiles. */
#include <stdio.h>
#include <stdlib.h>

#include "stencil2d.h"

#if defined(__has_include)
#if __has_include(<cohort/cohort.h>)
#include <cohort/cohort.h>
#endif
#endif

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int n = argc > 1 ? atoi(argv[1]) : 256, iterations = argc > 2 ? atoi(argv[2]) : 500;
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  stencil2d s;
  if (n < 1 || iterations < 1 || stencil2d_setup(&s, n, MPI_COMM_WORLD) != MPI_SUCCESS) {
    if (rank == 0) fprintf(stderr, "usage: stencil2d [n >= 1] [iterations >= 1]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (rank == 0) printf("grid %d x %d on %d x %d ranks\n", n, n, s.dims[0], s.dims[1]);
  double residual = 0;
  for (int it = 1; it <= iterations; ++it) {
    residual = stencil2d_step(&s);
    if (residual < 0) MPI_Abort(MPI_COMM_WORLD, 1);
    if (rank == 0 && (it % (iterations / 10 > 0 ? iterations / 10 : 1) == 0 || it == iterations))
      printf("iteration %d: residual %.6e\n", it, residual);
  }
  if (rank == 0) {
#ifdef COHORT_API
    printf("survivors: %d of %d ranks\n", size - cohort_failed_count(), size);
#else
    printf("survivors: %d of %d ranks\n", size, size);
#endif
  }
  stencil2d_free(&s);
  MPI_Finalize();
  return 0;
}
