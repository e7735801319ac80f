#include "topology/cartesian.hpp"

#include <utility>

namespace cohort::topology {

Cartesian::Cartesian(std::vector<int> dims, std::vector<bool> periodic)
    : dims_(std::move(dims)), periodic_(std::move(periodic)) {
  periodic_.resize(dims_.size(), false);
  for (int d : dims_) size_ *= d;
}

std::vector<int> Cartesian::coords(int rank) const {
  std::vector<int> c(dims_.size());
  for (int i = ndims() - 1; i >= 0; --i) {
    c[static_cast<std::size_t>(i)] = rank % dims_[static_cast<std::size_t>(i)];
    rank /= dims_[static_cast<std::size_t>(i)];
  }
  return c;
}

int Cartesian::rank(const std::vector<int> &coords) const {
  int r = 0;
  for (std::size_t i = 0; i < dims_.size(); ++i) {
    int c = coords[i], d = dims_[i];
    if (c < 0 || c >= d) {
      if (!periodic_[i]) return kNone;
      c = ((c % d) + d) % d;
    }
    r = r * d + c;
  }
  return r;
}

void Cartesian::shift(int rank, int direction, int disp, int *source, int *dest) const {
  std::vector<int> c = coords(rank);
  int own = c[static_cast<std::size_t>(direction)];
  c[static_cast<std::size_t>(direction)] = own + disp;
  *dest = this->rank(c);
  c[static_cast<std::size_t>(direction)] = own - disp;
  *source = this->rank(c);
}

Cartesian Cartesian::sub(const std::vector<bool> &remain) const {
  std::vector<int> d;
  std::vector<bool> p;
  for (std::size_t i = 0; i < dims_.size(); ++i) {
    if (remain[i]) d.push_back(dims_[i]), p.push_back(periodic_[i]);
  }
  return Cartesian(std::move(d), std::move(p));
}

namespace {
// Row-major index of rank's coordinates along the dimensions where remain[i] == keep.
int index_along(const Cartesian &g, int rank, const std::vector<bool> &remain, bool keep) {
  std::vector<int> c = g.coords(rank);
  int r = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (remain[i] == keep) r = r * g.dims()[i] + c[i];
  }
  return r;
}
}  // namespace

int Cartesian::sub_color(int rank, const std::vector<bool> &remain) const {
  return index_along(*this, rank, remain, false);
}
int Cartesian::sub_rank(int rank, const std::vector<bool> &remain) const {
  return index_along(*this, rank, remain, true);
}

}  // namespace cohort::topology
