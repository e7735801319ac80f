// A simulated job for the replication protocol (unit tests and bench/replica_sim; not part of
// libcohort): N logical ranks x r replicas, each replica an Endpoint running the same program, over a
// network that delivers wire messages in random order, may duplicate data copies, and drops copies still
// in flight from a replica that dies (its unfinished sends). Replicas are killed at random steps or at
// an exact step of one victim; death notices reach the survivors after a random delay.
//
// The program, per round t: send one logical message (payload: source logical rank, t) to each
// destination of the pattern; receive one message from each source (ring: a named source; all-to-all:
// MPI_ANY_SOURCE, each match a decision event); then one MPI_Wtime-like decision (each replica's
// candidate differs; the committed outcome must be the same on all of them).
//
// Checked at the end (SimResult::error names the first violation): every live replica finished; each
// received every logical message exactly once, in sequence order, with the right payload; every replica
// of a logical rank, dead or alive, used the same outcome for every decision it used; no conflicting
// proposal was ever seen. Kills leave at least one replica of each logical rank alive.
//
// Thread-safety: run() is reentrant (no global state).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "replica/protocol.hpp"

namespace cohort::replica::sim {

enum class Pattern { ring, alltoall };

struct Options {
  int logical = 4;
  int replicas = 2;
  std::vector<int> host;       ///< host per world rank; empty: no host information
  Pattern pattern = Pattern::ring;
  int rounds = 4;
  bool wtime_decision = true;  ///< one decision per round besides the any-source matches
  double duplicate = 0.0;      ///< probability that a data copy is delivered twice
  double drop_from_dead = 0.5; ///< probability that a copy in flight from a replica that died is lost
  int kills = 0;               ///< random replica deaths over the run
  int victim = -1;             ///< world rank killed when its action count reaches victim_after
  long victim_after = -1;      ///< actions: wire messages it emitted plus wire messages it received
  int victim2 = -1;            ///< a second exact victim (r = 3)
  long victim2_after = -1;
  bool notify_all = true;      ///< death notices to every replica; false: to the victim's twins only
  std::uint64_t seed = 1;
  Limits limits;
};

struct Result {
  std::string error;  ///< empty: every check passed
  std::uint64_t wires = 0, data_copies = 0, duplicates = 0, decisions = 0, takeovers = 0;
  std::uint64_t delivered = 0;
  int killed = 0;
  long victim_actions = 0;  ///< actions the victim took before the end or its death
  double seconds = 0;
};

Result run(const Options &o);

}  // namespace cohort::replica::sim
