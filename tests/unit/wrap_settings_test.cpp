// The wrappers' COHORT_* values read without MPI: dead-root and dead-peer policies, whole-number settings,
// COHORT_LOG and word-valued variables. An invalid value gives one line naming the variable, its value
// with control characters as \xNN.
#include <gtest/gtest.h>
#include <stdlib.h>

#include "detector/env.hpp"
#include "detector/inject_parse.hpp"
#include "detector/log.hpp"
#include "detector/settings.hpp"
#include "wrap/core/policy.hpp"
#include "wrap/core/settings.hpp"

using namespace cohort;

namespace {
const char *const kVars[] = {"COHORT_ON_DEAD_ROOT", "COHORT_ON_DEAD_PEER", "COHORT_ON_DEAD_PEER_SEND",
                             "COHORT_ON_DEAD_PEER_RECV", "COHORT_ON_DEAD_ROOT_BCAST", "COHORT_SEND_RETRIES",
                             "COHORT_LOG", "COHORT_ULFM_API"};
class WrapSettings : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char *v : kVars) unsetenv(v);
  }
  void TearDown() override {
    SetUp();
    log::set_level(log::Level::warn);
  }
};
}  // namespace

TEST_F(WrapSettings, PoliciesPerCallThenGenericThenDefault) {
  EXPECT_EQ(wrap::check_policy_variables({"COHORT_ON_DEAD_ROOT_BCAST"}), "");
  EXPECT_EQ(wrap::dead_root_policy("MPI_Bcast", wrap::Policy::abort), wrap::Policy::abort);
  setenv("COHORT_ON_DEAD_ROOT", "skip", 1);
  EXPECT_EQ(wrap::dead_root_policy("MPI_Bcast", wrap::Policy::abort), wrap::Policy::skip);
  setenv("COHORT_ON_DEAD_ROOT_BCAST", "error", 1);
  EXPECT_EQ(wrap::dead_root_policy("MPI_Bcast", wrap::Policy::abort), wrap::Policy::error);
  setenv("COHORT_ON_DEAD_PEER", "error", 1);
  setenv("COHORT_ON_DEAD_PEER_RECV", "skip", 1);
  EXPECT_EQ(wrap::dead_peer_policy(true, wrap::Policy::skip), wrap::Policy::error);
  EXPECT_EQ(wrap::dead_peer_policy(false, wrap::Policy::abort), wrap::Policy::skip);
  EXPECT_EQ(wrap::check_policy_variables({"COHORT_ON_DEAD_ROOT_BCAST"}), "");
}

TEST_F(WrapSettings, InvalidPolicyIsOneLineNamingTheVariable) {
  setenv("COHORT_ON_DEAD_PEER", "drop", 1);
  EXPECT_EQ(wrap::check_policy_variables({}), "invalid COHORT_ON_DEAD_PEER='drop' (expected abort, skip or error)");
  unsetenv("COHORT_ON_DEAD_PEER");
  // A valid generic value does not hide an invalid per-call one.
  setenv("COHORT_ON_DEAD_ROOT", "skip", 1);
  setenv("COHORT_ON_DEAD_ROOT_BCAST", "skip\ncohort[rank 0] error: forged", 1);
  EXPECT_EQ(wrap::check_policy_variables({"COHORT_ON_DEAD_ROOT_BCAST"}),
            "invalid COHORT_ON_DEAD_ROOT_BCAST='skip\\x0acohort[rank 0] error: forged' (expected abort, skip or error)");
}

TEST_F(WrapSettings, WholeNumbersInRange) {
  long v = 0;
  EXPECT_EQ(wrap::check_setting("COHORT_SEND_RETRIES", 3, 0, 1000, &v), "");
  EXPECT_EQ(v, 3);
  setenv("COHORT_SEND_RETRIES", "7", 1);
  EXPECT_EQ(wrap::check_setting("COHORT_SEND_RETRIES", 3, 0, 1000, &v), "");
  EXPECT_EQ(v, 7);
  setenv("COHORT_SEND_RETRIES", "-1\r", 1);
  EXPECT_EQ(wrap::check_setting("COHORT_SEND_RETRIES", 3, 0, 1000, &v),
            "invalid COHORT_SEND_RETRIES='-1\\x0d' (expected a whole number in 0..1000)");
  EXPECT_EQ(v, 7);
}

TEST_F(WrapSettings, WordsAndLogLevel) {
  int i = -1;
  EXPECT_EQ(env::read_word("COHORT_ULFM_API", {"auto", "on", "off"}, &i), "");
  EXPECT_EQ(i, -1);
  setenv("COHORT_ULFM_API", "off", 1);
  EXPECT_EQ(env::read_word("COHORT_ULFM_API", {"auto", "on", "off"}, &i), "");
  EXPECT_EQ(i, 2);
  setenv("COHORT_ULFM_API", "yes", 1);
  EXPECT_EQ(env::read_word("COHORT_ULFM_API", {"auto", "on", "off"}, &i),
            "invalid COHORT_ULFM_API='yes' (expected auto, on or off)");
  setenv("COHORT_LOG", "info", 1);
  EXPECT_EQ(log::configure_from_env(), "");
  EXPECT_TRUE(log::enabled(log::Level::info));
  setenv("COHORT_LOG", "loud", 1);
  EXPECT_EQ(log::configure_from_env(), "invalid COHORT_LOG='loud' (expected error, warn, info or debug)");
}

TEST_F(WrapSettings, NamesAndInjectionMessagesStayOneLine) {
  auto w = detector::unknown_variables({"COHORT_HB\nPERIOD"}, {});
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].find('\n'), std::string::npos) << w[0];
  EXPECT_EQ(inject::failure_message("rank=1\n", "entry 'x': bad"), "invalid COHORT_INJECT_FAILURE='rank=1\\x0a': entry 'x': bad");
}
