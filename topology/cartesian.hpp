// A Cartesian process grid as pure data (no MPI): the answers of MPI_Cart_coords, MPI_Cart_rank,
// MPI_Cart_shift and MPI_Cart_sub for a grid, in the numbering of the communicator the program created
// it on. cohort's Cartesian communicators are aliases (their ranks never change; a dead rank keeps its
// place in the grid), so these answers are a function of dims and periods only and never ask MPI.
// Unit-tested in tests/unit/topology_cartesian_test.cpp.
//
// Numbering: row-major, as the MPI standard (4.1, section 8.5.1) defines for MPI_Cart_create without
// reordering: the last dimension varies fastest. Thread-safety: immutable after construction.
#pragma once
#include <vector>

namespace cohort::topology {

class Cartesian {
 public:
  /// No rank: a shift off the edge of a non-periodic dimension (MPI_PROC_NULL in MPI).
  static constexpr int kNone = -1;

  Cartesian() = default;
  /// dims[i] > 0 processes along dimension i; periodic[i]: dimension i wraps around.
  Cartesian(std::vector<int> dims, std::vector<bool> periodic);

  int ndims() const { return static_cast<int>(dims_.size()); }
  /// Number of grid points (product of dims; 1 for zero dimensions).
  int size() const { return size_; }
  const std::vector<int> &dims() const { return dims_; }
  const std::vector<bool> &periodic() const { return periodic_; }

  /// Coordinates of rank (0 <= rank < size()).
  std::vector<int> coords(int rank) const;
  /// Rank at coords; a coordinate out of range wraps on a periodic dimension. kNone when it is out of
  /// range on a non-periodic one (MPI_ERR_ARG in MPI_Cart_rank).
  int rank(const std::vector<int> &coords) const;
  /// MPI_Cart_shift: the ranks rank receives from (source) and sends to (dest) when the grid shifts by
  /// disp along dimension `direction`: kNone off a non-periodic edge. A dead rank is a rank like any other.
  void shift(int rank, int direction, int disp, int *source, int *dest) const;

  /// MPI_Cart_sub: the grid of the dimensions with remain[i] set, and for rank its sub-grid (color: the
  /// index of its coordinates along the dropped dimensions, row-major) and its rank in it (key).
  Cartesian sub(const std::vector<bool> &remain) const;
  int sub_color(int rank, const std::vector<bool> &remain) const;
  int sub_rank(int rank, const std::vector<bool> &remain) const;

 private:
  std::vector<int> dims_;
  std::vector<bool> periodic_;
  int size_ = 1;
};

}  // namespace cohort::topology
