// MPI_Wtime and MPI_Wtick under replication: decision events of the program, the leader's values
// (replica/wtime.hpp says how a new leader goes on from a dead one's clock).
#include <mpi.h>

#include "detector/inject.hpp"
#include "replica/wtime.hpp"
#include "wrap/replica/replica.hpp"

namespace cohort::wrap::replica {
namespace {

cohort::replica::WtimeClock g_clock;
bool g_have_tick = false;
double g_tick = 0.0;

// Whether this call can be a decision event. NOTE: events are numbered in the program's order, which only
// its MPI_Init thread has; another thread's time is its own clock moved onto the leader's, not decided.
// After MPI_Finalize nothing is decided either (and MPI_Is_thread_main may not be called there).
bool decidable() {
  int finalized = 0, main = 0;
  PMPI_Finalized(&finalized);
  if (finalized) return false;
  PMPI_Is_thread_main(&main);
  return main != 0;
}

}  // namespace

double wtime() {
  const double own = PMPI_Wtime();
  std::int64_t outcome = 0;
  if (!decidable() || !decide(cohort::replica::wtime_outcome(g_clock.candidate(own)), &outcome))
    return g_clock.undecided(own);
  const double t = g_clock.use(own, cohort::replica::wtime_seconds(outcome));
  // NOTE: a test kills a replica here: the leader after its time was committed, before its program used it.
  inject::point(posted_hook(CallId::MPI_Wtime));
  return t;
}

double wtick() {
  if (g_have_tick) return g_tick;
  const double own = PMPI_Wtick();
  std::int64_t outcome = 0;
  if (!decidable() || !decide(cohort::replica::wtime_outcome(own), &outcome)) return own;
  g_tick = cohort::replica::wtime_seconds(outcome);
  g_have_tick = true;
  return g_tick;
}

}  // namespace cohort::wrap::replica
