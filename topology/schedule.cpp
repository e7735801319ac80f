#include "topology/schedule.hpp"

namespace cohort::topology {
namespace {

void step(std::vector<CollStep> *out, CollStep::Op op, int peer) { out->push_back(CollStep{op, peer}); }
void end_round(std::vector<CollStep> *out) {
  if (!out->empty() && out->back().op != CollStep::end_round) out->push_back(CollStep{CollStep::end_round, -1});
}

void barrier(int n, int me, std::vector<CollStep> *out) {
  for (long d = 1; d < n; d <<= 1) {
    step(out, CollStep::recv, static_cast<int>((me - d + n) % n));
    step(out, CollStep::send, static_cast<int>((me + d) % n));
    end_round(out);
  }
}

// Binomial tree over relative ranks rel = (rank - root) mod n: the parent of rel is rel without its lowest
// set bit; its children are rel + 2^j for every 2^j below that bit.
void bcast(int n, int me, int root, std::vector<CollStep> *out) {
  const int rel = (me - root + n) % n;
  long mask = 1;
  while (mask < n) {
    if (rel & mask) {
      step(out, CollStep::recv, static_cast<int>((rel - mask + root) % n));
      end_round(out);
      break;
    }
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (rel + mask < n) step(out, CollStep::send, static_cast<int>((rel + mask + root) % n));
  }
  end_round(out);
}

void reduce(int n, int me, int root, std::vector<CollStep> *out) {
  const int rel = (me - root + n) % n;
  for (long mask = 1; mask < n; mask <<= 1) {
    if (rel & mask) {
      step(out, CollStep::send, static_cast<int>((rel - mask + root) % n));
      end_round(out);
      return;
    }
    if (rel + mask < n) {
      step(out, CollStep::recv_combine, static_cast<int>((rel + mask + root) % n));
      end_round(out);
    }
  }
}

void allreduce(int n, int me, std::vector<CollStep> *out) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  const int extra = n - p;  // ranks 0 .. 2*extra-1 pair up: even r hands its data to r + 1
  int v;                    // this rank's place among the p ranks of the recursive doubling, or -1
  if (me < 2 * extra) {
    if (me % 2 == 0) {
      step(out, CollStep::send, me + 1);
      end_round(out);
      step(out, CollStep::recv, me + 1);
      end_round(out);
      return;
    }
    step(out, CollStep::recv_combine, me - 1);
    end_round(out);
    v = me / 2;
  } else {
    v = me - extra;
  }
  for (int mask = 1; mask < p; mask <<= 1) {
    const int pv = v ^ mask;
    const int peer = pv < extra ? 2 * pv + 1 : pv + extra;
    step(out, CollStep::recv_combine, peer);
    step(out, CollStep::send, peer);
    end_round(out);
  }
  if (me < 2 * extra) {
    step(out, CollStep::send, me - 1);
    end_round(out);
  }
}

}  // namespace

void coll_schedule(CollKind kind, int n, int me, int root, std::vector<CollStep> *out) {
  out->clear();
  if (n <= 1) return;
  switch (kind) {
    case CollKind::barrier: barrier(n, me, out); break;
    case CollKind::bcast: bcast(n, me, root, out); break;
    case CollKind::reduce: reduce(n, me, root, out); break;
    case CollKind::allreduce: allreduce(n, me, out); break;
  }
}

}  // namespace cohort::topology
