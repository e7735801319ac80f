/* The stencil2d kernel (see stencil2d.h): plain MPI. */
#include "stencil2d.h"

#include <stdlib.h>
#include <string.h>

#define AT(s, a, i, j) ((a)[(size_t)(i) * (size_t)((s)->cols + 2) + (size_t)(j)])

void stencil2d_block(int n, int parts, int coord, int *first, int *count) {
  int base = n / parts, extra = n % parts;
  *first = coord * base + (coord < extra ? coord : extra);
  *count = base + (coord < extra ? 1 : 0);
}

double stencil2d_boundary(int n, int i, int j) {
  (void)n;
  if (i == 0) return 1.0;
  if (j == 0) return 0.5;
  return 0.0;
}

int stencil2d_setup(stencil2d *s, int n, MPI_Comm comm) {
  memset(s, 0, sizeof *s);
  s->n = n;
  int size, rc, periods[2] = {0, 0};
  MPI_Comm_size(comm, &size);
  MPI_Dims_create(size, 2, s->dims);
  if ((rc = MPI_Cart_create(comm, 2, s->dims, periods, 1, &s->grid)) != MPI_SUCCESS) return rc;
  int me;
  MPI_Comm_rank(s->grid, &me);
  MPI_Cart_coords(s->grid, me, 2, s->coords);
  MPI_Cart_shift(s->grid, 0, 1, &s->up, &s->down);
  MPI_Cart_shift(s->grid, 1, 1, &s->left, &s->right);
  stencil2d_block(n, s->dims[0], s->coords[0], &s->row0, &s->rows);
  stencil2d_block(n, s->dims[1], s->coords[1], &s->col0, &s->cols);
  size_t points = (size_t)(s->rows + 2) * (size_t)(s->cols + 2);
  s->u = calloc(points, sizeof(double));
  s->next = calloc(points, sizeof(double));
  if (s->u == NULL || s->next == NULL) return MPI_ERR_NO_MEM;
  /* halo points on the global boundary hold the boundary values; the others are received */
  for (int i = 0; i < s->rows + 2; ++i)
    for (int j = 0; j < s->cols + 2; ++j) {
      int gi = s->row0 + i, gj = s->col0 + j;
      if (gi == 0 || gj == 0 || gi == n + 1 || gj == n + 1) AT(s, s->u, i, j) = stencil2d_boundary(n, gi, gj);
    }
  MPI_Type_vector(s->rows, 1, s->cols + 2, MPI_DOUBLE, &s->column);
  MPI_Type_commit(&s->column);
  return MPI_SUCCESS;
}

double stencil2d_step(stencil2d *s) {
  double *u = s->u;
  int r = s->rows, c = s->cols, rc = MPI_SUCCESS;
  /* rows go up and down, columns left and right; each halo is received from the neighbour on that side */
  rc |= MPI_Sendrecv(&AT(s, u, 1, 1), c, MPI_DOUBLE, s->up, 0, &AT(s, u, r + 1, 1), c, MPI_DOUBLE, s->down, 0,
                     s->grid, MPI_STATUS_IGNORE);
  rc |= MPI_Sendrecv(&AT(s, u, r, 1), c, MPI_DOUBLE, s->down, 1, &AT(s, u, 0, 1), c, MPI_DOUBLE, s->up, 1, s->grid,
                     MPI_STATUS_IGNORE);
  rc |= MPI_Sendrecv(&AT(s, u, 1, 1), 1, s->column, s->left, 2, &AT(s, u, 1, c + 1), 1, s->column, s->right, 2,
                     s->grid, MPI_STATUS_IGNORE);
  rc |= MPI_Sendrecv(&AT(s, u, 1, c), 1, s->column, s->right, 3, &AT(s, u, 1, 0), 1, s->column, s->left, 3,
                     s->grid, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS) return -1;
  double local = 0, global = 0;
  for (int i = 1; i <= r; ++i)
    for (int j = 1; j <= c; ++j) {
      double v = 0.25 * (AT(s, u, i - 1, j) + AT(s, u, i + 1, j) + AT(s, u, i, j - 1) + AT(s, u, i, j + 1));
      double d = v - AT(s, u, i, j);
      local += d * d;
      AT(s, s->next, i, j) = v;
    }
  /* NOTE: the interior is copied back rather than the arrays swapped: a halo that was not received (a
   * dead neighbour's) must keep the values it last got. */
  for (int i = 1; i <= r; ++i) memcpy(&AT(s, u, i, 1), &AT(s, s->next, i, 1), sizeof(double) * (size_t)c);
  if (MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, s->grid) != MPI_SUCCESS) return -1;
  return global;
}

double stencil2d_tile_sum(const stencil2d *s) {
  double sum = 0;
  for (int i = 1; i <= s->rows; ++i)
    for (int j = 1; j <= s->cols; ++j) sum += AT(s, s->u, i, j);
  return sum;
}

void stencil2d_free(stencil2d *s) {
  MPI_Type_free(&s->column);
  MPI_Comm_free(&s->grid);
  free(s->u);
  free(s->next);
}
