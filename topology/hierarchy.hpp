// Legio's hierarchical communicators as pure data: no MPI.
//
// Source: R. Rocco, D. Gadioli, G. Palermo, Legio (journal paper, section 5; Rocco's thesis, chapter 4).
// The ranks 0..n-1 of a communicator are split into *local groups* (one per host, or blocks of K
// consecutive ranks); the lowest live rank of each local group is its *master*; the masters form the
// *global group*. Legio's *partially overlapped* (POV) group of local group g is g's members together with
// every master, so that an operation rooted anywhere in g reaches all masters in one step.
// Repair (Legio's procedure): a non-master's death touches only the communicators it is a member of: its
// local group's and its local group's POV; a master's death re-elects the lowest live rank of its local
// group and repairs its local group, the global group and every POV group (each holds every master). A
// local group whose ranks all died leaves the hierarchy.
//
// Shapes: ranks are ranks of the communicator the hierarchy was built on; group indices are 0..G-1 in
// the order of each group's lowest rank. Thread-safety: none (values; copy them per thread).
#pragma once
#include <string>
#include <vector>

namespace cohort::topology {

/// COHORT_HIERARCHY: off, one local group per host, or fixed size K (>= 2).
struct HierarchySpec {
  enum Mode { off, host, fixed } mode = off;
  int k = 0;  ///< fixed: local group size in ranks
};

/// Parses "off", "host" or a decimal K in [2, 2^20]. nullptr or "" give off. Returns false and sets
/// *error (one line naming the accepted values) on anything else.
bool parse_hierarchy(const char *text, HierarchySpec *spec, std::string *error);

/// The hierarchy of n ranks and its state after failures.
struct Hierarchy {
  std::vector<std::vector<int>> local;  ///< local group -> its live ranks, ascending
  std::vector<int> group_of;            ///< rank -> local group (kept for dead ranks)
  std::vector<int> master;              ///< local group -> its master, -1 once the group is empty

  int groups() const { return static_cast<int>(local.size()); }
  /// The live masters, ascending (the global group).
  std::vector<int> global() const;
  /// Local group g's members and every live master, ascending.
  std::vector<int> pov(int g) const;
  bool is_master(int rank) const;
};

/// Builds the hierarchy. host: host index of each rank (topology::host_indices; shape [n]); used by
/// HierarchySpec::host, ignored by fixed (which takes blocks [gK, gK+K), the last one possibly
/// smaller). spec.mode == off gives one local group of all ranks.
Hierarchy build_hierarchy(const std::vector<int> &host, const HierarchySpec &spec);

/// Which communicators a set of failures makes repair, and the masters re-elected.
struct RepairPlan {
  std::vector<int> local;  ///< local groups to shrink, ascending
  bool global = false;     ///< the global group must be rebuilt (a master died)
  std::vector<int> pov;    ///< POV groups to rebuild, ascending
  std::vector<std::pair<int, int>> new_master;  ///< (group, its new master; -1: the group is empty)
  bool empty() const { return local.empty() && !global && pov.empty(); }
};

/// Applies the deaths of `failed` (ranks; dead ones already removed are ignored) to *h: removes them,
/// re-elects masters, and returns what must be repaired (Legio's procedure, see the file comment).
RepairPlan plan_repair(Hierarchy *h, const std::vector<int> &failed);

}  // namespace cohort::topology
