#include "wrap/core/alias.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <numeric>
#include <unordered_map>

#include "detector/log.hpp"
#include "detector/runtime.hpp"
#include "repair/group.hpp"
#include "repair/repair.hpp"
#include "wrap/core/confirm_state.hpp"
#include "wrap/core/errors.hpp"
#include "wrap/core/stop_job.hpp"

namespace cohort::wrap {
namespace {

std::mutex g_registry_mu;
std::unordered_map<MPI_Comm, std::unique_ptr<Alias>> g_registry;  // guarded by g_registry_mu
std::atomic<Alias *> g_world{nullptr};

// Ranks of `to`'s members in from's numbering, in to's rank order (ascending when to was built from a
// subset of from in from's order, as shrink does).
std::vector<int> ranks_in(MPI_Comm to, MPI_Comm from) {
  int n = 0;
  PMPI_Comm_size(to, &n);
  MPI_Group gt, gf;
  PMPI_Comm_group(to, &gt);
  PMPI_Comm_group(from, &gf);
  std::vector<int> ranks(n), out(n);
  std::iota(ranks.begin(), ranks.end(), 0);
  PMPI_Group_translate_ranks(gt, n, ranks.data(), gf, out.data());
  PMPI_Group_free(&gt);
  PMPI_Group_free(&gf);
  return out;
}

}  // namespace

bool Substitute::any_member_failed() const {
  std::uint64_t epoch = detector::failure_epoch();
  if (epoch == clean_epoch.load(std::memory_order_relaxed)) return false;
  for (int a : map.members()) {
    if (detector::is_failed(map.to_world(a))) return true;
  }
  clean_epoch.store(epoch, std::memory_order_relaxed);
  return false;
}

void Alias::set_lineage(const std::vector<int> &alias_to_world) {
  // NOTE: members register the aliases over the same members in the same order (the creating calls are
  // collective over them), so the ordinal agrees.
  static std::mutex mu;
  static std::map<std::vector<int>, std::uint64_t> made;
  std::lock_guard<std::mutex> lock(mu);
  // (one more FNV-1a step, with the ordinal)
  lineage_ = (repair::ranks_fingerprint(alias_to_world) ^ ++made[alias_to_world]) * 1099511628211ULL;
}

Alias::Alias(MPI_Comm comm, std::vector<int> alias_to_world) : handle_(comm) {
  set_lineage(alias_to_world);
  auto sub = std::make_unique<Substitute>();
  sub->comm = comm;
  sub->map = RankMap(std::move(alias_to_world));
  PMPI_Comm_rank(comm, &sub->rank);
  rank_ = sub->rank;
  current_.store(sub.get(), std::memory_order_release);
  history_.push_back(std::move(sub));
}

Alias::Alias(MPI_Comm comm, std::vector<int> alias_to_world, const std::vector<int> &live) : handle_(comm) {
  set_lineage(alias_to_world);
  to_handle_.assign(alias_to_world.size(), kHole);
  to_program_ = live;
  for (std::size_t h = 0; h < live.size(); ++h) to_handle_[static_cast<std::size_t>(live[h])] = static_cast<int>(h);
  auto sub = std::make_unique<Substitute>();
  sub->comm = comm;
  sub->map = RankMap(std::move(alias_to_world)).shrunk(live);  // (live ranks are the complete map's substitute ranks)
  PMPI_Comm_rank(comm, &sub->rank);
  rank_ = to_program(sub->rank);
  current_.store(sub.get(), std::memory_order_release);
  history_.push_back(std::move(sub));
}

Alias::~Alias() = default;

deferred::State &Alias::deferred_state() {
  if (has_deferred_.load(std::memory_order_acquire)) return *deferred_;
  std::lock_guard<std::mutex> lock(mu_);
  if (!deferred_) deferred_ = std::make_unique<deferred::State>();
  has_deferred_.store(true, std::memory_order_release);
  return *deferred_;
}

void for_each_alias(const std::function<void(Alias &)> &f) {
  std::vector<Alias *> all;
  {
    std::lock_guard<std::mutex> lock(g_registry_mu);
    for (auto &kv : g_registry) all.push_back(kv.second.get());
  }
  for (Alias *a : all) f(*a);
}

void for_each_alias_locked(FunctionRef<void(Alias &)> f) {
  std::lock_guard<std::mutex> lock(g_registry_mu);
  for (auto &kv : g_registry) f(*kv.second);
}

bool Alias::known_failed(int r) const {
  const RankMap &m = current().map;
  if (r < 0 || r >= m.alias_size()) return false;
  return m.to_sub(r) < 0 || detector::is_failed(m.to_world(r));
}

int Alias::shrink(const Substitute &from, const char *call) {
  MPI_Comm next = MPI_COMM_NULL;
  int rc = repair::shrink(from.comm, &next);
  if (rc != MPI_SUCCESS) {
    COHORT_LOG_ERROR("%s: shrinking the substitute communicator failed (code %d)", call, rc);
    return rc;
  }
  PMPI_Comm_set_errhandler(next, MPI_ERRORS_RETURN);
  auto sub = std::make_unique<Substitute>();
  sub->comm = next;
  sub->map = from.map.shrunk(ranks_in(next, from.comm));
  PMPI_Comm_rank(next, &sub->rank);
  COHORT_LOG_INFO("%s: new substitute communicator over %d ranks (was %d; alias size %d)", call,
                  sub->map.sub_size(), from.map.sub_size(), sub->map.alias_size());
  std::lock_guard<std::mutex> lock(mu_);
  current_.store(sub.get(), std::memory_order_release);
  history_.push_back(std::move(sub));
  return MPI_SUCCESS;
}

int Alias::return_error(int rc, const Substitute &on) const {
  if (rc != MPI_SUCCESS && on.comm != handle_) PMPI_Comm_call_errhandler(handle_, rc);
  return rc;
}

bool Alias::release_substitutes() {
  std::lock_guard<std::mutex> lock(mu_);
  bool handle_free = !history_.front()->abandoned.load();
  for (auto &s : history_) {
    // NOTE: a substitute with an abandoned request stays allocated forever: freeing it could let MPI
    // reuse its context id while the abandoned request still matches messages on it.
    // The Substitute object is leaked with it: an abandoned v-collective may still read its layout.
    if (s->abandoned.load()) {
      (void)s.release();
      continue;
    }
    if (s->comm != handle_ && s->comm != MPI_COMM_NULL) PMPI_Comm_free(&s->comm);
  }
  return handle_free;
}

void register_world_alias(const char *call) {
  int n = 0;
  PMPI_Comm_size(cohort::world(), &n);
  std::vector<int> world(n);
  std::iota(world.begin(), world.end(), 0);
  auto a = std::make_unique<Alias>(cohort::world(), std::move(world));
  // NOTE: the program's collectives on MPI_COMM_WORLD never run on MPI_COMM_WORLD itself: repair creates
  // communicators over it (MPI_Comm_create_group on its slow path, idups at init), and under Open MPI 4.1
  // a nonblocking collective abandoned on world, or one posted while such a creation is in progress, takes
  // libnbc tags in a different order on different ranks (MPI_ERR_TRUNCATE in NBC, then a hang). So the
  // first substitute is repair's own communicator over the survivors of world (all of them unless a rank
  // died during MPI_Init), registered with repair like every later substitute.
  if (a->shrink(a->current(), call) != MPI_SUCCESS) {
    log::fatal(1, "%s: cannot create the substitute communicator of MPI_COMM_WORLD (or of cohort's own under the Sessions model)", call);
  }
  std::lock_guard<std::mutex> lock(g_registry_mu);
  g_world.store(a.get());
  g_registry[cohort::world()] = std::move(a);
}

Alias *find_alias(MPI_Comm comm) {
  if (comm == cohort::world()) return g_world.load(std::memory_order_acquire);
  std::lock_guard<std::mutex> lock(g_registry_mu);
  auto it = g_registry.find(comm);
  return it == g_registry.end() ? nullptr : it->second.get();
}

namespace {

std::atomic<int> g_with_holes{0};  // aliases with holes registered

Alias *adopt_alias(std::unique_ptr<Alias> a, bool private_substitute) {
  MPI_Comm comm = a->handle();
  Alias *p = a.get();
#if defined(COHORT_USE_ULFM)
  // NOTE: under ULFM, collectives run on a private substitute from the start, as world's do (see
  // register_world), never on the program's communicator: on a 2x2 Cartesian grid whose Allreduce was
  // repaired on the grid itself (ULFM failed its libnbc request, then agree/shrink on the grid), the
  // survivors hung right after: one in the Allreduce, the others in the next halo exchange on the grid,
  // waiting for it. Costs one MPIX_Comm_shrink per communicator the program creates.
  private_substitute = true;
#endif
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (private_substitute && !inter && a->shrink(a->current(), "communicator creation") != MPI_SUCCESS) {
    log::fatal(1, "communicator creation (MPI_Comm_dup/split/create, MPI_Cart_create ...): cannot create its "
                  "substitute communicator");
  }
  if (a->has_holes()) g_with_holes.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(g_registry_mu);
  g_registry[comm] = std::move(a);
  return p;
}

}  // namespace

Alias *register_alias(MPI_Comm comm, bool private_substitute) {
  return adopt_alias(std::make_unique<Alias>(comm, ranks_in(comm, cohort::world())), private_substitute);
}

Alias *register_alias_with_holes(MPI_Comm comm, std::vector<int> alias_to_world, bool private_substitute) {
  std::vector<int> world = ranks_in(comm, cohort::world()), live;
  for (int w : world) {
    auto it = std::find(alias_to_world.begin(), alias_to_world.end(), w);
    if (it == alias_to_world.end()) log::fatal(1, "topology creation: world rank %d is not in the topology", w);
    live.push_back(static_cast<int>(it - alias_to_world.begin()));
  }
  if (live.size() == alias_to_world.size()) return register_alias(comm, private_substitute);  // no hole
  return adopt_alias(std::make_unique<Alias>(comm, std::move(alias_to_world), live), private_substitute);
}

bool any_alias_with_holes() { return g_with_holes.load(std::memory_order_relaxed) != 0; }

Unregistered unregister_alias(MPI_Comm comm) {
  std::unique_ptr<Alias> a;
  {
    std::lock_guard<std::mutex> lock(g_registry_mu);
    auto it = g_registry.find(comm);
    if (it == g_registry.end() || comm == cohort::world()) return Unregistered::unknown;
    a = std::move(it->second);
    g_registry.erase(it);
  }
  if (a->has_holes()) g_with_holes.fetch_sub(1, std::memory_order_relaxed);
  return a->release_substitutes() ? Unregistered::free_handle : Unregistered::keep_handle;
}

int apply_policy(const Alias &alias, Policy policy, const char *call, const char *what) {
  switch (policy) {
    case Policy::abort: abort_job(call, what);
    case Policy::skip:
      COHORT_LOG_INFO("%s: %s (policy skip)", call, what);
      return MPI_SUCCESS;
    case Policy::error: return raise_error(alias.handle(), call);
  }
  return MPI_SUCCESS;
}

}  // namespace cohort::wrap
