// Parsing COHORT_INJECT_FAILURE (see inject.hpp for the syntax). Pure: no signals, no environment.
#pragma once
#include <string>
#include <vector>

namespace cohort::inject {

struct Entry {
  int rank = -1;        ///< MPI_COMM_WORLD rank that fails
  long after_ms = -1;   ///< timed: ms after MPI_Init (-1 when `at` is used)
  std::string at;       ///< hook name for inject::point (empty when timed)
  int hit = 1;          ///< with `at`: fire on the hit-th time the point is reached
  int signal = 9;       ///< SIGKILL (9) or SIGSTOP
  long cont_ms = -1;    ///< with signal=STOP: SIGCONT this many ms after stopping; -1 = never
};

/// Parses "key=value,...;key=value,..." into entries. Returns "" or one line saying what is wrong
/// (unknown key, missing rank, both or neither of after_ms/at, bad number or signal).
std::string parse(const std::string &text, std::vector<Entry> *out);

}  // namespace cohort::inject
