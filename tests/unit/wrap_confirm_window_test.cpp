// The window of unconfirmed collectives (wrap/core/confirm_window.hpp) without MPI: single-rank steps, then a
// simulated job of N ranks running a program of collectives with deferred confirmation, with one rank
// crashed at every step of every schedule; the survivors' agreement must give each the same span, every
// call a survivor returned from must reach every other survivor as a replay, and the log stays bounded.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "wrap/core/confirm_window.hpp"

namespace cohort::wrap {
namespace {

TEST(ConfirmWindow, WindowOneConfirmsEveryCallBeforeReturning) {
  ConfirmWindow w(1);
  w.completed(0, true);
  EXPECT_FALSE(w.may_return());
  w.confirmed(0);
  EXPECT_TRUE(w.may_return());
  EXPECT_TRUE(w.settled());
}

TEST(ConfirmWindow, AnAllToAllCallConfirmsTheCallsBeforeIt) {
  ConfirmWindow w(4);
  w.completed(0, false);  // a Bcast
  w.log(0, {1});
  w.completed(1, false);
  w.log(1, {2});
  EXPECT_EQ(w.unconfirmed(), 2);
  w.completed(2, true);  // an Allreduce: every member entered it, so completed 0 and 1
  w.log(2, {3});
  EXPECT_EQ(w.confirmed(), 2u);
  EXPECT_EQ(w.unconfirmed(), 1);
  EXPECT_EQ(w.log_entries(), 1u);
  EXPECT_EQ(w.logged(0), nullptr);
  ASSERT_NE(w.logged(2), nullptr);
}

// A call that is not deferred (a Gather) passed its own confirmation: the calls before it are confirmed,
// their log dropped, and no count report is due or stale (every member passed the same confirmation).
TEST(ConfirmWindow, AConfirmedCallThatIsNotDeferredConfirmsThePendingOnes) {
  ConfirmWindow w(8);
  w.completed(0, false);  // a Bcast
  w.log(0, {1});
  w.completed(1, true);  // a Barrier: confirms call 0, leaves itself pending
  w.log(1, {});
  EXPECT_FALSE(w.settled());
  w.confirmed_through(2);  // the Gather, call 2
  EXPECT_EQ(w.completed(), 3u);
  EXPECT_EQ(w.confirmed(), 3u);
  EXPECT_TRUE(w.settled());
  EXPECT_FALSE(w.report_stale());
  EXPECT_FALSE(w.report_due());
  EXPECT_EQ(w.log_entries(), 0u);
}

TEST(ConfirmWindow, TheWindowFillsAndABarrierEmptiesIt) {
  ConfirmWindow w(2);
  w.completed(0, false);
  EXPECT_TRUE(w.may_return());
  w.completed(1, false);
  EXPECT_FALSE(w.may_return());
  w.confirmed(0);
  EXPECT_TRUE(w.may_return());
  w.confirmed(1);
  EXPECT_TRUE(w.settled());
}

TEST(ConfirmWindow, ReadsTheSpanAcrossTheWrapOfTheCode) {
  // one word (W <= 15), two (W <= 31), three (W <= 47), four (W <= 63)
  for (int w : {15, 16, 31, 32, 47, 48, kMaxWindow}) {
    const int positions = code_positions(w);
    for (std::uint64_t base = 0; base < 3 * static_cast<std::uint64_t>(positions); ++base) {
      for (int spread = 0; spread <= w; ++spread) {
        ConfirmWindow lo(w), hi(w);
        for (std::uint64_t j = 0; j < base; ++j) lo.completed(j, true);
        for (std::uint64_t j = 0; j < base + spread; ++j) hi.completed(j, true);
        AgreementCode agreed = lo.agreement_code() & hi.agreement_code();
        CompletedSpan a, b;
        ASSERT_TRUE(lo.read(agreed, &a)) << w;
        ASSERT_TRUE(hi.read(agreed, &b)) << w;
        EXPECT_EQ(a.low, base);
        EXPECT_EQ(a.high, base + spread);
        EXPECT_EQ(b.low, a.low);
        EXPECT_EQ(b.high, a.high);
      }
    }
  }
}

TEST(ConfirmWindow, CodeWordsByWindow) {
  EXPECT_EQ(code_words(1), 1);
  EXPECT_EQ(code_words(15), 1);
  EXPECT_EQ(code_words(16), 2);
  EXPECT_EQ(code_words(31), 2);
  EXPECT_EQ(code_words(32), 3);
  EXPECT_EQ(code_words(47), 3);
  EXPECT_EQ(code_words(48), 4);
  EXPECT_EQ(code_words(kMaxWindow), kCodeWords);
  // A one-word code leaves the other words all set: agreeing on the first word alone is enough.
  AgreementCode c = count_code(40, 15);
  for (int k = 1; k < kCodeWords; ++k) EXPECT_EQ(c.word[k], -1);
  EXPECT_EQ(count_code(40, 63).word[1], static_cast<int>(~(1u << 8)));
}

TEST(ConfirmWindow, RefusesCountsOneFurtherApartThanTheCodeTells) {
  // (wider spreads alias onto narrower ones: the protocol keeps survivors within W)
  for (int w : {1, 15, 31, kMaxWindow}) {
    ConfirmWindow lo(w), hi(w);
    for (int j = 0; j < code_positions(w) / 2; ++j) hi.completed(static_cast<std::uint64_t>(j), true);
    CompletedSpan s;
    EXPECT_FALSE(lo.read(lo.agreement_code() & hi.agreement_code(), &s)) << w;
  }
}

TEST(ConfirmWindow, RecoveryHandsOverTheCallsOthersMiss) {
  ConfirmWindow ahead(4), behind(4);
  for (std::uint64_t j = 0; j < 3; ++j) {
    ahead.completed(j, false);
    ahead.log(j, {static_cast<char>(j)});
  }
  behind.completed(0, false);
  ahead.confirmed(0);
  behind.confirmed(0);
  AgreementCode agreed = ahead.agreement_code() & behind.agreement_code();
  CompletedSpan s;
  ASSERT_TRUE(behind.read(agreed, &s));
  EXPECT_EQ(s.low, 1u);
  EXPECT_EQ(s.high, 3u);
  std::vector<LogEntry> now = ahead.recover(s);
  ASSERT_EQ(now.size(), 2u);
  EXPECT_EQ(now[0].call, 1u);
  EXPECT_EQ(now[1].call, 2u);
  EXPECT_TRUE(ahead.recover(s).empty());
  EXPECT_TRUE(behind.recover(s).empty());
  EXPECT_EQ(behind.role(1), Role::replay);
  behind.replayed(1);
  EXPECT_EQ(behind.role(2), Role::replay);
  behind.replayed(2);
  EXPECT_EQ(behind.role(3), Role::normal);
  EXPECT_EQ(ahead.role(3), Role::normal);
}

// ---- A simulated job ----
// Call kinds: an all-to-all call completes on a rank once every rank posted it; a Bcast completes at its
// root at once and elsewhere once the root posted it; a Reduce completes at non-roots at once and at the
// root once every rank posted it. Confirmation is by count reports, as the MPI adapter does it
// (wrap/core/deferred.cpp): after a call a rank reports its completed count to every other rank when
// report_due(), before it waits for confirmations when report_stale(), and (at times) while its own request
// waits; the lowest count heard from every other rank confirms the calls below it. At the end of the
// program a rank settles (every call confirmed) and reports a stale count, as at a settle point. Reports
// travel as messages that the network delivers in any order at any later step. A dead rank posts and
// reports nothing more; what it posted stays posted, and its reports in flight may or may not arrive. After
// the crash, a completion that needs the dead rank's posts may or may not happen (a broken tree).
enum class Kind { allreduce, barrier, bcast, reduce };
struct Call {
  Kind kind;
  int root;
};
bool all_entered(Kind k) { return k == Kind::allreduce || k == Kind::barrier; }

struct Rank {
  ConfirmWindow w;
  std::uint64_t at = 0;  // the call in progress
  enum Phase { post, wait_request, wait_return, settle, done } phase = post;
  std::vector<bool> posted;
  std::vector<std::uint64_t> heard;  // per rank: the highest count it reported to this one
  std::uint64_t returned = 0;        // calls the program got back
  bool alive = true;
  std::size_t max_log = 0;
};

struct Report {
  int from, to;
  std::uint64_t count;
};

struct Job {
  std::vector<Call> program;
  std::vector<Rank> ranks;
  std::vector<Report> network;  // reports in flight
  int crashed = -1;
  std::mt19937 rng;

  Job(int n, int w, std::vector<Call> p, unsigned seed) : program(std::move(p)), rng(seed) {
    for (int r = 0; r < n; ++r) {
      Rank k;
      k.w = ConfirmWindow(w);
      k.posted.assign(program.size(), false);
      k.heard.assign(static_cast<std::size_t>(n), 0);
      ranks.push_back(k);
    }
  }
  bool everyone(std::uint64_t j) const {
    for (const Rank &k : ranks) {
      if (!k.posted[j]) return false;
    }
    return true;
  }
  // Whether the completion is possible, and (after a crash) whether the broken tree lets it happen.
  bool may_complete(bool possible) { return possible && (crashed < 0 || rng() % 2 == 0); }
  bool request_done(int r, std::uint64_t j) {
    const Call &c = program[j];
    switch (c.kind) {
      case Kind::allreduce:
      case Kind::barrier: return may_complete(everyone(j));
      case Kind::bcast: return r == c.root || may_complete(ranks[c.root].posted[j]);
      case Kind::reduce: return r != c.root || may_complete(everyone(j));
    }
    return false;
  }
  void report(int r) {
    Rank &k = ranks[r];
    for (int o = 0; o < static_cast<int>(ranks.size()); ++o) {
      if (o != r) network.push_back(Report{r, o, k.w.completed()});
    }
    k.w.reported();
  }
  // Reads the reports that arrived: the lowest count of the other ranks confirms the calls below it.
  void confirm(int r) {
    Rank &k = ranks[r];
    std::uint64_t low = k.w.completed();
    for (int o = 0; o < static_cast<int>(ranks.size()); ++o) {
      if (o != r) low = std::min(low, k.heard[o]);
    }
    k.w.peers_completed(low);
  }
  // Delivers (or, from the dead rank, perhaps drops) one report in flight; false when none is.
  bool deliver() {
    if (network.empty()) return false;
    std::size_t i = rng() % network.size();
    Report m = network[i];
    network.erase(network.begin() + static_cast<std::ptrdiff_t>(i));
    if (m.from == crashed && rng() % 2 == 0) return true;  // lost with the dead rank
    Rank &k = ranks[m.to];
    k.heard[m.from] = std::max(k.heard[m.from], m.count);
    return true;
  }
  // One step of rank r; false when it cannot move.
  bool step(int r) {
    Rank &k = ranks[r];
    if (!k.alive || k.phase == Rank::done) return false;
    switch (k.phase) {
      case Rank::post:
        k.posted[k.at] = true;
        k.phase = Rank::wait_request;
        return true;
      case Rank::wait_request: {
        if (!request_done(r, k.at)) {
          if (k.w.report_stale() && rng() % 4 == 0) {  // (waiting a while: a stale report)
            report(r);
            return true;
          }
          return false;
        }
        Kind kind = program[k.at].kind;
        k.w.completed(k.at, all_entered(kind));
        if (kind != Kind::barrier) k.w.log(k.at, {static_cast<char>(k.at)});
        k.max_log = std::max(k.max_log, k.w.log_entries());
        confirm(r);
        if (k.w.report_due()) report(r);
        k.phase = Rank::wait_return;
        return true;
      }
      case Rank::wait_return: {
        if (!k.w.may_return()) {
          confirm(r);
          if (k.w.may_return()) return true;
          if (k.w.report_stale()) {
            report(r);
            return true;
          }
          return false;  // waits for reports
        }
        k.returned = k.at + 1;
        k.phase = ++k.at == program.size() ? Rank::settle : Rank::post;
        return true;
      }
      case Rank::settle: {
        confirm(r);
        if (!k.w.settled()) {
          if (k.w.report_stale()) {
            report(r);
            return true;
          }
          return false;
        }
        if (k.w.report_stale()) report(r);  // the others may settle on exactly this count
        k.phase = Rank::done;
        return true;
      }
      case Rank::done: break;
    }
    return false;
  }
  // Steps random ranks (and the network) until nothing moves or `limit` steps; returns the steps taken.
  int run(int limit) {
    int steps = 0;
    const int n = static_cast<int>(ranks.size());
    while (steps < limit) {
      int first = static_cast<int>(rng() % (n + 1));
      bool moved = false;
      for (int i = 0; i <= n && !moved; ++i) {
        int who = (first + i) % (n + 1);
        moved = who == n ? deliver() : step(who);
      }
      if (!moved) break;
      ++steps;
    }
    return steps;
  }
};

std::vector<Call> random_program(std::mt19937 &rng, int n, int calls) {
  std::vector<Call> p;
  for (int i = 0; i < calls; ++i) p.push_back(Call{static_cast<Kind>(rng() % 4), static_cast<int>(rng() % n)});
  return p;
}

// Checks the survivors' recovery after `job` stopped (every survivor detected the crash where it is).
void check_recovery(Job &job, int w, const char *where) {
  SCOPED_TRACE(where);
  const int n = static_cast<int>(job.ranks.size());
  std::uint64_t lo = UINT64_MAX, hi = 0;
  for (const Rank &k : job.ranks) {
    lo = std::min(lo, k.w.completed());
    hi = std::max(hi, k.w.completed());
  }
  ASSERT_LE(hi - lo, static_cast<std::uint64_t>(w)) << "ranks further apart than the window";
  // The dead rank contributed to the agreement or not (it died before or after sending its part).
  for (bool dead_contributes : {false, true}) {
    AgreementCode agreed;
    for (int r = 0; r < n; ++r) {
      if (job.ranks[r].alive || dead_contributes) agreed &= job.ranks[r].w.agreement_code();
    }
    CompletedSpan first{};
    bool have = false;
    std::vector<ConfirmWindow> after;
    for (int r = 0; r < n; ++r) {
      const Rank &k = job.ranks[r];
      if (!k.alive) continue;
      CompletedSpan s;
      ASSERT_TRUE(k.w.read(agreed, &s));
      if (!have) first = s, have = true;
      EXPECT_EQ(s.low, first.low);
      EXPECT_EQ(s.high, first.high);
      EXPECT_LE(s.low, k.w.completed());
      EXPECT_GE(s.high, k.w.completed());
      EXPECT_LE(k.max_log, static_cast<std::size_t>(w));
    }
    // Every call that a survivor returned from (or completed) at or after low reaches every other
    // survivor: its holder hands the logged call over for a replay, the others run it as Role::replay.
    for (int r = 0; r < n; ++r) {
      if (!job.ranks[r].alive) continue;
      ConfirmWindow win = job.ranks[r].w;
      std::vector<LogEntry> now = win.recover(first);
      for (std::uint64_t j = first.low; j < job.ranks[r].w.completed(); ++j) {
        if (job.program[j].kind == Kind::barrier) continue;
        bool handed = false;
        for (const LogEntry &e : now) handed = handed || (e.call == j && e.payload == std::vector<char>{static_cast<char>(j)});
        EXPECT_TRUE(handed) << "rank " << r << " completed call " << j << " but cannot replay it";
      }
      for (int o = 0; o < n; ++o) {
        if (o == r || !job.ranks[o].alive) continue;
        const Rank &other = job.ranks[o];
        ConfirmWindow ow = other.w;
        ow.recover(first);
        for (std::uint64_t j = other.w.completed(); j < job.ranks[r].w.completed(); ++j) {
          EXPECT_EQ(ow.role(j), Role::replay) << "rank " << o << " would not take call " << j << " from rank " << r;
          ow.replayed(j);
        }
        EXPECT_EQ(ow.role(std::max(first.high, other.w.completed())), Role::normal);
      }
    }
  }
}

TEST(ConfirmWindowJob, FaultFreeRanksStayWithinTheWindow) {
  for (int n : {2, 3, 5}) {
    for (int w : {1, 2, 3, 8, 15, 24, 40, kMaxWindow}) {
      for (unsigned seed = 0; seed < 30; ++seed) {
        std::mt19937 rng(seed);
        Job job(n, w, random_program(rng, n, 40 + 3 * w), seed);
        for (;;) {
          int moved = job.run(1);
          std::uint64_t lo = UINT64_MAX, hi = 0;
          for (const Rank &k : job.ranks) lo = std::min(lo, k.w.completed()), hi = std::max(hi, k.w.completed());
          ASSERT_LE(hi - lo, static_cast<std::uint64_t>(w));
          if (moved == 0) break;
        }
        // Every rank returned from every call and settled: nobody waits for a report that never comes.
        for (const Rank &k : job.ranks) {
          EXPECT_EQ(k.returned, job.program.size()) << "n " << n << " w " << w << " seed " << seed;
          EXPECT_EQ(k.phase, Rank::done) << "n " << n << " w " << w << " seed " << seed;
          EXPECT_TRUE(k.w.settled());
        }
      }
    }
  }
}

TEST(ConfirmWindow, ReportsComeEveryHalfWindow) {
  ConfirmWindow w(8);
  EXPECT_EQ(w.interval(), 4);
  for (std::uint64_t j = 0; j < 3; ++j) w.completed(j, false);
  EXPECT_FALSE(w.report_due());
  EXPECT_TRUE(w.report_stale());
  w.completed(3, false);
  EXPECT_TRUE(w.report_due());
  w.reported();
  EXPECT_FALSE(w.report_stale());
  w.peers_completed(2);  // every other member completed calls 0 and 1
  EXPECT_EQ(w.confirmed(), 2u);
  EXPECT_EQ(ConfirmWindow(1).interval(), 1);
  EXPECT_EQ(ConfirmWindow(2).interval(), 1);
}

TEST(ConfirmWindow, AllToAllCallsNeedNoRegularReport) {
  ConfirmWindow w(4);
  ASSERT_EQ(w.interval(), 2);
  for (std::uint64_t j = 0; j < 10; ++j) {
    w.completed(j, true);  // a loop of Allreduces: call j confirms the calls before it
    EXPECT_FALSE(w.report_due()) << "call " << j;
    EXPECT_TRUE(w.may_return());
  }
  EXPECT_EQ(w.confirmed(), 9u);
  EXPECT_TRUE(w.report_stale());  // (a settle point still reports count 10: call 9 waits for it)
  w.completed(10, false);         // a Bcast after the last all-to-all call: one call since it
  EXPECT_FALSE(w.report_due());
  w.completed(11, false);  // two: a report is due
  EXPECT_TRUE(w.report_due());
  w.reported();
  w.completed(12, true);
  w.completed(13, false);
  EXPECT_FALSE(w.report_due());
  w.completed(14, false);
  EXPECT_TRUE(w.report_due());
  ConfirmWindow two(2);  // interval 1: a report after every call but all-to-all ones
  two.completed(0, true);
  EXPECT_FALSE(two.report_due());
  two.completed(1, false);
  EXPECT_TRUE(two.report_due());
}

// Runs `program` once per crash point (every `stride`-th step, every victim) and checks each recovery.
// Returns the recoveries checked; stops at the first fatal failure.
int crash_at_every_step(int n, int w, const std::vector<Call> &program, unsigned seed, int stride) {
  int checked = 0;
  const int total = Job(n, w, program, seed).run(1 << 20);
  for (int at = 0; at <= total; at += stride) {
    for (int victim = 0; victim < n; ++victim) {
      Job job(n, w, program, seed);
      job.run(at);
      job.ranks[victim].alive = false;
      job.crashed = victim;
      job.run(1 << 20);  // the survivors go on until they need the dead rank (then they detect it)
      char where[96];
      std::snprintf(where, sizeof where, "n %d w %d seed %u crash at step %d of rank %d", n, w, seed, at, victim);
      check_recovery(job, w, where);
      if (::testing::Test::HasFatalFailure()) return checked;
      ++checked;
    }
  }
  return checked;
}

TEST(ConfirmWindowJob, CrashAtEveryStep) {
  int checked = 0;
  for (int n : {2, 3, 4}) {
    for (int w : {1, 2, 3, kMaxWindow}) {
      for (unsigned seed = 0; seed < 6; ++seed) {
        std::mt19937 prng(seed * 31 + n);
        checked += crash_at_every_step(n, w, random_program(prng, n, 14), seed, 1);
        if (HasFatalFailure()) return;
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

// The same with windows of two and four code words, on programs long enough to fill them.
TEST(ConfirmWindowJob, CrashAtEveryStepWideWindows) {
  int checked = 0;
  for (int n : {2, 3}) {
    for (int w : {20, kMaxWindow}) {
      for (unsigned seed = 0; seed < 2; ++seed) {
        std::mt19937 prng(seed * 31 + n);
        checked += crash_at_every_step(n, w, random_program(prng, n, 2 * w + 10), seed, 3);
        if (HasFatalFailure()) return;
      }
    }
  }
  EXPECT_GT(checked, 100);
}

}  // namespace
}  // namespace cohort::wrap
