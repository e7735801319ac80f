// The agreement state machine (repair/agreement.hpp) at scale, without MPI: n members in one process over
// a synchronous network (every message sent in a round arrives in the next). Shows that the failure-free
// cost stays 2(n-1) messages and 2*ceil(log_r n) rounds, and what failures cost.
//
//   repair_scale [max_n]      (default 100000) -> rows `csv,scale,<case>,<n>,<radix>,<messages>,<rounds>,<ms>`
//
// Cases: `free`; `known16`: 16 random members dead and known to all beforehand; `root_dies`: the root
// decides, sends DECIDE to half of its children and dies; every survivor's detector learns it one round
// later.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/agree_sim.hpp"
#include "repair/agreement.hpp"

using cohort::repair::RankSet;


int main(int argc, char **argv) {
  long max_n = argc > 1 ? std::atol(argv[1]) : 100000;
  std::mt19937 rng(42);
  bool all_ok = true;
  for (int radix : {2, 32}) {
    for (long n = 1000; n <= max_n; n *= 10) {
      for (const char *c : {"free", "known16", "root_dies"}) {
        std::string name = c;
        RankSet known;
        if (name == "known16") {
          std::uniform_int_distribution<int> pick(1, static_cast<int>(n) - 1);
          while (known.size() < 16) {
            cohort::repair::merge_into(&known, {pick(rng)});
          }
        }
        auto t0 = std::chrono::steady_clock::now();
        cohort::bench::AgreeResult r = cohort::bench::simulate_agreement(static_cast<int>(n), radix, known, name == "root_dies");
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        all_ok = all_ok && r.ok;
        std::printf("csv,scale,%s,%ld,%d,%ld,%d,%.1f%s\n", c, n, radix, r.messages, r.rounds, ms,
                    r.ok ? "" : ",DISAGREEMENT");
        std::fflush(stdout);
      }
    }
  }
  return all_ok ? 0 : 1;
}
