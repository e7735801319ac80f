// The fence epoch's operation log (wrap/rma/rma_log.hpp): what a target makes of an origin's log, without MPI.
#include "wrap/rma/rma_log.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace {

using cohort::wrap::rma_log::Apply;
using cohort::wrap::rma_log::Kind;
using cohort::wrap::rma_log::Memory;
using cohort::wrap::rma_log::append;
using cohort::wrap::rma_log::append_bulk_put;
using cohort::wrap::rma_log::bulk_regions;
using cohort::wrap::rma_log::apply;
using cohort::wrap::rma_log::kOpNoOp;
using cohort::wrap::rma_log::kOpReplace;

constexpr int kLong = 7;  // a datatype code: long
constexpr int kSum = 2;   // an op code: sum

Apply longs() {
  Apply fx;
  fx.elem_size = [](int type) -> std::size_t { return type == kLong ? sizeof(long) : 0; };
  fx.accumulate = [](int type, int op, const void *in, void *inout, int count) {
    if (type != kLong || op != kSum) return false;
    const long *a = static_cast<const long *>(in);
    long *b = static_cast<long *>(inout);
    for (int i = 0; i < count; ++i) b[i] += a[i];
    return true;
  };
  return fx;
}

struct Window {
  std::vector<long> cells = std::vector<long>(8, 0);
  Memory mem() { return Memory{reinterpret_cast<char *>(cells.data()), 8 * sizeof(long), sizeof(long)}; }
};

TEST(RmaLog, PutWritesAtTheDisplacementInTargetUnits) {
  Window w;
  std::vector<char> log, reply;
  long v[2] = {11, 12};
  append(&log, Kind::put, kLong, 0, 2, 3, v, sizeof v);
  EXPECT_EQ(apply(log.data(), log.size(), w.mem(), longs(), &reply), "");
  EXPECT_EQ(w.cells[3], 11);
  EXPECT_EQ(w.cells[4], 12);
  EXPECT_TRUE(reply.empty());
}

TEST(RmaLog, OperationsApplyInLogOrder) {
  Window w;
  std::vector<char> log, reply;
  long a = 1, b = 2, c = 5;
  append(&log, Kind::put, kLong, 0, 1, 0, &a, sizeof a);
  append(&log, Kind::put, kLong, 0, 1, 0, &b, sizeof b);
  append(&log, Kind::accumulate, kLong, kSum, 1, 0, &c, sizeof c);
  append(&log, Kind::get, kLong, 0, 1, 0, nullptr, 0);
  EXPECT_EQ(apply(log.data(), log.size(), w.mem(), longs(), &reply), "");
  EXPECT_EQ(w.cells[0], 7);
  ASSERT_EQ(reply.size(), sizeof(long));
  long got;
  std::memcpy(&got, reply.data(), sizeof got);
  EXPECT_EQ(got, 7);
}

TEST(RmaLog, GetAccumulateRepliesWithTheValueBeforeTheUpdate) {
  Window w;
  w.cells[2] = 40;
  std::vector<char> log, reply;
  long add = 2;
  append(&log, Kind::get_accumulate, kLong, kSum, 1, 2, &add, sizeof add);
  append(&log, Kind::get_accumulate, kLong, kOpNoOp, 1, 2, nullptr, 0);  // fetch only (MPI_NO_OP)
  append(&log, Kind::get_accumulate, kLong, kOpReplace, 1, 2, &add, sizeof add);
  EXPECT_EQ(apply(log.data(), log.size(), w.mem(), longs(), &reply), "");
  ASSERT_EQ(reply.size(), 3 * sizeof(long));
  long got[3];
  std::memcpy(got, reply.data(), sizeof got);
  EXPECT_EQ(got[0], 40);
  EXPECT_EQ(got[1], 42);
  EXPECT_EQ(got[2], 42);
  EXPECT_EQ(w.cells[2], 2);
}

TEST(RmaLog, CompareAndSwapWritesOnlyOnAMatch) {
  Window w;
  w.cells[1] = 9;
  std::vector<char> log, reply;
  long nv = 100, wrong = 8, right = 9;
  append(&log, Kind::compare_and_swap, kLong, 0, 1, 1, &nv, sizeof nv, &wrong, sizeof wrong);
  append(&log, Kind::compare_and_swap, kLong, 0, 1, 1, &nv, sizeof nv, &right, sizeof right);
  EXPECT_EQ(apply(log.data(), log.size(), w.mem(), longs(), &reply), "");
  long got[2];
  ASSERT_EQ(reply.size(), sizeof got);
  std::memcpy(got, reply.data(), sizeof got);
  EXPECT_EQ(got[0], 9);
  EXPECT_EQ(got[1], 9);
  EXPECT_EQ(w.cells[1], 100);
}

TEST(RmaLog, OperationOutsideTheWindowIsSkippedAndItsReplyKeepsItsSize) {
  Window w;
  std::vector<char> log, reply;
  long v = 3;
  append(&log, Kind::get, kLong, 0, 2, 7, nullptr, 0);  // cells 7 and 8: 8 is outside
  append(&log, Kind::put, kLong, 0, 1, 7, &v, sizeof v);
  std::string error = apply(log.data(), log.size(), w.mem(), longs(), &reply);
  EXPECT_NE(error.find("outside"), std::string::npos) << error;
  EXPECT_EQ(reply.size(), 2 * sizeof(long));
  EXPECT_EQ(w.cells[7], 3);  // the next operation still applies
}

// A header from a confused or malicious origin: a count or displacement far beyond the window neither
// allocates a reply of that size nor overflows the displacement (fuzz/rma_log).
TEST(RmaLog, OperationLargerThanTheWindowStopsTheWalkWithoutItsReply) {
  Window w;
  std::vector<char> log, reply;
  long v = 3;
  append(&log, Kind::get, kLong, 0, 1 << 30, 0, nullptr, 0);
  append(&log, Kind::put, kLong, 0, 1, 0, &v, sizeof v);
  std::string error = apply(log.data(), log.size(), w.mem(), longs(), &reply);
  EXPECT_NE(error.find("larger than the target's window"), std::string::npos) << error;
  EXPECT_TRUE(reply.empty());
  EXPECT_EQ(w.cells[0], 0);
  log.clear();
  append(&log, Kind::get, kLong, 0, -1, 0, nullptr, 0);
  error = apply(log.data(), log.size(), w.mem(), longs(), &reply);
  EXPECT_NE(error.find("negative count"), std::string::npos) << error;
  EXPECT_TRUE(reply.empty());
  log.clear();
  append(&log, Kind::put, kLong, 0, 1, INT64_MAX / 2, &v, sizeof v);
  error = apply(log.data(), log.size(), w.mem(), longs(), &reply);
  EXPECT_NE(error.find("outside"), std::string::npos) << error;
  EXPECT_EQ(bulk_regions(log.data(), log.size(), w.mem(), longs()).size(), 0u);
}

TEST(RmaLog, UndefinedOperationAndUnknownDatatypeAreReported) {
  Window w;
  std::vector<char> log, reply;
  long v = 3;
  append(&log, Kind::accumulate, kLong, 9, 1, 0, &v, sizeof v);
  EXPECT_NE(apply(log.data(), log.size(), w.mem(), longs(), &reply), "");
  log.clear();
  append(&log, Kind::get, 99, 0, 1, 0, nullptr, 0);
  EXPECT_NE(apply(log.data(), log.size(), w.mem(), longs(), &reply), "");
}

TEST(RmaLog, TruncatedLogStopsWithoutReadingPastIt) {
  Window w;
  std::vector<char> log, reply;
  long v[2] = {1, 2};
  append(&log, Kind::put, kLong, 0, 2, 0, v, sizeof v);
  std::string error = apply(log.data(), log.size() - 4, w.mem(), longs(), &reply);
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;
  EXPECT_EQ(w.cells[0], 0);
}

TEST(RmaLog, BulkPutIsAPlaceInTheMemoryAndApplyLeavesItToTheMessage) {
  Window w;
  std::vector<char> log, reply;
  long v = 4;
  append_bulk_put(&log, kLong, 3, 2);
  append(&log, Kind::put, kLong, 0, 1, 0, &v, sizeof v);
  append_bulk_put(&log, kLong, 2, 7);  // cells 7 and 8: outside
  auto regions = bulk_regions(log.data(), log.size(), w.mem(), longs());
  ASSERT_EQ(regions.size(), 2u);
  EXPECT_EQ(regions[0].offset, static_cast<std::int64_t>(2 * sizeof(long)));
  EXPECT_EQ(regions[0].bytes, 3 * sizeof(long));
  EXPECT_EQ(regions[1].offset, -1);
  EXPECT_EQ(regions[1].bytes, 2 * sizeof(long));
  std::string error = apply(log.data(), log.size(), w.mem(), longs(), &reply);
  EXPECT_NE(error.find("outside"), std::string::npos) << error;
  EXPECT_EQ(w.cells[0], 4);
  EXPECT_EQ(w.cells[2], 0);  // written by its own message, not by apply
  EXPECT_TRUE(reply.empty());
}

TEST(RmaLog, EmptyLogDoesNothing) {
  Window w;
  std::vector<char> reply;
  EXPECT_EQ(apply(nullptr, 0, w.mem(), longs(), &reply), "");
  EXPECT_TRUE(reply.empty());
}

}  // namespace
