// The heartbeat backend of repair.hpp: the protocol engine (repair/engine.hpp) moved over point-to-point
// messages on a private duplicate of MPI_COMM_WORLD, fed with the detector's failure notices.
//
// Threads: the thread that calls agree/shrink drives progress itself while it waits (low latency); the
// detector thread runs the same progress from a hook about every millisecond, so that a rank that has
// returned from an agreement keeps answering peers that are still in it. One mutex guards the engine and
// the transport; the hook only try-locks it.
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "cohort/cohort.h"
#include "detector/inject.hpp"
#include "detector/log.hpp"
#include "detector/run_status.hpp"
#include "detector/runtime.hpp"
#include "repair/engine.hpp"
#include "repair/group.hpp"
#include "repair/repair.hpp"
#include "detector/world.hpp"

namespace cohort::repair {
namespace {

constexpr int kTag = 4242;
constexpr std::int64_t kRevokePollNs = 200 * 1000;

// One communicator known to repair; the value of its MPI attribute (g_keyval), deleted with it.
struct CommInfo {
  std::uint64_t id = 0;
  std::uint64_t join_id = 0;  // a second engine communicator over the same members: its revocation asks them to join (ask_to_join)
  std::vector<int> world;                          // comm rank -> world rank
  std::map<std::uint64_t, std::uint64_t> children;  // members' hash -> communicators registered under it
  std::vector<int> acked;
  MPI_Comm comm = MPI_COMM_NULL;  // the communicator itself
  // MPI_COMM_WORLD only: a private duplicate made at MPI_Init, which shrink's fast path duplicates instead
  // of world itself (world is the parent of every slow-path creation, see create_over_world). Other
  // communicators are duplicated themselves. Unusable (`tainted`) for the fast path once a duplication
  // was abandoned or an optimistic attempt failed.
  MPI_Comm shadow = MPI_COMM_NULL;
  MPI_Request shadow_req = MPI_REQUEST_NULL;
  bool tainted = false;
};

struct Sent {
  MPI_Request req;
  std::vector<char> bytes;
  int to;
};

std::mutex g_mu;
std::unique_ptr<Engine> g_engine;
MPI_Comm g_comm = MPI_COMM_NULL;
MPI_Request g_comm_req = MPI_REQUEST_NULL;  // its nonblocking duplication from MPI_Init, until done
std::vector<char> g_rbuf;
MPI_Request g_rreq = MPI_REQUEST_NULL;
std::deque<Sent> g_sent;
std::deque<Sent> g_abandoned;  // sends to dead ranks: MPI may still read their buffers, so they stay
std::size_t g_failures_fed = 0;
std::uint64_t g_epoch_fed = ~std::uint64_t{0};
std::size_t g_departures_fed = 0;
std::uint64_t g_departure_epoch_fed = 0;
std::vector<int> g_to_declare;  // learned from messages; declared to the detector outside g_mu
std::map<std::uint64_t, std::uint64_t> g_roots;  // communicators registered without a known parent
std::atomic<bool> g_live{false};
std::atomic<bool> g_any_revoked{false};
std::atomic<std::int64_t> g_last_poll_ns{0};
int g_keyval = MPI_KEYVAL_INVALID;
struct Attempt;
std::vector<std::shared_ptr<Attempt>> g_lost_attempts;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// NOTE: spin first for latency, then yield, then sleep: the detector thread and, oversubscribed, other
// ranks share the cores, and a rank that spins forever delays their heartbeats into false suspicions.
class Backoff {
 public:
  void pause() {
    detector::note_progress();
    ++n_;
    if (n_ < 8) return;
    if (n_ < 4096) {
      sched_yield();
      return;
    }
    struct timespec ts = {0, 20 * 1000};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
    }
  }

 private:
  std::uint64_t n_ = 0;
};

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ULL;
  return h ^ (h >> 29);
}

std::vector<int> world_ranks_of(MPI_Comm comm) {
  MPI_Group group;
  PMPI_Comm_group(comm, &group);
  std::vector<int> out = world_ranks_of_group(group);
  PMPI_Group_free(&group);
  return out;
}

void post_receive() {
  int rc = PMPI_Irecv(g_rbuf.data(), static_cast<int>(g_rbuf.size()), MPI_BYTE, MPI_ANY_SOURCE, kTag, g_comm,
                      &g_rreq);
  if (rc != MPI_SUCCESS) log::fatal(1, "repair: MPI_Irecv on the private communicator failed (code %d)", rc);
}

// The private communicator is duplicated without blocking MPI_Init; it is ready once that completes.
// A rank that died before then leaves it incomplete forever: repair then stops the job with one line
// instead of waiting. Caller holds g_mu.
bool transport_ready_locked() {
  if (g_comm_req == MPI_REQUEST_NULL) return true;
  int done = 0;
  PMPI_Test(&g_comm_req, &done, MPI_STATUS_IGNORE);
  if (done) {
    PMPI_Comm_set_errhandler(g_comm, MPI_ERRORS_RETURN);
    post_receive();
    return true;
  }
  return false;
}

void require_transport_locked(const char *call) {
  if (!transport_ready_locked() && detector::failure_epoch() > 0) {
    log::fatal(1, "%s: a rank died before cohort's private communicator was set up (during MPI_Init); "
               "the survivors cannot be repaired", call);
  }
}

[[noreturn]] void fence() {
  run_status::put("fenced", detector::world_rank(), "the survivors agreed that this rank is dead");
  COHORT_LOG_ERROR("repair: the survivors agreed that this rank is dead; exiting (self-fencing)");
  std::_Exit(COHORT_EXIT_FENCED);
}

const char *hook_name(const std::vector<char> &bytes) {
  if (bytes[0] == Wire::kRevoke) return "revoke.notice";
  switch (bytes[1]) {
    case AgreeMsg::kContrib: return "agree.contrib";
    case AgreeMsg::kDecide: return "agree.decide";
    default: return "agree.view";
  }
}

// Hands the engine's messages to MPI (they wait in the engine until the transport is ready). Caller
// holds g_mu.
void flush_locked() {
  if (!transport_ready_locked()) return;
  for (Engine::Send &s : g_engine->take_sends()) {
    inject::point(hook_name(s.bytes));
    Sent sent{MPI_REQUEST_NULL, std::move(s.bytes), s.to};
    int rc = PMPI_Isend(sent.bytes.data(), static_cast<int>(sent.bytes.size()), MPI_BYTE, s.to, kTag, g_comm,
                        &sent.req);
    if (rc != MPI_SUCCESS) {
      COHORT_LOG_DEBUG("repair: MPI_Isend to rank %d failed (code %d)", s.to, rc);
      continue;
    }
    g_sent.push_back(std::move(sent));
  }
  for (int w : g_engine->take_learned()) g_to_declare.push_back(w);
}

// One round of progress: failures, received messages, sends. Caller holds g_mu.
void progress_locked() {
  if (!g_live.load(std::memory_order_relaxed) || !transport_ready_locked()) return;
  std::uint64_t epoch = detector::failure_epoch();
  if (epoch != g_epoch_fed) {
    g_epoch_fed = epoch;
    std::vector<int> failed = detector::failed_ranks();
    for (; g_failures_fed < failed.size(); ++g_failures_fed) g_engine->on_failure(failed[g_failures_fed]);
  }
  std::uint64_t departures = detector::departure_epoch();
  if (departures != g_departure_epoch_fed) {
    g_departure_epoch_fed = departures;
    std::vector<int> left = detector::departed_ranks();
    for (; g_departures_fed < left.size(); ++g_departures_fed) g_engine->on_left(left[g_departures_fed]);
  }
  for (int i = 0; i < 256; ++i) {
    int done = 0;
    MPI_Status st;
    PMPI_Test(&g_rreq, &done, &st);
    if (!done) break;
    int len = 0;
    PMPI_Get_count(&st, MPI_BYTE, &len);
    if (len > 0 && g_rbuf[0] == Wire::kRevoke) g_any_revoked.store(true);
    g_engine->on_receive(st.MPI_SOURCE, g_rbuf.data(), static_cast<std::size_t>(len));
    post_receive();
  }
  flush_locked();
  for (auto it = g_sent.begin(); it != g_sent.end();) {
    int done = 0;
    PMPI_Test(&it->req, &done, MPI_STATUS_IGNORE);
    if (done) {
      it = g_sent.erase(it);
    } else if (g_engine->is_failed(it->to)) {
      g_abandoned.push_back(std::move(*it));
      it = g_sent.erase(it);
    } else {
      ++it;
    }
  }
  if (g_engine->fenced()) fence();
}

// Tells the detector what the engine learned from messages (outside g_mu: the detector has its own lock).
void declare_learned() {
  std::vector<int> todo;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    todo.swap(g_to_declare);
  }
  for (int w : todo) detector::declare_failed(w);
}

void progress_from_hook() {
  if (!g_live.load(std::memory_order_relaxed)) return;
  {
    std::unique_lock<std::mutex> lock(g_mu, std::try_to_lock);
    if (!lock.owns_lock()) return;
    progress_locked();
  }
  declare_learned();
}

CommInfo *find_info(MPI_Comm comm) {
  if (g_keyval == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL) return nullptr;
  void *attr = nullptr;
  int found = 0;
  PMPI_Comm_get_attr(comm, g_keyval, &attr, &found);
  return found ? static_cast<CommInfo *>(attr) : nullptr;
}

// Registers comm with an id derived from its parent's id (or from nothing) and its members: the k-th
// communicator with these members registered under that parent. Caller holds g_mu.
CommInfo *register_locked(MPI_Comm comm, CommInfo *parent) {
  auto info = std::make_unique<CommInfo>();
  info->comm = comm;
  info->world = world_ranks_of(comm);
  std::uint64_t h = 0x636f686f7274ULL;  // "cohort"
  for (int w : info->world) h = mix(h, static_cast<std::uint64_t>(w));
  std::uint64_t k = parent != nullptr ? ++parent->children[h] : ++g_roots[h];
  info->id = mix(mix(parent != nullptr ? parent->id : 0, h), k);
  info->join_id = mix(info->id, 0x6a6f696eULL);  // "join"
  g_engine->add_comm(info->id, info->world);
  g_engine->add_comm(info->join_id, info->world);
  CommInfo *raw = info.release();
  PMPI_Comm_set_attr(comm, g_keyval, raw);
  return raw;
}

CommInfo *info_of(MPI_Comm comm) {
  if (CommInfo *info = find_info(comm)) return info;
  std::lock_guard<std::mutex> lock(g_mu);
  if (CommInfo *info = find_info(comm)) return info;  // another thread registered it meanwhile
  return register_locked(comm, nullptr);
}

bool live_or_warn(const char *call) {
  if (g_live.load()) return true;
  COHORT_LOG_WARN("%s: called outside MPI_Init/MPI_Finalize; nothing done", call);
  return false;
}

// One agreement on the engine's communicator (or group) `id`; returns when decided, with its instance.
std::uint64_t agree_on_id(std::uint64_t id, int *flag, std::vector<int> *failed) {
  std::uint64_t inst;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    require_transport_locked("repair::agree");
    progress_locked();
    inst = g_engine->start_agree(id, *flag);
    flush_locked();
  }
  inject::point("agree.started");
  Backoff backoff;
  for (;;) {
    bool done;
    {
      std::lock_guard<std::mutex> lock(g_mu);
      require_transport_locked("repair::agree");
      progress_locked();
      done = g_engine->decision(id, inst, flag, failed);
    }
    declare_learned();
    if (done) return inst;
    backoff.pause();
  }
}

std::uint64_t agree_on(CommInfo *info, int *flag, std::vector<int> *failed) { return agree_on_id(info->id, flag, failed); }

// Waits until done() or until a rank of `members` (world ranks) is known dead; returns done().
template <typename Done>
bool wait_unless_lost(Done done, const std::vector<int> &members) {
  Backoff backoff;
  std::int64_t last = now_ns();
  while (!done()) {
    // NOTE: a progress round (and the check) only every 200 µs: under MPICH's global lock, a thread that
    // keeps calling MPI slows down the communicator creation it waits for.
    if (now_ns() - last > kRevokePollNs) {
      last = now_ns();
      bool lost = false;
      {
        std::lock_guard<std::mutex> lock(g_mu);
        progress_locked();
        for (int w : members) lost = lost || g_engine->is_failed(w);
      }
      declare_learned();
      if (lost) return done();
    }
    backoff.pause();
  }
  return true;
}

// Deletion callback of the attribute: comm is being freed.
int delete_info(MPI_Comm, int, void *attr, void *) {
  auto *info = static_cast<CommInfo *>(attr);
  // NOTE: the shadow's duplication of comm must end before comm goes (Open MPI crashes otherwise); it
  // is waited for unless a member is dead, and then it stays allocated, never freed, like a shadow with
  // an abandoned duplication. None is freed once MPI_Finalize has begun.
  bool pending = info->shadow_req != MPI_REQUEST_NULL;
  if (pending && g_live.load()) {
    pending = !wait_unless_lost(
        [info] {
          int done = 0;
          PMPI_Test(&info->shadow_req, &done, MPI_STATUS_IGNORE);
          return done != 0;
        },
        info->world);
  }
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_engine) {
    g_engine->remove_comm(info->id);
    g_engine->remove_comm(info->join_id);
  }
  if (g_live.load() && !pending && !info->tainted && info->shadow != MPI_COMM_NULL) PMPI_Comm_free(&info->shadow);
  delete info;
  return MPI_SUCCESS;
}

struct Attempt {
  std::atomic<bool> done{false};
  MPI_Comm comm = MPI_COMM_NULL;
  int rc = MPI_SUCCESS;
};

// The fast path can duplicate info's communicator (or world's shadow) now.
bool fast_path_ready(CommInfo *info) {
  if (info->tainted) return false;
  if (info->shadow_req != MPI_REQUEST_NULL) {
    int done = 0;
    PMPI_Test(&info->shadow_req, &done, MPI_STATUS_IGNORE);  // sets it to MPI_REQUEST_NULL when done
    if (!done) return false;
  }
  return true;
}

// Fast path, when no member of comm is dead: a nonblocking duplication of comm (of its shadow for
// MPI_COMM_WORLD), abandoned if a member dies or comm is revoked meanwhile.
std::shared_ptr<Attempt> duplicate_fast(CommInfo *info, const std::vector<int> &members) {
  auto attempt = std::make_shared<Attempt>();
  MPI_Request req = MPI_REQUEST_NULL;
  MPI_Comm base = info->shadow != MPI_COMM_NULL ? info->shadow : info->comm;
  attempt->rc = PMPI_Comm_idup(base, &attempt->comm, &req);
  if (attempt->rc != MPI_SUCCESS) {
    attempt->done.store(true);
    return attempt;
  }
  bool revoked = false;
  bool done = wait_unless_lost(
      [&req, &revoked, info] {
        int flag = 0;
        PMPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        if (flag == 0 && g_any_revoked.load()) {
          std::lock_guard<std::mutex> lock(g_mu);
          revoked = g_engine->revoked(info->id);
        }
        return flag != 0 || revoked;
      },
      members);
  if (done && !revoked) {
    attempt->done.store(true);
    return attempt;
  }
  info->tainted = true;
  std::lock_guard<std::mutex> lock(g_mu);
  g_lost_attempts.push_back(attempt);  // MPI may still complete the requests and write into it
  return attempt;
}

// MPI_COMM_WORLD's error handler is MPI_ERRORS_RETURN while a creation over it runs: MPICH fails such a
// creation when a member is dead, and the default handler would abort the job.
std::mutex g_world_eh_mu;
int g_world_eh_users = 0;
MPI_Errhandler g_world_eh_saved = MPI_ERRHANDLER_NULL;

void world_errors_return(bool on) {
  std::lock_guard<std::mutex> lock(g_world_eh_mu);
  if (on && g_world_eh_users++ == 0) {
    PMPI_Comm_get_errhandler(cohort::world(), &g_world_eh_saved);
    PMPI_Comm_set_errhandler(cohort::world(), MPI_ERRORS_RETURN);
  } else if (!on && --g_world_eh_users == 0) {
    PMPI_Comm_set_errhandler(cohort::world(), g_world_eh_saved);
    PMPI_Errhandler_free(&g_world_eh_saved);
  }
}

// Slow path: MPI_Comm_create_group over MPI_COMM_WORLD with the group `members` (world ranks, in comm
// order). It cannot be abandoned, so it runs on a thread of its own, and that thread is abandoned if a
// member dies first (Open MPI then blocks in it forever; MPICH fails it).
// NOTE: the parent is MPI_COMM_WORLD, not a duplicate: MPICH 4.0.2 crashes creating over a duplicate that
// holds a dead rank, and Open MPI lets a creation proceed past a blocked one only if its parent's context
// id, then its tag, is lower (ompi_comm_cid_lowest_id). Hence world (context id 0) and tags that shrink
// as the failed set grows.
std::shared_ptr<Attempt> create_over_world(const std::vector<int> &members, int tag) {
  auto attempt = std::make_shared<Attempt>();
  MPI_Group world, group;
  PMPI_Comm_group(cohort::world(), &world);
  PMPI_Group_incl(world, static_cast<int>(members.size()), members.data(), &group);
  PMPI_Group_free(&world);
  world_errors_return(true);
  std::thread([attempt, group, tag]() mutable {
    MPI_Comm out = MPI_COMM_NULL;
    attempt->rc = PMPI_Comm_create_group(cohort::world(), group, tag, &out);
    attempt->comm = out;
    PMPI_Group_free(&group);
    world_errors_return(false);
    attempt->done.store(true, std::memory_order_release);
  }).detach();
  wait_unless_lost([&attempt] { return attempt->done.load(std::memory_order_acquire); }, members);
  return attempt;
}

// The tag of an attempt over MPI_COMM_WORLD: the same on every member (derived from agreed values),
// lower for each retry of one shrink (its failed set grows), different between communicators.
int creation_tag(std::uint64_t id, std::size_t failed) {
  long tag = 32767 - 64 * static_cast<long>(failed) - static_cast<long>(id % 64);
  return tag < 0 ? 0 : static_cast<int>(tag);
}

}  // namespace

void init() {
  if (g_live.load()) return;
  // NOTE: nonblocking duplications, waited for here unless a rank is found dead meanwhile: a rank that
  // dies during MPI_Init must not hang the others in it (repair then reports it at its first use).
  int rc = PMPI_Comm_idup(cohort::world(), &g_comm, &g_comm_req);
  if (rc != MPI_SUCCESS) log::fatal(1, "MPI_Init: repair: MPI_Comm_idup(MPI_COMM_WORLD) failed (code %d)", rc);
  PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_info, &g_keyval, nullptr);
  int size = 0, rank = 0;
  PMPI_Comm_size(cohort::world(), &size);
  PMPI_Comm_rank(cohort::world(), &rank);
  CommInfo *world;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_engine = std::make_unique<Engine>(rank);
    g_rbuf.assign(max_wire_size(size), 0);
    world = register_locked(cohort::world(), nullptr);
  }
  // NOTE: one duplication of MPI_COMM_WORLD at a time: two pending idups on one communicator post their
  // internal rounds in different orders on different ranks under Open MPI 4.1 (a rank then never
  // completes its own; seen 1 run in 50).
  auto wait_until = [](auto ready) {
    Backoff backoff;
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(g_mu);
        if (ready()) return true;
      }
      if (detector::failure_epoch() > 0) return false;
      backoff.pause();
    }
  };
  if (wait_until([] { return transport_ready_locked(); })) {
    std::lock_guard<std::mutex> lock(g_mu);
    PMPI_Comm_idup(cohort::world(), &world->shadow, &world->shadow_req);
  } else {
    world->tainted = true;  // no fast path for world: shrink creates over the survivors instead
  }
  wait_until([world] { return fast_path_ready(world); });
  g_live.store(true);
  detector::add_progress_hook(progress_from_hook);
}

void finalize() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (!g_live.exchange(false)) return;
  // NOTE: the receive is withdrawn; the private communicator and abandoned sends are left to MPI, since
  // freeing them could wait on dead ranks.
  if (g_rreq != MPI_REQUEST_NULL) {
    PMPI_Cancel(&g_rreq);
    PMPI_Wait(&g_rreq, MPI_STATUS_IGNORE);
  }
}

void register_comm(MPI_Comm comm, MPI_Comm parent) {
  if (!live_or_warn("repair::register_comm") || find_info(comm) != nullptr) return;
  CommInfo *p = parent == MPI_COMM_NULL ? nullptr : info_of(parent);
  std::lock_guard<std::mutex> lock(g_mu);
  if (find_info(comm) == nullptr) register_locked(comm, p);
}

int agree(MPI_Comm comm, int *flag, std::vector<int> *failed) {
  if (!live_or_warn("repair::agree")) return MPI_ERR_OTHER;
  agree_on(info_of(comm), flag, failed);
  return MPI_SUCCESS;
}

int shrink(MPI_Comm comm, MPI_Comm *newcomm) {
  if (!live_or_warn("repair::shrink")) return MPI_ERR_OTHER;
  CommInfo *info = info_of(comm);
  // Attempt 1, the fast path, optimistic: a rank that knows no member dead and comm not revoked
  // duplicates comm at once (MPI_Comm_idup; world's shadow for MPI_COMM_WORLD); one agreement then
  // confirms that every survivor made it and that nobody is dead. A rank that knows a failure (or the
  // revocation) does not post; the others stop waiting once they know it too. comm is then out of step
  // between members, so after a failed attempt 1 it is marked unusable for the fast path on every
  // member (the agreement is uniform).
  // Later attempts, the slow path: MPI_Comm_create_group over the survivors of the failed set agreed by
  // the previous attempt's confirming agreement (create_over_world); repeated while that set grows.
  bool optimistic;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    progress_locked();
    optimistic = fast_path_ready(info) && !g_engine->revoked(info->id);
    for (int w : info->world) optimistic = optimistic && !g_engine->is_failed(w);
  }
  std::vector<int> failed;  // comm ranks that this attempt leaves out (agreed)
  std::vector<int> members;  // world ranks of the others, in comm order
  auto set_members = [&] {
    members.clear();
    for (std::size_t i = 0; i < info->world.size(); ++i) {
      if (!std::binary_search(failed.begin(), failed.end(), static_cast<int>(i))) members.push_back(info->world[i]);
    }
  };
  set_members();
  if (optimistic) inject::point("shrink.create");
  std::shared_ptr<Attempt> made = optimistic ? duplicate_fast(info, members) : std::make_shared<Attempt>();
  int errors = 0;
  for (int attempt = 1;; ++attempt) {
    bool done = made->done.load(std::memory_order_acquire);
    int ok = done && made->rc == MPI_SUCCESS && made->comm != MPI_COMM_NULL ? 1 : 0;
    inject::point("shrink.confirm");
    std::vector<int> failed_after;
    agree_on(info, &ok, &failed_after);
    if (ok && failed_after == failed) {
      *newcomm = made->comm;
      std::lock_guard<std::mutex> lock(g_mu);
      register_locked(*newcomm, info);
      return MPI_SUCCESS;
    }
    // NOTE: a communicator that some survivors made and others did not is left allocated, never freed:
    // freeing it could wait on a dead member.
    {
      std::lock_guard<std::mutex> lock(g_mu);
      info->tainted = true;
    }
    if (attempt > 1 && failed_after == failed && done && made->rc != MPI_SUCCESS && ++errors >= 5) {
      COHORT_LOG_ERROR("repair::shrink: creating the communicator over %zu survivors failed (code %d)",
                       members.size(), made->rc);
      return made->rc;
    }
    if (optimistic || attempt > 1) {
      COHORT_LOG_INFO("repair::shrink: attempt %d over %zu ranks did not complete everywhere; retrying", attempt,
                      members.size());
    }
    failed = failed_after;
    set_members();
    inject::point("shrink.create");
    made = create_over_world(members, creation_tag(info->id, failed.size()));
  }
}

// Sends a notice for comm to every member: its revocation (join false), or a request to join (join true,
// on CommInfo::join_id). Caller checked g_live.
static void send_notice(MPI_Comm comm, bool join) {
  CommInfo *info = info_of(comm);
  {
    std::lock_guard<std::mutex> lock(g_mu);
    std::uint64_t id = join ? info->join_id : info->id;
    if (join && g_engine->revoked(id)) return;  // (asked once is enough)
    g_engine->revoke(id);
    g_any_revoked.store(true);
    flush_locked();
  }
  declare_learned();
}

// True once this rank holds the notice send_notice(comm, join) sends. Receives pending notices at most
// every kRevokePollNs (callers poll); an atomic load while none ever arrived.
static bool holds_notice(MPI_Comm comm, bool join) {
  if (!g_live.load(std::memory_order_relaxed)) return false;
  std::int64_t now = now_ns();
  if (now - g_last_poll_ns.load(std::memory_order_relaxed) > kRevokePollNs) {
    g_last_poll_ns.store(now, std::memory_order_relaxed);
    progress_from_hook();
  }
  if (!g_any_revoked.load(std::memory_order_acquire)) return false;
  CommInfo *info = find_info(comm);
  if (info == nullptr) return false;
  std::lock_guard<std::mutex> lock(g_mu);
  return g_engine->revoked(join ? info->join_id : info->id);
}

int revoke(MPI_Comm comm) {
  if (!live_or_warn("repair::revoke")) return MPI_ERR_OTHER;
  send_notice(comm, false);
  return MPI_SUCCESS;
}

bool is_revoked(MPI_Comm comm) { return holds_notice(comm, false); }

bool revoke_seen() { return g_any_revoked.load(std::memory_order_acquire); }

// NOTE: not a revocation of comm itself: comm may be the program's own communicator (a first substitute),
// which must not look revoked to ULFM's calls. A second engine communicator over the same members
// (CommInfo::join_id) carries the notice.
void ask_to_join(MPI_Comm comm, bool) {
  if (g_live.load()) send_notice(comm, true);
}

bool asked_to_join(MPI_Comm comm) { return holds_notice(comm, true); }

ErrorKind error_kind(int) { return ErrorKind::none; }
bool failure_pending(int) { return false; }

int ack_failed(MPI_Comm comm) {
  if (!live_or_warn("repair::ack_failed")) return MPI_ERR_OTHER;
  CommInfo *info = info_of(comm);
  {
    std::lock_guard<std::mutex> lock(g_mu);
    progress_locked();
    info->acked.clear();
    for (std::size_t i = 0; i < info->world.size(); ++i) {
      if (g_engine->is_failed(info->world[i])) info->acked.push_back(static_cast<int>(i));
    }
  }
  declare_learned();
  return MPI_SUCCESS;
}

int get_failed(MPI_Comm comm, std::vector<int> *acked) {
  if (!live_or_warn("repair::get_failed")) return MPI_ERR_OTHER;
  CommInfo *info = info_of(comm);
  std::lock_guard<std::mutex> lock(g_mu);
  *acked = info->acked;
  return MPI_SUCCESS;
}

}  // namespace cohort::repair

// --- groups (repair/group.hpp): the primitives that repair/group.cpp builds the group calls from ---
namespace cohort::repair::detail {

bool live() { return live_or_warn("repair::group"); }

std::uint64_t add_group(const std::vector<int> &world, int tag, int kind) {
  static std::map<std::vector<int>, std::uint64_t> calls;  // by (kind, tag, members): calls made here
  std::vector<int> key{kind, tag};
  key.insert(key.end(), world.begin(), world.end());
  std::lock_guard<std::mutex> lock(g_mu);
  std::uint64_t h = mix(0x67726f7570ULL, static_cast<std::uint64_t>(kind));  // "group"
  h = mix(h, static_cast<std::uint64_t>(static_cast<std::uint32_t>(tag)));
  for (int w : world) h = mix(h, static_cast<std::uint64_t>(w));
  std::uint64_t id = mix(h, ++calls[key]);
  g_engine->add_comm(id, world);
  return id;
}

bool known_dead(int world) {
  std::lock_guard<std::mutex> lock(g_mu);
  progress_locked();
  return g_engine->is_failed(world);
}

void agree_over(std::uint64_t id, int *flag, std::vector<int> *failed) { agree_on_id(id, flag, failed); }

int create_over(const std::vector<int> &world, std::uint64_t id, std::size_t failed, MPI_Comm *out) {
  std::shared_ptr<Attempt> made = create_over_world(world, creation_tag(id, failed));
  if (!made->done.load(std::memory_order_acquire)) return MPI_ERR_PENDING;  // abandoned: a member died
  *out = made->comm;
  return made->rc;
}

void register_created(MPI_Comm comm, std::uint64_t id) {
  static std::map<std::uint64_t, CommInfo> parents;  // a parent record per group: ids of what it made
  std::lock_guard<std::mutex> lock(g_mu);
  CommInfo &parent = parents[id];
  parent.id = id;
  register_locked(comm, &parent);
}

}  // namespace cohort::repair::detail
