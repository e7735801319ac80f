/* stencil2d: a 2D Jacobi iteration for Laplace's equation on an n x n grid, block-distributed over a
 * Cartesian process grid, with a halo exchange (MPI_Sendrecv with the MPI_Cart_shift neighbours) and the
 * residual summed with MPI_Allreduce every iteration. Plain MPI: the kernel knows nothing of cohort.
 *
 * The global grid has (n + 2) x (n + 2) points, rows and columns 0..n+1; the boundary (row or column 0 or
 * n + 1) is fixed: 1.0 on row 0, 0.5 on column 0 (below row 0), 0 elsewhere; the interior starts at 0.
 * Process (c0, c1) of a dims[0] x dims[1] grid holds rows stencil2d_block(n, dims[0], c0) and columns
 * stencil2d_block(n, dims[1], c1) of the interior, with a one-point halo. Linked with cohort, a rank that
 * dies leaves its tile frozen: its neighbours' receives from it are skipped (COHORT_ON_DEAD_PEER=skip), so
 * their halo keeps the values it sent last and acts as a fixed boundary; the residual sums the survivors. */
#ifndef STENCIL2D_H
#define STENCIL2D_H
#include <mpi.h>

typedef struct {
  int n;                      /* interior points per side of the global grid */
  MPI_Comm grid;              /* the Cartesian communicator (non-periodic) */
  int dims[2], coords[2];     /* process grid and this rank's place in it */
  int up, down, left, right;  /* MPI_Cart_shift neighbours (MPI_PROC_NULL at the boundary) */
  int row0, rows, col0, cols; /* this tile: global interior rows row0+1..row0+rows, likewise columns */
  double *u, *next;           /* (rows + 2) x (cols + 2), row-major, halo included */
  MPI_Datatype column;        /* one interior column of u */
} stencil2d;

/* First index (0-based, in the interior) and count of block `coord` of `parts` over n points. */
void stencil2d_block(int n, int parts, int coord, int *first, int *count);
/* The fixed value of boundary point (i, j) of the global grid. */
double stencil2d_boundary(int n, int i, int j);

/* Collective over comm: MPI_Dims_create, MPI_Cart_create, the tile with its boundary halo. 0 or an MPI
 * error code. */
int stencil2d_setup(stencil2d *s, int n, MPI_Comm comm);
/* One iteration (collective over s->grid): halo exchange, Jacobi update, MPI_Allreduce of the sum of squared
 * changes. Returns that global residual, or -1 when an MPI call failed. */
double stencil2d_step(stencil2d *s);
/* Sum of this tile's interior values (row by row). */
double stencil2d_tile_sum(const stencil2d *s);
void stencil2d_free(stencil2d *s);
#endif
