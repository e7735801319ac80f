// MPI-IO files that survive failures (issue 12; Legio, Rocco et al. 2021, sections 3.6 and 4.2.5).
//
// The plan: cohort opens the program's file over MPI_COMM_SELF on every rank, and that per-rank handle is
// the one the program holds. MPI-IO then never communicates on the program's behalf: a read, a write, a
// seek, a view or an atomicity change is local to the rank (ROMIO and OMPIO do independent I/O with
// pread/pwrite and fcntl locks), so nothing in MPI-IO can wait on a dead rank, and there is nothing to
// recreate after a shrink: view, individual file pointer, atomicity and hints stay where they are.
// What the standard makes collective, cohort makes collective over the survivors of the communicator
// the file was opened on (its alias, the registry's record for communicators):
//   - open: substitute rank 0 opens first with the program's mode (so MPI_MODE_CREATE|MPI_MODE_EXCL
//     creates once), broadcasts its error class, then the others open without MPI_MODE_EXCL;
//   - collective data calls (read/write[_at]_all, sync): the local call, then the driver's confirmation
//     (wrap/driver.hpp, run()): on return every survivor's part of the call is in the file. A survivor's
//     I/O is done once; a retry of the confirmation never writes again, so no byte is written twice;
//   - set_size, preallocate and the deletion of MPI_MODE_DELETE_ON_CLOSE files: done by substitute rank 0
//     only, whose error class is broadcast; if it dies first, the survivors retry and the next rank 0 does
//     it (both are idempotent);
//   - the shared file pointer of the ordered calls (read/write_ordered, seek_shared,
//     get_position_shared) is cohort's: a value in etypes that every survivor keeps identically, moved by
//     an Allgather of the survivors' counts (a positional collective: the same result on every survivor).
// MPI_MODE_DELETE_ON_CLOSE and MPI_MODE_UNIQUE_OPEN are stripped at open (cohort deletes the file itself).
// The cost: ROMIO's two-phase collective buffering is not used (aggregators are the ranks whose death
// would hang a collective write); contiguous per-rank blocks, the checkpoint case, lose nothing.
//
// Thread-safety: the registry is thread-safe; calls on one file follow MPI's rules (collectives
// serialised by the program).
#include <mpi.h>

#include <initializer_list>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "wrap/calls.h"
#include "wrap/coll.hpp"
#include "wrap/driver.hpp"
#include "wrap/policy.hpp"

namespace cohort::wrap {
namespace {

// What cohort keeps per open file (the program's handle is the per-rank MPI_COMM_SELF handle).
struct FileRecord {
  Alias *alias = nullptr;        // the communicator the file was opened on
  std::string name;              // for MPI_MODE_DELETE_ON_CLOSE
  bool delete_on_close = false;
  long long shared = 0;          // the shared file pointer, in etypes of the current view
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
// every survivor its error class (rank 0 gets its own code). If rank 0 dies before its class arrives,
// the survivors retry on the shrunk substitute, where the next rank 0 runs fn (fn must be idempotent;
// attempt > 0 tells it that a dead rank 0 may have run it). Collective over the survivors.
template <typename F>
int run_on_first(Alias &alias, CallId id, F fn) {
  int cls = MPI_SUCCESS, mine = MPI_SUCCESS, attempt = 0;
  bool ran = false;
  int rc = run(alias, describe(id), [&](const Substitute &s, int, MPI_Request *req) {
    if (s.rank == 0 && !ran) {
      mine = fn(attempt);
      cls = error_class(mine);
      ran = true;
    }
    ++attempt;
    return PMPI_Ibcast(&cls, 1, MPI_INT, 0, s.comm, req);
  });
  if (rc != MPI_SUCCESS) return rc;
  return ran ? mine : cls;
}

// Runs io (the local call on the per-rank handle) once, then confirms over the survivors.
template <typename F>
int run_then_confirm(Alias &alias, CallId id, F io) {
  int mine = MPI_SUCCESS;
  bool ran = false;
  int rc = run(alias, describe(id), [&](const Substitute &, int, MPI_Request *req) {
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

// The ordered calls: this rank's offset from cohort's shared pointer (the survivors' counts before it,
// in the communicator's rank order), the local call at that offset, the pointer moved past every
// survivor's data, then the confirmation.
template <typename F>
int ordered(FileRecord &f, CallId id, long long mine, F io_at) {
  Alias &alias = *f.alias;
  int n = alias.current().map.alias_size(), me = -1;
  PMPI_Comm_rank(alias.handle(), &me);
  std::vector<long long> counts(static_cast<std::size_t>(n), 0);
  int rc = coll::post_MPI_Allgather(alias, describe(CallId::MPI_Allgather), &mine, 1, MPI_LONG_LONG,
                                    counts.data(), 1, MPI_LONG_LONG, alias.handle());
  if (rc != MPI_SUCCESS) return rc;
  long long at = f.shared, total = 0;
  for (int r = 0; r < n; ++r) {
    if (r < me) at += counts[r];
    total += counts[r];
  }
  f.shared += total;
  return run_then_confirm(alias, id, [&] { return io_at(static_cast<MPI_Offset>(at)); });
}

[[noreturn]] void not_supported(const char *call) {
  abort_job(call, "the independent shared-pointer calls are not supported by cohort yet on a file opened on a "
                  "communicator cohort protects; use MPI_File_write_ordered/read_ordered or explicit offsets");
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
  int rc = run_on_first(*a, CallId::MPI_File_open, [&](int attempt) {
    // NOTE: a retry means a dead rank 0 may have created the file already: EXCL would then fail.
    return PMPI_File_open(MPI_COMM_SELF, filename, attempt > 0 ? mode & ~MPI_MODE_EXCL : mode, info, &mine);
  });
  if (rc == MPI_SUCCESS && mine == MPI_FILE_NULL) {
    // NOTE: without CREATE: rank 0 created it; if it is gone again, this rank reports it, as MPI would.
    rc = PMPI_File_open(MPI_COMM_SELF, filename, mode & ~(MPI_MODE_EXCL | MPI_MODE_CREATE), info, &mine);
  }
  if (rc != MPI_SUCCESS) {
    if (mine != MPI_FILE_NULL) PMPI_File_close(&mine);
    *fh = MPI_FILE_NULL;
    PMPI_File_call_errhandler(MPI_FILE_NULL, rc);
    return rc;
  }
  {
    std::lock_guard<std::mutex> lock(g_files_mu);
    g_files[mine] = FileRecord{a, filename, (amode & MPI_MODE_DELETE_ON_CLOSE) != 0, 0};
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
  // Every survivor has closed once the confirmation returns (a slow rank may still have been opening).
  int del = run_then_confirm(*rec.alias, CallId::MPI_File_close, [] { return MPI_SUCCESS; });
  if (rec.delete_on_close && del == MPI_SUCCESS) {
    del = run_on_first(*rec.alias, CallId::MPI_File_close, [&](int attempt) {
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
  if (f != nullptr && rc == MPI_SUCCESS) f->shared = 0;  // MPI: set_view resets both file pointers
  return rc;
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
  long long to = f->shared;
  if (whence == MPI_SEEK_SET) {
    to = offset;
  } else if (whence == MPI_SEEK_CUR) {
    to += offset;
  } else if (whence == MPI_SEEK_END) {
    // NOTE: the end in etypes of the view: the individual pointer's MPI_SEEK_END gives it locally.
    MPI_Offset keep = 0, end = 0;
    PMPI_File_get_position(fh, &keep);
    int rc = PMPI_File_seek(fh, offset, MPI_SEEK_END);
    if (rc != MPI_SUCCESS) return rc;
    PMPI_File_get_position(fh, &end);
    PMPI_File_seek(fh, keep, MPI_SEEK_SET);
    to = end;
  } else {
    return PMPI_File_seek_shared(fh, offset, whence);  // MPI reports the invalid whence
  }
  if (to < 0) {
    PMPI_File_call_errhandler(fh, MPI_ERR_ARG);
    return MPI_ERR_ARG;
  }
  // NOTE: every survivor computes the same value from the same arguments; the confirmation makes the
  // call collective, and a retry sets the same value again (idempotent, as Legio's seek_shared).
  return run_then_confirm(*f->alias, CallId::MPI_File_seek_shared, [&] {
    f->shared = to;
    return MPI_SUCCESS;
  });
}

extern "C" int __wrap_MPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset) {
  count_call(CallId::MPI_File_get_position_shared);
  FileRecord *f = find_file(fh);
  if (f == nullptr) return PMPI_File_get_position_shared(fh, offset);
  *offset = static_cast<MPI_Offset>(f->shared);
  return MPI_SUCCESS;
}

extern "C" int __wrap_MPI_File_write_shared(MPI_File fh, const void *buf, int count, MPI_Datatype type,
                                            MPI_Status *st) {
  count_call(CallId::MPI_File_write_shared);
  if (find_file(fh) == nullptr) return PMPI_File_write_shared(fh, buf, count, type, st);
  not_supported("MPI_File_write_shared");
}

extern "C" int __wrap_MPI_File_read_shared(MPI_File fh, void *buf, int count, MPI_Datatype type, MPI_Status *st) {
  count_call(CallId::MPI_File_read_shared);
  if (find_file(fh) == nullptr) return PMPI_File_read_shared(fh, buf, count, type, st);
  not_supported("MPI_File_read_shared");
}

extern "C" int __wrap_MPI_File_iwrite_shared(MPI_File fh, const void *buf, int count, MPI_Datatype type,
                                             MPI_Request *req) {
  count_call(CallId::MPI_File_iwrite_shared);
  if (find_file(fh) == nullptr) return PMPI_File_iwrite_shared(fh, buf, count, type, req);
  not_supported("MPI_File_iwrite_shared");
}

extern "C" int __wrap_MPI_File_iread_shared(MPI_File fh, void *buf, int count, MPI_Datatype type, MPI_Request *req) {
  count_call(CallId::MPI_File_iread_shared);
  if (find_file(fh) == nullptr) return PMPI_File_iread_shared(fh, buf, count, type, req);
  not_supported("MPI_File_iread_shared");
}
