/* A small "solver library" that calls MPI itself, built as a shared library (libcohort_test_solver.so):
 * the kind of library a program links but cannot relink under cohort's flags.
 *
 * solver_dot(x, y, n, comm): the global dot product of two distributed vectors (each rank holds n
 * entries), by one MPI_Allreduce of this library's own. Returns MPI_SUCCESS or the MPI error code.
 *
 * Linked with `-Wl,--wrap` into a program, this library's MPI_Allreduce is NOT redirected (the linker only
 * rewrites the objects it links, not a shared library's calls): it reaches MPI directly. Preloaded
 * (libcohort-preload.so), it lands in cohort like the program's own calls. tests/mpi/preload_tests.cmake
 * shows both. */
#include "solver.h"

int solver_dot(const double *x, const double *y, int n, double *result, MPI_Comm comm) {
  double local = 0.0;
  for (int i = 0; i < n; ++i) local += x[i] * y[i];
  return MPI_Allreduce(&local, result, 1, MPI_DOUBLE, MPI_SUM, comm);
}
