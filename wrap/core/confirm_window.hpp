// The window of unconfirmed collectives on one communicator (alias): deferred confirmation as a sans-IO
// state machine (no MPI, no clock, no threads). Unit-tested in tests/unit/wrap_confirm_window_test.cpp.
//
// With W = 1 the driver confirms each collective before it returns (wrap/core/outcome.hpp). With a window of W
// calls, a rank returns once its own request completed and at most W - 1 completed calls are unconfirmed.
// What confirms call j on a rank:
//   - count reports: every other member told this rank it completed more than j calls (peers_completed());
//     a member reports at least every interval() = ceil(W/2) calls, before it waits for confirmations, and
//     at a settle point, so a member's last report is never more than W - 1 calls behind the count another
//     member's full window needs;
//   - its own request of a later all-to-all call k > j completed (Barrier, Allreduce: no member finishes
//     before every member entered k, and a member enters k only after its calls < k completed). So a loop
//     of Allreduces needs no report to confirm: call k + 1 confirms call k;
//   - the confirmation of a later call k > j that is not deferred (its barrier, posted by every member
//     once its own request of k completed): it confirms every call <= k at once (confirmed_through), so a
//     Gather or Alltoall between deferred calls costs no extra round of reports.
// (The first version posted a confirming MPI_Ibarrier after every call: a report every W/2 calls costs
// less, and a report is one-sided, so a rank never waits for the others to post.)
// Spread: a rank that returned from call k had confirmed every call <= k - W + 1, so every member had
// completed them: two survivors' counts of completed calls differ by at most W (W = 1: today's "one call
// apart").
//
// On a failure the survivors agree (repair::agree, a bitwise AND, one int after the other: one for
// W <= 15, two up to 31, three up to 47, four up to 63) on agreement_code(): bit (completed count mod
// code_positions(W)) cleared. read() turns the AND into the lowest and highest completed count among the
// contributors (the Span). Then, on every survivor:
//   - calls < low completed everywhere: nothing to do;
//   - calls in [low, completed()) completed here: this rank replays them at once from its log (it holds
//     the result the others lack), outputs into scratch, never into the program's buffers;
//   - calls in [completed(), high): some survivor completed them; this rank runs each one, as its program
//     reaches it, as a replay that takes a holder's result (Role::replay);
//   - calls >= high: completed by no contributor, run as usual (retried on the shrunk substitute).
// A replay of call j is itself one resilient collective with immediate confirmation (W = 1) among the
// survivors: each gives "I hold j's result" and the result; if nobody holds it (its holders died), every
// survivor runs call j as a plain retry, which is the uniform outcome since no survivor returned from it
// (a survivor that returned from j completed it and holds it). A Barrier needs no log: one survivor's
// completion of barrier j implies every member entered it.
//
// Sources: Legio (Rocco, Gadioli, Palermo 2021) section 4, the broadcast notification problem (P.3);
// Chandy-Lamport style "replay from a log to the stragglers" as in message-logging protocols (Elnozahy et
// al. 2002, section 4).
//
// Not thread-safe: collectives on one communicator are serialised (MPI's rule), and so is the window.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

namespace cohort::wrap {

/// The largest window (COHORT_CONFIRM_WINDOW).
constexpr int kMaxWindow = 63;
/// Positions (bits) of window w's agreement code, in whole words of 32: at least 2 (w + 1), so that the arc
/// of the survivors' counts (they differ by at most w: w + 1 positions) is told apart from the rest of the
/// circle. 32 (one int, MPIX_Comm_agree's) for w <= 15, 64 for w <= 31, 96 for w <= 47, 128 for w <= 63.
constexpr int code_positions(int w) { return 32 * ((2 * (w + 1) + 31) / 32); }
/// Words (ints) that carry window w's code: repair::agree agrees on one int at a time.
constexpr int code_words(int w) { return code_positions(w) / 32; }
constexpr int kCodeWords = code_words(kMaxWindow);

/// An agreement code, or the agreed AND of several: word k holds positions 32 k .. 32 k + 31. Made from one
/// int (the driver's window_code at W = 1, or a one-word count code) it is that int with every other bit set.
struct AgreementCode {
  std::array<int, kCodeWords> word;
  AgreementCode(int first = -1) {  // NOLINT: implicit, so that a one-word code is an int
    word.fill(-1);
    word[0] = first;
  }
  AgreementCode &operator&=(const AgreementCode &o) {
    for (int k = 0; k < kCodeWords; ++k) word[k] &= o.word[k];
    return *this;
  }
  friend AgreementCode operator&(AgreementCode a, const AgreementCode &b) { return a &= b; }
  friend bool operator==(const AgreementCode &a, const AgreementCode &b) { return a.word == b.word; }
  /// Position p's bit is cleared (some contributor's count is at p).
  bool cleared(int p) const { return ((static_cast<std::uint32_t>(word[p / 32]) >> (p % 32)) & 1u) == 0; }
};

/// The lowest and highest count of completed calls among the ranks that contributed to an agreement.
struct CompletedSpan {
  std::uint64_t low = 0, high = 0;
};

/// What a rank does with call j after a recovery (ConfirmWindow::role).
enum class Role {
  normal,  ///< as usual
  replay,  ///< some survivor completed j: take its result (a replay), run the call only if no holder is left
};

/// The agreement input of a rank that completed `completed` calls at window w: every bit set but position
/// completed % code_positions(w).
inline AgreementCode count_code(std::uint64_t completed, int w = 1) {
  AgreementCode c;
  const int p = static_cast<int>(completed % static_cast<std::uint64_t>(code_positions(w)));
  c.word[p / 32] = static_cast<int>(~(std::uint32_t{1} << (p % 32)));
  return c;
}

/// Reads the agreed AND of count_code(·, w) at a rank that completed `mine` calls: the lowest and highest
/// count among the contributors. False when the counts do not fit one window (a defect: more than
/// code_positions(w) / 2 - 1 apart).
inline bool read_span(const AgreementCode &agreed, std::uint64_t mine, CompletedSpan *span, int w = 1) {
  const int n = code_positions(w);
  auto cleared = [&](int p) { return agreed.cleared(((p % n) + n) % n); };
  bool any = false;
  for (int p = 0; p < n && !any; ++p) any = cleared(p);
  if (!any) return false;  // my own position is always cleared
  // The cleared positions lie on an arc of at most n / 2 positions (half the circle): it starts at the
  // first cleared position after the longest run of set ones.
  int best_start = -1, best_len = -1;
  for (int p = 0; p < n; ++p) {
    if (cleared(p) || !cleared(p - 1)) continue;  // a run of set positions starts at p
    int len = 0;
    while (len < n && !cleared(p + len)) ++len;
    if (len > best_len) best_len = len, best_start = (p + len) % n;
  }
  if (best_start < 0) return false;  // everything cleared
  const int arc = n - best_len;      // from best_start, arc positions cover every cleared one
  if (arc > n / 2) return false;
  const int me = static_cast<int>(mine % static_cast<std::uint64_t>(n));
  const int below = (me - best_start + n) % n;  // mine - low
  if (below >= arc) return false;
  span->low = mine - static_cast<std::uint64_t>(below);
  span->high = span->low + static_cast<std::uint64_t>(arc - 1);
  return true;
}

/// One logged call: what a replay needs (what the adapter saved: a result, or an input to re-run).
template <typename Payload>
struct LogEntryT {
  std::uint64_t call = 0;
  Payload payload;
};

/// Payload: what the adapter logs per call (the tests log bytes).
template <typename Payload>
class ConfirmWindowT {
 public:
  using LogEntry = LogEntryT<Payload>;
  /// w: 1 .. kMaxWindow (the caller checks the setting).
  explicit ConfirmWindowT(int w = 1) : w_(std::clamp(w, 1, kMaxWindow)) {}

  int size() const { return w_; }
  /// Calls whose own request completed here (calls 0 .. completed() - 1).
  std::uint64_t completed() const { return completed_; }
  /// Calls known completed by every member (calls 0 .. confirmed() - 1).
  std::uint64_t confirmed() const { return confirmed_; }
  /// Completed here, not yet confirmed.
  int unconfirmed() const { return static_cast<int>(completed_ - confirmed_); }
  /// The program may get control back (return from the call just completed): at most W - 1 unconfirmed.
  bool may_return() const { return unconfirmed() <= w_ - 1; }
  /// Nothing pending: a settle point (point-to-point, other communicators, Finalize, ...) may go on.
  bool settled() const { return completed_ == confirmed_; }

  /// This rank's request of call j (== completed()) completed. all_entered: the call is all-to-all
  /// (Barrier, Allreduce), so its completion proves every member entered it: calls < j are confirmed.
  void completed(std::uint64_t j, bool all_entered) {
    completed_ = j + 1;
    if (all_entered) {
      confirm_below(j);
      entered_ = completed_;
    }
  }
  /// Calls <= j are confirmed (every member completed them: e.g. a barrier posted after j completed).
  void confirmed(std::uint64_t j) { confirm_below(j + 1); }
  /// Call j, one that is not deferred (j == completed()), passed its own confirmation here: every member
  /// completed it, so every member completed the calls before it. Nobody needs this rank's count of them
  /// (a member that waits for counts has passed j's confirmation too), and the next regular report is
  /// counted from here, as after an all-to-all call.
  void confirmed_through(std::uint64_t j) {
    completed_ = std::max(completed_, j + 1);
    confirm_below(j + 1);
    reported_ = entered_ = completed_;
  }

  // ---- Count reports (how the MPI adapter confirms: wrap/core/deferred.hpp) ----
  // Instead of a barrier per call, each rank tells every other member its completed count now and then;
  // the lowest count heard from every other member (with this rank's own) confirms the calls below it.
  // Liveness needs every rank that may keep another waiting to have reported recently enough:
  //   - report_due(): at least interval() calls completed since the last report and since the last
  //     all-to-all call (Barrier, Allreduce). So a member that completed c calls has reported at least
  //     c - interval() + 1, or completed an all-to-all call a >= c - interval(); every member that
  //     completed a confirmed the calls below a by itself, and is left with at most interval() <= W - 1
  //     unconfirmed calls (W >= 2): enough for anyone's full window. A loop of Allreduces or Barriers sends
  //     no regular report at all (each call confirms the one before it);
  //   - report_stale(): anything completed since the last report; a rank reports it before it waits for
  //     confirmations (a full window, a settle point) and when its own request has been waiting a while
  //     (a member at a settle point may need exactly its count).

  /// Calls between two regular reports: W / 2 rounded up (1 for W <= 2).
  int interval() const { return (w_ + 1) / 2; }
  bool report_due() const {
    const std::uint64_t since = w_ >= 2 ? std::max(reported_, entered_) : reported_;  // (interval() <= W - 1)
    return completed_ >= since + static_cast<std::uint64_t>(interval());
  }
  bool report_stale() const { return completed_ > reported_; }
  /// This rank reported completed() to every other member.
  void reported() { reported_ = completed_; }
  /// Every other member completed at least n calls (the lowest count heard): calls < n are confirmed.
  void peers_completed(std::uint64_t n) { confirm_below(n); }

  /// Logs what a replay of call j needs. Entries of confirmed calls are dropped.
  void log(std::uint64_t j, Payload payload) {
    log_.push_back(LogEntry{j, std::move(payload)});
    confirm_below(confirmed_);
  }
  /// The logged entry of call j, or nullptr.
  const LogEntry *logged(std::uint64_t j) const {
    for (const LogEntry &e : log_) {
      if (e.call == j) return &e;
    }
    return nullptr;
  }
  std::size_t log_entries() const { return log_.size(); }
  /// Calls f(entry) on every logged entry, oldest first.
  template <typename F>
  void for_each_logged(F &&f) const {
    for (const LogEntry &e : log_) f(e);
  }

  // ---- Recovery ----

  /// The agreement input: every bit set but position completed() % code_positions(size()).
  AgreementCode agreement_code() const { return count_code(completed_, w_); }
  /// Words of agreement_code() that the survivors agree on (the others are all set everywhere).
  int code_words() const { return cohort::wrap::code_words(w_); }

  /// Reads the agreed AND of agreement_code() at this rank (read_span). False: a defect (see read_span).
  bool read(const AgreementCode &agreed, CompletedSpan *span) const {
    return read_span(agreed, completed_, span, w_);
  }

  /// After the agreement (and the shrink): hands over the logged calls this rank must replay now, as a
  /// holder ([span.low, completed()), in call order; a Barrier has no entry: nobody replays it); calls up to
  /// span.high - 1 that it has not completed become Role::replay. The window restarts empty (every logged
  /// call is either handed over or before span.low, completed everywhere).
  std::vector<LogEntry> recover(const CompletedSpan &span) {
    std::vector<LogEntry> now;
    for (LogEntry &e : log_) {
      if (e.call >= span.low && e.call < completed_) now.push_back(std::move(e));
    }
    log_.clear();
    replay_until_ = std::max(replay_until_, span.high);
    confirmed_ = completed_;
    reported_ = entered_ = 0;  // (reports start again on the shrunk substitute)
    return now;
  }
  /// The role of call j (the next call: j == completed()) after the last recovery.
  Role role(std::uint64_t j) const { return j < replay_until_ && j >= completed_ ? Role::replay : Role::normal; }
  /// A replay of call j (Role::replay) ended here, confirmed like a W = 1 call.
  void replayed(std::uint64_t j) {
    completed_ = std::max(completed_, j + 1);
    confirmed_ = std::max(confirmed_, j + 1);
  }

 private:
  void confirm_below(std::uint64_t n) {
    confirmed_ = std::max(confirmed_, std::min(n, completed_));
    while (!log_.empty() && log_.front().call < confirmed_) log_.pop_front();
  }

  int w_;
  std::uint64_t completed_ = 0, confirmed_ = 0, replay_until_ = 0, reported_ = 0;
  std::uint64_t entered_ = 0;  ///< completed() right after the last all-to-all call completed here
  std::deque<LogEntry> log_;
};

using ConfirmWindow = ConfirmWindowT<std::vector<char>>;
using LogEntry = ConfirmWindow::LogEntry;

}  // namespace cohort::wrap
