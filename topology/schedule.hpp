// Message schedules of small collectives over point-to-point messages: what one rank of an n-rank
// communicator sends and receives, round by round, in a Barrier, Bcast, Reduce or Allreduce. Pure data
// (no MPI): wrap/core/small_coll.cpp runs a schedule with MPI_Isend/MPI_Irecv; tests/unit/topology_schedule_test.cpp
// runs every rank's schedule over a simulated network.
//
// Algorithms (the classic latency-optimal ones for short messages; Thakur, Rabenseifner and Gropp,
// "Optimization of Collective Communication Operations in MPICH", IJHPCA 19(1), 2005, sections 3-4):
//   barrier:   dissemination (Hensgen, Finkel and Manber 1988): ceil(log2 n) rounds, round i sends to
//              rank + 2^i and receives from rank - 2^i (mod n);
//   bcast:     binomial tree rooted at `root`: one receive from the parent, then the sends to the children;
//   reduce:    the same binomial tree, leaves first: a receive-and-combine from each child, then one send
//              to the parent (ops must be commutative: children's data are combined in tree order);
//   allreduce: recursive doubling over the largest power of two p <= n; with n > p the first 2(n - p) ranks
//              pair up first (even ranks hand their data to the next odd rank and get the result back at
//              the end). Every combination is of the same two values on the two partners, so with a
//              commutative op every rank ends with the same bits.
//
// Thread-safety: pure functions.
#pragma once
#include <vector>

namespace cohort::topology {

enum class CollKind { barrier, bcast, reduce, allreduce };

/// One step of a rank's schedule.
struct CollStep {
  enum Op {
    send,          ///< send the accumulator (its value at the start of the round) to `peer`
    recv,          ///< receive into the accumulator (its old value is replaced)
    recv_combine,  ///< receive into scratch; once the round completed, accumulator = received op accumulator
    end_round,     ///< the round's messages are posted together and all complete before the next round
  };
  Op op;
  int peer;  ///< a rank of the communicator (-1 for end_round)
};

/// Appends to *out (cleared first) the schedule of rank `me` of an n-rank communicator for `kind`; root:
/// the root's rank for bcast and reduce (ignored otherwise). Each round holds at most one receive; a
/// round's sends never read what its receive brings. At the end the accumulator holds the result at every
/// rank (bcast, allreduce) or at the root (reduce). Requires 0 <= me < n and 0 <= root < n.
/// Both ends of every message meet it in the same round, and rounds run in order, so one tag per call
/// suffices: MPI matches a pair's messages in the order they were sent.
void coll_schedule(CollKind kind, int n, int me, int root, std::vector<CollStep> *out);

}  // namespace cohort::topology
