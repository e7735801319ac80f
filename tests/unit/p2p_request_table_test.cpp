// The request table: handle -> record, replacement of stale records, thread safety.
#include "wrap/p2p/request_table.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

using Table = cohort::wrap::RequestTable<long, std::string>;

// Runs body(k) on n threads at once, k = 0 .. n-1, and joins them.
template <typename Body>
void on_threads(int n, Body body) {
  std::vector<std::thread> threads;
  for (int k = 0; k < n; ++k) threads.emplace_back(body, k);
  for (auto &th : threads) th.join();
}

TEST(RequestTable, PutFindTake) {
  Table t;
  EXPECT_EQ(t.size(), 0u);
  EXPECT_FALSE(t.put(7, "send to 3"));
  EXPECT_FALSE(t.put(9, "recv from 1"));
  EXPECT_EQ(t.size(), 2u);
  ASSERT_TRUE(t.find(7).has_value());
  EXPECT_EQ(*t.find(7), "send to 3");
  EXPECT_EQ(t.size(), 2u);  // find does not remove
  auto taken = t.take(9);
  ASSERT_TRUE(taken.has_value());
  EXPECT_EQ(*taken, "recv from 1");
  EXPECT_FALSE(t.find(9).has_value());
  EXPECT_FALSE(t.take(9).has_value());
  EXPECT_EQ(t.size(), 1u);
}

TEST(RequestTable, RecycledHandleReplacesStaleRecord) {
  Table t;
  t.put(42, "old");  // completed by a call cohort does not wrap: never taken
  EXPECT_TRUE(t.put(42, "new"));
  EXPECT_EQ(t.size(), 1u);
  EXPECT_EQ(*t.take(42), "new");
  EXPECT_EQ(t.size(), 0u);
}

TEST(RequestTable, ConcurrentThreadsLeaveNoRecord) {
  Table t;
  on_threads(4, [&t](int k) {
    for (long i = 0; i < 5000; ++i) {
      long h = k * 100000 + i;
      t.put(h, "r");
      if (!t.find(h)) std::abort();
      if (!t.take(h)) std::abort();
    }
  });
  EXPECT_EQ(t.size(), 0u);
}

TEST(RequestTable, TakenSlotsSpillIntoTheMapAndBack) {
  Table t;
  const long n = 4 * static_cast<long>(Table::kSlots);  // more handles than one segment has slots
  for (long h = 0; h < n; ++h) EXPECT_FALSE(t.put(h * 7919, "r" + std::to_string(h)));
  EXPECT_EQ(t.size(), static_cast<std::size_t>(n));
  EXPECT_GE(t.spilled(), static_cast<std::size_t>(n) - Table::kSlots);
  for (long h = 0; h < n; ++h) {
    auto r = t.find(h * 7919);
    ASSERT_TRUE(r.has_value()) << h;
    EXPECT_EQ(*r, "r" + std::to_string(h));
  }
  EXPECT_TRUE(t.put(15 * 7919, "again"));  // replaced wherever it is
  EXPECT_EQ(t.size(), static_cast<std::size_t>(n));
  EXPECT_EQ(*t.take(15 * 7919), "again");
  for (long h = 0; h < n; ++h) {
    if (h != 15) EXPECT_EQ(*t.take(h * 7919), "r" + std::to_string(h)) << h;
  }
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.spilled(), 0u);
  EXPECT_FALSE(t.put(99, "x"));  // its slot is free again
  EXPECT_EQ(t.spilled(), 0u);
}

TEST(RequestTable, HandlePassedToAnotherThread) {
  Table t;
  std::thread([&t] { t.put(42, "old"); }).join();  // left behind: completed behind cohort's back
  std::thread([&t] { EXPECT_TRUE(t.put(42, "new")); }).join();  // MPI recycled the value on another thread
  EXPECT_EQ(t.size(), 1u);
  std::thread([&t] { t.put(7, "sent by a worker"); }).join();
  EXPECT_EQ(*t.find(7), "sent by a worker");
  EXPECT_EQ(*t.take(7), "sent by a worker");  // completed by the main thread
  EXPECT_EQ(*t.take(42), "new");
  EXPECT_EQ(t.size(), 0u);
}

TEST(RequestTable, MoreThreadsThanSegments) {
  Table t;
  on_threads(static_cast<int>(Table::kMaxSegments) + 8, [&t](int k) {
    for (long i = 0; i < 200; ++i) {
      long h = k * 100000 + i;
      t.put(h, std::to_string(h));
      auto r = t.take(h);
      if (!r || *r != std::to_string(h)) std::abort();
    }
    t.put(k * 100000 - 1, "kept");
  });
  EXPECT_EQ(t.size(), Table::kMaxSegments + 8);
  for (int k = 0; k < static_cast<int>(Table::kMaxSegments) + 8; ++k) EXPECT_EQ(*t.take(k * 100000 - 1), "kept");
  EXPECT_EQ(t.size(), 0u);
}

TEST(RequestTable, HandlesOfEveryBitPatternAreDistinct) {
  Table t;
  const long handles[] = {0, -1, -2, 1, 0x7fffffffffffffffL, -0x7fffffffffffffffL - 1};
  for (long h : handles) EXPECT_FALSE(t.put(h, std::to_string(h)));
  EXPECT_EQ(t.size(), 6u);
  for (long h : handles) EXPECT_EQ(*t.take(h), std::to_string(h));
  EXPECT_EQ(t.size(), 0u);
}

TEST(RequestTable, ConcurrentThreadsWithCollidingHandles) {
  Table t;
  on_threads(4, [&t](int k) {
    for (long i = 0; i < 5000; ++i) {
      // NOTE: distinct values on every thread (MPI's rule), and slots shared by threads and handles
      long h[3];
      for (long j = 0; j < 3; ++j) h[j] = ((k * 100000 + i) * 3 + j) * 256;
      for (long x : h) t.put(x, std::to_string(x));
      for (long x : h) {
        auto r = t.find(x);
        if (!r || *r != std::to_string(x)) std::abort();
      }
      for (long x : h) {
        auto r = t.take(x);
        if (!r || *r != std::to_string(x)) std::abort();
      }
    }
  });
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.spilled(), 0u);
}

}  // namespace
