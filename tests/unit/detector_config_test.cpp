// Settings from the environment, COHORT_INJECT_FAILURE parsing, and the wire format.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <algorithm>

#include "detector/inject_parse.hpp"
#include "detector/ring_detector.hpp"
#include "detector/settings.hpp"

using namespace cohort::detector;

namespace {
const char *const kVars[] = {"COHORT_HB_PERIOD_MS", "COHORT_HB_TIMEOUT_MS", "COHORT_HB_GRACE_MS", "COHORT_POLL_US", "COHORT_IDLE_POLL_US",
                             "COHORT_BCAST",        "COHORT_RING_SHUFFLE",  "COHORT_RING_SEED", "COHORT_PIDFD"};
class DetectorSettings : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char *v : kVars) unsetenv(v);
  }
  void TearDown() override { SetUp(); }
};
}  // namespace

TEST_F(DetectorSettings, Defaults) {
  Settings s;
  EXPECT_EQ(load_settings(&s), "");
  EXPECT_EQ(s.period_ms, 100);
  EXPECT_EQ(s.timeout_ms, 1000);
  EXPECT_EQ(s.grace_ms, 100);
  EXPECT_EQ(s.poll_us, 1000);
  EXPECT_EQ(s.idle_poll_us, 5000);
  EXPECT_EQ(s.bcast, cohort::topology::Bcast::chord);
  EXPECT_FALSE(s.shuffle);
  EXPECT_TRUE(s.pidfd);
}

TEST_F(DetectorSettings, ValidValues) {
  setenv("COHORT_HB_PERIOD_MS", "50", 1);
  setenv("COHORT_HB_TIMEOUT_MS", "100", 1);
  setenv("COHORT_BCAST", "hba", 1);
  setenv("COHORT_RING_SHUFFLE", "1", 1);
  setenv("COHORT_RING_SEED", "77", 1);
  Settings s;
  EXPECT_EQ(load_settings(&s), "");
  EXPECT_EQ(s.period_ms, 50);
  EXPECT_EQ(s.timeout_ms, 100);
  EXPECT_EQ(s.grace_ms, 50);
  EXPECT_EQ(s.bcast, cohort::topology::Bcast::hba);
  EXPECT_TRUE(s.shuffle);
  EXPECT_EQ(s.seed, 77u);
}

TEST_F(DetectorSettings, PidfdSwitch) {
  for (auto [value, on] : {std::pair{"on", true}, {"1", true}, {"off", false}, {"0", false}}) {
    setenv("COHORT_PIDFD", value, 1);
    Settings s;
    EXPECT_EQ(load_settings(&s), "") << value;
    EXPECT_EQ(s.pidfd, on) << value;
  }
  EXPECT_NE(std::find(known_variables().begin(), known_variables().end(), "COHORT_PIDFD"), known_variables().end());
}

TEST_F(DetectorSettings, EachInvalidValueIsNamed) {
  struct Case {
    const char *var, *value, *expect;
  } cases[] = {
      {"COHORT_HB_PERIOD_MS", "abc", "invalid COHORT_HB_PERIOD_MS='abc' (expected ms in 1..3600000)"},
      {"COHORT_HB_PERIOD_MS", "0", "invalid COHORT_HB_PERIOD_MS='0'"},
      {"COHORT_HB_TIMEOUT_MS", "150", "invalid COHORT_HB_TIMEOUT_MS=150: must be at least 2 x COHORT_HB_PERIOD_MS (100 ms)"},
      {"COHORT_HB_TIMEOUT_MS", "-5", "invalid COHORT_HB_TIMEOUT_MS='-5'"},
      {"COHORT_HB_GRACE_MS", "5000", "invalid COHORT_HB_GRACE_MS='5000'"},
      {"COHORT_POLL_US", "10", "invalid COHORT_POLL_US='10'"},
      {"COHORT_IDLE_POLL_US", "500", "invalid COHORT_IDLE_POLL_US='500' (expected µs in 1000..100000)"},
      {"COHORT_BCAST", "ring", "invalid COHORT_BCAST='ring' (expected chord, bmg or hba)"},
      {"COHORT_RING_SHUFFLE", "yes", "invalid COHORT_RING_SHUFFLE='yes'"},
      {"COHORT_PIDFD", "yes", "invalid COHORT_PIDFD='yes' (expected on or off)"},
  };
  for (const Case &c : cases) {
    SetUp();
    setenv(c.var, c.value, 1);
    Settings s;
    std::string err = load_settings(&s);
    EXPECT_EQ(err.rfind(c.expect, 0), 0u) << c.var << "=" << c.value << " gave: " << err;
  }
}

// A value quoted in a message keeps it on one line (fuzz/settings, fuzz/inject_failure).
TEST_F(DetectorSettings, ControlCharactersInAValueAreEscaped) {
  setenv("COHORT_BCAST", "ring\nfake: line", 1);
  Settings s;
  EXPECT_EQ(load_settings(&s), "invalid COHORT_BCAST='ring\\x0afake: line' (expected chord, bmg or hba)");
  std::vector<cohort::inject::Entry> e;
  std::string err = cohort::inject::parse("rank=1,after_ms=1\r\n", &e);
  EXPECT_EQ(err.find_first_of("\r\n"), std::string::npos) << err;
  EXPECT_NE(err.find("\\x0d\\x0a"), std::string::npos) << err;
}

TEST(DetectorInject, TimedEntries) {
  std::vector<cohort::inject::Entry> e;
  ASSERT_EQ(cohort::inject::parse("rank=3,after_ms=2000", &e), "");
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].rank, 3);
  EXPECT_EQ(e[0].after_ms, 2000);
  EXPECT_EQ(e[0].signal, SIGKILL);
  ASSERT_EQ(cohort::inject::parse("rank=1,after_ms=500;rank=2,after_ms=900,signal=STOP,cont_ms=3000", &e), "");
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[1].rank, 2);
  EXPECT_EQ(e[1].signal, SIGSTOP);
  EXPECT_EQ(e[1].cont_ms, 3000);
  ASSERT_EQ(cohort::inject::parse("rank=1+4+5,after_ms=10", &e), "");
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[2].rank, 5);
  EXPECT_EQ(e[2].after_ms, 10);
}

TEST(DetectorInject, HookEntries) {
  std::vector<cohort::inject::Entry> e;
  ASSERT_EQ(cohort::inject::parse("rank=1,at=agree.decide,hit=2", &e), "");
  EXPECT_EQ(e[0].at, "agree.decide");
  EXPECT_EQ(e[0].hit, 2);
  EXPECT_EQ(e[0].after_ms, -1);
}

TEST(DetectorInject, Rejections) {
  std::vector<cohort::inject::Entry> e;
  EXPECT_NE(cohort::inject::parse("", &e), "");
  EXPECT_NE(cohort::inject::parse("after_ms=10", &e).find("needs rank="), std::string::npos);
  EXPECT_NE(cohort::inject::parse("rank=1", &e).find("exactly one of after_ms= and at="), std::string::npos);
  EXPECT_NE(cohort::inject::parse("rank=1,after_ms=1,at=x", &e).find("exactly one"), std::string::npos);
  EXPECT_NE(cohort::inject::parse("rank=1,after_ms=x", &e).find("after_ms must be"), std::string::npos);
  EXPECT_NE(cohort::inject::parse("rank=1,after_ms=1,signal=HUP", &e).find("signal must be KILL or STOP"), std::string::npos);
  EXPECT_NE(cohort::inject::parse("rank=1,after_ms=1,hit=2", &e).find("hit= goes with at="), std::string::npos);
  EXPECT_NE(cohort::inject::parse("rank=1,after_ms=1,cont_ms=5", &e).find("cont_ms= goes with signal=STOP"), std::string::npos);
  EXPECT_NE(cohort::inject::parse("rank=1,after_ms=1,color=red", &e).find("unknown key 'color'"), std::string::npos);
  EXPECT_NE(cohort::inject::parse("rank=1;rank", &e), "");
}

TEST(DetectorInject, ValidateRanksAndHooks) {
  std::vector<cohort::inject::Entry> e;
  auto hooks = cohort::inject::known_hooks({"MPI_Bcast", "MPI_Allreduce"});
  ASSERT_EQ(cohort::inject::parse("rank=3,after_ms=10", &e), "");
  EXPECT_EQ(cohort::inject::validate(e, 4, hooks), "");
  EXPECT_EQ(cohort::inject::validate(e, 3, hooks), "rank 3 is out of range: the job has 3 ranks (0..2)");
  ASSERT_EQ(cohort::inject::parse("rank=1,at=bcast.posted;rank=0,at=agree.decide,hit=2", &e), "");
  EXPECT_EQ(cohort::inject::validate(e, 2, hooks), "");
  ASSERT_EQ(cohort::inject::parse("rank=1,at=agree.decid", &e), "");
  EXPECT_EQ(cohort::inject::validate(e, 2, hooks), "unknown hook 'agree.decid' (did you mean agree.decide?)");
  ASSERT_EQ(cohort::inject::parse("rank=1,at=nowhere.at.all.really", &e), "");
  EXPECT_EQ(cohort::inject::validate(e, 2, hooks), "unknown hook 'nowhere.at.all.really'");
  EXPECT_NE(std::find(hooks.begin(), hooks.end(), "allreduce.posted"), hooks.end());
}

TEST(DetectorSettingsNames, UnknownVariablesNameTheClosest) {
  auto w = unknown_variables({"COHORT_HB_TIMEOUT", "COHORT_LOG", "PATH", "COHORT_ON_DEAD_ROOT_BCST", "COHORT_ZZZZZZZZZZZZZZ"},
                             {"COHORT_ON_DEAD_ROOT_BCAST"});
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0], "unknown variable COHORT_HB_TIMEOUT (ignored; did you mean COHORT_HB_TIMEOUT_MS?)");
  EXPECT_EQ(w[1], "unknown variable COHORT_ON_DEAD_ROOT_BCST (ignored; did you mean COHORT_ON_DEAD_ROOT_BCAST?)");
  EXPECT_EQ(w[2], "unknown variable COHORT_ZZZZZZZZZZZZZZ (ignored)");
  EXPECT_TRUE(unknown_variables(known_variables(), {}).empty());
}

TEST(DetectorWire, RoundTrip) {
  Message m;
  m.type = MsgType::emit_request;
  m.subject = 7;
  m.hops = 3;
  m.count = 2;
  m.digest = 0xfedcba9876543210ULL;
  m.reply = true;
  m.failed = {1, 4};
  m.left = {9};
  std::vector<std::int32_t> w = encode(m);
  EXPECT_LE(static_cast<int>(w.size()), max_encoded_len(10));
  Message d;
  ASSERT_TRUE(decode(w.data(), static_cast<int>(w.size()), 10, &d));
  EXPECT_EQ(d.type, m.type);
  EXPECT_EQ(d.subject, 7);
  EXPECT_EQ(d.hops, 3);
  EXPECT_EQ(d.count, 2u);
  EXPECT_EQ(d.digest, m.digest);
  EXPECT_TRUE(d.reply);
  EXPECT_EQ(d.failed, m.failed);
  EXPECT_EQ(d.left, m.left);
}

TEST(DetectorWire, MalformedIsRejected) {
  Message m;
  m.type = MsgType::sync;
  m.failed = {1, 2};
  std::vector<std::int32_t> w = encode(m);
  Message d;
  EXPECT_FALSE(decode(w.data(), static_cast<int>(w.size()) - 1, 10, &d));  // truncated
  EXPECT_FALSE(decode(w.data(), static_cast<int>(w.size()), 2, &d));       // rank 2 out of [0, 2)
  w[0] ^= 0x10000;
  EXPECT_FALSE(decode(w.data(), static_cast<int>(w.size()), 10, &d));  // bad magic
}

TEST(DetectorWire, DigestIsOrderFree) {
  EXPECT_EQ(digest_of({1, 5, 9}), digest_of({9, 1, 5}));
  EXPECT_NE(digest_of({1, 5}), digest_of({1, 6}));
  EXPECT_EQ(digest_of({}), 0u);
}
