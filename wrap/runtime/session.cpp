// MPI_Session_init and MPI_Session_finalize: cohort under the Sessions model (MPI 4.0 section 11.3).
//
// A program that starts MPI with MPI_Session_init has no MPI_COMM_WORLD. cohort needs a communicator of
// all the job's processes for its own traffic (detector, repair, liveness discovery) and for rank
// numbering, so the program's first MPI_Session_init opens a session of cohort's own first (asking for
// MPI_THREAD_MULTIPLE: its detector thread calls MPI) and makes that communicator from the "mpi://WORLD"
// process set, with MPI_Comm_create_from_group and a string tag of cohort's (cohort::world(),
// detector/world.hpp). Then cohort starts as at MPI_Init, and the program's session is opened. Communicators
// the program makes with MPI_Comm_create_from_group from a process set's group become aliases as at
// MPI_Comm_create_group (wrap/comm/comm_group.cpp). cohort stops at the program's last finalize, of either model;
// its own session is finalized with it.
#include "wrap/runtime/session.hpp"

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>

#include "detector/inject.hpp"
#include "detector/log.hpp"
#include "detector/world.hpp"
#include "repair/group.hpp"
#include "wrap/calls.h"
#include "wrap/core/alias.hpp"
#include "wrap/runtime/lifecycle.hpp"

#if defined(COHORT_HAVE_SESSIONS)

namespace cohort::wrap::session {
namespace {

// NOTE: string tags of cohort's own communicators. A program's MPI_Comm_create_from_group never reaches MPI
// with its string tag (cohort creates over its world communicator with a tag derived from it,
// wrap/comm/comm_group.cpp), so no creation of the program can meet these, whatever tags it uses.
constexpr char kWorldTag[] = "org.cohort.session.world";
constexpr char kSelfTag[] = "org.cohort.session.self";

std::mutex g_mu;                 // the program's threads may open and finalize sessions concurrently
std::set<MPI_Session> g_open;    // guarded by g_mu
MPI_Session g_own = MPI_SESSION_NULL;
bool g_warned_unprotected = false;

int thread_level_of(MPI_Session s, int asked) {
  MPI_Info info = MPI_INFO_NULL;
  if (PMPI_Session_get_info(s, &info) != MPI_SUCCESS || info == MPI_INFO_NULL) return asked;
  char value[64] = {0};
  int flag = 0;
  PMPI_Info_get(info, "thread_level", static_cast<int>(sizeof value) - 1, value, &flag);
  PMPI_Info_free(&info);
  // NOTE: Open MPI 5 does not report the level among the session's info; it grants what was asked.
  if (!flag) return asked;
  if (std::strcmp(value, "MPI_THREAD_MULTIPLE") == 0) return MPI_THREAD_MULTIPLE;
  if (std::strcmp(value, "MPI_THREAD_SERIALIZED") == 0) return MPI_THREAD_SERIALIZED;
  if (std::strcmp(value, "MPI_THREAD_FUNNELED") == 0) return MPI_THREAD_FUNNELED;
  return MPI_THREAD_SINGLE;
}

int comm_from_pset(const char *pset, const char *tag, MPI_Comm *out) {
  MPI_Group group = MPI_GROUP_NULL;
  int rc = PMPI_Group_from_session_pset(g_own, pset, &group);
  if (rc != MPI_SUCCESS) return rc;
  rc = PMPI_Comm_create_from_group(group, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, out);
  PMPI_Group_free(&group);
  return rc;
}

// cohort's session and its world and self communicators (BringUpMpi of wrap/runtime/lifecycle.hpp).
int open_own(int * /*argc*/, char *** /*argv*/, int *provided) {
  MPI_Info info = MPI_INFO_NULL;
  PMPI_Info_create(&info);
  PMPI_Info_set(info, "thread_level", "MPI_THREAD_MULTIPLE");
  int rc = PMPI_Session_init(info, MPI_ERRORS_RETURN, &g_own);
  PMPI_Info_free(&info);
  if (rc != MPI_SUCCESS) return rc;
  *provided = thread_level_of(g_own, MPI_THREAD_MULTIPLE);
  MPI_Comm world = MPI_COMM_NULL, self = MPI_COMM_NULL;
  rc = comm_from_pset("mpi://WORLD", kWorldTag, &world);
  if (rc == MPI_SUCCESS) rc = comm_from_pset("mpi://SELF", kSelfTag, &self);
  if (rc != MPI_SUCCESS) {
    std::fprintf(stderr, "cohort: MPI_Session_init: cannot make cohort's communicators from its session (code %d)\n", rc);
    return rc;
  }
  cohort::use_session_world(world, self);
  return MPI_SUCCESS;
}

}  // namespace

int open_count() {
  std::lock_guard<std::mutex> lock(g_mu);
  return static_cast<int>(g_open.size());
}

void finalize_own() {
  if (g_own != MPI_SESSION_NULL) PMPI_Session_finalize(&g_own);
}

}  // namespace cohort::wrap::session

using cohort::wrap::CallId;
using cohort::wrap::count_call;
namespace session = cohort::wrap::session;

extern "C" int __wrap_MPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *out) {
  count_call(CallId::MPI_Session_init);
  namespace wrap = cohort::wrap;
  if (out == nullptr) return PMPI_Session_init(info, errhandler, out);  // MPI reports it
  std::lock_guard<std::mutex> lock(session::g_mu);
  bool first = false;
  if (!wrap::running() && !wrap::stopped()) {
    int rc = wrap::start("MPI_Session_init", nullptr, nullptr, nullptr, session::open_own);
    if (rc != MPI_SUCCESS) return rc;
    first = true;
  } else if (!wrap::running() && !session::g_warned_unprotected) {
    session::g_warned_unprotected = true;
    COHORT_LOG_WARN("MPI_Session_init: cohort stopped at an earlier finalize; MPI runs without cohort from here on");
  }
  int rc = PMPI_Session_init(info, errhandler, out);
  if (rc != MPI_SUCCESS || !wrap::running()) return rc;
  session::g_open.insert(*out);
  // NOTE: as at MPI_Init: a test can kill a rank before the program does any work of its own.
  if (first) cohort::inject::point("init.done");
  return MPI_SUCCESS;
}

extern "C" int __wrap_MPI_Session_finalize(MPI_Session *s) {
  count_call(CallId::MPI_Session_finalize);
  namespace wrap = cohort::wrap;
  if (s == nullptr) return PMPI_Session_finalize(s);  // MPI reports it
  std::unique_lock<std::mutex> lock(session::g_mu);
  auto it = session::g_open.find(*s);
  if (it == session::g_open.end()) return PMPI_Session_finalize(s);  // not one cohort protects
  session::g_open.erase(it);
  if (session::g_open.empty() && !wrap::world_model() && wrap::running()) {
    // NOTE: once a rank has died, the MPI library's finalize of its last session waits for it (MPICH: the
    // process manager's barrier; Open MPI: its runtime's fence), as MPI_Finalize does (wrap/runtime/init.cpp).
    if (wrap::stop()) {
      COHORT_LOG_INFO("MPI_Session_finalize: ranks have failed or a communicator was revoked; skipping the MPI library's own finalize");
      *s = MPI_SESSION_NULL;
      std::fflush(nullptr);
      return MPI_SUCCESS;
    }
    session::finalize_own();
    if (wrap::finalize_deferred()) PMPI_Finalize();
    return PMPI_Session_finalize(s);
  }
  if (wrap::failures_seen()) {
    // NOTE: MPI_Session_finalize may synchronize with the processes of communicators derived from the
    // session (MPI 4.0 section 11.3.1), dead ones included; cohort and the other sessions go on.
    COHORT_LOG_INFO("MPI_Session_finalize: ranks have failed; leaving this session to the end of the process");
    *s = MPI_SESSION_NULL;
    return MPI_SUCCESS;
  }
  return PMPI_Session_finalize(s);
}

#else  // an MPI without Sessions (Open MPI 4.1): a program built against it cannot call these

namespace cohort::wrap::session {
int open_count() { return 0; }
void finalize_own() {}
}  // namespace cohort::wrap::session

extern "C" int __wrap_MPI_Session_init(MPI_Info, MPI_Errhandler, MPI_Session *) { return MPI_ERR_OTHER; }
extern "C" int __wrap_MPI_Session_finalize(MPI_Session *) { return MPI_ERR_OTHER; }

#endif

namespace {
// The int tag of MPI_Comm_create_from_group's string tag: FNV-1a (32 bits) into 2^30..2^31-1, so it never meets
// a program's MPI_Comm_create_group tag below 2^30 on the same group. Two string tags with the same hash used
// on the same group by concurrent threads would share one call sequence; MPI asks for distinct tags there.
int string_tag(const char *tag) {
  std::uint32_t h = 2166136261u;
  for (const char *c = tag; *c != '\0'; ++c) h = (h ^ static_cast<unsigned char>(*c)) * 16777619u;
  return static_cast<int>((h & 0x3fffffffu) | 0x40000000u);
}
}  // namespace

// MPI_Comm_create_from_group (MPI 4.0 section 11.4.2; MPICH 4, Open MPI 5): the same liveness discovery as
// MPI_Comm_create_group over the group's members, also for the group of a session's process set (cohort's
// world communicator then comes from its own session, above). Its errors go to MPI_COMM_SELF's
// handler under the World Model (errors not tied to a handle); under the Sessions model alone there is no
// such handle, and they are returned. The new communicator gets `errhandler` and `info`.
extern "C" int __wrap_MPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info,
                                                 MPI_Errhandler errhandler, MPI_Comm *newcomm) {
  cohort::wrap::count_call(cohort::wrap::CallId::MPI_Comm_create_from_group);
  if (newcomm == nullptr || stringtag == nullptr || !cohort::wrap::running()) {
    // MPI reports the bad argument; or cohort is not running (a session opened after it stopped).
#if !defined(COHORT_HAVE_COMM_CREATE_FROM_GROUP)
    if (&PMPI_Comm_create_from_group == nullptr) return MPI_ERR_OTHER;  // this MPI has no such call
#endif
    return PMPI_Comm_create_from_group(group, stringtag, info, errhandler, newcomm);
  }
  int rc = cohort::repair::group_create(group, string_tag(stringtag), newcomm, nullptr, "MPI_Comm_create_from_group");
  if (rc != MPI_SUCCESS) {
    if (cohort::wrap::world_model()) PMPI_Comm_call_errhandler(MPI_COMM_SELF, rc);
    return rc;
  }
  if (info != MPI_INFO_NULL) PMPI_Comm_set_info(*newcomm, info);
  PMPI_Comm_set_errhandler(*newcomm, errhandler);
  cohort::wrap::register_alias(*newcomm);
  return MPI_SUCCESS;
}
