// The resumable collective operation (wrap/core/collective_op.hpp) without MPI: each test plays the adapter,
// feeding the results a substitute, its requests and the agreement would give.
#include <gtest/gtest.h>

#include <initializer_list>
#include <utility>

#include "wrap/core/collective_op.hpp"

namespace cohort::wrap {
namespace {

constexpr int kErr = 17;  // an MPI error code, as the adapter would feed it

// The AND of the agreement codes of the given (call, completed) positions.
int agreed_code(std::initializer_list<std::pair<unsigned long long, bool>> ranks) {
  int a = ~0;
  for (auto [j, c] : ranks) a &= window_code(j, c);
  return a;
}

// Drives op from begin through a clean first post to the poll.
void post_first(CollectiveOp &op, int sub_size = 4) {
  ASSERT_EQ(op.next(), OpAction::begin);
  op.begin(false, false, sub_size);
  ASSERT_EQ(op.next(), OpAction::post);
  op.posted(0);
  ASSERT_EQ(op.next(), OpAction::hook);
  op.hooked();
  ASSERT_EQ(op.next(), OpAction::poll);
}

TEST(CollectiveOp, FaultFreeIsConfirmedByTheBarrier) {
  CollectiveOp op(5, false);
  post_first(op);
  op.completed(0, false);
  ASSERT_EQ(op.next(), OpAction::confirm);
  op.confirm_posted(true);
  ASSERT_EQ(op.next(), OpAction::poll_confirm);
  op.confirmed();
  ASSERT_EQ(op.next(), OpAction::done);
  EXPECT_EQ(op.outcome().kind, OpOutcome::success);
  EXPECT_EQ(op.outcome().rc, 0);
}

TEST(CollectiveOp, PollingCanStopAndResume) {
  // A nonblocking adapter feeds nothing while the request is pending: the operation waits at poll.
  CollectiveOp op(0, false);
  post_first(op);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(op.next(), OpAction::poll);
  op.completed(0, false);
  op.confirm_posted(true);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(op.next(), OpAction::poll_confirm);
  op.confirmed();
  EXPECT_EQ(op.next(), OpAction::done);
}

TEST(CollectiveOp, CarriesTheErrorOfACompletedRequest) {
  CollectiveOp op(0, false);
  post_first(op);
  op.completed(kErr, false);
  op.confirm_posted(true);
  op.confirmed();
  EXPECT_EQ(op.outcome().kind, OpOutcome::success);
  EXPECT_EQ(op.outcome().rc, kErr);
}

TEST(CollectiveOp, APostErrorEndsTheOperation) {
  CollectiveOp op(0, false);
  op.begin(false, false, 4);
  op.posted(kErr);
  ASSERT_EQ(op.next(), OpAction::done);
  EXPECT_EQ(op.outcome().kind, OpOutcome::error);
  EXPECT_EQ(op.outcome().rc, kErr);
}

TEST(CollectiveOp, DeadRootAppliesThePolicy) {
  CollectiveOp op(0, false);
  op.begin(true, true, 3);
  ASSERT_EQ(op.next(), OpAction::dead_root);
  op.dead_root_applied(kErr);
  EXPECT_EQ(op.outcome().kind, OpOutcome::policy);
  EXPECT_EQ(op.outcome().rc, kErr);
}

TEST(CollectiveOp, BrokenAttemptIsRetriedAfterAShrink) {
  CollectiveOp op(7, false);
  post_first(op);
  op.broken();
  ASSERT_EQ(op.next(), OpAction::agree);
  EXPECT_EQ(op.agreement_code(), window_code(7, false));
  op.agreed(agreed_code({{7, false}, {7, true}}), true, true, false);
  ASSERT_EQ(op.next(), OpAction::shrink);
  EXPECT_TRUE(op.retry_pending());
  op.shrunk(0);
  ASSERT_EQ(op.next(), OpAction::begin);
  EXPECT_EQ(op.attempt(), 1);
  // The retry posts without the hook (reached once per call) and completes.
  op.begin(false, false, 3);
  op.posted(0);
  ASSERT_EQ(op.next(), OpAction::poll);
  op.completed(0, false);
  op.confirm_posted(true);
  op.confirmed();
  EXPECT_EQ(op.outcome().kind, OpOutcome::success);
}

TEST(CollectiveOp, FailureKnownBeforeThePostAgreesAtOnce) {
  CollectiveOp op(1, false);
  op.begin(false, true, 4);
  ASSERT_EQ(op.next(), OpAction::hook);  // the first attempt still reaches the hook
  op.hooked();
  ASSERT_EQ(op.next(), OpAction::agree);
  EXPECT_EQ(op.agreement_code(), window_code(1, false));
}

TEST(CollectiveOp, CompletedEverywhereWithAFailureShrinksThenFinishes) {
  CollectiveOp op(2, false);
  post_first(op);
  op.completed(0, true);  // a member is known dead: no barrier, the survivors agree
  ASSERT_EQ(op.next(), OpAction::agree);
  op.agreed(agreed_code({{2, true}, {2, true}}), true, true, false);
  ASSERT_EQ(op.next(), OpAction::shrink);
  EXPECT_FALSE(op.retry_pending());
  op.shrunk(0);
  EXPECT_EQ(op.outcome().kind, OpOutcome::success);
}

TEST(CollectiveOp, RootLostWithTheResultAppliesThePolicyAfterTheShrink) {
  CollectiveOp op(2, false);
  post_first(op);
  op.completed(0, true);
  op.agreed(agreed_code({{2, true}}), true, true, true);
  op.shrunk(0);
  ASSERT_EQ(op.next(), OpAction::dead_root);
  op.dead_root_applied(0);
  EXPECT_EQ(op.outcome().kind, OpOutcome::policy);
}

TEST(CollectiveOp, OthersAheadMeansCompletedEverywhere) {
  CollectiveOp op(3, false);
  post_first(op);
  op.completed(0, false);
  op.confirm_posted(true);
  op.confirm_broken();  // a member died in the barrier; some survivors passed it
  op.agreed(agreed_code({{3, true}, {4, false}}), true, true, false);
  EXPECT_EQ(op.window(), Window::ahead);
  ASSERT_EQ(op.next(), OpAction::shrink);
  EXPECT_FALSE(op.retry_pending());
  op.shrunk(0);
  EXPECT_EQ(op.outcome().kind, OpOutcome::success);
}

TEST(CollectiveOp, SelfConfirmingCallReturnsOnCompletion) {
  CollectiveOp op(6, false);
  op.self_confirming();
  post_first(op);
  op.completed(kErr, false);
  ASSERT_EQ(op.next(), OpAction::done);
  EXPECT_EQ(op.outcome().kind, OpOutcome::success);
  EXPECT_EQ(op.outcome().rc, kErr);
}

// Completed with a member known dead since: every member entered it all the same (the others that
// completed it may have returned already and not be back in MPI soon).
TEST(CollectiveOp, SelfConfirmingCallWithAKnownFailureReturnsToo) {
  CollectiveOp op(6, false);
  op.self_confirming();
  post_first(op);
  op.completed(0, true);
  ASSERT_EQ(op.next(), OpAction::done);
  EXPECT_EQ(op.outcome().kind, OpOutcome::success);
}

TEST(CollectiveOp, SelfConfirmingCallBehindOthersThatReturnedCompletesAfterTheShrink) {
  // Barrier 6: one survivor completed it and returned (now in call 7, broken), this one never completed it
  // (its partner died): it agrees with the one ahead and returns from the barrier too; the one ahead retries.
  CollectiveOp behind(6, false), ahead(7, false);
  behind.self_confirming();
  post_first(behind);
  post_first(ahead);
  behind.broken();
  ahead.broken();
  const int code = agreed_code({{6, false}, {7, false}});
  behind.agreed(code, true, true, false);
  ahead.agreed(code, true, true, false);
  EXPECT_EQ(behind.window(), Window::ahead);
  EXPECT_FALSE(behind.retry_pending());
  behind.shrunk(0);
  EXPECT_EQ(behind.outcome().kind, OpOutcome::success);
  EXPECT_EQ(ahead.window(), Window::behind);
  EXPECT_TRUE(ahead.retry_pending());
}

TEST(CollectiveOp, SelfConfirmingIsOffWithCounts) {
  CollectiveOp op(6, false);
  op.use_counts(4);
  op.self_confirming();
  post_first(op);
  op.completed(0, false);
  EXPECT_EQ(op.next(), OpAction::confirm);
}

TEST(CollectiveOp, OthersBehindMeansRetry) {
  CollectiveOp op(4, false);
  post_first(op);
  op.broken();
  op.agreed(agreed_code({{4, false}, {3, true}}), true, true, false);
  EXPECT_EQ(op.window(), Window::behind);
  EXPECT_TRUE(op.retry_pending());
}

TEST(CollectiveOp, CommunicatorCallsAreAlwaysAgreed) {
  CollectiveOp op(0, true);
  post_first(op);
  op.completed(0, false);
  ASSERT_EQ(op.next(), OpAction::agree);
  op.agreed(agreed_code({{0, true}}), true, false, false);
  EXPECT_EQ(op.outcome().kind, OpOutcome::success);
}

TEST(CollectiveOp, AFailedAgreementCountsAsNotCompleted) {
  CollectiveOp op(0, false);
  post_first(op);
  op.completed(0, true);
  op.agreed(agreed_code({{0, true}}), false, true, false);
  EXPECT_TRUE(op.retry_pending());
}

TEST(CollectiveOp, GivesUpWhenRetriesStopRemovingRanks) {
  CollectiveOp op(0, false);
  post_first(op, 1);
  op.broken();
  op.agreed(agreed_code({{0, false}}), true, false, false);
  op.shrunk(0);
  op.begin(false, false, 1);
  op.posted(0);
  op.broken();
  op.agreed(agreed_code({{0, false}}), true, false, false);
  EXPECT_EQ(op.outcome().kind, OpOutcome::no_progress);
}

TEST(CollectiveOp, AShrinkErrorEndsTheOperation) {
  CollectiveOp op(0, false);
  post_first(op);
  op.broken();
  op.agreed(agreed_code({{0, false}}), true, true, false);
  op.shrunk(kErr);
  EXPECT_EQ(op.outcome().kind, OpOutcome::error);
  EXPECT_EQ(op.outcome().rc, kErr);
}

TEST(CollectiveOp, InconsistentWindowIsReported) {
  CollectiveOp op(5, false);
  post_first(op);
  op.broken();
  op.agreed(agreed_code({{5, false}, {4, true}, {6, true}}), true, true, false);
  EXPECT_EQ(op.outcome().kind, OpOutcome::inconsistent);
}

// With a confirmation window (use_counts), the agreement carries counts of completed calls
// (wrap/core/confirm_window.hpp): a call finishes only if every contributor completed it.
TEST(CollectiveOp, CountsEveryoneCompletedFinishes) {
  for (int w : {2, 15, 16, 31, 32, kMaxWindow}) {
    CollectiveOp op(6, false);
    op.use_counts(w);
    EXPECT_EQ(op.code_words(), code_words(w));
    post_first(op);
    op.completed(0, true);
    ASSERT_EQ(op.next(), OpAction::agree);
    EXPECT_EQ(op.agreement_code(), count_code(7, w));
    op.agreed(count_code(7, w) & count_code(8, w), true, true, false);  // another is past it, in its next call
    ASSERT_EQ(op.next(), OpAction::shrink) << w;
    EXPECT_FALSE(op.retry_pending());
    op.shrunk(0);
    EXPECT_EQ(op.outcome().kind, OpOutcome::success);
  }
}

TEST(CollectiveOp, CountsSomeoneShortRetries) {
  for (int w : {2, 15, 16, 31, 32, kMaxWindow}) {
    CollectiveOp op(6, false);
    op.use_counts(w);
    post_first(op);
    op.completed(0, true);
    op.agreed(count_code(7, w) & count_code(6, w), true, true, false);  // another never completed call 6
    ASSERT_EQ(op.next(), OpAction::shrink) << w;
    EXPECT_TRUE(op.retry_pending());
  }
}

// Others up to W calls behind, at any window: one word (W <= 15), two, four.
TEST(CollectiveOp, CountsAWindowBehindRetry) {
  for (int w : {2, 15, 16, 31, 32, kMaxWindow}) {
    const unsigned long long me = 100;
    CollectiveOp op(me - 1, false);
    op.use_counts(w);
    post_first(op);
    op.completed(0, true);
    op.agreed(count_code(me, w) & count_code(me - static_cast<unsigned long long>(w), w), true, true, false);
    ASSERT_EQ(op.window(), Window::same_call) << w;
    ASSERT_EQ(op.next(), OpAction::shrink) << w;
    EXPECT_TRUE(op.retry_pending());
  }
}

TEST(CollectiveOp, CountsTooFarApartAreInconsistent) {
  for (int w : {2, 15, 16, 31, 32, kMaxWindow}) {
    CollectiveOp op(6, false);
    op.use_counts(w);
    post_first(op);
    op.broken();
    op.agreed(count_code(6, w) & count_code(6 + static_cast<unsigned>(code_positions(w) / 2), w), true, true, false);
    ASSERT_EQ(op.next(), OpAction::done) << w;
    EXPECT_EQ(op.outcome().kind, OpOutcome::inconsistent);
  }
}

}  // namespace
}  // namespace cohort::wrap
