// Silent data corruption on the replicas (replica/sdc_compare.hpp, sdc_digest.hpp, sdc_inject.hpp):
// the lazy comparison fed copies in every order, with sender replicas dying at every step and the bound
// reached; the digest's sensitivity to every single-bit flip; COHORT_INJECT_SDC's parser.
// Source of the comparison: C. Ford, "Lazy Fault Detection for Redundant MPI" (2016), chapters 3-4; the
// verdict, majority and taint rules are those stated in replica/sdc_compare.hpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "replica/sdc_compare.hpp"
#include "replica/sdc_digest.hpp"
#include "replica/sdc_inject.hpp"

namespace cohort::replica::sdc {
namespace {

Key key(std::uint64_t seq, int src = 0, int dst = 1) { return Key{Channel{0, src, dst}, seq}; }

Bytes payload(int value) {
  Bytes b(32);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<unsigned char>(value + i);
  return b;
}

Bytes corrupted(int value, std::uint64_t bit = 5) {
  Bytes b = payload(value);
  flip_bit(b.data(), b.size(), bit);
  return b;
}

std::vector<int> all(int r) {
  std::vector<int> v(static_cast<std::size_t>(r));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

TEST(SdcMode, ParsesTheThreeWords) {
  Mode m = Mode::off;
  EXPECT_TRUE(parse_mode("hash", &m));
  EXPECT_EQ(m, Mode::hash);
  EXPECT_TRUE(parse_mode("full", &m));
  EXPECT_EQ(m, Mode::full);
  EXPECT_TRUE(parse_mode("off", &m));
  EXPECT_EQ(m, Mode::off);
  EXPECT_FALSE(parse_mode("HASH", &m));
  EXPECT_FALSE(parse_mode("", &m));
  EXPECT_EQ(m, Mode::off);
  EXPECT_STREQ(mode_name(Mode::full), "full");
}

TEST(SdcCompare, TwoAgreeingCopiesGiveOneAgreeVerdictInEitherOrder) {
  for (Mode mode : {Mode::hash, Mode::full}) {
    for (int first : {0, 1}) {
      Comparator c(mode, 2);
      std::vector<Verdict> out;
      c.arrived(key(0), first, make_digest(mode, payload(1)), all(2), &out);
      EXPECT_TRUE(out.empty());
      EXPECT_EQ(c.pending(), 1u);
      c.arrived(key(0), 1 - first, make_digest(mode, payload(1)), all(2), &out);
      ASSERT_EQ(out.size(), 1u);
      EXPECT_EQ(out[0].kind, Verdict::agree);
      EXPECT_EQ(out[0].delivered_from, first);
      EXPECT_EQ(out[0].compared, (std::vector<int>{0, 1}));
      EXPECT_FALSE(out[0].tainted);
      EXPECT_EQ(c.pending(), 0u);
      EXPECT_EQ(c.pending_bytes(), 0u);
    }
  }
}

TEST(SdcCompare, TwoReplicasDisagreeingHaveNoMajorityAndTaintTheReceiver) {
  for (Mode mode : {Mode::hash, Mode::full}) {
    for (int bad : {0, 1}) {
      for (int first : {0, 1}) {
        Comparator c(mode, 2);
        std::vector<Verdict> out;
        auto copy = [&](int k) { return make_digest(mode, k == bad ? corrupted(7) : payload(7)); };
        c.arrived(key(3), first, copy(first), all(2), &out);
        c.arrived(key(3), 1 - first, copy(1 - first), all(2), &out);
        ASSERT_EQ(out.size(), 1u);
        EXPECT_EQ(out[0].kind, Verdict::mismatch);
        EXPECT_FALSE(out[0].majority);
        EXPECT_TRUE(out[0].minority.empty());
        // With two replicas nobody can tell which copy is sound: the receiver is suspect either way.
        EXPECT_TRUE(out[0].tainted);
        EXPECT_EQ(out[0].key, key(3));
        EXPECT_EQ(c.counters().mismatches, 1u);
      }
    }
  }
}

// r = 3, one corrupted sender replica, every order of the three copies: the majority names the
// corrupted replica, and the receiver is tainted exactly when the corrupted copy arrived first.
TEST(SdcCompare, ThreeReplicasOutvoteTheCorruptedOneInEveryOrder) {
  for (Mode mode : {Mode::hash, Mode::full}) {
    for (int bad = 0; bad < 3; ++bad) {
      std::vector<int> order = all(3);
      do {
        Comparator c(mode, 3);
        std::vector<Verdict> out;
        for (int k : order) c.arrived(key(0), k, make_digest(mode, k == bad ? corrupted(2) : payload(2)), all(3), &out);
        ASSERT_EQ(out.size(), 1u);
        const Verdict &v = out[0];
        EXPECT_EQ(v.kind, Verdict::mismatch);
        EXPECT_TRUE(v.majority);
        EXPECT_EQ(v.minority, std::vector<int>{bad});
        EXPECT_EQ(v.delivered_from, order[0]);
        EXPECT_EQ(v.tainted, order[0] == bad);
      } while (std::next_permutation(order.begin(), order.end()));
    }
  }
}

TEST(SdcCompare, ThreeDifferentContentsHaveNoMajority) {
  Comparator c(Mode::full, 3);
  std::vector<Verdict> out;
  c.arrived(key(0), 0, make_digest(Mode::full, payload(1)), all(3), &out);
  c.arrived(key(0), 1, make_digest(Mode::full, payload(2)), all(3), &out);
  c.arrived(key(0), 2, make_digest(Mode::full, payload(3)), all(3), &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, Verdict::mismatch);
  EXPECT_FALSE(out[0].majority);
  EXPECT_TRUE(out[0].tainted);
}

// `full` compares bytes: two copies with the same hash field but different bytes differ. `hash`
// compares hashes only (the bytes are never carried).
TEST(SdcCompare, FullModeComparesBytesHashModeComparesHashes) {
  Digest a{42, payload(1)}, b{42, payload(2)};
  Comparator full(Mode::full, 2);
  std::vector<Verdict> out;
  full.arrived(key(0), 0, a, all(2), &out);
  full.arrived(key(0), 1, b, all(2), &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, Verdict::mismatch);
  Comparator hash(Mode::hash, 2);
  out.clear();
  hash.arrived(key(0), 0, Digest{42, {}}, all(2), &out);
  hash.arrived(key(0), 1, Digest{42, {}}, all(2), &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, Verdict::agree);
}

TEST(SdcCompare, OffComparesNothing) {
  Comparator c(Mode::off, 2);
  std::vector<Verdict> out;
  c.arrived(key(0), 0, Digest{1, {}}, all(2), &out);
  c.arrived(key(0), 1, Digest{2, {}}, all(2), &out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(c.pending(), 0u);
}

TEST(SdcCompare, ASenderReplicaDyingEndsItsPendingComparisons) {
  // r = 2: the twin of the delivered copy dies before its copy came: nothing to compare with.
  Comparator c(Mode::hash, 2);
  std::vector<Verdict> out;
  c.arrived(key(0), 0, Digest{1, {}}, all(2), &out);
  c.arrived(key(1), 0, Digest{2, {}}, all(2), &out);
  c.arrived(key(0, /*src=*/2), 0, Digest{3, {}}, all(2), &out);  // another sender: unaffected
  c.sender_replica_died(0, 1, &out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].kind, Verdict::unchecked);
  EXPECT_EQ(out[1].kind, Verdict::unchecked);
  EXPECT_EQ(c.pending_keys(), std::vector<Key>{key(0, 2)});
  EXPECT_EQ(c.counters().unchecked, 2u);
  // Its copy, sent before it died, arrives after the comparison ended: late, ignored.
  c.arrived(key(0), 1, Digest{9, {}}, all(2), &out);
  EXPECT_EQ(out.size(), 2u);
  EXPECT_EQ(c.counters().late, 1u);
}

TEST(SdcCompare, ACopyFromAReplicaKnownDeadStillCountsWhilePending) {
  // r = 3, replica 2 known dead when the first copy came (awaited {0, 1}); its copy arrives anyway.
  Comparator c(Mode::hash, 3);
  std::vector<Verdict> out;
  c.arrived(key(0), 0, Digest{1, {}}, {0, 1}, &out);
  c.arrived(key(0), 2, Digest{5, {}}, {0, 1}, &out);
  EXPECT_TRUE(out.empty());
  c.arrived(key(0), 1, Digest{1, {}}, {0, 1}, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, Verdict::mismatch);
  EXPECT_TRUE(out[0].majority);
  EXPECT_EQ(out[0].minority, std::vector<int>{2});
  EXPECT_FALSE(out[0].tainted);
}

TEST(SdcCompare, ARepeatedCopyFromOneReplicaIsIgnored) {
  Comparator c(Mode::hash, 2);
  std::vector<Verdict> out;
  c.arrived(key(0), 0, Digest{1, {}}, all(2), &out);
  c.arrived(key(0), 0, Digest{2, {}}, all(2), &out);
  EXPECT_TRUE(out.empty());
  c.arrived(key(0), 1, Digest{1, {}}, all(2), &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, Verdict::agree);
  // Out-of-range replica indices (a confused peer) change nothing.
  c.arrived(key(1), 7, Digest{1, {}}, all(2), &out);
  c.arrived(key(1), -1, Digest{1, {}}, all(2), &out);
  EXPECT_EQ(c.pending(), 0u);
}

// A copy from a sender replica that died after its twins' copies agreed (fenced on a twin's verdict, say)
// arrives late: compared with the agreed hash, a difference is a mismatch with that replica the minority.
TEST(SdcCompare, ALateCopyIsComparedWithTheAgreedContent) {
  Comparator c(Mode::hash, 3);
  std::vector<Verdict> out;
  c.arrived(key(0), 0, make_digest(Mode::hash, payload(1)), all(3), &out);
  c.arrived(key(0), 2, make_digest(Mode::hash, payload(1)), all(3), &out);
  c.sender_replica_died(0, 1, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, Verdict::agree);
  out.clear();
  c.arrived(key(0), 1, make_digest(Mode::hash, corrupted(1)), all(3), &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, Verdict::mismatch);
  EXPECT_TRUE(out[0].majority);
  EXPECT_EQ(out[0].minority, std::vector<int>{1});
  EXPECT_FALSE(out[0].tainted);
  EXPECT_EQ(out[0].compared, (std::vector<int>{0, 1, 2}));
  out.clear();
  c.arrived(key(0), 1, make_digest(Mode::hash, corrupted(1)), all(3), &out);  // once only
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(c.counters().late, 2u);
}

// With lanes the copy the program gets is not the first to arrive: `kept` says which one it is, and the
// taint rule follows it.
TEST(SdcCompare, TheKeptCopyDecidesTheTaint) {
  Comparator c(Mode::hash, 3);
  std::vector<Verdict> out;
  c.arrived(key(0), 1, make_digest(Mode::hash, corrupted(1)), all(3), false, &out);
  c.arrived(key(0), 0, make_digest(Mode::hash, payload(1)), all(3), true, &out);
  c.arrived(key(0), 2, make_digest(Mode::hash, payload(1)), all(3), false, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].delivered_from, 0);
  EXPECT_FALSE(out[0].tainted);
  EXPECT_EQ(out[0].groups, (std::vector<std::vector<int>>{{0, 2}, {1}}));
  out.clear();
  c.arrived(key(1), 1, make_digest(Mode::hash, corrupted(1)), all(3), true, &out);
  c.arrived(key(1), 0, make_digest(Mode::hash, payload(1)), all(3), false, &out);
  c.arrived(key(1), 2, make_digest(Mode::hash, payload(1)), all(3), false, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].tainted);
}

TEST(SdcCompare, TheBoundIsReachedAndReleased) {
  Limits limits;
  limits.max_pending = 4;
  Comparator c(Mode::hash, 2, limits);
  std::vector<Verdict> out;
  for (std::uint64_t s = 0; s < 4; ++s) {
    EXPECT_FALSE(c.full());
    c.arrived(key(s), 0, Digest{s, {}}, all(2), &out);
  }
  EXPECT_TRUE(c.full());
  c.arrived(key(2), 1, Digest{2, {}}, all(2), &out);
  EXPECT_FALSE(c.full());
  ASSERT_EQ(out.size(), 1u);
  // Completions out of order are remembered: the late copies of 2 are recognised, 0/1/3 still pending.
  c.arrived(key(0), 1, Digest{0, {}}, all(2), &out);
  c.arrived(key(1), 1, Digest{1, {}}, all(2), &out);
  c.arrived(key(3), 1, Digest{3, {}}, all(2), &out);
  EXPECT_EQ(out.size(), 4u);
  EXPECT_EQ(c.pending(), 0u);
}

TEST(SdcCompare, FullModeBoundsTheBytesHeld) {
  Limits limits;
  limits.max_pending_bytes = 64;
  Comparator c(Mode::full, 2, limits);
  std::vector<Verdict> out;
  c.arrived(key(0), 0, make_digest(Mode::full, payload(0)), all(2), &out);
  EXPECT_EQ(c.pending_bytes(), 32u);
  EXPECT_FALSE(c.full());
  c.arrived(key(1), 0, make_digest(Mode::full, payload(1)), all(2), &out);
  EXPECT_TRUE(c.full());
  c.arrived(key(0), 1, make_digest(Mode::full, payload(0)), all(2), &out);
  EXPECT_EQ(c.pending_bytes(), 32u);
  EXPECT_FALSE(c.full());
}

// Every schedule of one message at r = 3: each order of the three copies, the death of each sender
// replica at each step (or none), and each choice of corrupted replica (or none). Invariants: exactly
// one verdict; never a mismatch without corruption (no false positive); a mismatch whenever the
// corrupted copy and a sound copy were both compared; with two sound copies compared, the majority
// names exactly the corrupted replica; the receiver is tainted exactly when it got a corrupted copy
// and the comparison found it.
TEST(SdcCompare, EveryArrivalOrderDeathAndCorruptionAtThreeReplicas) {
  int schedules = 0;
  for (Mode mode : {Mode::hash, Mode::full}) {
    for (int bad = -1; bad < 3; ++bad) {
      for (int dead = -1; dead < 3; ++dead) {
        for (int die_after = 0; die_after <= 3; ++die_after) {
          if (dead < 0 && die_after > 0) continue;
          std::vector<int> order = all(3);
          do {
            Comparator c(mode, 3);
            std::vector<Verdict> out;
            std::vector<int> awaited = all(3);
            std::vector<int> compared;
            bool dead_now = false;
            auto kill = [&] {
              if (dead < 0 || dead_now) return;
              dead_now = true;
              awaited.erase(std::remove(awaited.begin(), awaited.end(), dead), awaited.end());
              c.sender_replica_died(0, dead, &out);
            };
            int step = 0;
            for (int k : order) {
              if (step++ == die_after) kill();
              // A dead replica's copy after its death is lost (it may or may not come; here it does not).
              if (dead_now && k == dead) continue;
              if (!out.empty()) {
                c.arrived(key(0), k, make_digest(mode, k == bad ? corrupted(4) : payload(4)), awaited, &out);
                continue;  // late
              }
              compared.push_back(k);
              c.arrived(key(0), k, make_digest(mode, k == bad ? corrupted(4) : payload(4)), awaited, &out);
            }
            kill();
            ++schedules;
            ASSERT_EQ(out.size(), 1u);
            const Verdict &v = out[0];
            std::sort(compared.begin(), compared.end());
            EXPECT_EQ(v.compared, compared);
            bool bad_compared = std::count(compared.begin(), compared.end(), bad) > 0;
            std::size_t sound = compared.size() - (bad_compared ? 1 : 0);
            if (compared.size() < 2) {
              EXPECT_EQ(v.kind, Verdict::unchecked);
            } else if (!bad_compared || sound == 0) {
              EXPECT_EQ(v.kind, Verdict::agree);
            } else {
              EXPECT_EQ(v.kind, Verdict::mismatch);
              EXPECT_EQ(v.majority, sound >= 2);
              if (sound >= 2) EXPECT_EQ(v.minority, std::vector<int>{bad});
              EXPECT_EQ(v.tainted, sound < 2 || v.delivered_from == bad);
            }
            EXPECT_EQ(c.pending(), 0u);
          } while (std::next_permutation(order.begin(), order.end()));
        }
      }
    }
  }
  EXPECT_EQ(schedules, 2 * 4 * (1 + 3 * 4) * 6);
}

TEST(SdcDigest, EverySingleBitFlipChangesTheHash) {
  Bytes b = payload(11);
  b.resize(64);
  const std::uint64_t h = hash_bytes(b.data(), b.size());
  EXPECT_EQ(h, hash_bytes(b.data(), b.size()));
  for (std::uint64_t bit = 0; bit < 8 * b.size(); ++bit) {
    Bytes c = b;
    ASSERT_EQ(flip_bit(c.data(), c.size(), bit), static_cast<long long>(bit));
    EXPECT_NE(hash_bytes(c.data(), c.size()), h) << "bit " << bit;
  }
}

TEST(SdcDigest, FlipTakesTheBitModuloTheSizeAndSkipsEmptyMessages) {
  unsigned char m[2] = {0, 0};
  EXPECT_EQ(flip_bit(m, 2, 17), 1);
  EXPECT_EQ(m[0], 2);
  EXPECT_EQ(flip_bit(m, 2, 15), 15);
  EXPECT_EQ(m[1], 0x80);
  EXPECT_EQ(flip_bit(m, 0, 3), -1);
  Digest d = make_digest(Mode::hash, payload(1));
  EXPECT_TRUE(d.bytes.empty());
  EXPECT_EQ(make_digest(Mode::full, payload(1)).bytes, payload(1));
}

TEST(SdcInject, ParsesEntries) {
  std::vector<Injection> v;
  ASSERT_EQ(parse_injections("rank=1,replica=0,send=3;rank=0,replica=2,send=10,bit=77,where=memory", &v), "");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].rank, 1);
  EXPECT_EQ(v[0].replica, 0);
  EXPECT_EQ(v[0].send, 3);
  EXPECT_EQ(v[0].bit, 0);
  EXPECT_FALSE(v[0].in_memory);
  EXPECT_EQ(v[1].bit, 77);
  EXPECT_TRUE(v[1].in_memory);
  EXPECT_EQ(validate_injections(v, 2, 3), "");
}

TEST(SdcInject, RejectsBadEntriesWithOneLine) {
  struct Case {
    const char *text;
    const char *error;
  } cases[] = {
      {"", "no entry"},
      {"rank=1,send=2", "entry 'rank=1,send=2': an entry needs replica="},
      {"replica=1,send=2", "entry 'replica=1,send=2': an entry needs rank="},
      {"rank=1,replica=1", "entry 'rank=1,replica=1': an entry needs send="},
      {"rank=1,replica=3,send=1", "entry 'rank=1,replica=3,send=1': replica must be 0, 1 or 2, not '3'"},
      {"rank=1,replica=1,send=0", "entry 'rank=1,replica=1,send=0': send must be a count >= 1, not '0'"},
      {"rank=x,replica=1,send=1", "entry 'rank=x,replica=1,send=1': rank must be a logical rank >= 0, not 'x'"},
      {"rank=1,replica=1,send=1,where=disk",
       "entry 'rank=1,replica=1,send=1,where=disk': where must be message or memory, not 'disk'"},
      {"rank=1,replica=1,send=1,hit=2",
       "entry 'rank=1,replica=1,send=1,hit=2': unknown key 'hit' (expected rank, replica, send, bit, where)"},
      {"rank=1,rank=2,replica=0,send=1", "entry 'rank=1,rank=2,replica=0,send=1': rank= is given twice"},
      {"rank=1,replica=0,send=1;rank=1,replica=0,send=1,bit=4",
       "entry 'rank=1,replica=0,send=1,bit=4': that message is already corrupted by an earlier entry"},
      {"rank=1,replica=0,send=1,bit=\n", "entry 'rank=1,replica=0,send=1,bit=\\x0a': bit must be a bit index >= 0, not '\\x0a'"},
  };
  for (const Case &k : cases) {
    std::vector<Injection> v;
    EXPECT_EQ(parse_injections(k.text, &v), k.error) << k.text;
  }
  EXPECT_EQ(injection_failure_message("a\nb", "no entry"), "invalid COHORT_INJECT_SDC='a\\x0ab': no entry");
}

TEST(SdcInject, ValidatesAgainstTheJob) {
  std::vector<Injection> v;
  ASSERT_EQ(parse_injections("rank=4,replica=0,send=1", &v), "");
  EXPECT_EQ(validate_injections(v, 4, 2), "rank 4 is out of range: the job has 4 logical ranks (0..3)");
  ASSERT_EQ(parse_injections("rank=0,replica=2,send=1", &v), "");
  EXPECT_EQ(validate_injections(v, 4, 2), "replica 2 is out of range: each rank has 2 replicas (0..1)");
  EXPECT_EQ(validate_injections(v, 4, 1), "SDC injection needs replication (COHORT_REPLICAS=2 or 3)");
}

}  // namespace
}  // namespace cohort::replica::sdc
