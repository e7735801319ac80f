// The heartbeat backend's repair messages (repair/engine.hpp: decode): agreement contributions, decisions
// and views, and revocation notices, as received from any rank. Input: a sequence of records (one byte:
// the sender's world rank; one byte: the length; then the message's bytes), delivered to the engine of
// world rank 0, which has a communicator of 4 members and an agreement started on it. A decoded message
// must survive encode/decode unchanged; the engine must take any message without crashing.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz/fuzz_input.hpp"
#include "repair/engine.hpp"

using namespace cohort::repair;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  cohort::fuzz::Input in(data, size);
  Engine e(0, 2);
  e.add_comm(7, {0, 1, 2, 3});
  e.start_agree(7, 1);
  while (!in.empty()) {
    int from = in.byte() % 6;  // 4 and 5: world ranks outside the communicator
    std::string bytes = in.bytes(in.byte());
    Wire w;
    if (decode(bytes.data(), bytes.size(), &w)) {
      std::vector<char> again = encode(w);
      Wire back;
      if (!decode(again.data(), again.size(), &back) || back.kind != w.kind || back.comm != w.comm ||
          (w.kind == Wire::kAgree && (back.instance != w.instance || back.msg.type != w.msg.type ||
                                      back.msg.flag != w.msg.flag || back.msg.failed != w.msg.failed)) ||
          (w.kind == Wire::kRevoke && back.origin != w.origin))
        std::abort();
    }
    e.on_receive(from, bytes.data(), bytes.size());
    if (e.fenced()) break;
    e.take_sends();
    e.take_learned();
  }
  int flag = 0;
  RankSet failed;
  e.decision(7, 1, &flag, &failed);
  return 0;
}
