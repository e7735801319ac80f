// Helpers for the repair tests: victims, world-rank checks of a communicator, waiting for detection.
#pragma once
#include <mpi.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "check.h"
#include "detector/run_status.hpp"
#include "detector/runtime.hpp"
#include "repair/repair.hpp"

namespace repair_test {

inline int world_rank() {
  int r;
  PMPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

inline int world_size() {
  int n;
  PMPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

/// Parses "1,3,5" into sorted ranks; "half" means the odd ranks (N/2 of them); "" means none.
inline std::vector<int> parse_ranks(const char *text, int n) {
  std::vector<int> out;
  if (std::strcmp(text, "half") == 0) {
    for (int r = 1; r < n; r += 2) out.push_back(r);
    return out;
  }
  for (const char *p = text; *p != '\0';) {
    out.push_back(std::atoi(p));
    p = std::strchr(p, ',');
    if (p == nullptr) break;
    ++p;
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline bool has(const std::vector<int> &v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

inline std::string show(const std::vector<int> &v) {
  std::string s = "{";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "}";
}

/// World ranks of comm's members, in comm rank order.
inline std::vector<int> members(MPI_Comm comm) {
  MPI_Group g, w;
  PMPI_Comm_group(comm, &g);
  PMPI_Comm_group(MPI_COMM_WORLD, &w);
  int n;
  PMPI_Group_size(g, &n);
  std::vector<int> in(n), out(n);
  for (int i = 0; i < n; ++i) in[i] = i;
  PMPI_Group_translate_ranks(g, n, in.data(), w, out.data());
  PMPI_Group_free(&g);
  PMPI_Group_free(&w);
  return out;
}

/// The ranks of [0, n) not in dead.
inline std::vector<int> survivors(int n, const std::vector<int> &dead) {
  std::vector<int> out;
  for (int r = 0; r < n; ++r) {
    if (!has(dead, r)) out.push_back(r);
  }
  return out;
}

/// Checks that comm holds exactly `expect` (world ranks, in this order) and that an Allreduce works on
/// it: the sum of the members' world ranks.
inline void check_comm(MPI_Comm comm, const std::vector<int> &expect, const char *what) {
  int size = -1;
  PMPI_Comm_size(comm, &size);
  CHECK(size == static_cast<int>(expect.size()), "%s: size %d, expected %zu", what, size, expect.size());
  std::vector<int> got = members(comm);
  CHECK(got == expect, "%s: members %s, expected %s (world ranks in order)", what, show(got).c_str(),
        show(expect).c_str());
  int mine = world_rank(), sum = -1, want = 0;
  for (int r : expect) want += r;
  PMPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, comm);
  CHECK(sum == want, "%s: allreduce gave %d, expected %d", what, sum, want);
}

/// Waits (up to 60 s) until the detector knows every rank of `dead` failed.
inline void wait_detected(const std::vector<int> &dead) {
  for (int i = 0; i < 60000; ++i) {
    bool all = true;
    for (int r : dead) all = all && cohort::detector::is_failed(r);
    if (all) return;
    usleep(1000);
  }
  CHECK(false, "the detector did not report %s within 60 s", show(dead).c_str());
}

/// Victims die here by SIGKILL, after a barrier that every rank reaches.
// NOTE: the kill is recorded as an injection (cohort-run excuses only kills that cohort's injection made
// or that a survivor recorded, and a test may end before any survivor's detector learns of it). Every
// test of these programs runs under CTest's TIMEOUT and cohort-run's --timeout (tests/mpi/CMakeLists.txt).
inline void kill_victims(const std::vector<int> &dead) {
  PMPI_Barrier(MPI_COMM_WORLD);
  if (has(dead, world_rank())) {
    cohort::run_status::put("injected", world_rank(), "KILL");
    raise(SIGKILL);
  }
}

}  // namespace repair_test
