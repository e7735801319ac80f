// Placeholder until the detector issue implements COHORT_INJECT_FAILURE.
#include "detector/inject.hpp"
namespace cohort::inject {
void arm(int) {}
void point(const char *) {}
}  // namespace cohort::inject
