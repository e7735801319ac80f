// SDC checking under replication: settings, injection, digests in the copies' header, the Comparator
// beside the endpoint, and what a mismatch does (see sdc_check.hpp, docs/design/sdc.md).
#include "wrap/replica/sdc_check.hpp"

#include <time.h>
#include <unistd.h>

#include <cerrno>

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "detector/env.hpp"
#include "detector/log.hpp"
#include "detector/runtime.hpp"
#include "replica/sdc_compare.hpp"
#include "replica/sdc_digest.hpp"
#include "replica/sdc_inject.hpp"
#include "wrap/calls.h"
#include "wrap/core/stop_job.hpp"

namespace cohort::wrap::replica::sdc_check {
namespace {

using cohort::replica::Bytes;
using cohort::replica::Channel;
using cohort::replica::Endpoint;
using cohort::replica::Placement;
using cohort::replica::Wire;
namespace sdc = cohort::replica::sdc;

struct Armed {
  sdc::Injection spec;
  bool done = false;
};

struct State {
  sdc::Mode mode = sdc::Mode::off;
  bool abort = true;  // COHORT_ON_SDC
  std::string inject_text;
  std::vector<sdc::Injection> injections;
  const Placement *placement = nullptr;
  int self = -1;
  int stderr_fd = 2;
  std::unique_ptr<sdc::Comparator> comparator;
  std::vector<Armed> armed;  // this replica's injections
  long long sends = 0;       // logical messages this replica sent
  int call = -1;             // the program's current call
  std::vector<long long> announce;  // flips made in the message going out now, for sent()'s lines
  // A where=memory flip: the packed bytes' hash and the bit, until the message made of them goes out (or
  // another does: the buffer fed a computation, e.g. a reduction's own contribution, not a message).
  bool memory_flip = false;
  std::uint64_t memory_hash = 0;
  long long memory_bit = -1;
  // Per pending key: the call that made the message, and for the detection latency the copies fed so far
  // and the time when its first copy arrived.
  struct FirstCopy {
    int call = -1;
    long long copies = 0;
    long long ns = 0;
  };
  std::map<sdc::Key, FirstCopy> first;
  long long copies = 0;  // data copies fed to the comparison
  std::string deferred_abort;     // a twin's report under abort, until it leads
  std::vector<sdc::Verdict> verdicts;
};
State g;

std::string replicas_text(const std::vector<int> &rs) {
  std::string s;
  for (int r : rs) s += (s.empty() ? "" : ",") + std::to_string(r);
  return (rs.size() == 1 ? "replica " : "replicas ") + s;
}

long long monotonic_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

std::string message_text(const sdc::Key &k, int call) {
  const char *name = call >= 0 && call < static_cast<int>(CallId::count_) ? kCallInfo[call].name : "?";
  return "message " + std::to_string(k.seq) + " of context " + std::to_string(k.channel.context) + " from logical rank " +
         std::to_string(k.channel.src) + " to logical rank " + std::to_string(k.channel.dst) + " (" + name + ")";
}

// A line of our own on the standard error this process had at MPI_Init (a twin's fd 2 is /dev/null).
void line_to_stderr(const std::string &text) {
  std::string s = "cohort[rank " + std::to_string(g.self) + "] warn: " + text + "\n";
  ssize_t n = write(g.stderr_fd, s.data(), s.size());
  (void)n;
}

[[noreturn]] void fence_self(const char *why) {
  std::fflush(nullptr);
  COHORT_LOG_WARN("silent data corruption: this replica (world rank %d) %s; fencing it", g.self, why);
  // NOTE: the failure notices this replica just sent (the minority sender's) leave from the detector's
  // thread: give them the time they take, as stop_job does, or the minority replica could run on.
  struct timespec ts = {0, 200 * 1000 * 1000};
  while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
  }
  detector::declare_failed(g.self);  // exits with COHORT_EXIT_FENCED
  std::_Exit(86);
}

void act(const sdc::Verdict &v, const Endpoint &ep) {
  // NOTE: the latency counts from the first copy's arrival here, not from the corrupted send: the
  // transport's own latency (a few µs on one host) comes before it.
  auto f = g.first.find(v.key);
  const bool timed = f != g.first.end();
  State::FirstCopy first;
  if (timed) {
    first = f->second;
    g.first.erase(f);
  }
  if (v.kind != sdc::Verdict::mismatch) return;
  const std::string latency =
      timed ? " (detected " + std::to_string(g.copies - first.copies) + " copies and " +
                  std::to_string((monotonic_ns() - first.ns) / 1000) + " us after its first copy arrived)"
            : "";
  const int src = v.key.channel.src;
  std::string text = "silent data corruption: " + message_text(v.key, first.call) + latency + ": ";
  if (v.majority) {
    text += replicas_text(v.groups.front()) + " agree, " + replicas_text(v.minority) +
            (v.minority.size() == 1 ? " differs" : " differ") + "; fencing " + replicas_text(v.minority) +
            (v.tainted ? "; this receiver replica got a minority copy: fenced too" : "");
    if (ep.is_leader()) COHORT_LOG_WARN("%s", text.c_str());
    bool self_minority = false;
    for (int k : v.minority) {
      const int w = g.placement->world(src, k);
      if (w == g.self) self_minority = true;
      else if (ep.liveness().alive(w)) detector::declare_failed(w);
    }
    if (v.tainted) fence_self("received a minority copy");
    if (self_minority) fence_self("sent a minority copy");
    return;
  }
  std::string groups;
  for (const auto &grp : v.groups) groups += (groups.empty() ? "" : " / ") + replicas_text(grp);
  text += "the replicas' copies differ (" + groups + "), no majority";
  if (!g.abort) {
    if (ep.is_leader()) COHORT_LOG_WARN("%s (COHORT_ON_SDC=warn: going on)", text.c_str());
    return;
  }
  text += " (COHORT_ON_SDC=abort: stopping the job with code " + std::to_string(kExitSdc) + ")";
  // NOTE: only the leader's standard error is the job's; the leader reaches the same verdict from the
  // same copies, so a twin waits for it (or for becoming the leader itself) rather than stopping first.
  if (!ep.is_leader()) {
    if (g.deferred_abort.empty()) g.deferred_abort = text;
    return;
  }
  COHORT_LOG_ERROR("%s", text.c_str());
  std::fflush(nullptr);
  stop_job(kExitSdc);
}

void act_all(const Endpoint &ep) {
  std::vector<sdc::Verdict> vs;
  vs.swap(g.verdicts);
  for (const sdc::Verdict &v : vs) act(v, ep);
}

}  // namespace

void configure(int replicas, int logical_size) {
  auto mode = env::get("COHORT_SDC");
  g.mode = replicas >= 2 ? sdc::Mode::hash : sdc::Mode::off;
  if (mode && !sdc::parse_mode(*mode, &g.mode))
    log::fatal(2, "%s", env::invalid("COHORT_SDC", *mode, "off, hash or full").c_str());
  int policy = 0;
  std::string err = env::read_word("COHORT_ON_SDC", {"abort", "warn"}, &policy);
  if (!err.empty()) log::fatal(2, "%s", err.c_str());
  g.abort = policy == 0;
  if (replicas < 2) g.mode = sdc::Mode::off;
  auto inject = env::get("COHORT_INJECT_SDC");
  if (!inject) return;
  g.inject_text = *inject;
  err = sdc::parse_injections(*inject, &g.injections);
  if (err.empty()) err = sdc::validate_injections(g.injections, logical_size, replicas);
  if (err.empty() && g.mode == sdc::Mode::off) err = "SDC checking is off (COHORT_SDC=off): nothing would detect it";
  if (!err.empty()) log::fatal(2, "%s", sdc::injection_failure_message(*inject, err).c_str());
}

bool on() { return g.mode != sdc::Mode::off; }

void attach(const Placement *placement, int stderr_fd) {
  g.placement = placement;
  g.self = detector::world_rank();
  g.stderr_fd = stderr_fd;
  g.comparator = std::make_unique<sdc::Comparator>(g.mode, placement->replicas());
  const int me = placement->logical(g.self), k = placement->replica(g.self);
  for (const sdc::Injection &e : g.injections)
    if (e.rank == me && e.replica == k) g.armed.push_back(Armed{e});
}

void set_call(int call_id) { g.call = call_id; }

void packed(const void *buf, int count, MPI_Datatype type, Bytes *packed) {
  if (g.armed.empty() || packed->empty()) return;
  for (Armed &a : g.armed) {
    if (a.done || !a.spec.in_memory || a.spec.send > g.sends + 1) continue;
    a.done = true;
    g.memory_bit = sdc::flip_bit(packed->data(), packed->size(), static_cast<std::uint64_t>(a.spec.bit));
    g.memory_hash = sdc::hash_bytes(packed->data(), packed->size());
    g.memory_flip = true;
    // NOTE: the flip stays in the program's memory: unpacking writes the bytes its type map means, the
    // flipped one included, and nothing else.
    int pos = 0;
    PMPI_Unpack(packed->data(), static_cast<int>(packed->size()), &pos, const_cast<void *>(buf), count, type,
                MPI_COMM_WORLD);
    break;  // one flip per buffer: a later entry that is due takes the next one
  }
}

const Bytes &outgoing(const Bytes &payload, Bytes *scratch, std::uint64_t *digest, int *call) {
  ++g.sends;
  *call = g.call;
  const Bytes *p = &payload;
  if (g.memory_flip) {
    g.memory_flip = false;
    if (sdc::hash_bytes(payload.data(), payload.size()) == g.memory_hash) {
      g.announce.push_back(g.memory_bit);
    } else if (log::enabled(log::Level::warn)) {
      line_to_stderr("inject: flipped bit " + std::to_string(g.memory_bit) + " of a buffer of the program (where=memory) "
                     "that feeds its computation, not a message as it is, replica " +
                     std::to_string(g.placement->replica(g.self)) + "'s send " + std::to_string(g.sends) +
                     " (COHORT_INJECT_SDC)");
    }
  }
  for (Armed &a : g.armed) {
    // NOTE: an empty message has no bit to flip: the flip goes to the replica's next non-empty one.
    if (a.done || a.spec.in_memory || a.spec.send > g.sends || payload.empty()) continue;
    a.done = true;
    if (p != scratch) *scratch = payload;
    p = scratch;
    g.announce.push_back(sdc::flip_bit(scratch->data(), scratch->size(), static_cast<std::uint64_t>(a.spec.bit)));
    break;  // one flip per message: a later entry that is due takes the next one
  }
  *digest = g.mode == sdc::Mode::hash ? sdc::hash_bytes(p->data(), p->size()) : 0;
  return *p;
}

void sent(const Channel &c, std::uint64_t seq) {
  if (g.announce.empty()) return;
  std::vector<long long> bits;
  bits.swap(g.announce);
  if (!log::enabled(log::Level::warn)) return;
  for (long long bit : bits)
    line_to_stderr("inject: flipped bit " + std::to_string(bit) + " of " + message_text(sdc::Key{c, seq}, g.call) +
                   ", replica " + std::to_string(g.placement->replica(g.self)) + "'s send " + std::to_string(g.sends) +
                   " (COHORT_INJECT_SDC)");
}

void arrived(const Wire &w, bool kept, const Endpoint &ep) {
  const Placement &p = *g.placement;
  if (w.from < 0 || w.from >= p.world_size() || p.logical(w.from) != w.channel.src) return;  // a twin's relay
  sdc::Key key{w.channel, w.seq};
  sdc::Digest d;
  if (g.mode == sdc::Mode::full) d = sdc::make_digest(sdc::Mode::full, w.payload);
  else d.hash = w.digest;
  std::vector<int> awaited;
  for (int r : ep.liveness().live(w.channel.src)) awaited.push_back(p.replica(r));
  ++g.copies;
  g.first.emplace(key, State::FirstCopy{w.call, g.copies, monotonic_ns()});
  g.comparator->arrived(key, p.replica(w.from), std::move(d), awaited, kept, &g.verdicts);
  if (!g.verdicts.empty()) act_all(ep);
  if (!g.comparator->pending(key)) g.first.erase(key);  // a late copy (from a replica that died)
}

void replica_died(int w, const Endpoint &ep) {
  const Placement &p = *g.placement;
  const int a = p.logical(w);
  // The lane's replica died: the endpoint kept a twin's copy in its place (Endpoint::replica_died).
  for (const sdc::Key &k : g.comparator->pending_keys()) {
    if (k.channel.src != a) continue;
    const int from = ep.kept_from(k.channel, k.seq);
    if (from >= 0) g.comparator->kept(k, p.replica(from));
  }
  g.comparator->sender_replica_died(a, p.replica(w), &g.verdicts);
  act_all(ep);
}

void poll(const Endpoint &ep) {
  if (g.deferred_abort.empty() || !ep.is_leader()) return;
  COHORT_LOG_ERROR("%s", g.deferred_abort.c_str());
  std::fflush(nullptr);
  stop_job(kExitSdc);
}

bool full() { return g.comparator && g.comparator->full(); }

bool pending(const Channel &c, std::uint64_t seq) {
  return g.comparator && g.comparator->pending(sdc::Key{c, seq});
}

bool idle() { return !g.comparator || g.comparator->pending() == 0; }

}  // namespace cohort::wrap::replica::sdc_check
