// The request table: handle -> record, replacement of stale records, thread safety.
#include "wrap/request_table.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

using Table = cohort::wrap::RequestTable<long, std::string>;

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
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&t, k] {
      for (long i = 0; i < 5000; ++i) {
        long h = k * 100000 + i;
        t.put(h, "r");
        if (!t.find(h)) std::abort();
        if (!t.take(h)) std::abort();
      }
    });
  }
  for (auto &th : threads) th.join();
  EXPECT_EQ(t.size(), 0u);
}

TEST(RequestTable, FullBucketSpillsIntoTheMapAndBack) {
  Table t(1);  // one bucket: 8 slots, then the map
  for (long h = 0; h < 20; ++h) EXPECT_FALSE(t.put(h, "r" + std::to_string(h)));
  EXPECT_EQ(t.size(), 20u);
  EXPECT_EQ(t.spilled(), 20u - Table::kSlotsPerBucket);
  for (long h = 0; h < 20; ++h) {
    ASSERT_TRUE(t.find(h).has_value()) << h;
    EXPECT_EQ(*t.find(h), "r" + std::to_string(h));
  }
  EXPECT_TRUE(t.put(15, "again"));  // a spilled record is replaced too
  EXPECT_EQ(t.size(), 20u);
  EXPECT_EQ(*t.take(15), "again");
  for (long h = 0; h < 20; ++h) {
    if (h != 15) EXPECT_EQ(*t.take(h), "r" + std::to_string(h));
  }
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.spilled(), 0u);
  EXPECT_FALSE(t.put(99, "x"));  // the bucket is free again
  EXPECT_EQ(t.spilled(), 0u);
}

TEST(RequestTable, HandlesOfEveryBitPatternAreDistinct) {
  Table t;
  const long handles[] = {0, -1, -2, 1, 0x7fffffffffffffffL, -0x7fffffffffffffffL - 1};
  for (long h : handles) EXPECT_FALSE(t.put(h, std::to_string(h)));
  EXPECT_EQ(t.size(), 6u);
  for (long h : handles) EXPECT_EQ(*t.take(h), std::to_string(h));
  EXPECT_EQ(t.size(), 0u);
}

TEST(RequestTable, ConcurrentThreadsSharingOneBucket) {
  Table t(1);
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&t, k] {
      for (long i = 0; i < 5000; ++i) {
        long h[3] = {k * 100000 + 3 * i, k * 100000 + 3 * i + 1, k * 100000 + 3 * i + 2};
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
  }
  for (auto &th : threads) th.join();
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.spilled(), 0u);
}

}  // namespace
