// The ulfm backend of repair/group.hpp: not the liveness discovery of repair/liveness.hpp (ULFM's failure
// knowledge is the MPI's own, and its MPIX_Comm_agree/shrink need a communicator, which is what is being
// created). group_create makes the communicator over the members not known dead (the detector thread
// publishes what MPI's runtime reports, detector::refresh), abandons the attempt when one of them is known
// dead meanwhile and retries without it (create_once below says how); the result is made uniform by a ULFM
// agreement on it and, if that reports a failure, a ULFM shrink. group_agree creates such a communicator and
// agrees on it (the communicator is kept, never freed: freeing could wait on a dead member). An MPI error of
// the creation itself is retried 5 times, then returned.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "detector/inject.hpp"
#include "detector/log.hpp"
#include "detector/runtime.hpp"
#include "repair/group.hpp"
#include "repair/repair.hpp"
#include "detector/world.hpp"

namespace cohort::repair {
namespace {

// MPI_COMM_WORLD ranks of comm's members, in comm order.
std::vector<int> members_of(MPI_Comm comm) {
  MPI_Group g;
  PMPI_Comm_group(comm, &g);
  std::vector<int> out = world_ranks_of_group(g);
  PMPI_Group_free(&g);
  return out;
}

// One MPI creation over `live` (world ranks): its communicator, or MPI_COMM_NULL with *rc set
// (MPI_ERR_PENDING: abandoned because a member is known dead).
// NOTE: Open MPI 5 (ULFM) fails MPI_Comm_create_group at once with MPIX_ERR_PROC_FAILED while its parent
// holds any dead process, acknowledged or not, member or not (measured: 0.0 ms, every time), so
// MPI_COMM_WORLD cannot be the parent once a rank died. MPI_Comm_create_from_group has no parent: over
// live members it works, but with a dead member it never returns. So it runs on a thread of its own that
// is abandoned (left in MPI) when a member is known dead; the retry goes without that member under
// another string tag, which names the members left out, so that every member's retry meets the same one.
// NOTE: the same MPI never completes a creation from group while another thread probes (see
// detector::hold_progress), and records a death only inside its progress engine, which a creation stuck
// on a dead member does not run. So nothing probes for the first kQuietMs (a creation over live members
// took 1-53 ms at 8 ranks here), then this thread probes every kProbeGapMs to learn of a dead member.
#if defined(COHORT_HAVE_COMM_CREATE_FROM_GROUP)
constexpr long kQuietMs = 250, kProbeGapMs = 25;

struct Attempt {
  std::atomic<bool> done{false};
  int rc = MPI_ERR_OTHER;
  MPI_Comm comm = MPI_COMM_NULL;
};

MPI_Comm create_once(const std::vector<int> &world, const std::vector<int> &live, int, std::uint64_t call,
                     const char *tag_name, int *rc) {
  std::string name = std::string("cohort.") + tag_name + "." + std::to_string(call);
  for (std::size_t i = 0; i < world.size(); ++i) {
    if (std::find(live.begin(), live.end(), world[i]) == live.end()) name += "." + std::to_string(i);
  }
  MPI_Group wg, sub;
  PMPI_Comm_group(cohort::world(), &wg);
  PMPI_Group_incl(wg, static_cast<int>(live.size()), live.data(), &sub);
  PMPI_Group_free(&wg);
  auto attempt = std::make_shared<Attempt>();
  {
    detector::ProgressHold hold;
    std::thread([attempt, sub, name]() mutable {
      MPI_Comm out = MPI_COMM_NULL;
      attempt->rc = PMPI_Comm_create_from_group(sub, name.c_str(), MPI_INFO_NULL, MPI_ERRORS_RETURN, &out);
      attempt->comm = out;
      PMPI_Group_free(&sub);
      attempt->done.store(true, std::memory_order_release);
    }).detach();
    auto start = std::chrono::steady_clock::now(), probed = start;
    bool lost = false;
    while (!attempt->done.load(std::memory_order_acquire) && !lost) {
      auto now = std::chrono::steady_clock::now();
      if (now - start >= std::chrono::milliseconds(kQuietMs) &&
          now - probed >= std::chrono::milliseconds(kProbeGapMs)) {
        int any = 0;
        PMPI_Iprobe(MPI_ANY_SOURCE, 0, cohort::self(), &any, MPI_STATUS_IGNORE);
        probed = now;
      }
      detector::refresh();
      for (int w : live) lost = lost || detector::is_failed(w);
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }
  if (!attempt->done.load(std::memory_order_acquire)) {
    *rc = MPI_ERR_PENDING;  // abandoned: the thread stays in MPI
    return MPI_COMM_NULL;
  }
  *rc = attempt->rc;
  return attempt->rc == MPI_SUCCESS ? attempt->comm : MPI_COMM_NULL;
}
#else
// Without MPI_Comm_create_from_group (a ULFM MPI older than MPI 4.0): over MPI_COMM_WORLD, in this thread.
MPI_Comm create_once(const std::vector<int> &, const std::vector<int> &live, int tag, std::uint64_t, const char *,
                     int *rc) {
  MPI_Errhandler saved;
  PMPI_Comm_get_errhandler(cohort::world(), &saved);
  PMPI_Comm_set_errhandler(cohort::world(), MPI_ERRORS_RETURN);
  ack_failed(cohort::world());
  MPI_Group wg, sub;
  PMPI_Comm_group(cohort::world(), &wg);
  PMPI_Group_incl(wg, static_cast<int>(live.size()), live.data(), &sub);
  MPI_Comm made = MPI_COMM_NULL;
  *rc = PMPI_Comm_create_group(cohort::world(), sub, tag, &made);
  PMPI_Group_free(&sub);
  PMPI_Group_free(&wg);
  PMPI_Comm_set_errhandler(cohort::world(), saved);
  PMPI_Errhandler_free(&saved);
  return *rc == MPI_SUCCESS ? made : MPI_COMM_NULL;
}
#endif

// The number of this rank's group_create calls so far over (tag, members): the same on every member,
// as members make their group calls in the same order (repair/group.hpp).
std::uint64_t next_call(const std::vector<int> &world, int tag) {
  static std::mutex mu;
  static std::map<std::vector<int>, std::uint64_t> calls;
  std::vector<int> key{tag};
  key.insert(key.end(), world.begin(), world.end());
  std::lock_guard<std::mutex> lock(mu);
  return ++calls[key];
}

}  // namespace

int group_create(MPI_Group group, int tag, MPI_Comm *newcomm, std::vector<int> *failed, const char *call) {
  *newcomm = MPI_COMM_NULL;
  std::vector<int> world = world_ranks_of_group(group);
  if (member_position(world, call) < 0) return MPI_ERR_GROUP;
  std::uint64_t number = next_call(world, tag);
  // The creation's name: the tag and the members, so that concurrent calls over other groups or tags never
  // meet; create_once adds the call number and the members left out.
  std::string tag_name = "group." + std::to_string(tag) + "." + std::to_string(ranks_fingerprint(world));
  int rc = MPI_ERR_OTHER, errors = 0;
  MPI_Comm made = MPI_COMM_NULL;
  std::vector<int> live;
  // NOTE: each retry leaves out at least one more member, or counts an MPI error (5 at most).
  while (made == MPI_COMM_NULL && errors < 5) {
    detector::refresh();
    live.clear();
    for (int w : world) {
      if (!detector::is_failed(w)) live.push_back(w);
    }
    inject::point("group.create");
    made = create_once(world, live, tag, number, tag_name.c_str(), &rc);
    if (made == MPI_COMM_NULL && rc != MPI_ERR_PENDING) {
      ++errors;
      COHORT_LOG_WARN("%s: MPI's creation over the group's %zu live members failed (code %d), retrying", call,
                      live.size(), rc);
    }
  }
  if (made == MPI_COMM_NULL) {
    COHORT_LOG_ERROR("%s: MPI's creation over the group's %zu live members failed (code %d)", call, live.size(),
                     rc);
    return rc;
  }
  register_comm(made, MPI_COMM_NULL);
  inject::point("group.confirm");
  int ok = 1;
  std::vector<int> lost;
  agree(made, &ok, &lost);
  if (!lost.empty()) {
    MPI_Comm shrunk = MPI_COMM_NULL;
    rc = shrink(made, &shrunk);
    if (rc != MPI_SUCCESS) return rc;
    made = shrunk;
    live = members_of(made);
  }
  *newcomm = made;
  if (failed != nullptr) {
    failed->clear();
    for (std::size_t i = 0; i < world.size(); ++i) {
      if (std::find(live.begin(), live.end(), world[i]) == live.end()) failed->push_back(static_cast<int>(i));
    }
  }
  return MPI_SUCCESS;
}

int group_agree(MPI_Group group, int tag, int *flag, std::vector<int> *failed, const char *call) {
  MPI_Comm comm = MPI_COMM_NULL;
  std::vector<int> left_out;
  int rc = group_create(group, tag, &comm, &left_out, call);
  if (rc != MPI_SUCCESS) return rc;
  std::vector<int> world = world_ranks_of_group(group), sub;
  inject::point("group.agree");
  rc = agree(comm, flag, &sub);
  std::vector<int> comm_world = members_of(comm);
  for (int s : sub) {
    auto it = std::find(world.begin(), world.end(), comm_world[static_cast<std::size_t>(s)]);
    left_out.push_back(static_cast<int>(it - world.begin()));
  }
  std::sort(left_out.begin(), left_out.end());
  *failed = left_out;
  return rc;
}

}  // namespace cohort::repair
