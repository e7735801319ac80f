// Records for the launcher: how this rank got on, written into the directory that cohort-run names in
// COHORT_RUN_STATUS_DIR (nothing happens when it is unset, e.g. under plain mpirun). cohort-run reads
// them to judge the job (scripts/cohort-run, "Judging the job"):
//
//   init-begin.<rank>  this rank entered MPI_Init (before the MPI library's own)
//   init-done.<rank>   this rank finished MPI_Init (the failure detector runs)
//   injected.<rank>    cohort's fault injection is about to raise a signal here; text: KILL or STOP
//   fenced.<rank>      this rank is about to exit with COHORT_EXIT_FENCED; text: why
//   failed.<rank>      world ranks this rank learned dead, one per line, in the order learned
//
// <rank> is the MPI_COMM_WORLD rank. No MPI, no allocation after the first call; plain open/write/
// rename, safe from any thread (not from signal handlers). Failures to write are ignored: the records
// are evidence for the launcher, never a reason to stop the rank.
#pragma once
#include <string>

namespace cohort::run_status {

/// This process's rank as the launcher numbers it (PMI_RANK, OMPI_COMM_WORLD_RANK or PMIX_RANK), for
/// records written before MPI_Init has told it; -1 when unknown.
int launcher_rank();

/// Creates (or replaces) <dir>/<kind>.<rank> holding `text` atomically (written to a temporary name,
/// then renamed), so that a reader never sees it half-written.
void put(const char *kind, int rank, const std::string &text);

/// Appends one line to <dir>/<kind>.<rank> (one write(2) with O_APPEND).
void append_line(const char *kind, int rank, const std::string &line);

}  // namespace cohort::run_status
