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

}  // namespace
