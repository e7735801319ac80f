// replica_sim: the replication protocol's state machine (replica/protocol.hpp) in a simulated job of N
// logical ranks x r replicas (replica/simnet.hpp): a ring or an all-to-all with MPI_ANY_SOURCE matches,
// one MPI_Wtime-like decision per round, random replica deaths (never the last replica of a logical
// rank), duplicated copies, copies lost with a dying sender. Checks every logical message delivered
// exactly once to every live replica and the same decisions on every replica of a logical rank, and
// reports the wall time of each run. One CSV row per run (stdout or --csv FILE).
//
//   replica_sim [--n 100,1000,10000] [--r 2,3] [--pattern ring,alltoall] [--rounds 10] [--kills K]
//               [--kills-per-mille 10] [--duplicate 0.01] [--max-alltoall-n 200] [--seed 1] [--csv FILE]
// --kills-per-mille: replica deaths per 1000 world ranks when --kills is not given. All-to-all runs are
// limited to N <= --max-alltoall-n (its messages grow as N^2 r^2).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "replica/simnet.hpp"

using namespace cohort::replica;

namespace {

std::vector<std::string> split(const std::string &s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  return out;
}

}  // namespace

int main(int argc, char **argv) {
  std::vector<std::string> ns = {"100", "1000", "10000"}, rs = {"2", "3"}, pats = {"ring", "alltoall"};
  int rounds = 10, kills = -1, per_mille = 10, max_a2a = 200;
  double dup = 0.01;
  std::uint64_t seed = 1;
  std::string csv;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "replica_sim: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--n") ns = split(val());
    else if (a == "--r") rs = split(val());
    else if (a == "--pattern") pats = split(val());
    else if (a == "--rounds") rounds = std::atoi(val().c_str());
    else if (a == "--kills") kills = std::atoi(val().c_str());
    else if (a == "--kills-per-mille") per_mille = std::atoi(val().c_str());
    else if (a == "--duplicate") dup = std::atof(val().c_str());
    else if (a == "--max-alltoall-n") max_a2a = std::atoi(val().c_str());
    else if (a == "--seed") seed = std::strtoull(val().c_str(), nullptr, 10);
    else if (a == "--csv") csv = val();
    else {
      std::fprintf(stderr, "replica_sim: unknown option '%s'\n", a.c_str());
      return 2;
    }
  }
  FILE *out = csv.empty() ? stdout : std::fopen(csv.c_str(), "w");
  if (!out) {
    std::fprintf(stderr, "replica_sim: cannot write %s\n", csv.c_str());
    return 2;
  }
  std::fprintf(out, "pattern,n,r,rounds,kills,killed,takeovers,data_copies,wires,delivered,duplicates,decisions,seconds,ok\n");
  int failures = 0;
  for (const auto &pat : pats)
    for (const auto &nstr : ns)
      for (const auto &rstr : rs) {
        sim::Options o;
        o.logical = std::atoi(nstr.c_str());
        o.replicas = std::atoi(rstr.c_str());
        if (pat == "alltoall") {
          if (o.logical > max_a2a) continue;
          o.pattern = sim::Pattern::alltoall;
        } else if (pat != "ring") {
          std::fprintf(stderr, "replica_sim: pattern must be ring or alltoall, not '%s'\n", pat.c_str());
          return 2;
        }
        o.rounds = rounds;
        o.kills = kills >= 0 ? kills : std::max(1, o.logical * o.replicas * per_mille / 1000);
        o.duplicate = dup;
        o.seed = seed;
        // NOTE: beyond 3,000 replicas the notices go to the victim's twins only (the others keep sending
        // to the dead replica, whose copies are dropped): notices to all would dominate the run.
        o.notify_all = o.logical * o.replicas <= 3000;
        sim::Result r = sim::run(o);
        std::fprintf(out, "%s,%d,%d,%d,%d,%d,%llu,%llu,%llu,%llu,%llu,%llu,%.3f,%s\n", pat.c_str(), o.logical,
                     o.replicas, rounds, o.kills, r.killed, (unsigned long long)r.takeovers,
                     (unsigned long long)r.data_copies, (unsigned long long)r.wires,
                     (unsigned long long)r.delivered, (unsigned long long)r.duplicates,
                     (unsigned long long)r.decisions, r.seconds, r.error.empty() ? "yes" : "no");
        std::fflush(out);
        if (!r.error.empty()) {
          std::fprintf(stderr, "replica_sim: %s n=%d r=%d: %s\n", pat.c_str(), o.logical, o.replicas, r.error.c_str());
          ++failures;
        }
      }
  if (out != stdout) std::fclose(out);
  return failures ? 1 : 0;
}
