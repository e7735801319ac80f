// The failure detector's ring messages (detector/ring_detector.hpp: decode), as received from any rank of
// the job, then fed to a ring detector of 8 ranks. Input: one byte picking the sender, then the message's
// 32-bit words. A decoded message must survive encode/decode unchanged; the detector must take any
// decoded message without crashing.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "detector/ring_detector.hpp"

using namespace cohort::detector;

namespace {
constexpr int kRanks = 8;

bool same(const Message &a, const Message &b) {
  return a.type == b.type && a.subject == b.subject && a.hops == b.hops && a.count == b.count &&
         a.digest == b.digest && a.reply == b.reply && a.failed == b.failed && a.left == b.left;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  if (size < 1) return 0;
  int from = data[0] % kRanks;
  std::vector<std::int32_t> words((size - 1) / 4);
  if (!words.empty()) std::memcpy(words.data(), data + 1, words.size() * 4);
  Message m;
  if (!decode(words.data(), static_cast<int>(words.size()), kRanks, &m)) return 0;
  std::vector<std::int32_t> again = encode(m);
  if (static_cast<int>(again.size()) > max_encoded_len(kRanks)) std::abort();
  Message back;
  if (!decode(again.data(), static_cast<int>(again.size()), kRanks, &back) || !same(m, back)) std::abort();

  Config c;
  c.rank = 0;
  c.ring = std::make_shared<cohort::topology::Ring>(kRanks, false, 1);
  c.period = 1000;
  c.timeout = 4000;
  c.grace = 1000;
  Output out;
  RingDetector d(c, 0, &out);
  d.on_message(from, m, 500, &out);
  d.tick(600, &out);
  d.on_message(from, m, 700, &out);
  return 0;
}
