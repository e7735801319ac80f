#include "repair/engine.hpp"

#include <algorithm>
#include <cstring>

namespace cohort::repair {
namespace {

constexpr std::size_t kHeader = 4 + 4 + 8 + 8 + 4;

template <typename T>
void put(std::vector<char> *out, std::size_t at, T v) {
  std::memcpy(out->data() + at, &v, sizeof v);
}
template <typename T>
T get(const char *data, std::size_t at) {
  T v;
  std::memcpy(&v, data + at, sizeof v);
  return v;
}

}  // namespace

std::size_t max_wire_size(int members) { return kHeader + 4 * static_cast<std::size_t>(members); }

std::vector<char> encode(const Wire &w) {
  const RankSet &set = w.msg.failed;
  std::vector<char> out(kHeader + 4 * (w.kind == Wire::kAgree ? set.size() : 0), 0);
  out[0] = static_cast<char>(w.kind);
  out[1] = static_cast<char>(w.msg.type);
  put<std::int32_t>(&out, 4, w.kind == Wire::kAgree ? w.msg.flag : w.origin);
  put<std::uint64_t>(&out, 8, w.comm);
  put<std::uint64_t>(&out, 16, w.instance);
  if (w.kind != Wire::kAgree) return out;
  put<std::uint32_t>(&out, 24, static_cast<std::uint32_t>(set.size()));
  for (std::size_t i = 0; i < set.size(); ++i) put<std::int32_t>(&out, kHeader + 4 * i, set[i]);
  return out;
}

bool decode(const char *data, std::size_t len, Wire *out) {
  if (len < kHeader) return false;
  auto kind = static_cast<std::uint8_t>(data[0]);
  auto type = static_cast<std::uint8_t>(data[1]);
  out->comm = get<std::uint64_t>(data, 8);
  out->instance = get<std::uint64_t>(data, 16);
  if (kind == Wire::kRevoke) {
    out->kind = Wire::kRevoke;
    out->origin = get<std::int32_t>(data, 4);
    return len == kHeader;
  }
  if (kind != Wire::kAgree || type < AgreeMsg::kContrib || type > AgreeMsg::kView) return false;
  out->kind = Wire::kAgree;
  out->msg.type = static_cast<AgreeMsg::Type>(type);
  out->msg.flag = get<std::int32_t>(data, 4);
  std::uint32_t n = get<std::uint32_t>(data, 24);
  if (len != kHeader + 4 * static_cast<std::size_t>(n)) return false;
  out->msg.failed.resize(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    out->msg.failed[i] = get<std::int32_t>(data, kHeader + 4 * i);
    if (out->msg.failed[i] < 0 || (i > 0 && out->msg.failed[i] <= out->msg.failed[i - 1])) return false;
  }
  return true;
}

void Engine::add_comm(std::uint64_t id, std::vector<int> world_ranks) {
  if (comms_.count(id) != 0) return;
  removed_.erase(id);
  Comm &c = comms_[id];
  c.world = std::move(world_ranks);
  for (std::size_t i = 0; i < c.world.size(); ++i) {
    c.member_of[c.world[i]] = static_cast<int>(i);
    if (c.world[i] == me_) c.me = static_cast<int>(i);
  }
  std::vector<Early> replay;
  for (auto it = early_comm_.begin(); it != early_comm_.end();) {
    if (it->first == id) {
      replay.push_back(std::move(it->second));
      it = early_comm_.erase(it);
    } else {
      ++it;
    }
  }
  for (const Early &e : replay) on_receive(e.from, e.bytes.data(), e.bytes.size());
}

void Engine::remove_comm(std::uint64_t id) {
  if (comms_.erase(id) != 0) removed_.insert(id);
}

int Engine::member_rank(std::uint64_t id) const {
  auto it = comms_.find(id);
  return it == comms_.end() ? -1 : it->second.me;
}

std::uint64_t Engine::start_agree(std::uint64_t id, int flag) {
  Comm &c = comms_.at(id);
  std::uint64_t inst = c.next++;
  RankSet known;
  for (std::size_t i = 0; i < c.world.size(); ++i) {
    if (failed_.count(c.world[i]) != 0) known.push_back(static_cast<int>(i));
  }
  Instance &in = c.instances[inst];
  in.agreement = std::make_unique<Agreement>(static_cast<int>(c.world.size()), c.me, flag, std::move(known), radix_);
  collect(id, c, *in.agreement, inst);
  auto early = c.early.find(inst);
  if (early != c.early.end()) {
    auto msgs = std::move(early->second);
    c.early.erase(early);
    for (const auto &m : msgs) in.agreement->on_message(m.first, m.second);
    collect(id, c, *in.agreement, inst);
  }
  retire(c);
  drain();
  return inst;
}

bool Engine::decision(std::uint64_t id, std::uint64_t inst, int *flag, RankSet *failed) const {
  auto c = comms_.find(id);
  if (c == comms_.end()) return false;
  auto it = c->second.instances.find(inst);
  if (it == c->second.instances.end() || !it->second.agreement->decided()) return false;
  *flag = it->second.agreement->decided_flag();
  *failed = it->second.agreement->decided_failed();
  return true;
}

void Engine::revoke(std::uint64_t id) {
  Comm &c = comms_.at(id);
  c.revokers.insert(me_);
  if (c.revoked) return;
  c.revoked = true;
  notify_revoke(id, c);
}

bool Engine::revoked(std::uint64_t id) const {
  auto it = comms_.find(id);
  return it != comms_.end() && it->second.revoked;
}

void Engine::notify_revoke(std::uint64_t id, Comm &c) {
  Wire w;
  w.kind = Wire::kRevoke;
  w.comm = id;
  w.origin = me_;
  std::vector<char> bytes = encode(w);
  for (int world : c.world) {
    if (world != me_ && failed_.count(world) == 0) sends_.push_back(Send{world, bytes});
  }
}

void Engine::on_failure(int world) {
  if (failed_.insert(world).second) pending_failures_.push_back(world);
  drain();
}

void Engine::on_left(int world) {
  if (world == me_ || !left_.insert(world).second) return;
  on_failure(world);
}

void Engine::drain() {
  // NOTE: applying one failure can teach more (merged views); the loop applies them all, breadth first.
  while (!pending_failures_.empty() && !fenced_) {
    int w = pending_failures_.front();
    pending_failures_.pop_front();
    for (auto &[id, c] : comms_) {
      auto m = c.member_of.find(w);
      if (m == c.member_of.end()) continue;
      for (auto &[inst, in] : c.instances) {
        in.agreement->on_failure(m->second);
        collect(id, c, *in.agreement, inst);
      }
      // The revoking rank died: it may have reached only some members, so those it reached pass it on.
      if (c.revoked && c.revokers.count(w) != 0 && c.revokers.count(me_) == 0) {
        c.revokers.insert(me_);
        notify_revoke(id, c);
      }
    }
  }
}

void Engine::on_receive(int from, const char *data, std::size_t len) {
  if (fenced_) return;
  Wire w;
  if (!decode(data, len, &w)) return;
  auto it = comms_.find(w.comm);
  if (it == comms_.end()) {
    if (removed_.count(w.comm) != 0) return;
    if (early_comm_.size() >= kMaxEarly) early_comm_.pop_front();
    early_comm_.emplace_back(w.comm, Early{from, std::vector<char>(data, data + len)});
    return;
  }
  Comm &c = it->second;
  if (w.kind == Wire::kRevoke) {
    c.revoked = true;
    c.revokers.insert(w.origin);
    if (failed_.count(w.origin) != 0 && c.revokers.count(me_) == 0) {
      c.revokers.insert(me_);
      notify_revoke(w.comm, c);
    }
    return;
  }
  auto m = c.member_of.find(from);
  if (m == c.member_of.end()) return;
  // NOTE: decode cannot know the communicator's size; a member number beyond it (a confused or malicious
  // peer) would index the member table when the set is merged into a view.
  if (!w.msg.failed.empty() && w.msg.failed.back() >= static_cast<int>(c.world.size())) return;
  deliver(w.comm, c, w.instance, m->second, w.msg);
  drain();
}

void Engine::deliver(std::uint64_t id, Comm &c, std::uint64_t inst, int member, const AgreeMsg &msg) {
  auto in = c.instances.find(inst);
  if (in != c.instances.end()) {
    in->second.agreement->on_message(member, msg);
    collect(id, c, *in->second.agreement, inst);
  } else if (inst >= c.next) {
    c.early[inst].emplace_back(member, msg);
  }
  // else: an instance retired long ago; only a rank that the survivors consider dead can still be in it.
}

void Engine::collect(std::uint64_t id, Comm &c, Agreement &a, std::uint64_t inst) {
  for (Outgoing &o : a.take_outbox()) {
    Wire w;
    w.kind = Wire::kAgree;
    w.comm = id;
    w.instance = inst;
    w.msg = std::move(o.msg);
    sends_.push_back(Send{c.world[o.to], encode(w)});
  }
  for (int member : a.take_learned()) learn(c.world[member]);
  if (a.fenced()) fenced_ = true;
}

void Engine::learn(int world) {
  if (!failed_.insert(world).second) return;
  // (a departed member named in a peer's view before this rank heard of the departure is learned dead
  // here: the detector, once it knows, does not declare it)
  learned_.push_back(world);
  pending_failures_.push_back(world);
}

void Engine::retire(Comm &c) {
  std::size_t decided = 0;
  for (auto &kv : c.instances) decided += kv.second.agreement->decided() ? 1 : 0;
  for (auto it = c.instances.begin(); it != c.instances.end() && decided > kKeepDecided;) {
    if (it->second.agreement->decided()) {
      it = c.instances.erase(it);
      --decided;
    } else {
      ++it;
    }
  }
}

std::vector<Engine::Send> Engine::take_sends() {
  std::vector<Send> out;
  out.swap(sends_);
  return out;
}

std::vector<int> Engine::take_learned() {
  std::vector<int> out;
  out.swap(learned_);
  return out;
}

}  // namespace cohort::repair
