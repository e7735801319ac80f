// The MPI adapter of Legio's hierarchy: see wrap/coll/hierarchy.hpp for the protocol. The layout and the
// repair plan are pure data in topology/hierarchy.hpp.
#include "wrap/coll/hierarchy.hpp"

#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cohort/cohort.h"
#include "detector/log.hpp"
#include "repair/repair.hpp"
#include "topology/hierarchy.hpp"
#include "topology/ring.hpp"
#include "wrap/calls.h"
#include "wrap/coll/coll.hpp"
#include "wrap/core/driver.hpp"
#include "wrap/core/progress.hpp"
#include "detector/world.hpp"
#include "wrap/core/reduce_local.hpp"

namespace cohort::wrap::hierarchy {
namespace {

topology::HierarchySpec g_spec;
bool g_active = false;
bool g_blocks = false;       // groups are blocks of consecutive ranks (rank order = group order)
int g_groups = 0, g_my_group = -1;
bool g_hub = false;
MPI_Comm g_local = MPI_COMM_NULL;
std::vector<MPI_Comm> g_pov;  // group -> its POV communicator (MPI_COMM_NULL where this rank is not a member)
std::vector<std::vector<int>> g_members;  // group -> its world ranks (as built)
MPI_Op g_keep_valid = MPI_OP_NULL;
int g_local_repairs = 0, g_pov_repairs = 0;

// One element of the up/down allreduces: [int valid][packed value]. Kept whole by MPI (one element per
// call), so the operation never sees a split flag.
void keep_valid(void *in, void *inout, int *len, MPI_Datatype *type) {
  int size = 0;
  PMPI_Type_size(*type, &size);
  char *a = static_cast<char *>(in), *b = static_cast<char *>(inout);
  for (int i = 0; i < *len; ++i, a += size, b += size) {
    int va, vb;
    std::memcpy(&va, a, sizeof va);
    std::memcpy(&vb, b, sizeof vb);
    if (va != 0 && vb == 0) std::memcpy(b, a, static_cast<std::size_t>(size));
  }
}

// ---- repairs across communicators ----
// NOTE: a rank may pass the confirming barrier of call n on a communicator C while another member finds
// that barrier broken (the dead rank's last messages were late, or it died inside the barrier): the
// latter agrees on C at call n, the former would join only at its next call on C (n + 1, "one call
// ahead", wrap/core/outcome.hpp). On one communicator that call comes next; on the hierarchy the former
// first waits on other communicators (the next POV step, the next local step), which may need the very
// ranks that wait for it in C's agreement: both wait forever (seen 1 run in 12 at 16 ranks). So a rank in
// a hierarchical collective takes part in C's repair as soon as it knows a member of C dead: an
// agreement at C's next call number, not completed (what it would say at its next call on C, had it
// posted it), then the shrink the agreement decides; its next call on C then starts on the shrunk
// substitute. No cycle: it does so
//   - while it waits on a communicator with no dead member (wrap::set_wait_hook), for every such C;
//   - right before it agrees on a communicator A (wrap::set_before_agree), for every such C below A in
//     one order that all ranks share (the local communicator, then POV 0, 1, ...),
// so a rank's nested repairs always go down that order, and the lowest communicator with a dead member
// gets every survivor into its agreement. Scope: one death at a time (with two, a rank may not yet know
// of the second when it starts a creation) and collectives on MPI_COMM_WORLD that all run on the
// hierarchy (a flat one waits on world's substitute, which does not look here).
thread_local bool t_in_call = false;        // in allreduce() on this thread
thread_local std::vector<Alias *> t_busy;  // aliases with an operation or a repair on this thread's stack

// Position of a in the shared order (local communicator 0, POV g: 1 + g), or -1 if not the hierarchy's.
int order_of(const Alias &a) {
  if (a.handle() == g_local) return 0;
  for (std::size_t g = 0; g < g_pov.size(); ++g) {
    if (g_pov[g] != MPI_COMM_NULL && a.handle() == g_pov[g]) return 1 + static_cast<int>(g);
  }
  return -1;
}

struct Busy {
  explicit Busy(Alias *a) { t_busy.push_back(a); }
  ~Busy() { t_busy.pop_back(); }
};

bool busy(const Alias *a) {
  for (const Alias *b : t_busy) {
    if (b == a) return true;
  }
  return false;
}

// Agreement at a's next call number (not completed) and the shrink it decides: see the note above.
void catch_up(Alias &a) {
  Busy mark(&a);
  const Substitute *before = &a.current();
  CallDesc call = describe(CallId::MPI_Allreduce);
  call.posted_hook = nullptr;
  OpAdapter op(a, call, a.peek_call());
  // Never posts: a member is known dead, so the first step agrees.
  auto refuse = [](const Substitute &, int, MPI_Request *) { return MPI_ERR_OTHER; };
  op.step(refuse, true);  // begin
  while (op.next() != OpAction::begin && op.next() != OpAction::done) op.step(refuse, true);
  if (&a.current() != before) ++*(a.handle() == g_local ? &g_local_repairs : &g_pov_repairs);
  COHORT_LOG_INFO("MPI_Allreduce (hierarchy): took part in the repair of the %s communicator at call %llu",
                  a.handle() == g_local ? "local" : "POV", a.peek_call());
}

// Repairs every hierarchy communicator below `limit` in the shared order that has a known dead member and
// is not on this thread's stack.
void catch_up_below(int limit) {
  for (int o = 0; o < limit && o <= g_groups; ++o) {
    MPI_Comm c = o == 0 ? g_local : g_pov[static_cast<std::size_t>(o - 1)];
    if (c == MPI_COMM_NULL) continue;
    Alias *a = find_alias(c);
    if (a == nullptr || busy(a) || !a->current().any_member_failed()) continue;
    catch_up(*a);
  }
}

// wrap::set_wait_hook: while waiting on a communicator with no dead member (the innermost busy one).
void on_wait() {
  if (!t_in_call || t_busy.size() != 1 || t_busy.back()->current().any_member_failed()) return;
  catch_up_below(g_groups + 1);
}

// wrap::set_before_agree: before agreeing on a, the communicators below it.
void before_agree(Alias &a) {
  if (!t_in_call) return;
  int o = order_of(a);
  if (o > 0) catch_up_below(o);
}

// Runs one resilient MPI_Allreduce on a cohort-created communicator and counts the repairs (substitute
// changes) it made.
int resilient_allreduce(MPI_Comm comm, const void *in, void *out, int count, MPI_Datatype type, MPI_Op op,
                        int *repairs) {
  Alias *a = find_alias(comm);
  Busy mark(a);
  const Substitute *before = &a->current();
  CallDesc d = describe(CallId::MPI_Allreduce);
  d.confirm_now = true;  // (a stage's repairs are counted as it returns: never deferred)
  int rc = coll::post_MPI_Allreduce(*a, d, in, out, count, type, op, comm);
  if (&a->current() != before) ++*repairs;
  return rc;
}

// A typed buffer of count elements of type (true extent included).
struct Typed {
  std::vector<char> bytes;
  char *ptr = nullptr;
  Typed(int count, MPI_Datatype type) {
    MPI_Aint lb, extent, true_lb, true_extent;
    PMPI_Type_get_extent(type, &lb, &extent);
    PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
    MPI_Aint span = count > 0 ? (count - 1) * extent + true_extent : 0;
    bytes.resize(static_cast<std::size_t>(span) + 1);
    ptr = bytes.data() - true_lb;
  }
};

// The up/down exchange on POV g: every rank offers `mine` (valid or not, packed_size bytes after the flag)
// and gets any valid offer in *out. Returns the MPI code; *valid says whether anybody offered.
int exchange(int g, MPI_Datatype element, const std::vector<char> &mine, std::vector<char> *out, bool *valid) {
  out->assign(mine.size(), 0);
  int rc = resilient_allreduce(g_pov[static_cast<std::size_t>(g)], mine.data(), out->data(), 1, element,
                               g_keep_valid, &g_pov_repairs);
  int v = 0;
  std::memcpy(&v, out->data(), sizeof v);
  *valid = v != 0;
  return rc;
}

std::vector<char> offer(bool valid, const void *buf, int count, MPI_Datatype type, int packed_size) {
  std::vector<char> e(sizeof(int) + static_cast<std::size_t>(packed_size), 0);
  int v = valid ? 1 : 0;
  std::memcpy(e.data(), &v, sizeof v);
  if (valid) {
    int pos = 0;
    PMPI_Pack(buf, count, type, e.data() + sizeof(int), packed_size, &pos, cohort::world());
  }
  return e;
}

void unpack(const std::vector<char> &e, void *buf, int count, MPI_Datatype type, int packed_size) {
  int pos = 0;
  PMPI_Unpack(e.data() + sizeof(int), packed_size, &pos, buf, count, type, cohort::world());
}

}  // namespace

void read_setting() {
  std::string error;
  if (!topology::parse_hierarchy(std::getenv("COHORT_HIERARCHY"), &g_spec, &error)) {
    log::fatal(2, "%s", error.c_str());
  }
}

void init() {
  if (g_spec.mode == topology::HierarchySpec::off) return;
  if (cohort::world_from_session()) {
    // NOTE: the hierarchy shapes collectives on MPI_COMM_WORLD; a program under the Sessions model has none.
    COHORT_LOG_INFO("MPI_Session_init: COHORT_HIERARCHY applies to MPI_COMM_WORLD only; collectives stay flat");
    return;
  }
  int rank = 0, n = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &n);
  std::vector<int> host(static_cast<std::size_t>(n), 0);
  if (g_spec.mode == topology::HierarchySpec::host) {
    char name[MPI_MAX_PROCESSOR_NAME] = {0};
    int len = 0;
    PMPI_Get_processor_name(name, &len);
    std::vector<char> all(static_cast<std::size_t>(n) * MPI_MAX_PROCESSOR_NAME);
    if (PMPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                       MPI_COMM_WORLD) != MPI_SUCCESS) {
      log::fatal(2, "MPI_Init: MPI_Allgather of the processor names for COHORT_HIERARCHY=host failed");
    }
    std::vector<std::string> keys;
    for (int r = 0; r < n; ++r) keys.emplace_back(&all[static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME]);
    host = topology::host_indices(keys);
  }
  topology::Hierarchy h = topology::build_hierarchy(host, g_spec);
  if (h.groups() < 2) {
    COHORT_LOG_INFO("MPI_Init: COHORT_HIERARCHY gives one local group of %d ranks; collectives stay flat", n);
    return;
  }
  g_groups = h.groups();
  g_members = h.local;
  g_my_group = h.group_of[static_cast<std::size_t>(rank)];
  g_hub = h.is_master(rank);
  g_blocks = true;
  for (const std::vector<int> &m : h.local) {
    for (std::size_t i = 1; i < m.size(); ++i) g_blocks = g_blocks && m[i] == m[i - 1] + 1;
  }
  for (int g = 1; g < h.groups(); ++g) {
    g_blocks = g_blocks && h.local[static_cast<std::size_t>(g)].front() > h.local[static_cast<std::size_t>(g - 1)].back();
  }
  Alias *world = find_alias(MPI_COMM_WORLD);
  // NOTE: every rank is alive here (MPI_Init), so plain MPI creation is safe; each new communicator
  // becomes an alias registered with repair in the same order on every member.
  PMPI_Comm_split(MPI_COMM_WORLD, g_my_group, rank, &g_local);
  repair::register_comm(g_local, world->handle());
  register_alias(g_local);
  MPI_Group world_group;
  PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
  g_pov.assign(static_cast<std::size_t>(g_groups), MPI_COMM_NULL);
  for (int g = 0; g < g_groups; ++g) {
    std::vector<int> members = h.pov(g);
    if (g != g_my_group && !g_hub) continue;
    MPI_Group grp;
    PMPI_Group_incl(world_group, static_cast<int>(members.size()), members.data(), &grp);
    MPI_Comm c = MPI_COMM_NULL;
    if (PMPI_Comm_create_group(MPI_COMM_WORLD, grp, 0x4c50 + g, &c) != MPI_SUCCESS) {
      log::fatal(2, "MPI_Init: MPI_Comm_create_group of the POV communicator of local group %d failed", g);
    }
    PMPI_Group_free(&grp);
    repair::register_comm(c, world->handle());
    register_alias(c);
    g_pov[static_cast<std::size_t>(g)] = c;
  }
  PMPI_Group_free(&world_group);
  PMPI_Op_create(keep_valid, 1, &g_keep_valid);
  set_wait_hook(on_wait);
  set_before_agree(before_agree);
  g_active = true;
  static const coll::Composed composed{&hierarchy::applies, &hierarchy::barrier, &hierarchy::allreduce};
  coll::set_composed(&composed);
  COHORT_LOG_DEBUG("MPI_Init: hierarchy: %d local groups, this rank in group %d%s", g_groups, g_my_group,
                   g_hub ? " (master)" : "");
}

bool applies(const Alias &alias, MPI_Op op) {
  if (!g_active || alias.handle() != MPI_COMM_WORLD) return false;
  if (g_blocks) return true;
  int commute = 0;
  PMPI_Op_commutative(op, &commute);
  return commute != 0;
}

int allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op) {
  struct InCall {
    InCall() { t_in_call = true; }
    ~InCall() { t_in_call = false; }
  } in_call;
  // 1. local: g's partial on every member of g (in recvbuf).
  int rc = resilient_allreduce(g_local, sendbuf, recvbuf, count, type, op, &g_local_repairs);
  if (rc != MPI_SUCCESS) return rc;
  int packed = 0;
  PMPI_Pack_size(count, type, cohort::world(), &packed);
  MPI_Datatype element;
  PMPI_Type_contiguous(static_cast<int>(sizeof(int)) + packed, MPI_BYTE, &element);
  PMPI_Type_commit(&element);
  // 2. up: each group's partial to every hub, groups in order (every member of POV g takes part).
  std::vector<std::vector<char>> partials(static_cast<std::size_t>(g_groups));
  std::vector<bool> have(static_cast<std::size_t>(g_groups), false);
  const std::vector<char> none = offer(false, nullptr, 0, type, packed);
  const std::vector<char> my_partial = offer(true, recvbuf, count, type, packed);
  for (int g = 0; g < g_groups && rc == MPI_SUCCESS; ++g) {
    if (g_pov[static_cast<std::size_t>(g)] == MPI_COMM_NULL) continue;
    bool valid = false;
    rc = exchange(g, element, g == g_my_group ? my_partial : none, &partials[static_cast<std::size_t>(g)], &valid);
    have[static_cast<std::size_t>(g)] = valid;
  }
  // 3. down: the hubs fold the partials (right to left, so that p0 op p1 op ... keeps rank order for
  // blocks) and give each group the total.
  std::vector<char> total_offer = none;
  if (rc == MPI_SUCCESS && g_hub) {
    Typed acc(count, type), next(count, type);
    bool any = false;
    for (int g = g_groups - 1; g >= 0; --g) {
      if (!have[static_cast<std::size_t>(g)]) continue;  // every rank of g is dead
      if (!any) {
        unpack(partials[static_cast<std::size_t>(g)], acc.ptr, count, type, packed);
        any = true;
      } else {
        unpack(partials[static_cast<std::size_t>(g)], next.ptr, count, type, packed);
        reduce_local(next.ptr, acc.ptr, count, type, op, "COHORT_HIERARCHY");  // acc = p_g op acc
      }
    }
    total_offer = offer(true, acc.ptr, count, type, packed);
  }
  for (int g = 0; g < g_groups && rc == MPI_SUCCESS; ++g) {
    if (g_pov[static_cast<std::size_t>(g)] == MPI_COMM_NULL) continue;
    std::vector<char> total;
    bool valid = false;
    rc = exchange(g, element, total_offer, &total, &valid);
    if (rc != MPI_SUCCESS) break;
    if (!valid) {
      log::fatal(2, "MPI_Allreduce on the hierarchy (COHORT_HIERARCHY): every master has died, so local group %d "
                 "cannot get the result", g);
    }
    if (g == g_my_group) unpack(total, recvbuf, count, type, packed);
  }
  PMPI_Type_free(&element);
  return rc;
}

int barrier() {
  int in = 0, out = 0;
  return allreduce(&in, &out, 1, MPI_INT, MPI_BOR);
}

}  // namespace cohort::wrap::hierarchy

extern "C" int cohort_hierarchy_state(int *local_repairs, int *pov_repairs, int *group, int *master) {
  using namespace cohort::wrap::hierarchy;
  if (!g_active) return 0;
  if (local_repairs != nullptr) *local_repairs = g_local_repairs;
  if (pov_repairs != nullptr) *pov_repairs = g_pov_repairs;
  if (group != nullptr) *group = g_my_group;
  if (master != nullptr) {
    // The lowest world rank of this local group in the agreed survivors of its local communicator.
    const cohort::wrap::Alias *a = cohort::wrap::find_alias(g_local);
    *master = -1;
    const std::vector<int> &m = g_members[static_cast<std::size_t>(g_my_group)];
    for (std::size_t i = 0; i < m.size(); ++i) {
      if (a->member(static_cast<int>(i))) {
        *master = m[i];
        break;
      }
    }
  }
  return 1;
}
