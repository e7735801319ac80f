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

/// The test hooks that cohort's own code passes (detector/hooks.def), plus "<call>.posted" for each name in
/// `calls` (e.g. "MPI_Bcast" gives "bcast.posted": the driver's hook after a collective is posted).
std::vector<std::string> known_hooks(const std::vector<std::string> &calls);

/// The line that stops MPI_Init when `text` (the variable's value) fails parse or validate with `error`:
/// "invalid COHORT_INJECT_FAILURE='<text>': <error>", the text through env::printable.
std::string failure_message(const std::string &text, const std::string &error);

/// Checks parsed entries against the job: every rank in 0..world_size-1, every hook in `hooks`.
/// Returns "" or one line ("rank 7 is out of range: the job has 4 ranks (0..3)", "unknown hook
/// 'agree.decid' (did you mean agree.decide?)").
std::string validate(const std::vector<Entry> &entries, int world_size, const std::vector<std::string> &hooks);

}  // namespace cohort::inject
