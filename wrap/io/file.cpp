// MPI-IO files that survive failures (Legio, Rocco et al. 2021, sections 3.6 and 4.2.5).
//
// The plan: cohort opens the program's file over MPI_COMM_SELF on every rank, and that per-rank handle is
// the one the program holds. MPI-IO then never communicates on the program's behalf: a read, a write, a
// seek, a view or an atomicity change is local to the rank (ROMIO and OMPIO do independent I/O with
// pread/pwrite and fcntl locks), so nothing in MPI-IO can wait on a dead rank, and there is nothing to
// recreate after a shrink: view, individual file pointer, atomicity and hints stay where they are.
// What the standard makes collective, cohort makes collective over the survivors of the communicator
// the file was opened on (its alias, the registry's record for communicators):
//   - open: substitute rank 0 opens first with the program's mode (so MPI_MODE_CREATE|MPI_MODE_EXCL
//     creates once), broadcasts its error class, then the others open without MPI_MODE_EXCL, then the
//     survivors confirm (each has its handle);
//   - collective data calls (read/write[_at]_all, sync): the local call, then the driver's confirmation
//     (wrap/core/driver.hpp, run()): on return every survivor's part of the call is in the file. A survivor's
//     I/O is done once; a retry of the confirmation never writes again, so no byte is written twice. The
//     nonblocking ones (iread/iwrite[_at]_all) do the local call at once and confirm as a nonblocking
//     collective (wrap/core/nbc.hpp); the split ones (*_begin/*_end) do the whole call at the begin;
//   - set_size, preallocate and the deletion of MPI_MODE_DELETE_ON_CLOSE files: done by substitute rank 0
//     only, whose error class is broadcast; if it dies first, the survivors retry and the next rank 0 does
//     it (both are idempotent);
//   - the shared file pointer lives in a side file next to the data file ("<dir>/.<name>.cohort-shfp/<id>",
//     one per open, created at open and removed at close by the lowest survivor), read-modify-written under an fcntl
//     write lock (wrap/io/shared_file_pointer.hpp, as ROMIO's hidden shared-pointer file): the independent calls
//     (read/write_shared, iread/iwrite_shared) move it with no communication; the ordered calls
//     (read/write_ordered) sum the survivors' counts with an Allgather, then the lowest survivor moves it
//     once, tagged with the call's sequence number (a retry after its death does not move it twice), and
//     broadcasts where it was; seek_shared and set_view (reset to 0) move it the same way after a
//     confirmation. Works across hosts only where fcntl locks are coherent (NFS with lockd, Lustre -o flock).
// MPI_MODE_DELETE_ON_CLOSE and MPI_MODE_UNIQUE_OPEN are stripped at open (cohort deletes the file itself).
// The cost: ROMIO's two-phase collective buffering is not used (aggregators are the ranks whose death
// would hang a collective write); contiguous per-rank blocks, the checkpoint case, lose nothing.
//
// Thread-safety: the registry is thread-safe; calls on one file follow MPI's rules (collectives
// serialised by the program).
#include <mpi.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "detector/inject.hpp"
#include "detector/log.hpp"
#include "wrap/calls.h"
#include "wrap/coll/coll.hpp"
#include "wrap/core/driver.hpp"
#include "wrap/core/nbc.hpp"
#include "wrap/core/policy.hpp"
#include "wrap/core/stop_job.hpp"
#include "wrap/io/shared_file_pointer.hpp"
#include "detector/world.hpp"

namespace cohort::wrap {
namespace {

// What cohort keeps per open file (the program's handle is the per-rank MPI_COMM_SELF handle).
struct FileRecord {
  Alias *alias = nullptr;        // the communicator the file was opened on
  std::string name;              // for MPI_MODE_DELETE_ON_CLOSE
  bool delete_on_close = false;
  std::string side;              // the shared pointer's side file
  int side_fd = -1;              // open on every rank (-1: side_errno says why)
  int side_errno = 0;
  std::uint64_t seq = 0;         // collective moves of the shared pointer so far (the same on every survivor)
  // NOTE: fcntl locks belong to the process: threads of one rank exclude each other with this mutex.
  std::shared_ptr<std::mutex> side_mu = std::make_shared<std::mutex>();
  // The open split collective (MPI allows one per file handle): begun, its code and status for the end.
  bool split_open = false;
  int split_rc = MPI_SUCCESS;
  MPI_Status split_status{};
};

std::mutex g_files_mu;
std::unordered_map<MPI_File, FileRecord> g_files;  // guarded by g_files_mu

FileRecord *find_file(MPI_File fh) {
  std::lock_guard<std::mutex> lock(g_files_mu);
  auto it = g_files.find(fh);
  return it == g_files.end() ? nullptr : &it->second;
}

int error_class(int rc) {
  int cls = rc;
  if (rc != MPI_SUCCESS) PMPI_Error_class(rc, &cls);
  return cls;
}

// Runs fn (returns an MPI code) once, on substitute rank 0 of the alias's current substitute, and gives
// every survivor its error class (rank 0 gets its own code) and the npay values fn left in pay. If rank 0
// dies before its class arrives, the survivors retry on the shrunk substitute, where the next rank 0 runs
// fn (fn must be idempotent; attempt > 0 tells it that a dead rank 0 may have run it). Collective over the
// survivors. hook: whether the call's inject point "<call>.posted" is reached here (once per call).
template <typename F>
int run_on_first(Alias &alias, CallId id, F fn, long long *pay = nullptr, int npay = 0, bool hook = true) {
  std::vector<long long> buf(static_cast<std::size_t>(npay) + 1, 0);
  int mine = MPI_SUCCESS, attempt = 0;
  bool ran = false;
  CallDesc call = describe(id);
  if (!hook) call.posted_hook = nullptr;
  int rc = run(alias, call, [&](const Substitute &s, int, MPI_Request *req) {
    if (s.rank == 0 && !ran) {
      mine = fn(attempt);
      buf[0] = error_class(mine);
      for (int i = 0; i < npay; ++i) buf[i + 1] = pay[i];
      ran = true;
    }
    ++attempt;
    return PMPI_Ibcast(buf.data(), npay + 1, MPI_LONG_LONG, 0, s.comm, req);
  });
  if (rc != MPI_SUCCESS) return rc;
  for (int i = 0; !ran && i < npay; ++i) pay[i] = buf[i + 1];
  return ran ? mine : static_cast<int>(buf[0]);
}

// Runs io (the local call on the per-rank handle) once, then confirms over the survivors. hook: as
// run_on_first's.
template <typename F>
int run_then_confirm(Alias &alias, CallId id, F io, bool hook = true) {
  int mine = MPI_SUCCESS;
  bool ran = false;
  CallDesc call = describe(id);
  if (!hook) call.posted_hook = nullptr;
  int rc = run(alias, call, [&](const Substitute &, int, MPI_Request *req) {
    if (!ran) mine = io();
    ran = true;
    *req = MPI_REQUEST_NULL;  // nothing left to wait for: the driver confirms
    return MPI_SUCCESS;
  });
  return rc != MPI_SUCCESS ? rc : mine;
}

// count elements of type, in etypes of fh's view.
long long etypes_of(MPI_File fh, int count, MPI_Datatype type) {
  MPI_Offset disp;
  MPI_Datatype etype, filetype;
  char rep[MPI_MAX_DATAREP_STRING];
  PMPI_File_get_view(fh, &disp, &etype, &filetype, rep);
  int esize = 1, tsize = 0;
  PMPI_Type_size(etype, &esize);
  PMPI_Type_size(type, &tsize);
  for (MPI_Datatype *t : {&etype, &filetype}) {  // MPI: derived types returned by get_view are ours to free
    int ni, na, nd, comb;
    PMPI_Type_get_envelope(*t, &ni, &na, &nd, &comb);
    if (comb != MPI_COMBINER_NAMED) PMPI_Type_free(t);
  }
  return esize > 0 ? static_cast<long long>(count) * tsize / esize : 0;
}

// ---- the shared file pointer's side file (wrap/io/shared_file_pointer.hpp) ----

// The side files of the program's file name live in "<dir>/.<name>.cohort-shfp/" (a ROMIO "ufs:"-style
// prefix dropped), one per open, named by the open (the alias's lineage and its number of opens so far: the same on
// every member), so that the same file opened on two communicators has two shared pointers, as in MPI.
std::string side_dir(const std::string &name) {
  std::string path = name;
  std::size_t colon = path.find(':'), slash = path.find('/');
  if (colon != std::string::npos && colon > 1 && (slash == std::string::npos || colon < slash))
    path = path.substr(colon + 1);
  std::size_t cut = path.rfind('/');
  std::size_t base = cut == std::string::npos ? 0 : cut + 1;
  return path.substr(0, base) + "." + path.substr(base) + ".cohort-shfp";
}

std::string side_path(const std::string &name, const Alias &alias) {
  static std::mutex mu;
  static std::unordered_map<std::uint64_t, unsigned long long> opens;  // by lineage: MPI_File_open is collective
  unsigned long long n = 0;
  {
    std::lock_guard<std::mutex> lock(mu);
    n = ++opens[alias.lineage()];
  }
  char id[48];
  std::snprintf(id, sizeof id, "/%016llx.%llu", static_cast<unsigned long long>(alias.lineage()), n);
  return side_dir(name) + id;
}

// Creates (or re-creates: a retry after a dead rank 0, or a stale one) the side file with the pointer at 0.
// Returns the descriptor or -errno.
int create_side(const std::string &dir, const std::string &path) {
  int fd = -1;
  // NOTE: twice: the close of another open of the same file may remove the directory in between.
  for (int tries = 0; tries < 2 && fd < 0; ++tries) {
    if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST) return -errno;
    fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0 && errno != ENOENT) break;
  }
  if (fd < 0) return -errno;
  unsigned char b[shfp::kBytes];
  shfp::encode(shfp::State{}, b);
  if (::pwrite(fd, b, sizeof b, 0) != static_cast<ssize_t>(sizeof b)) {
    int e = errno != 0 ? errno : EIO;
    ::close(fd);
    return -e;
  }
  return fd;
}

// One line naming the rank (the log prefix), the call and the side file, then the job stops: a side file
// that cannot be used must not leave the other ranks waiting.
[[noreturn]] void side_failed(const FileRecord &f, const char *call, const char *what, int err) {
  log::write(log::Level::error, "%s: cannot %s the shared file pointer's side file %s: %s", call, what,
             f.side.c_str(), std::strerror(err));
  stop_job(1);
}

int lock_side(int fd, short type) {
  struct flock l;
  std::memset(&l, 0, sizeof l);
  l.l_type = type;
  l.l_whence = SEEK_SET;
  while (::fcntl(fd, F_SETLKW, &l) != 0) {
    if (errno != EINTR) return errno;  // NOTE: MPICH signals the survivors (SIGUSR1) when a rank dies
  }
  return 0;
}

// Runs fn(State &) on the side file's state under its fcntl lock (a write lock if write, and the state
// written back), reaching the inject point hook (if any) after the write-back, the lock still held.
template <typename F>
void with_side(FileRecord &f, CallId id, bool write, const char *hook, F fn) {
  const char *call = info(id).name;
  if (f.side_fd < 0) side_failed(f, call, "open", f.side_errno);
  std::lock_guard<std::mutex> lock(*f.side_mu);
  if (int e = lock_side(f.side_fd, write ? F_WRLCK : F_RDLCK)) side_failed(f, call, "lock", e);
  unsigned char b[shfp::kBytes];
  shfp::State s;
  ssize_t n = ::pread(f.side_fd, b, sizeof b, 0);
  if (n != static_cast<ssize_t>(sizeof b) || !shfp::decode(b, &s)) side_failed(f, call, "read", n < 0 ? errno : EIO);
  fn(s);
  if (write) {
    shfp::encode(s, b);
    if (::pwrite(f.side_fd, b, sizeof b, 0) != static_cast<ssize_t>(sizeof b)) side_failed(f, call, "write", errno);
  }
  if (hook != nullptr) inject::point(hook);
  lock_side(f.side_fd, F_UNLCK);
}

// The next collective move of the shared pointer, to(before) (>= 0, else MPI_ERR_ARG): the lowest survivor
// applies it once (shfp::apply), every survivor gets where the pointer was and is. The caller makes sure
// every survivor has entered the call (no independent access of theirs can be in flight).
template <typename F>
int shared_move(FileRecord &f, CallId id, F to, shfp::Move *m) {
  std::uint64_t seq = ++f.seq;
  long long pay[2] = {0, 0};
  int rc = run_on_first(*f.alias, id, [&](int) {
    bool bad = false;
    with_side(f, id, true, nullptr, [&](shfp::State &s) {
      if (s.seq != seq && to(s.value) < 0) {
        bad = true;
        return;
      }
      shfp::Move done = shfp::apply(s, seq, to);
      pay[0] = done.before;
      pay[1] = done.after;
    });
    return bad ? MPI_ERR_ARG : MPI_SUCCESS;
  }, pay, 2, false);  // (the call's inject point is its I/O's or confirmation's)
  *m = shfp::Move{pay[0], pay[1]};
  return rc;
}

// An independent access of count elements of type: takes its place from the shared pointer and moves it
// (inject point "<call>.posted" reached with the pointer moved and the lock held, before the I/O).
MPI_Offset take_shared(FileRecord &f, CallId id, MPI_File fh, int count, MPI_Datatype type) {
  long long n = etypes_of(fh, count, type), at = 0;
  with_side(f, id, true, posted_hook(id), [&](shfp::State &s) { at = shfp::take(s, n); });
  return static_cast<MPI_Offset>(at);
}

// The ordered calls: this rank's offset from the shared pointer (the survivors' counts before it, in the
// communicator's rank order), the pointer moved past every survivor's data, the local call at that offset,
// then the confirmation. The Allgather is the entry confirmation of shared_move.
template <typename F>
int ordered(FileRecord &f, CallId id, long long mine, F io_at) {
  Alias &alias = *f.alias;
  int n = alias.current().map.alias_size(), me = alias.rank();
  std::vector<long long> counts(static_cast<std::size_t>(n), 0);
  int rc = coll::post_MPI_Allgather(alias, describe(CallId::MPI_Allgather), &mine, 1, MPI_LONG_LONG,
                                    counts.data(), 1, MPI_LONG_LONG, alias.handle());
  if (rc != MPI_SUCCESS) return rc;
  long long prefix = 0, total = 0;
  for (int r = 0; r < n; ++r) {
    if (r < me) prefix += counts[r];
    total += counts[r];
  }
  shfp::Move m{};
  rc = shared_move(f, id, [&](long long before) { return before + total; }, &m);
  if (rc != MPI_SUCCESS) return rc;
  return run_then_confirm(alias, id, [&] { return io_at(static_cast<MPI_Offset>(m.before + prefix)); });
}

}  // namespace
}  // namespace cohort::wrap

using namespace cohort::wrap;

extern "C" int __wrap_MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh) {
  count_call(CallId::MPI_File_open);
  Alias *a = find_alias(comm);
  if (a == nullptr) return PMPI_File_open(comm, filename, amode, info, fh);
  int mode = amode & ~(MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN);
  MPI_File mine = MPI_FILE_NULL;
  FileRecord rec;
  rec.alias = a;
  rec.name = filename;
  rec.delete_on_close = (amode & MPI_MODE_DELETE_ON_CLOSE) != 0;
  rec.side = side_path(rec.name, *a);
  int rc = run_on_first(*a, CallId::MPI_File_open, [&](int attempt) {
    // NOTE: a retry means a dead rank 0 may have created the file already: EXCL would then fail.
    int r = PMPI_File_open(cohort::self(), filename, attempt > 0 ? mode & ~MPI_MODE_EXCL : mode, info, &mine);
    if (r == MPI_SUCCESS) rec.side_fd = create_side(side_dir(rec.name), rec.side);
    return r;
  });
  if (rc == MPI_SUCCESS && mine == MPI_FILE_NULL) {
    // NOTE: without CREATE: rank 0 created it; if it is gone again, this rank reports it, as MPI would.
    rc = PMPI_File_open(cohort::self(), filename, mode & ~(MPI_MODE_EXCL | MPI_MODE_CREATE), info, &mine);
  }
  if (rc == MPI_SUCCESS && rec.side_fd == -1) rec.side_fd = ::open(rec.side.c_str(), O_RDWR | O_CLOEXEC);
  // NOTE: every survivor has its handle once this returns. Without it a fast rank could return, fail, and
  // exit while a slow one still opens: Open MPI 4.1's OMPIO then failed that open 1 run in ~10 under load
  // (mca_sharedfp_sm_file_open: unable to open file for mmap, in the job's session directory).
  int all = run_then_confirm(*a, CallId::MPI_File_open, [] { return MPI_SUCCESS; }, false);
  if (rc == MPI_SUCCESS) rc = all;
  if (rec.side_fd < 0) {
    // NOTE: not an error of the open (a read-only directory): the shared-pointer calls report it if used.
    rec.side_errno = rec.side_fd == -1 ? errno : -rec.side_fd;
    rec.side_fd = -1;
  }
  if (rc != MPI_SUCCESS) {
    if (mine != MPI_FILE_NULL) PMPI_File_close(&mine);
    if (rec.side_fd >= 0) ::close(rec.side_fd);
    *fh = MPI_FILE_NULL;
    PMPI_File_call_errhandler(MPI_FILE_NULL, rc);
    return rc;
  }
  {
    std::lock_guard<std::mutex> lock(g_files_mu);
    g_files[mine] = rec;
  }
  *fh = mine;
  return MPI_SUCCESS;
}

extern "C" int __wrap_MPI_File_close(MPI_File *fh) {
  count_call(CallId::MPI_File_close);
  FileRecord *f = fh != nullptr ? find_file(*fh) : nullptr;
  if (f == nullptr) return PMPI_File_close(fh);
  FileRecord rec = *f;
  {
    std::lock_guard<std::mutex> lock(g_files_mu);
    g_files.erase(*fh);
  }
  int rc = PMPI_File_close(fh);
  if (rec.side_fd >= 0) ::close(rec.side_fd);
  // Every survivor has closed once the confirmation returns (a slow rank may still have been opening).
  int del = run_then_confirm(*rec.alias, CallId::MPI_File_close, [] { return MPI_SUCCESS; });
  if (del == MPI_SUCCESS) {
    del = run_on_first(*rec.alias, CallId::MPI_File_close, [&](int attempt) {
      ::unlink(rec.side.c_str());  // (already gone if a dead rank 0 removed it, or never created)
      ::rmdir(side_dir(rec.name).c_str());  // (fails while another open of the file has its side file there)
      if (!rec.delete_on_close) return MPI_SUCCESS;
      int r = PMPI_File_delete(rec.name.c_str(), MPI_INFO_NULL);
      // NOTE: a dead rank 0 may have deleted it already.
      return attempt > 0 && error_class(r) == MPI_ERR_NO_SUCH_FILE ? MPI_SUCCESS : r;
    });
  }
  return rc != MPI_SUCCESS ? rc : del;
}

#define COHORT_FILE_COLLECTIVE(call, params, io)                    \
  extern "C" int __wrap_##call params {                              \
    count_call(CallId::call);                                        \
    FileRecord *f = find_file(fh);                                   \
    if (f == nullptr) return io;                                     \
    return run_then_confirm(*f->alias, CallId::call, [&] { return io; }); \
  }

COHORT_FILE_COLLECTIVE(MPI_File_write_at_all,
                       (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype type, MPI_Status *st),
                       PMPI_File_write_at(fh, offset, buf, count, type, st))
COHORT_FILE_COLLECTIVE(MPI_File_read_at_all,
                       (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype type, MPI_Status *st),
                       PMPI_File_read_at(fh, offset, buf, count, type, st))
COHORT_FILE_COLLECTIVE(MPI_File_write_all, (MPI_File fh, const void *buf, int count, MPI_Datatype type, MPI_Status *st),
                       PMPI_File_write(fh, buf, count, type, st))
COHORT_FILE_COLLECTIVE(MPI_File_read_all, (MPI_File fh, void *buf, int count, MPI_Datatype type, MPI_Status *st),
                       PMPI_File_read(fh, buf, count, type, st))
COHORT_FILE_COLLECTIVE(MPI_File_sync, (MPI_File fh), PMPI_File_sync(fh))

extern "C" int __wrap_MPI_File_set_size(MPI_File fh, MPI_Offset size) {
  count_call(CallId::MPI_File_set_size);
  FileRecord *f = find_file(fh);
  if (f == nullptr) return PMPI_File_set_size(fh, size);
  return run_on_first(*f->alias, CallId::MPI_File_set_size, [&](int) { return PMPI_File_set_size(fh, size); });
}

extern "C" int __wrap_MPI_File_preallocate(MPI_File fh, MPI_Offset size) {
  count_call(CallId::MPI_File_preallocate);
  FileRecord *f = find_file(fh);
  if (f == nullptr) return PMPI_File_preallocate(fh, size);
  return run_on_first(*f->alias, CallId::MPI_File_preallocate, [&](int) { return PMPI_File_preallocate(fh, size); });
}

extern "C" int __wrap_MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                                        const char *datarep, MPI_Info info) {
  count_call(CallId::MPI_File_set_view);
  FileRecord *f = find_file(fh);
  int rc = PMPI_File_set_view(fh, disp, etype, filetype, datarep, info);
  if (f == nullptr) return rc;
  // MPI: set_view resets both file pointers; the shared one once every survivor is in the call.
  int moved = run_then_confirm(*f->alias, CallId::MPI_File_set_view, [] { return MPI_SUCCESS; });
  shfp::Move m{};
  if (moved == MPI_SUCCESS) moved = shared_move(*f, CallId::MPI_File_set_view, [](long long) { return 0LL; }, &m);
  return rc != MPI_SUCCESS ? rc : moved;
}

extern "C" int __wrap_MPI_File_get_group(MPI_File fh, MPI_Group *group) {
  count_call(CallId::MPI_File_get_group);
  FileRecord *f = find_file(fh);
  if (f == nullptr) return PMPI_File_get_group(fh, group);
  return PMPI_Comm_group(f->alias->handle(), group);
}

extern "C" int __wrap_MPI_File_write_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype type,
                                             MPI_Status *st) {
  count_call(CallId::MPI_File_write_ordered);
  FileRecord *f = find_file(fh);
  if (f == nullptr) return PMPI_File_write_ordered(fh, buf, count, type, st);
  return ordered(*f, CallId::MPI_File_write_ordered, etypes_of(fh, count, type),
                 [&](MPI_Offset at) { return PMPI_File_write_at(fh, at, buf, count, type, st); });
}

extern "C" int __wrap_MPI_File_read_ordered(MPI_File fh, void *buf, int count, MPI_Datatype type, MPI_Status *st) {
  count_call(CallId::MPI_File_read_ordered);
  FileRecord *f = find_file(fh);
  if (f == nullptr) return PMPI_File_read_ordered(fh, buf, count, type, st);
  return ordered(*f, CallId::MPI_File_read_ordered, etypes_of(fh, count, type),
                 [&](MPI_Offset at) { return PMPI_File_read_at(fh, at, buf, count, type, st); });
}

extern "C" int __wrap_MPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence) {
  count_call(CallId::MPI_File_seek_shared);
  FileRecord *f = find_file(fh);
  if (f == nullptr) return PMPI_File_seek_shared(fh, offset, whence);
  long long end = 0;
  if (whence == MPI_SEEK_END) {
    // NOTE: the end in etypes of the view: the individual pointer's MPI_SEEK_END gives it locally.
    MPI_Offset keep = 0, at = 0;
    PMPI_File_get_position(fh, &keep);
    int rc = PMPI_File_seek(fh, offset, MPI_SEEK_END);
    if (rc != MPI_SUCCESS) return rc;
    PMPI_File_get_position(fh, &at);
    PMPI_File_seek(fh, keep, MPI_SEEK_SET);
    end = at;
  } else if (whence != MPI_SEEK_SET && whence != MPI_SEEK_CUR) {
    return PMPI_File_seek_shared(fh, offset, whence);  // MPI reports the invalid whence
  }
  // NOTE: the lowest survivor's arguments count (MPI requires the same on every rank).
  int rc = run_then_confirm(*f->alias, CallId::MPI_File_seek_shared, [] { return MPI_SUCCESS; });
  shfp::Move m{};
  if (rc == MPI_SUCCESS) {
    rc = shared_move(*f, CallId::MPI_File_seek_shared, [&](long long before) -> long long {
      return whence == MPI_SEEK_SET ? offset : whence == MPI_SEEK_CUR ? before + offset : end;
    }, &m);
  }
  if (rc == MPI_ERR_ARG) PMPI_File_call_errhandler(fh, rc);
  return rc;
}

extern "C" int __wrap_MPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset) {
  count_call(CallId::MPI_File_get_position_shared);
  FileRecord *f = find_file(fh);
  if (f == nullptr) return PMPI_File_get_position_shared(fh, offset);
  long long at = 0;
  with_side(*f, CallId::MPI_File_get_position_shared, false, nullptr, [&](shfp::State &s) { at = s.value; });
  *offset = static_cast<MPI_Offset>(at);
  return MPI_SUCCESS;
}

namespace {

// NOTE (Open MPI): OMPIO keeps every pending nonblocking file request in one process-wide list that its
// progress callback walks, and completes, without a lock (ompi/mca/common/ompio/common_ompio_request.c),
// while cohort's detector thread drives MPI's progress (PMPI_Test of its heartbeats) at the same time as
// the program's thread. Two threads progressing one file request broke it: in file.shared_equiv_3 on
// Open MPI 5 an MPI_Wait on iread_shared's request returned before the record was read, and the next
// PMPI_Test crashed in mca_common_ompio_progress (twice in the CI runs of the suite). So on Open MPI the
// nonblocking file calls do their I/O with the blocking call when they are posted and return a generalized
// request that is already complete (its status gives the bytes moved): no OMPIO request ever exists, at
// the price of no overlap of the I/O with the program's computation. MPICH's ROMIO runs under MPICH's
// global lock: its calls go to MPI unchanged.
#ifdef OPEN_MPI
constexpr bool kIoAtPost = true;
#else
constexpr bool kIoAtPost = false;
#endif

int done_io_query(void *bytes, MPI_Status *status) {
  PMPI_Status_set_elements_x(status, MPI_BYTE, *static_cast<MPI_Count *>(bytes));
  PMPI_Status_set_cancelled(status, 0);
  return MPI_SUCCESS;
}
int done_io_free(void *bytes) {
  delete static_cast<MPI_Count *>(bytes);
  return MPI_SUCCESS;
}
int done_io_cancel(void *, int) { return MPI_SUCCESS; }

// Runs io (a blocking file call given where its status goes) now; *request: a completed generalized
// request whose status gives the bytes moved. Returns io's code (then *request is MPI_REQUEST_NULL).
template <typename Io>
int io_at_post(Io io, MPI_Request *request) {
  MPI_Status st;
  int rc = io(&st);
  if (rc != MPI_SUCCESS) {
    *request = MPI_REQUEST_NULL;
    return rc;
  }
  MPI_Count moved = 0;
  PMPI_Get_elements_x(&st, MPI_BYTE, &moved);
  auto *bytes = new MPI_Count(moved);
  rc = PMPI_Grequest_start(done_io_query, done_io_free, done_io_cancel, bytes, request);
  if (rc != MPI_SUCCESS) {
    delete bytes;
    return rc;
  }
  return PMPI_Grequest_complete(*request);
}

// A nonblocking file call: MPI's own (nb) where kIoAtPost is false, else its blocking twin at the post.
template <typename Nonblocking, typename Blocking, typename... Args>
int nonblocking_io(Nonblocking nb, Blocking blocking, MPI_Request *request, Args... args) {
  if (!kIoAtPost) return nb(args..., request);
  return io_at_post([&](MPI_Status *st) { return blocking(args..., st); }, request);
}

int iread_at(MPI_File fh, MPI_Offset at, void *buf, int count, MPI_Datatype type, MPI_Request *request) {
  return nonblocking_io(PMPI_File_iread_at, PMPI_File_read_at, request, fh, at, buf, count, type);
}
int iwrite_at(MPI_File fh, MPI_Offset at, const void *buf, int count, MPI_Datatype type, MPI_Request *request) {
  return nonblocking_io(PMPI_File_iwrite_at, PMPI_File_write_at, request, fh, at, buf, count, type);
}
// The shared-pointer calls on a file cohort did not open (MPI's own shared pointer).
int iread_shared(MPI_File fh, void *buf, int count, MPI_Datatype type, MPI_Request *request) {
  return nonblocking_io(PMPI_File_iread_shared, PMPI_File_read_shared, request, fh, buf, count, type);
}
int iwrite_shared(MPI_File fh, const void *buf, int count, MPI_Datatype type, MPI_Request *request) {
  return nonblocking_io(PMPI_File_iwrite_shared, PMPI_File_write_shared, request, fh, buf, count, type);
}

}  // namespace

extern "C" int __wrap_MPI_File_iread_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype type,
                                        MPI_Request *request) {
  count_call(CallId::MPI_File_iread_at);
  return iread_at(fh, offset, buf, count, type, request);
}

extern "C" int __wrap_MPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                                         MPI_Datatype type, MPI_Request *request) {
  count_call(CallId::MPI_File_iwrite_at);
  return iwrite_at(fh, offset, buf, count, type, request);
}

extern "C" int __wrap_MPI_File_iread(MPI_File fh, void *buf, int count, MPI_Datatype type, MPI_Request *request) {
  count_call(CallId::MPI_File_iread);
  return nonblocking_io(PMPI_File_iread, PMPI_File_read, request, fh, buf, count, type);
}

extern "C" int __wrap_MPI_File_iwrite(MPI_File fh, const void *buf, int count, MPI_Datatype type,
                                      MPI_Request *request) {
  count_call(CallId::MPI_File_iwrite);
  return nonblocking_io(PMPI_File_iwrite, PMPI_File_write, request, fh, buf, count, type);
}

// The independent shared-pointer calls: the place taken under the side file's lock, then the
// explicit-offset call on the per-rank handle (a nonblocking one's request is the program's, as iwrite_at's).
// passthrough: the call on a file cohort did not open.
#define COHORT_FILE_SHARED(call, buftype, last, at_call, passthrough)                            \
  extern "C" int __wrap_##call(MPI_File fh, buftype buf, int count, MPI_Datatype type, last out) { \
    count_call(CallId::call);                                                                    \
    FileRecord *f = find_file(fh);                                                               \
    if (f == nullptr) return passthrough(fh, buf, count, type, out);                             \
    MPI_Offset at = take_shared(*f, CallId::call, fh, count, type);                              \
    return at_call(fh, at, buf, count, type, out);                                               \
  }

COHORT_FILE_SHARED(MPI_File_write_shared, const void *, MPI_Status *, PMPI_File_write_at, PMPI_File_write_shared)
COHORT_FILE_SHARED(MPI_File_read_shared, void *, MPI_Status *, PMPI_File_read_at, PMPI_File_read_shared)
COHORT_FILE_SHARED(MPI_File_iwrite_shared, const void *, MPI_Request *, iwrite_at, iwrite_shared)
COHORT_FILE_SHARED(MPI_File_iread_shared, void *, MPI_Request *, iread_at, iread_shared)

// ---- The nonblocking collective data calls (MPI_File_iwrite_at_all, ...): the rank's own part now, with
// the blocking local call on the per-rank handle (so no file request of the MPI's ever exists: see
// kIoAtPost; and the individual file pointer moves at the call, as MPI 4.0 section 14.4.3 says), then the
// survivors' confirmation as a nonblocking collective on the file's communicator (wrap/core/nbc.hpp): the
// request completes through the wait and test calls once every survivor's part is in the file (what the
// blocking call promises on return), or after the retries of a confirmation that a death interrupted; its
// status counts this rank's bytes and its code is the local call's if that failed.
namespace cohort::wrap {
namespace {

struct LocalIo : nbc::OpState {
  int rc = MPI_SUCCESS;
  MPI_Count bytes = 0;
  void finish(int *out, MPI_Count *n) override {
    if (*out == MPI_SUCCESS) *out = rc;
    *n = bytes;
  }
};

// io(MPI_Status *): the local call. Returns MPI_SUCCESS with *request set, or nbc::start's error.
template <typename Io>
int confirm_nonblocking(FileRecord &f, CallId id, MPI_Request *request, Io io) {
  auto state = std::make_unique<LocalIo>();
  MPI_Status st;
  state->rc = io(&st);
  if (state->rc == MPI_SUCCESS) PMPI_Get_elements_x(&st, MPI_BYTE, &state->bytes);
  CallDesc call = describe(id);
  call.request = request;
  return nbc::start(*f.alias, call, std::move(state), [](const Substitute &, int, MPI_Request *req) {
    *req = MPI_REQUEST_NULL;  // the part is done: what is left is the driver's confirmation
    return MPI_SUCCESS;
  });
}

}  // namespace
}  // namespace cohort::wrap

// passthrough: the call on a file cohort did not open (MPI's own nonblocking call).
#define COHORT_FILE_ICOLLECTIVE(call, params, io, passthrough)                                      \
  extern "C" int __wrap_##call params {                                                             \
    count_call(CallId::call);                                                                       \
    FileRecord *f = find_file(fh);                                                                  \
    if (f == nullptr) return passthrough;                                                           \
    return confirm_nonblocking(*f, CallId::call, request, [&](MPI_Status *st) { return io; });      \
  }

COHORT_FILE_ICOLLECTIVE(MPI_File_iwrite_at_all,
                        (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype type,
                         MPI_Request *request),
                        PMPI_File_write_at(fh, offset, buf, count, type, st),
                        PMPI_File_iwrite_at_all(fh, offset, buf, count, type, request))
COHORT_FILE_ICOLLECTIVE(MPI_File_iread_at_all,
                        (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype type,
                         MPI_Request *request),
                        PMPI_File_read_at(fh, offset, buf, count, type, st),
                        PMPI_File_iread_at_all(fh, offset, buf, count, type, request))
COHORT_FILE_ICOLLECTIVE(MPI_File_iwrite_all,
                        (MPI_File fh, const void *buf, int count, MPI_Datatype type, MPI_Request *request),
                        PMPI_File_write(fh, buf, count, type, st),
                        PMPI_File_iwrite_all(fh, buf, count, type, request))
COHORT_FILE_ICOLLECTIVE(MPI_File_iread_all,
                        (MPI_File fh, void *buf, int count, MPI_Datatype type, MPI_Request *request),
                        PMPI_File_read(fh, buf, count, type, st),
                        PMPI_File_iread_all(fh, buf, count, type, request))

// ---- The split collectives (MPI 4.0 section 14.4.5 lets an implementation do the whole call at the begin
// or at the end): the begin runs the blocking call's path above and keeps its code and status; the end
// hands them over. A begin while one is open, or an end with none open, is the program's error: one line,
// and MPI_ERR_OTHER through the file's error handler.
namespace cohort::wrap {
namespace {

int split_misuse(MPI_File fh, CallId id, const char *what) {
  COHORT_LOG_ERROR("%s: %s", describe(id).name, what);
  PMPI_File_call_errhandler(fh, MPI_ERR_OTHER);
  return MPI_ERR_OTHER;
}

// blocking(MPI_Status *): the call as the blocking wrapper runs it (collective over the survivors).
template <typename Blocking>
int split_begin(FileRecord &f, MPI_File fh, CallId id, Blocking blocking) {
  if (f.split_open) return split_misuse(fh, id, "a split collective is already open on this file (MPI allows one)");
  f.split_rc = blocking(&f.split_status);
  f.split_open = true;
  return f.split_rc;
}

int split_end(FileRecord &f, MPI_File fh, CallId id, MPI_Status *status) {
  if (!f.split_open) return split_misuse(fh, id, "no split collective is open on this file");
  f.split_open = false;
  if (status != MPI_STATUS_IGNORE) *status = f.split_status;
  return f.split_rc;
}

}  // namespace
}  // namespace cohort::wrap

#define COHORT_FILE_SPLIT(call, params, blocking, passthrough_begin, endparams, passthrough_end)       \
  extern "C" int __wrap_##call##_begin params {                                                       \
    count_call(CallId::call##_begin);                                                                 \
    FileRecord *f = find_file(fh);                                                                    \
    if (f == nullptr) return passthrough_begin;                                                       \
    return split_begin(*f, fh, CallId::call##_begin, [&](MPI_Status *st) { return blocking; });       \
  }                                                                                                   \
  extern "C" int __wrap_##call##_end endparams {                                                      \
    count_call(CallId::call##_end);                                                                   \
    FileRecord *f = find_file(fh);                                                                    \
    if (f == nullptr) return passthrough_end;                                                         \
    return split_end(*f, fh, CallId::call##_end, status);                                             \
  }

COHORT_FILE_SPLIT(MPI_File_write_at_all,
                  (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype type),
                  run_then_confirm(*f->alias, CallId::MPI_File_write_at_all_begin,
                                   [&] { return PMPI_File_write_at(fh, offset, buf, count, type, st); }),
                  PMPI_File_write_at_all_begin(fh, offset, buf, count, type),
                  (MPI_File fh, const void *buf, MPI_Status *status), PMPI_File_write_at_all_end(fh, buf, status))
COHORT_FILE_SPLIT(MPI_File_read_at_all, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype type),
                  run_then_confirm(*f->alias, CallId::MPI_File_read_at_all_begin,
                                   [&] { return PMPI_File_read_at(fh, offset, buf, count, type, st); }),
                  PMPI_File_read_at_all_begin(fh, offset, buf, count, type),
                  (MPI_File fh, void *buf, MPI_Status *status), PMPI_File_read_at_all_end(fh, buf, status))
COHORT_FILE_SPLIT(MPI_File_write_all, (MPI_File fh, const void *buf, int count, MPI_Datatype type),
                  run_then_confirm(*f->alias, CallId::MPI_File_write_all_begin,
                                   [&] { return PMPI_File_write(fh, buf, count, type, st); }),
                  PMPI_File_write_all_begin(fh, buf, count, type),
                  (MPI_File fh, const void *buf, MPI_Status *status), PMPI_File_write_all_end(fh, buf, status))
COHORT_FILE_SPLIT(MPI_File_read_all, (MPI_File fh, void *buf, int count, MPI_Datatype type),
                  run_then_confirm(*f->alias, CallId::MPI_File_read_all_begin,
                                   [&] { return PMPI_File_read(fh, buf, count, type, st); }),
                  PMPI_File_read_all_begin(fh, buf, count, type),
                  (MPI_File fh, void *buf, MPI_Status *status), PMPI_File_read_all_end(fh, buf, status))
COHORT_FILE_SPLIT(MPI_File_write_ordered, (MPI_File fh, const void *buf, int count, MPI_Datatype type),
                  ordered(*f, CallId::MPI_File_write_ordered_begin, etypes_of(fh, count, type),
                          [&](MPI_Offset at) { return PMPI_File_write_at(fh, at, buf, count, type, st); }),
                  PMPI_File_write_ordered_begin(fh, buf, count, type),
                  (MPI_File fh, const void *buf, MPI_Status *status), PMPI_File_write_ordered_end(fh, buf, status))
COHORT_FILE_SPLIT(MPI_File_read_ordered, (MPI_File fh, void *buf, int count, MPI_Datatype type),
                  ordered(*f, CallId::MPI_File_read_ordered_begin, etypes_of(fh, count, type),
                          [&](MPI_Offset at) { return PMPI_File_read_at(fh, at, buf, count, type, st); }),
                  PMPI_File_read_ordered_begin(fh, buf, count, type),
                  (MPI_File fh, void *buf, MPI_Status *status), PMPI_File_read_ordered_end(fh, buf, status))
