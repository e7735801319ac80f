// The lazy comparison of replicated copies (replica/sdc_compare.hpp), fed what a confused or malicious
// peer's copy headers could make the integration pass it: any key, any sender replica index, any digest,
// any awaited set, and deaths in between, for r = 3 in `full` mode (the mode that holds bytes).
// Invariants checked: one verdict per key at most, but for a late copy's mismatch after the key agreed
// (a copy from a replica that was not awaited, compared with the agreed hash); a verdict's fields are consistent (compared replicas
// in range and ascending, a minority only with a majority, the delivered copy among those compared); the
// bytes held equal the bytes of the pending exemplars (drop to 0 once nothing is pending).
#include <cstdint>
#include <cstdlib>
#include <map>
#include <vector>

#include "replica/sdc_compare.hpp"

using namespace cohort::replica::sdc;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  Limits limits;
  limits.max_pending = 8;
  Comparator c(Mode::full, 3, limits);
  std::vector<Verdict> out;
  std::map<Key, Verdict::Kind> seen;  // a key's first verdict
  std::size_t i = 0;
  auto next = [&]() -> std::uint8_t { return i < size ? data[i++] : 0; };
  while (i < size) {
    std::uint8_t op = next();
    if (op % 4 == 3) {
      c.sender_replica_died(next() % 3, static_cast<int8_t>(next()), &out);
    } else {
      cohort::replica::Channel ch{next() % 2, next() % 3, 0};
      Key k{ch, static_cast<std::uint64_t>(next() % 8)};
      int from = static_cast<int8_t>(next());
      std::uint8_t awaited_bits = next();
      std::vector<int> awaited;
      for (int b = 0; b < 8; ++b)
        if (awaited_bits & (1u << b)) awaited.push_back(b - 2);  // out-of-range indices too
      Digest d;
      std::size_t n = next() % 16;
      for (std::size_t j = 0; j < n; ++j) d.bytes.push_back(next());
      d.hash = d.bytes.empty() ? 0 : d.bytes[0];  // collisions on purpose: full mode must still compare bytes
      c.arrived(k, from, d, awaited, &out);
    }
  }
  for (const Verdict &v : out) {
    auto [first, fresh] = seen.emplace(v.key, v.kind);
    if (!fresh && (first->second != Verdict::agree || v.kind != Verdict::mismatch)) std::abort();
    if (!fresh) first->second = v.kind;  // (a third verdict for the key aborts above)
    for (std::size_t j = 0; j < v.compared.size(); ++j) {
      if (v.compared[j] < 0 || v.compared[j] > 2) std::abort();
      if (j && v.compared[j] <= v.compared[j - 1]) std::abort();
    }
    if (!v.majority && !v.minority.empty()) std::abort();
    bool found = false;
    for (int r : v.compared) found |= r == v.delivered_from;
    if (!found) std::abort();
    if (v.kind != Verdict::mismatch && v.tainted) std::abort();
  }
  if (c.pending() == 0 && c.pending_bytes() != 0) std::abort();
  return 0;
}
