/* solver.h: the interface of the test solver library (see solver.c). */
#pragma once
#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif
/* The global dot product of x and y (n local entries per rank) over comm, in *result. */
int solver_dot(const double *x, const double *y, int n, double *result, MPI_Comm comm);
#ifdef __cplusplus
}
#endif
