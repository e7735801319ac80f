// detector_sim: the failure detector's state machine (RingDetector) on a simulated network, in virtual
// time, at up to 65,536 ranks. For each combination of broadcast (chord, bmg, hba), number of
// simultaneous failures k, victim choice (random ranks or consecutive ranks, i.e. a rack) and ring
// shuffle, it kills k ranks after warm-up and measures, until every survivor knows all k:
//   - detect_ms:   kill -> first suspicion (virtual ms)
//   - all_know_ms: kill -> the last survivor learned the last victim
//   - max_hops:    the largest hop count of the notice through which a survivor first learned a victim
//   - depth_hops:  the flood's depth: max over survivors of the fewest hops of any notice copy it got
//                  (first arrival need not be the fewest hops when latencies vary)
//   - notices/syncs/emit requests sent from the kill until everyone knew, and notices in total
// Then MPI_Finalize with one survivor still repairing (its survivors barrier's retry met the failures):
// every other survivor leaves, one every --leave-gap-us in random order, and it measures
//   - left_know_ms:   the first departure -> the remaining survivor knows every departure (-1: not within
//                     2 x (timeout + grace) after the last one)
//   - departures:     departure notices sent (flooded once a failure is known)
//   - left_as_failed: departed ranks the remaining survivor took for failed ones
// Writes one CSV row per run (stdout or --csv FILE).
//
//   detector_sim [--n 256,4096,65536] [--bcast chord,bmg,hba] [--k 1,4,16] [--victims random,consecutive]
//                [--shuffle 0,1] [--period-ms 100] [--timeout-ms 1000] [--latency-us 20+exp30]
//                [--leave-gap-us 100] [--seed 1] [--csv FILE]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "detector/simnet.hpp"

using namespace cohort::detector;
using cohort::topology::Bcast;

namespace {

std::vector<std::string> split(const std::string &s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  return out;
}

std::vector<long> split_long(const std::string &s) {
  std::vector<long> out;
  for (auto &x : split(s)) out.push_back(std::atol(x.c_str()));
  return out;
}

struct Options {
  std::vector<long> n = {256, 4096, 65536};
  std::vector<std::string> bcast = {"chord", "bmg", "hba"};
  std::vector<long> k = {1, 4, 16};
  std::vector<std::string> victims = {"random", "consecutive"};
  std::vector<long> shuffle = {0, 1};
  long period_ms = 100, timeout_ms = 1000;
  long lat_base_us = 20, lat_exp_us = 30;  // latency = base + exponential(mean)
  long leave_gap_us = 100;
  std::uint64_t seed = 1;
  std::string csv;
};

struct Result {
  double detect_ms = -1, all_know_ms = -1;
  int max_hops = 0, depth_hops = 0;
  std::uint64_t notices = 0, syncs = 0, emits = 0, notices_total = 0;
  long false_positives = 0;
  double notice_fraction = 0;  // share of (survivor, victim) pairs learned through a notice
  double left_know_ms = -1;
  std::uint64_t departures = 0;
  long left_as_failed = 0;
};

Result run_one(int n, Bcast b, int k, bool consecutive, bool shuffle, const Options &o, std::uint64_t seed) {
  SimConfig c;
  c.n = n;
  c.period = o.period_ms * 1000;
  c.timeout = o.timeout_ms * 1000;
  c.grace = c.period;
  c.bcast = b;
  c.shuffle = shuffle;
  c.ring_seed = seed * 7919 + 1;
  c.tick = 0;  // event-driven
  c.rng_seed = seed;
  std::exponential_distribution<double> expo(1.0 / static_cast<double>(o.lat_exp_us));
  c.latency = [&o, expo](std::mt19937_64 &rng) mutable {
    return static_cast<Time>(o.lat_base_us + expo(rng));
  };
  SimNet net(c);

  std::mt19937_64 rng(seed * 1000003 + static_cast<std::uint64_t>(n) * 31 + static_cast<std::uint64_t>(k));
  std::vector<int> victims;
  if (consecutive) {
    int start = static_cast<int>(rng() % static_cast<std::uint64_t>(n));
    for (int i = 0; i < k; ++i) victims.push_back((start + i) % n);
  } else {
    std::set<int> s;
    while (static_cast<int>(s.size()) < k) s.insert(static_cast<int>(rng() % static_cast<std::uint64_t>(n)));
    victims.assign(s.begin(), s.end());
  }
  std::vector<char> is_victim(static_cast<size_t>(n), 0);
  for (int v : victims) is_victim[v] = 1;

  Time t0 = 2 * c.period + c.period / 3;
  net.run_until(t0);
  std::uint64_t base[7];
  std::memcpy(base, net.sent, sizeof base);
  for (int v : victims) net.kill(v);

  Result r;
  long need = static_cast<long>(n - k) * k, known = 0, by_notice = 0;
  Time first_detect = -1, last_learn = -1;
  net.on_learned = [&](int rank, const Learned &l) {
    if (!is_victim[l.rank]) {
      ++r.false_positives;
      return;
    }
    if (is_victim[rank]) return;
    ++known;
    last_learn = l.at;
    if (l.how == How::suspected && first_detect < 0) first_detect = l.at;
    if (l.how == How::notice) {
      ++by_notice;
      if (l.hops > r.max_hops) r.max_hops = l.hops;
    }
  };
  std::vector<int> victim_index(static_cast<size_t>(n), -1);
  for (int i = 0; i < k; ++i) victim_index[victims[i]] = i;
  std::vector<int> min_hops(static_cast<size_t>(n) * k, -1);  // (survivor, victim) -> fewest hops seen
  net.on_deliver = [&](int, int to, const Message &m) {
    if (m.type == MsgType::notice && !is_victim[to] && m.subject >= 0 && is_victim[m.subject]) {
      int &h = min_hops[static_cast<size_t>(to) * k + victim_index[m.subject]];
      if (h < 0 || m.hops < h) h = m.hops;
    }
    return true;
  };
  Time limit = t0 + static_cast<Time>(k + 2) * (c.timeout + c.grace) + c.timeout;
  bool ok = net.run_until([&] { return known >= need; }, limit);
  r.notices = net.sent[2] - base[2];
  r.syncs = net.sent[3] - base[3];
  r.emits = net.sent[4] - base[4];
  if (ok) {
    r.all_know_ms = static_cast<double>(last_learn - t0) / 1000.0;
    r.detect_ms = static_cast<double>(first_detect - t0) / 1000.0;
  }
  net.run_until(net.now() + 20000);  // let the last notices land
  r.notices_total = net.sent[2] - base[2];
  for (int h : min_hops) r.depth_hops = std::max(r.depth_hops, h);
  r.notice_fraction = need > 0 ? static_cast<double>(by_notice) / static_cast<double>(need) : 0;

  // Finalize: every survivor but `stay` leaves.
  std::vector<int> leavers;
  for (int i = 0; i < n; ++i)
    if (!is_victim[i]) leavers.push_back(i);
  if (leavers.size() < 2) return r;
  std::shuffle(leavers.begin(), leavers.end(), rng);
  int stay = leavers.back();
  leavers.pop_back();
  long false_before = r.false_positives;
  std::uint64_t dep0 = net.sent[static_cast<int>(MsgType::departure)];
  Time tl = net.now();
  for (int v : leavers) {
    net.leave(v);
    net.run_until(net.now() + o.leave_gap_us);
  }
  std::size_t all = leavers.size();
  bool left_ok = net.run_until([&] { return net.departed[stay].size() >= all; }, net.now() + 2 * (c.timeout + c.grace));
  if (left_ok) r.left_know_ms = static_cast<double>(net.now() - tl) / 1000.0;
  r.departures = net.sent[static_cast<int>(MsgType::departure)] - dep0;
  r.left_as_failed = r.false_positives - false_before;
  r.false_positives = false_before;
  return r;
}

}  // namespace

int main(int argc, char **argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i], v = argv[i + 1];
    if (a == "--n") o.n = split_long(v);
    else if (a == "--bcast") o.bcast = split(v);
    else if (a == "--k") o.k = split_long(v);
    else if (a == "--victims") o.victims = split(v);
    else if (a == "--shuffle") o.shuffle = split_long(v);
    else if (a == "--period-ms") o.period_ms = std::atol(v.c_str());
    else if (a == "--timeout-ms") o.timeout_ms = std::atol(v.c_str());
    else if (a == "--latency-us") {
      if (std::sscanf(v.c_str(), "%ld+exp%ld", &o.lat_base_us, &o.lat_exp_us) != 2) {
        std::fprintf(stderr, "detector_sim: --latency-us wants BASE+expMEAN, e.g. 20+exp30\n");
        return 2;
      }
    } else if (a == "--leave-gap-us") o.leave_gap_us = std::atol(v.c_str());
    else if (a == "--seed") o.seed = std::strtoull(v.c_str(), nullptr, 10);
    else if (a == "--csv") o.csv = v;
    else {
      std::fprintf(stderr, "detector_sim: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  FILE *out = o.csv.empty() ? stdout : std::fopen(o.csv.c_str(), "w");
  if (out == nullptr) {
    std::perror(o.csv.c_str());
    return 2;
  }
  std::fprintf(out,
               "n,bcast,k,victims,shuffle,period_ms,timeout_ms,latency_us,detect_ms,all_know_ms,max_hops,depth_hops,hop_bound,"
               "notices,notices_total,syncs,emit_requests,notices_per_failure,notice_fraction,false_positives,"
               "left_know_ms,departures,left_as_failed,wall_s\n");
  for (long n : o.n)
    for (long k : o.k)
      for (auto &vic : o.victims)
        for (long sh : o.shuffle)
          for (auto &bn : o.bcast) {
            Bcast b;
            if (!cohort::topology::parse_bcast(bn, &b) || k >= n) continue;
            auto w0 = std::chrono::steady_clock::now();
            Result r = run_one(static_cast<int>(n), b, static_cast<int>(k), vic == "consecutive", sh != 0, o, o.seed);
            double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
            int bound = static_cast<int>(std::ceil(std::log2(static_cast<double>(n)))) + 1;
            std::fprintf(out, "%ld,%s,%ld,%s,%ld,%ld,%ld,%ld+exp%ld,%.3f,%.3f,%d,%d,%d,%llu,%llu,%llu,%llu,%.1f,%.3f,%ld,%.3f,%llu,%ld,%.2f\n",
                         n, bn.c_str(), k, vic.c_str(), sh, o.period_ms, o.timeout_ms, o.lat_base_us, o.lat_exp_us,
                         r.detect_ms, r.all_know_ms, r.max_hops, r.depth_hops, bound, static_cast<unsigned long long>(r.notices),
                         static_cast<unsigned long long>(r.notices_total), static_cast<unsigned long long>(r.syncs),
                         static_cast<unsigned long long>(r.emits), static_cast<double>(r.notices_total) / k,
                         r.notice_fraction, r.false_positives, r.left_know_ms,
                         static_cast<unsigned long long>(r.departures), r.left_as_failed, wall);
            std::fflush(out);
          }
  if (out != stdout) std::fclose(out);
  return 0;
}
