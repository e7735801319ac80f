// The shared file pointer's state and moves (wrap/io/shared_file_pointer.hpp): encoding, independent takes, and
// collective moves applied once under retry.
#include "wrap/io/shared_file_pointer.hpp"

#include <gtest/gtest.h>

#include <cstdint>

using namespace cohort::wrap::shfp;

TEST(SharedPointer, EncodesAndDecodes) {
  State s{1234567890123LL, 7, 99};
  unsigned char b[kBytes];
  encode(s, b);
  State t;
  ASSERT_TRUE(decode(b, &t));
  EXPECT_EQ(t.value, s.value);
  EXPECT_EQ(t.seq, s.seq);
  EXPECT_EQ(t.before, s.before);
}

TEST(SharedPointer, RejectsForeignBytes) {
  unsigned char b[kBytes] = {};
  State t;
  EXPECT_FALSE(decode(b, &t));
}

// A corrupt side file's pointer near 2^63 would overflow the next move (fuzz/shared_pointer_state).
TEST(SharedPointer, RejectsAPointerBeyondAnyFile) {
  unsigned char b[kBytes];
  State t;
  encode(State{INT64_MAX, 3, 0}, b);
  EXPECT_FALSE(decode(b, &t));
  encode(State{5, 3, -1}, b);
  EXPECT_FALSE(decode(b, &t));
  encode(State{kMaxPointer, 3, 0}, b);
  EXPECT_TRUE(decode(b, &t));
}

TEST(SharedPointer, IndependentTakesAreDisjointAndContiguous) {
  State s;
  EXPECT_EQ(take(s, 10), 0);
  EXPECT_EQ(take(s, 5), 10);
  EXPECT_EQ(take(s, 0), 15);
  EXPECT_EQ(s.value, 15);
}

TEST(SharedPointer, CollectiveMoveIsAppliedOnce) {
  State s;
  take(s, 8);
  auto plus = [](std::int64_t b) { return b + 100; };
  Move m = apply(s, 1, plus);
  EXPECT_EQ(m.before, 8);
  EXPECT_EQ(m.after, 108);
  // the lowest survivor died before broadcasting: the next one retries the same move
  Move again = apply(s, 1, plus);
  EXPECT_EQ(again.before, 8);
  EXPECT_EQ(again.after, 108);
  EXPECT_EQ(s.value, 108);
  // the next collective call moves it again, from where the independent calls left it
  take(s, 2);
  Move next = apply(s, 2, [](std::int64_t) { return 0; });
  EXPECT_EQ(next.before, 110);
  EXPECT_EQ(next.after, 0);
}

TEST(SharedPointer, RetryOfAnUnappliedMoveAppliesIt) {
  State s{50, 3, 40};
  Move m = apply(s, 4, [](std::int64_t b) { return b + 1; });  // the dead rank never wrote move 4
  EXPECT_EQ(m.before, 50);
  EXPECT_EQ(m.after, 51);
  EXPECT_EQ(s.seq, 4u);
}
