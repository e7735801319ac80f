// Placeholder until the heartbeat runtime lands (issue 3): no failure is ever detected.
#include <mpi.h>

#include "detector/runtime.hpp"

namespace cohort::detector {
namespace {
int g_rank = -1, g_size = 0;
bool g_running = false;
}  // namespace
void start(bool) {
  PMPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &g_size);
  g_running = true;
}
void stop() { g_running = false; }
bool running() { return g_running; }
int world_rank() { return g_rank; }
int world_size() { return g_size; }
std::uint64_t failure_epoch() { return 0; }
bool is_failed(int) { return false; }
std::vector<int> failed_ranks() { return {}; }
void declare_failed(int) {}
void on_failure(std::function<void(int)>) {}
void add_progress_hook(std::function<void()>) {}
}  // namespace cohort::detector
