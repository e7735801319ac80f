// Repair cost versus N, flat and on Legio's hierarchy (topology/hierarchy.hpp), with cohort's own state
// machine: each repaired communicator runs the agreement of repair/agreement.hpp over a simulated
// synchronous network (bench/agree_sim.hpp), with the dead member known to all beforehand (the failure
// notice has gone round). cohort's shrink is that agreement plus MPI_Comm_create_group over the
// survivors; the create_group is *modelled* as MPI's context-id allreduce over a binomial tree (2(m-1)
// messages, 2*ceil(log2 m) rounds for m survivors), since it happens inside MPI.
//
//   hierarchy_scale [max_n]   (default 65536) -> rows
//   csv,hier,<n>,<k>,<case>,<messages>,<rounds>,<model_messages>,<model_rounds>
//
// Cases (k = 0 for flat): `flat` one death repairs the whole communicator; `nonmaster` the local
// communicator and its POV communicator in parallel (Legio); `master` the local communicator (re-election),
// then the global communicator and every POV communicator in parallel; `expected` a uniformly random
// rank dies: (k-1)/k nonmaster + 1/k master; `nonmaster_nopov`, `master_nopov`, `expected_nopov`: the
// same without POV communicators (cohort's runtime builds none); `call_flat`, `call_hier`: one fault-free
// MPI_Allreduce of one int (binomial reduce + broadcast; hier: local reduce, global allreduce, local
// broadcast), each step followed by cohort's confirmation barrier (MPI_Ibarrier, dissemination:
// ceil(log2 m) rounds, m*ceil(log2 m) messages). model_* are the closed forms
// (agreement 2(m-1) messages and 2*ceil(log32 m) rounds over m live members, plus the create_group).
// Exit status 1 if any simulated agreement disagreed.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <utility>
#include <vector>

#include "bench/agree_sim.hpp"
#include "topology/hierarchy.hpp"

namespace {

struct Cost {
  double messages = 0, rounds = 0, model_messages = 0, model_rounds = 0;
  Cost &then(const Cost &o) {  // sequential
    messages += o.messages, rounds += o.rounds, model_messages += o.model_messages,
        model_rounds += o.model_rounds;
    return *this;
  }
  Cost &beside(const Cost &o) {  // in parallel
    messages += o.messages, model_messages += o.model_messages;
    rounds = std::max(rounds, o.rounds), model_rounds = std::max(model_rounds, o.model_rounds);
    return *this;
  }
  Cost times(double f) const { return Cost{messages * f, rounds * f, model_messages * f, model_rounds * f}; }
};

int ceil_log(long m, int base) {
  int d = 0;
  for (long p = 1; p < m; p *= base) ++d;
  return d;
}

bool all_ok = true;

/// Shrink of a communicator of m members after the death of its member `dead` (0: the agreement tree's
/// root), simulated once per (m, dead).
Cost shrink(int m, int dead) {
  static std::map<std::pair<int, int>, Cost> cache;
  auto key = std::make_pair(m, dead);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  cohort::bench::AgreeResult a =
      cohort::bench::simulate_agreement(m, cohort::repair::kDefaultRadix, {dead}, false);
  all_ok = all_ok && a.ok;
  const long live = m - 1;
  Cost c;
  c.messages = static_cast<double>(a.messages + 2 * (live - 1));
  c.rounds = a.rounds + 2 * ceil_log(live, 2);
  c.model_messages = static_cast<double>(4 * (live - 1));
  c.model_rounds = 2 * ceil_log(live, cohort::repair::kDefaultRadix) + 2 * ceil_log(live, 2);
  cache.emplace(key, c);
  return c;
}

/// One fault-free collective step of the given messages and rounds on m members, then the barrier.
Cost step(long m, double messages, double rounds) {
  Cost c;
  c.messages = c.model_messages = messages + static_cast<double>(m * ceil_log(m, 2));
  c.rounds = c.model_rounds = rounds + ceil_log(m, 2);
  return c;
}

void row(long n, int k, const char *name, const Cost &c) {
  std::printf("csv,hier,%ld,%d,%s,%.1f,%.2f,%.1f,%.2f\n", n, k, name, c.messages, c.rounds, c.model_messages,
              c.model_rounds);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char **argv) {
  const long max_n = argc > 1 ? std::atol(argv[1]) : 65536;
  std::printf("csv,hier,n,k,case,messages,rounds,model_messages,model_rounds\n");
  for (long n = 16; n <= max_n; n *= 4) {
    row(n, 0, "flat", shrink(static_cast<int>(n), 1));
    const long log2n = ceil_log(n, 2);
    row(n, 0, "call_flat", step(n, 2.0 * (n - 1), 2.0 * log2n));
    std::vector<int> ks = {4, 16, 64, 256};
    const int root_k = 1 << ((ceil_log(n, 2) + 1) / 2);  // the power of 2 nearest above sqrt(n)
    if (root_k != 4 && root_k != 16 && root_k != 64 && root_k != 256) ks.push_back(root_k);
    for (int k : ks) {
      if (k >= n) continue;
      cohort::topology::HierarchySpec spec;
      spec.mode = cohort::topology::HierarchySpec::fixed;
      spec.k = k;
      cohort::topology::Hierarchy h = cohort::topology::build_hierarchy(std::vector<int>(static_cast<std::size_t>(n), 0), spec);
      const int g = h.groups();
      const int pov = k + g - 1;
      // A non-master (local rank 1 of group 1) and a master (group 1's) die; plan_repair names what is
      // repaired, its sizes give the costs.
      cohort::topology::Hierarchy hn = h, hm = h;
      cohort::topology::RepairPlan pn = cohort::topology::plan_repair(&hn, {k + 1});
      cohort::topology::RepairPlan pm = cohort::topology::plan_repair(&hm, {k});
      if (pn.global || pn.local.size() != 1 || pn.pov.size() != 1 || !pm.global ||
          static_cast<int>(pm.pov.size()) != g) {
        std::fprintf(stderr, "hierarchy_scale: unexpected repair plan at n=%ld k=%d\n", n, k);
        return 1;
      }
      Cost local_nm = shrink(k, 1), local_m = shrink(k, 0);
      Cost pov_nm = shrink(pov, g), pov_m = shrink(pov, 1), global = shrink(g, 1);
      Cost nonmaster = local_nm;
      nonmaster.beside(pov_nm);
      Cost povs = pov_m.times(g);
      povs.rounds = pov_m.rounds, povs.model_rounds = pov_m.model_rounds;
      Cost after = global;
      after.beside(povs);
      Cost master = local_m;
      master.then(after);
      Cost expected = nonmaster.times((k - 1.0) / k);
      expected.then(master.times(1.0 / k));
      row(n, k, "nonmaster", nonmaster);
      row(n, k, "master", master);
      row(n, k, "expected", expected);
      Cost master_nopov = local_m;
      master_nopov.then(global);
      Cost expected_nopov = local_nm.times((k - 1.0) / k);
      expected_nopov.then(master_nopov.times(1.0 / k));
      row(n, k, "nonmaster_nopov", local_nm);
      row(n, k, "master_nopov", master_nopov);
      row(n, k, "expected_nopov", expected_nopov);
      // Fault-free allreduce on the hierarchy: local reduce, global allreduce, local broadcast.
      const long logk = ceil_log(k, 2), logg = ceil_log(g, 2);
      Cost call = step(k, k - 1.0, logk).times(1.0);
      Cost local_part = call;
      local_part.messages *= g, local_part.model_messages *= g;
      Cost c = local_part;
      c.then(step(g, 2.0 * (g - 1), 2.0 * logg));
      c.then(local_part);
      row(n, k, "call_hier", c);
    }
  }
  return all_ok ? 0 : 1;
}
