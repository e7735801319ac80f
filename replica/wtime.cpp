// MPI_Wtime under replication, sans-IO (see wtime.hpp).
#include "replica/wtime.hpp"

#include <cstring>

namespace cohort::replica {

std::int64_t wtime_outcome(double seconds) {
  static_assert(sizeof(double) == sizeof(std::int64_t));
  std::int64_t o = 0;
  std::memcpy(&o, &seconds, sizeof o);
  return o;
}

double wtime_seconds(std::int64_t outcome) {
  double s = 0.0;
  std::memcpy(&s, &outcome, sizeof s);
  return s;
}

double WtimeClock::candidate(double own) const {
  const double moved = own + offset_;
  return moved < last_ ? last_ : moved;
}

double WtimeClock::use(double own, double time) {
  offset_ = time - own;
  if (time > last_) last_ = time;
  return time;
}

}  // namespace cohort::replica
