// Intercommunicators: MPI_Intercomm_create, MPI_Intercomm_merge, the queries, point-to-point and the
// collectives over them, with the alias/substitute rule (sizes and ranks the program sees never change).
//
// The design. The program's handle is a real MPI intercommunicator, made once over the members alive
// at its creation: the queries (MPI_Comm_size/rank, MPI_Comm_remote_size/group, MPI_Comm_test_inter)
// are MPI's own answers, and point-to-point on it goes through cohort's point-to-point wrappers, which
// know the remote group's world ranks (wrap/p2p/p2p_peers.hpp: the dead-peer policies apply to remote ranks).
// Next to it cohort keeps the *union*: an alias intracommunicator over both groups (first the group
// holding the lower MPI_COMM_WORLD rank, each in its rank order). Every collective on the
// intercommunicator is run as resilient collectives on the union (wrap/core/driver.hpp), so a death in either
// group is agreed and repaired by the survivors of both groups together, by the union's agreement and
// shrink: no leader is involved once the intercommunicator exists, and a dead leader changes nothing.
//
// The collectives move packed blocks (MPI_Pack of the program's datatype; one flag byte in front, 1
// when the block was delivered) so that the ranks that give no data (MPI_PROC_NULL in the root group)
// can take part on the union with byte counts only. The root, which MPI_PROC_NULL ranks do not know, is
// found with one MPI_Allreduce (MAX) on the union first. Blocks of dead ranks stay untouched, as for the
// intracommunicator collectives; reductions combine the live remote ranks' blocks in rank order
// (MPI_Reduce_local, so user-defined and non-commutative operations keep MPI's order).
//
// Creation (MPI_Intercomm_create): the local leader sends the world ranks of its group's survivors to
// the remote leader over peer_comm (MPI_Sendrecv: point-to-point policies) and broadcasts both lists
// over local_comm (a resilient broadcast: a dead local leader is a dead root, policy default abort).
// Then the members of both lists create the union with MPI_Comm_create_group over MPI_COMM_WORLD
// (liveness discovery: members dead before or during it are left out, nobody outside is involved), and
// make the intercommunicator on it (split by side, MPI_Intercomm_create between the sides' first
// members) on a helper thread polled by the driver: a death during it is agreed and it is made again
// over the survivors. A communicator made over survivors has size = survivors (as MPI_Comm_dup of a
// degraded communicator).
#include "wrap/comm/intercomm.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "repair/group.hpp"
#include "repair/repair.hpp"
#include "wrap/comm/comm.hpp"
#include "wrap/core/datatype_holder.hpp"
#include "wrap/core/driver.hpp"
#include "wrap/core/errors.hpp"
#include "wrap/core/nbc.hpp"
#include "wrap/core/policy.hpp"
#include "detector/world.hpp"
#include "wrap/core/reduce_local.hpp"

namespace cohort::wrap::inter {
namespace {

// One intercommunicator cohort made. Immutable once registered.
struct Record {
  MPI_Comm union_comm = MPI_COMM_NULL;  // the union alias
  std::vector<int> local_u, remote_u;   // union (alias) rank of each local / remote rank
  int my_u = -1;                        // this process's union rank
  int union_size = 0;
};

std::mutex g_mu;
std::map<MPI_Comm, std::shared_ptr<const Record>> g_records;  // guarded by g_mu

std::shared_ptr<const Record> find(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL || comm == MPI_COMM_WORLD) return nullptr;
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_records.find(comm);
  return it == g_records.end() ? nullptr : it->second;
}

// The record of comm for a collective on it: the union alias takes comm's error handler first, so that the
// union's errors (ULFM mode: MPIX_ERR_PROC_FAILED, MPIX_ERR_REVOKED) reach the handler the program set on
// comm (MPI_Comm_set_errhandler on it is MPI's own call).
std::shared_ptr<const Record> find_for_call(MPI_Comm comm) {
  auto r = find(comm);
  if (r) copy_errhandler(comm, r->union_comm);
  return r;
}

// ---- packed blocks: [flag byte][the type signature's bytes] ----

int signature_bytes(int count, MPI_Datatype type) {
  int size = 0;
  PMPI_Type_size(type, &size);
  return count * size;
}

MPI_Aint extent_of(MPI_Datatype type) {
  MPI_Aint lb = 0, extent = 0;
  PMPI_Type_get_extent(type, &lb, &extent);
  return extent;
}

// Packs count elements of type at buf into the block (block_bytes bytes, flag included) and sets its flag.
int pack(const void *buf, int count, MPI_Datatype type, char *block, int block_bytes) {
  int position = 0;
  int rc = PMPI_Pack(buf, count, type, block + 1, block_bytes - 1, &position, cohort::self());
  if (rc == MPI_SUCCESS) block[0] = 1;
  return rc;
}

// Unpacks a delivered block into count elements of type at buf; an undelivered one leaves buf untouched.
int unpack(const char *block, int block_bytes, void *buf, int count, MPI_Datatype type) {
  if (block[0] != 1) return MPI_SUCCESS;
  int position = 0;
  return PMPI_Unpack(block + 1, block_bytes - 1, &position, buf, count, type, cohort::self());
}

// Storage for count elements of type (the whole true-extent span); data() is the buffer's address.
class TypedBuffer {
 public:
  TypedBuffer(int count, MPI_Datatype type) {
    MPI_Aint lb = 0, true_lb = 0, true_extent = 0;
    PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
    (void)lb;
    MPI_Aint span = count > 0 ? true_extent + (count - 1) * extent_of(type) : 0;
    bytes_.resize(static_cast<std::size_t>(span) + 1);
    offset_ = true_lb;
  }
  void *data() { return bytes_.data() - offset_; }

 private:
  std::vector<char> bytes_;
  MPI_Aint offset_ = 0;
};

// Reduces the delivered blocks of the remote ranks, in remote rank order, into recvbuf (untouched when
// none was delivered): MPI_Reduce_local folds from the last block, so op keeps MPI's order.
int reduce_remote(const Record &r, const std::vector<char> &all, int block, void *recvbuf, int count,
                  MPI_Datatype type, MPI_Op op) {
  TypedBuffer tmp(count, type);
  bool have = false;
  for (auto j = r.remote_u.rbegin(); j != r.remote_u.rend(); ++j) {
    const char *b = all.data() + static_cast<std::size_t>(*j) * block;
    if (b[0] != 1) continue;
    int rc = unpack(b, block, have ? tmp.data() : recvbuf, count, type);
    if (rc == MPI_SUCCESS && have) rc = reduce_local(tmp.data(), recvbuf, count, type, op, "intercommunicator reduction");
    if (rc != MPI_SUCCESS) return rc;
    have = true;
  }
  return MPI_SUCCESS;
}

// The root of a rooted collective, in union numbering, and the block size, found on the union: the root
// (root == MPI_ROOT) gives its union rank and `bytes`, every other rank -1. A root that was dead before
// the call gives -1 everywhere: the call's dead-root policy, the same on every survivor.
int find_root(const Record &r, CallId id, int root, int bytes, int head[2], bool *dead) {
  head[0] = root == MPI_ROOT ? r.my_u : -1;
  head[1] = bytes;
  *dead = false;
  int rc = __wrap_MPI_Allreduce(MPI_IN_PLACE, head, 2, MPI_INT, MPI_MAX, r.union_comm);
  if (rc != MPI_SUCCESS || head[0] >= 0) return rc;
  *dead = true;
  Alias *u = find_alias(r.union_comm);
  const CallInfo &c = info(id);
  std::string what = "the root of the intercommunicator collective is dead";
  if (root >= 0) what = "root " + std::to_string(root) + " of the remote group is dead";
  return apply_policy(*u, dead_root_policy(c.name, c.dead_root), c.name, what.c_str());
}

char *block_at(std::vector<char> &all, int u, int block) { return all.data() + static_cast<std::size_t>(u) * block; }
const char *block_at(const std::vector<char> &all, int u, int block) {
  return all.data() + static_cast<std::size_t>(u) * block;
}

int bcast(const Record &r, void *buf, int count, MPI_Datatype type, int root) {
  int head[2];
  bool dead = false;
  int rc = find_root(r, CallId::MPI_Bcast, root, root == MPI_ROOT ? 1 + signature_bytes(count, type) : 0, head,
                     &dead);
  if (rc != MPI_SUCCESS || dead) return rc;
  std::vector<char> block(static_cast<std::size_t>(head[1]), 0);
  if (root == MPI_ROOT && (rc = pack(buf, count, type, block.data(), head[1])) != MPI_SUCCESS) return rc;
  rc = __wrap_MPI_Bcast(block.data(), head[1], MPI_BYTE, head[0], r.union_comm);
  if (rc != MPI_SUCCESS || root == MPI_ROOT || root == MPI_PROC_NULL) return rc;
  return unpack(block.data(), head[1], buf, count, type);
}

int allreduce(const Record &r, const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op) {
  int block = 1 + signature_bytes(count, type);
  std::vector<char> mine(static_cast<std::size_t>(block), 0), all(static_cast<std::size_t>(block) * r.union_size, 0);
  int rc = pack(sendbuf, count, type, mine.data(), block);
  if (rc == MPI_SUCCESS) rc = __wrap_MPI_Allgather(mine.data(), block, MPI_BYTE, all.data(), block, MPI_BYTE, r.union_comm);
  if (rc != MPI_SUCCESS) return rc;
  return reduce_remote(r, all, block, recvbuf, count, type, op);
}

// Reduce and Gather: the remote group's blocks gathered at the root (union rank head[0]).
int gather_blocks(const Record &r, CallId id, int root, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                  int recvbytes, std::vector<char> *all, int *block, bool *done) {
  bool sender = root >= 0;
  int head[2];
  bool dead = false;
  int bytes = sender ? 1 + signature_bytes(sendcount, sendtype) : root == MPI_ROOT ? 1 + recvbytes : 0;
  int rc = find_root(r, id, root, bytes, head, &dead);
  *done = rc != MPI_SUCCESS || dead;
  if (*done) return rc;
  *block = head[1];
  std::vector<char> mine(static_cast<std::size_t>(head[1]), 0);
  if (sender && (rc = pack(sendbuf, sendcount, sendtype, mine.data(), head[1])) != MPI_SUCCESS) return rc;
  if (root == MPI_ROOT) all->assign(static_cast<std::size_t>(head[1]) * r.union_size, 0);
  return __wrap_MPI_Gather(mine.data(), head[1], MPI_BYTE, root == MPI_ROOT ? all->data() : nullptr, head[1],
                           MPI_BYTE, head[0], r.union_comm);
}

int reduce(const Record &r, const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root) {
  std::vector<char> all;
  int block = 0;
  bool done = false;
  int rc = gather_blocks(r, CallId::MPI_Reduce, root, sendbuf, count, type, signature_bytes(count, type), &all,
                         &block, &done);
  if (rc != MPI_SUCCESS || done || root != MPI_ROOT) return rc;
  return reduce_remote(r, all, block, recvbuf, count, type, op);
}

int gather(const Record &r, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, int root) {
  std::vector<char> all;
  int block = 0;
  bool done = false;
  int rc = gather_blocks(r, CallId::MPI_Gather, root, sendbuf, sendcount, sendtype,
                         root == MPI_ROOT ? signature_bytes(recvcount, recvtype) : 0, &all, &block, &done);
  if (rc != MPI_SUCCESS || done || root != MPI_ROOT) return rc;
  MPI_Aint stride = recvcount * extent_of(recvtype);
  for (std::size_t j = 0; j < r.remote_u.size() && rc == MPI_SUCCESS; ++j) {
    rc = unpack(block_at(all, r.remote_u[j], block), block, static_cast<char *>(recvbuf) + j * stride, recvcount,
                recvtype);
  }
  return rc;
}

int scatter(const Record &r, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
            MPI_Datatype recvtype, int root) {
  int head[2];
  bool dead = false;
  bool receiver = root >= 0;
  int bytes = receiver ? 1 + signature_bytes(recvcount, recvtype)
                       : root == MPI_ROOT ? 1 + signature_bytes(sendcount, sendtype) : 0;
  int rc = find_root(r, CallId::MPI_Scatter, root, bytes, head, &dead);
  if (rc != MPI_SUCCESS || dead) return rc;
  int block = head[1];
  std::vector<char> all, mine(static_cast<std::size_t>(block), 0);
  if (root == MPI_ROOT) {
    all.assign(static_cast<std::size_t>(block) * r.union_size, 0);
    MPI_Aint stride = sendcount * extent_of(sendtype);
    for (std::size_t j = 0; j < r.remote_u.size() && rc == MPI_SUCCESS; ++j) {
      rc = pack(static_cast<const char *>(sendbuf) + j * stride, sendcount, sendtype, block_at(all, r.remote_u[j], block),
                block);
    }
    if (rc != MPI_SUCCESS) return rc;
  }
  rc = __wrap_MPI_Scatter(all.data(), block, MPI_BYTE, mine.data(), block, MPI_BYTE, head[0], r.union_comm);
  if (rc != MPI_SUCCESS || !receiver) return rc;
  return unpack(mine.data(), block, recvbuf, recvcount, recvtype);
}

// Allgather and Alltoall: one block size on every member, the larger of what the two groups send (each
// rank sends its group's size and receives the other's).
int uniform_block(int sendcount, MPI_Datatype sendtype, int recvcount, MPI_Datatype recvtype) {
  return 1 + std::max(signature_bytes(sendcount, sendtype), signature_bytes(recvcount, recvtype));
}

int allgather(const Record &r, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
              int recvcount, MPI_Datatype recvtype) {
  int block = uniform_block(sendcount, sendtype, recvcount, recvtype);
  std::vector<char> mine(static_cast<std::size_t>(block), 0), all(static_cast<std::size_t>(block) * r.union_size, 0);
  int rc = pack(sendbuf, sendcount, sendtype, mine.data(), block);
  if (rc == MPI_SUCCESS) rc = __wrap_MPI_Allgather(mine.data(), block, MPI_BYTE, all.data(), block, MPI_BYTE, r.union_comm);
  MPI_Aint stride = recvcount * extent_of(recvtype);
  for (std::size_t j = 0; j < r.remote_u.size() && rc == MPI_SUCCESS; ++j) {
    rc = unpack(block_at(all, r.remote_u[j], block), block, static_cast<char *>(recvbuf) + j * stride, recvcount,
                recvtype);
  }
  return rc;
}

int alltoall(const Record &r, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
             int recvcount, MPI_Datatype recvtype) {
  int block = uniform_block(sendcount, sendtype, recvcount, recvtype);
  std::vector<char> out(static_cast<std::size_t>(block) * r.union_size, 0), in(out.size(), 0);
  MPI_Aint send_stride = sendcount * extent_of(sendtype), recv_stride = recvcount * extent_of(recvtype);
  int rc = MPI_SUCCESS;
  for (std::size_t j = 0; j < r.remote_u.size() && rc == MPI_SUCCESS; ++j) {
    rc = pack(static_cast<const char *>(sendbuf) + j * send_stride, sendcount, sendtype,
              block_at(out, r.remote_u[j], block), block);
  }
  if (rc == MPI_SUCCESS) rc = __wrap_MPI_Alltoall(out.data(), block, MPI_BYTE, in.data(), block, MPI_BYTE, r.union_comm);
  for (std::size_t j = 0; j < r.remote_u.size() && rc == MPI_SUCCESS; ++j) {
    rc = unpack(block_at(in, r.remote_u[j], block), block, static_cast<char *>(recvbuf) + j * recv_stride, recvcount,
                recvtype);
  }
  return rc;
}

// ---- the nonblocking collectives ----
// Each is cohort's own nonblocking collective on the union (wrap/core/nbc.hpp), as the blocking ones are
// its blocking collectives there: a revoke of either group ends it with MPIX_ERR_REVOKED on both sides, a
// death is agreed by the union's survivors and the operation posted again over them (ULFM mode: it ends
// with MPIX_ERR_PROC_FAILED). The blocks are those of the blocking calls; what the program's buffers
// receive is unpacked when the operation is done, in OpState::finish.
//
// A rooted call (Ibcast, Ireduce, Igather, Iscatter) needs the root and the block size first, which the
// MPI_PROC_NULL ranks do not know. It runs as two operations of the union, both started by the call, so
// that every member starts the union's operations in the same order: the *header* (an MPI_Iallreduce MAX
// of [root's union rank, block bytes], whose request cohort frees at once) and the *data* operation, which
// the program's request completes. An alias posts its operations one after the other (its turn), so the
// data operation's post runs once the header is done and reads it. The data operation is unrooted for the
// driver: a root that dies during it is a member death like any other, and the attempt after the repair
// finds the root missing from the substitute; every survivor then posts a barrier instead and applies the
// call's dead-root policy, as when the header found the root dead.

// The header of a rooted call: filled by its operation, read by the data operation's posts.
struct Header {
  int in[2] = {-1, 0};  // this rank's [union rank if root, else -1; block bytes it knows]
  int out[2] = {-1, 0};
  int rc = MPI_SUCCESS;  // the header operation's outcome
};

class HeaderState : public nbc::OpState {
 public:
  explicit HeaderState(std::shared_ptr<Header> h) : h_(std::move(h)) {}
  void finish(int *rc, MPI_Count *) override { h_->rc = *rc; }

 private:
  std::shared_ptr<Header> h_;
};

// What one nonblocking intercommunicator collective keeps until it is done. Buffers that MPI receives into
// are made once per attempt: a request abandoned by a repair may still write into the earlier ones (and
// the whole state is then never freed, wrap/core/nbc.hpp).
struct NbState : nbc::OpState {
  struct Attempt {
    std::vector<char> bytes;
    PositionalLayout layout;
  };
  std::shared_ptr<const Record> rec;
  CallId id = CallId::MPI_Ibarrier;
  int root_arg = MPI_PROC_NULL;         // the program's root argument (rooted calls)
  std::shared_ptr<Header> head;         // rooted calls only
  int block = 0;                        // bytes per member, flag included
  std::vector<char> mine;               // what this rank sends (one block, or one per union rank)
  std::deque<Attempt> attempts;
  bool dead_root = false;               // the last attempt found the root dead
  std::function<int(const std::vector<char> &)> deliver;  // unpacks the last attempt's bytes

  Attempt &next_attempt(std::size_t bytes) {
    attempts.emplace_back();
    attempts.back().bytes.assign(bytes, 0);
    return attempts.back();
  }
  void finish(int *rc, MPI_Count *) override {
    if (head && head->rc != MPI_SUCCESS) {
      *rc = head->rc;  // the header failed (ULFM mode): the call's outcome
      return;
    }
    if (*rc != MPI_SUCCESS) return;
    if (dead_root) {
      const CallInfo &c = info(id);
      std::string what = "the root of the intercommunicator collective is dead";
      if (root_arg >= 0) what = "root " + std::to_string(root_arg) + " of the remote group is dead";
      Alias *u = find_alias(rec->union_comm);
      *rc = u == nullptr ? MPI_ERR_OTHER : apply_policy(*u, dead_root_policy(c.name, c.dead_root), c.name, what.c_str());
      return;
    }
    if (deliver && !attempts.empty()) *rc = deliver(attempts.back().bytes);
  }
};

// The description of a union operation run for the program's call `id` (its name in log lines and
// policies); unrooted for the driver (see above).
CallDesc union_call(CallId id, MPI_Request *request) {
  CallDesc d = describe(id);
  d.root = -1;
  d.output_at_root = false;
  d.request = request;
  return d;
}

// Starts the header of a rooted call on the union: root_bytes is the block size this rank knows (0 for an
// MPI_PROC_NULL rank). Returns an MPI code.
int start_header(const Record &r, CallId id, int root, int bytes, const std::shared_ptr<Header> &h) {
  h->in[0] = root == MPI_ROOT ? r.my_u : -1;
  h->in[1] = bytes;
  MPI_Request req = MPI_REQUEST_NULL;
  CallDesc d = union_call(id, &req);
  d.posted_hook = nullptr;
  Alias *u = find_alias(r.union_comm);
  if (u == nullptr) return MPI_ERR_COMM;
  int rc = nbc::start(*u, d, std::make_unique<HeaderState>(h), [h](const Substitute &s, int, MPI_Request *q) {
    return PMPI_Iallreduce(h->in, h->out, 2, MPI_INT, MPI_MAX, s.comm, q);
  });
  // NOTE: the header's request is cohort's: freed now, the operation goes on (it may be done already).
  if (rc == MPI_SUCCESS && !nbc::release(&req) && req != MPI_REQUEST_NULL) PMPI_Request_free(&req);
  return rc;
}

// The data operation's post when the root is gone (the header found it dead, or the substitute has lost it):
// a barrier, the same on every survivor, and the dead-root policy when the operation is done.
int post_dead_root(NbState &x, const Substitute &s, MPI_Request *q) {
  x.dead_root = true;
  return PMPI_Ibarrier(s.comm, q);
}

// The root's substitute rank for an attempt of a rooted call, or -1 (dead root: post_dead_root).
int root_on(const NbState &x, const Substitute &s) {
  if (x.head->rc != MPI_SUCCESS || x.head->out[0] < 0) return -1;
  return s.map.to_sub(x.head->out[0]);
}

int start_data(const Record &r, std::unique_ptr<NbState> state, MPI_Request *request,
               std::function<int(NbState &, const Substitute &, MPI_Request *)> post) {
  Alias *u = find_alias(r.union_comm);
  if (u == nullptr) return MPI_ERR_COMM;
  NbState *x = state.get();
  CallDesc d = union_call(x->id, request);
  return nbc::start(*u, d, std::move(state),
                    [x, post](const Substitute &s, int, MPI_Request *q) { return post(*x, s, q); });
}

std::unique_ptr<NbState> nb_state(const std::shared_ptr<const Record> &r, CallId id) {
  auto x = std::make_unique<NbState>();
  x->rec = r;
  x->id = id;
  return x;
}

// Ibcast: the root's packed block to every member (the header gives it and its size).
int ibcast(const std::shared_ptr<const Record> &r, void *buf, int count, MPI_Datatype type, int root,
           MPI_Request *request) {
  auto x = nb_state(r, CallId::MPI_Ibcast);
  x->root_arg = root;
  x->head = std::make_shared<Header>();
  int bytes = root == MPI_PROC_NULL ? 0 : 1 + signature_bytes(count, type);
  if (root == MPI_ROOT) {
    x->mine.assign(static_cast<std::size_t>(bytes), 0);
    int rc = pack(buf, count, type, x->mine.data(), bytes);
    if (rc != MPI_SUCCESS) return rc;
  }
  if (root >= 0) {
    TypeRef t = hold_type(type);
    x->deliver = [=](const std::vector<char> &b) {
      return unpack(b.data(), static_cast<int>(b.size()), buf, count, t->get());
    };
  }
  int rc = start_header(*r, CallId::MPI_Ibcast, root, bytes, x->head);
  if (rc != MPI_SUCCESS) return rc;
  return start_data(*r, std::move(x), request, [root](NbState &x, const Substitute &s, MPI_Request *q) {
    int sr = root_on(x, s);
    if (sr < 0) return post_dead_root(x, s, q);
    const int block = x.head->out[1];
    NbState::Attempt &a = x.next_attempt(static_cast<std::size_t>(block));
    if (root == MPI_ROOT) std::copy(x.mine.begin(), x.mine.end(), a.bytes.begin());
    return PMPI_Ibcast(a.bytes.data(), block, MPI_BYTE, sr, s.comm, q);
  });
}

// Ireduce and Igather: every member's block to the root (the sending group's packed, the others' empty),
// at its union rank's position; deliver() reads them from the last attempt at the root.
int gather_to_root(const std::shared_ptr<const Record> &r, CallId id, int root, const void *sendbuf, int sendcount,
                   MPI_Datatype sendtype, int recvbytes, std::function<int(const std::vector<char> &, int)> deliver,
                   MPI_Request *request) {
  auto x = nb_state(r, id);
  x->root_arg = root;
  x->head = std::make_shared<Header>();
  bool sender = root >= 0;
  int bytes = sender ? 1 + signature_bytes(sendcount, sendtype) : root == MPI_ROOT ? 1 + recvbytes : 0;
  if (sender) {
    x->mine.assign(static_cast<std::size_t>(bytes), 0);
    int rc = pack(sendbuf, sendcount, sendtype, x->mine.data(), bytes);
    if (rc != MPI_SUCCESS) return rc;
  }
  if (root == MPI_ROOT) {
    Header *h = x->head.get();
    x->deliver = [h, deliver](const std::vector<char> &all) { return deliver(all, h->out[1]); };
  }
  int rc = start_header(*r, id, root, bytes, x->head);
  if (rc != MPI_SUCCESS) return rc;
  return start_data(*r, std::move(x), request, [root](NbState &x, const Substitute &s, MPI_Request *q) {
    int sr = root_on(x, s);
    if (sr < 0) return post_dead_root(x, s, q);
    const int block = x.head->out[1];
    if (x.mine.size() != static_cast<std::size_t>(block)) x.mine.resize(static_cast<std::size_t>(block), 0);
    const bool at_root = root == MPI_ROOT;
    NbState::Attempt &a = x.next_attempt(at_root ? static_cast<std::size_t>(block) * x.rec->union_size : 0);
    if (s.map.complete())
      return PMPI_Igather(x.mine.data(), block, MPI_BYTE, at_root ? a.bytes.data() : nullptr, block, MPI_BYTE, sr,
                          s.comm, q);
    a.layout.uniform(s.map, block);
    return PMPI_Igatherv(x.mine.data(), block, MPI_BYTE, at_root ? a.bytes.data() : nullptr, a.layout.counts.data(),
                         a.layout.displs.data(), MPI_BYTE, sr, s.comm, q);
  });
}

// Iallreduce and Iallgather: every member's block to every member (an allgather on the union).
int allgather_blocks(const std::shared_ptr<const Record> &r, CallId id, const void *sendbuf, int sendcount,
                     MPI_Datatype sendtype, int block, std::function<int(const std::vector<char> &)> deliver,
                     MPI_Request *request) {
  auto x = nb_state(r, id);
  x->block = block;
  x->mine.assign(static_cast<std::size_t>(block), 0);
  int rc = pack(sendbuf, sendcount, sendtype, x->mine.data(), block);
  if (rc != MPI_SUCCESS) return rc;
  x->deliver = std::move(deliver);
  return start_data(*r, std::move(x), request, [](NbState &x, const Substitute &s, MPI_Request *q) {
    NbState::Attempt &a = x.next_attempt(static_cast<std::size_t>(x.block) * x.rec->union_size);
    if (s.map.complete())
      return PMPI_Iallgather(x.mine.data(), x.block, MPI_BYTE, a.bytes.data(), x.block, MPI_BYTE, s.comm, q);
    a.layout.uniform(s.map, x.block);
    return PMPI_Iallgatherv(x.mine.data(), x.block, MPI_BYTE, a.bytes.data(), a.layout.counts.data(),
                            a.layout.displs.data(), MPI_BYTE, s.comm, q);
  });
}

// Ialltoall: one block per remote rank, at its union position, to each; the blocks of the others are empty.
int unpack_remote_uniform(const Record &r, const std::vector<char> &all, int block, void *buf, int count,
                          const TypeRef &type);

int ialltoall(const std::shared_ptr<const Record> &r, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
              void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Request *request) {
  auto x = nb_state(r, CallId::MPI_Ialltoall);
  const int block = uniform_block(sendcount, sendtype, recvcount, recvtype);
  x->block = block;
  x->mine.assign(static_cast<std::size_t>(block) * r->union_size, 0);
  MPI_Aint send_stride = sendcount * extent_of(sendtype);
  for (std::size_t j = 0; j < r->remote_u.size(); ++j) {
    int rc = pack(static_cast<const char *>(sendbuf) + j * send_stride, sendcount, sendtype,
                  block_at(x->mine, r->remote_u[j], block), block);
    if (rc != MPI_SUCCESS) return rc;
  }
  const Record *rec = r.get();
  TypeRef t = hold_type(recvtype);
  x->deliver = [=](const std::vector<char> &all) {
    return unpack_remote_uniform(*rec, all, block, recvbuf, recvcount, t);
  };
  return start_data(*r, std::move(x), request, [](NbState &x, const Substitute &s, MPI_Request *q) {
    NbState::Attempt &a = x.next_attempt(x.mine.size());
    if (s.map.complete())
      return PMPI_Ialltoall(x.mine.data(), x.block, MPI_BYTE, a.bytes.data(), x.block, MPI_BYTE, s.comm, q);
    a.layout.uniform(s.map, x.block);
    return PMPI_Ialltoallv(x.mine.data(), a.layout.counts.data(), a.layout.displs.data(), MPI_BYTE, a.bytes.data(),
                           a.layout.counts.data(), a.layout.displs.data(), MPI_BYTE, s.comm, q);
  });
}

// The v and w variants and the reduce-scatters. Blocks have one size on the union, the largest any member
// sends or receives (a header finds it where members cannot know it: the MPI_PROC_NULL ranks and the
// other group's counts); smaller ones are padded.

int max_signature(const int counts[], int n, MPI_Datatype type) {
  int m = 0;
  for (int j = 0; j < n; ++j) m = std::max(m, signature_bytes(counts[j], type));
  return m;
}

// Unpacks the remote ranks' blocks into the program's buffer: remote rank j's at displs[j] elements of
// type (bytes when `byte_displs`, MPI_Alltoallw), counts[j] of types[j] (or of `type` when types is empty).
int unpack_remote(const Record &r, const std::vector<char> &all, int block, void *buf, const std::vector<int> &counts,
                  const std::vector<int> &displs, const std::vector<TypeRef> &types, bool byte_displs) {
  int rc = MPI_SUCCESS;
  for (std::size_t j = 0; j < r.remote_u.size() && rc == MPI_SUCCESS; ++j) {
    MPI_Datatype t = types[types.size() == 1 ? 0 : j]->get();
    MPI_Aint at = byte_displs ? displs[j] : displs[j] * extent_of(t);
    rc = unpack(block_at(all, r.remote_u[j], block), block, static_cast<char *>(buf) + at, counts[j], t);
  }
  return rc;
}

// Packs one block per remote rank, at its union rank's position, into out (union_size blocks).
int pack_remote(const Record &r, const void *buf, const int counts[], const int displs[], const MPI_Datatype types[],
                MPI_Datatype type, bool byte_displs, int block, std::vector<char> *out) {
  out->assign(static_cast<std::size_t>(block) * r.union_size, 0);
  int rc = MPI_SUCCESS;
  for (std::size_t j = 0; j < r.remote_u.size() && rc == MPI_SUCCESS; ++j) {
    MPI_Datatype t = types != nullptr ? types[j] : type;
    MPI_Aint at = byte_displs ? displs[j] : displs[j] * extent_of(t);
    rc = pack(static_cast<const char *>(buf) + at, counts[j], t, block_at(*out, r.remote_u[j], block), block);
  }
  return rc;
}

// Unpacks the remote ranks' blocks as unpack_remote does, each `count` elements of type at j * count.
int unpack_remote_uniform(const Record &r, const std::vector<char> &all, int block, void *buf, int count,
                          const TypeRef &type) {
  const int n = static_cast<int>(r.remote_u.size());
  std::vector<int> counts(n, count), displs(n);
  for (int j = 0; j < n; ++j) displs[j] = j * count;
  return unpack_remote(r, all, block, buf, counts, displs, {type}, false);
}

std::vector<TypeRef> hold_types(const MPI_Datatype types[], int n) {
  std::vector<TypeRef> v;
  for (int j = 0; j < n; ++j) v.push_back(hold_type(types[j]));
  return v;
}

// Igatherv: as Igather, with the root's block the largest of its counts.
int igatherv(const std::shared_ptr<const Record> &r, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
             void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
             MPI_Request *request) {
  const int n = static_cast<int>(r->remote_u.size());
  const bool at_root = root == MPI_ROOT;
  std::vector<int> counts, where;
  std::vector<TypeRef> types;
  if (at_root) {
    counts.assign(recvcounts, recvcounts + n);
    where.assign(displs, displs + n);
    types.push_back(hold_type(recvtype));
  }
  const Record *rec = r.get();
  return gather_to_root(r, CallId::MPI_Igatherv, root, sendbuf, sendcount, sendtype,
                        at_root ? max_signature(recvcounts, n, recvtype) : 0,
                        [=](const std::vector<char> &all, int block) {
                          return unpack_remote(*rec, all, block, recvbuf, counts, where, types, false);
                        },
                        request);
}

// Iscatter and Iscatterv: the root packs one block per remote rank at its union position (at the first post:
// the header gives the size); each member receives its own. counts/displs null: Iscatter (sendcount each).
int scatter_from_root(const std::shared_ptr<const Record> &r, CallId id, const void *sendbuf, int sendcount,
                      const int sendcounts[], const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount,
                      MPI_Datatype recvtype, int root, MPI_Request *request) {
  auto x = nb_state(r, id);
  x->root_arg = root;
  x->head = std::make_shared<Header>();
  const int n = static_cast<int>(r->remote_u.size());
  const bool receiver = root >= 0, at_root = root == MPI_ROOT;
  std::vector<int> counts, where;
  if (at_root) {
    counts = sendcounts != nullptr ? std::vector<int>(sendcounts, sendcounts + n) : std::vector<int>(n, sendcount);
    where.resize(n);
    for (int j = 0; j < n; ++j) where[j] = displs != nullptr ? displs[j] : j * sendcount;
  }
  int bytes = receiver ? 1 + signature_bytes(recvcount, recvtype)
                       : at_root ? 1 + max_signature(counts.data(), n, sendtype) : 0;
  if (receiver) {
    TypeRef t = hold_type(recvtype);
    x->deliver = [=](const std::vector<char> &b) {
      return unpack(b.data(), static_cast<int>(b.size()), recvbuf, recvcount, t->get());
    };
  }
  // NOTE: the root packs at the first post (the header gives the block size): its type is held till then.
  TypeRef st = hold_type(sendtype, at_root);
  int rc = start_header(*r, id, root, bytes, x->head);
  if (rc != MPI_SUCCESS) return rc;
  return start_data(*r, std::move(x), request, [=](NbState &x, const Substitute &s, MPI_Request *q) {
    int sr = root_on(x, s);
    if (sr < 0) return post_dead_root(x, s, q);
    const int block = x.head->out[1];
    if (at_root && x.mine.empty()) {
      int rc = pack_remote(*x.rec, sendbuf, counts.data(), where.data(), nullptr, st->get(), false, block, &x.mine);
      if (rc != MPI_SUCCESS) return rc;
    }
    NbState::Attempt &a = x.next_attempt(static_cast<std::size_t>(block));
    if (s.map.complete())
      return PMPI_Iscatter(x.mine.data(), block, MPI_BYTE, a.bytes.data(), block, MPI_BYTE, sr, s.comm, q);
    a.layout.uniform(s.map, block);
    return PMPI_Iscatterv(x.mine.data(), a.layout.counts.data(), a.layout.displs.data(), MPI_BYTE, a.bytes.data(),
                          block, MPI_BYTE, sr, s.comm, q);
  });
}

// Iallgatherv, Ialltoallv, Ialltoallw: the header (root: none) gives the largest block; then an allgather
// (one block per member) or an alltoall (one per remote rank) on the union. prepare() packs this rank's
// blocks once the size is known (at the first post); deliver() unpacks the last attempt's.
int exchange_padded(const std::shared_ptr<const Record> &r, CallId id, bool alltoall, int bytes,
                    std::function<int(int block, std::vector<char> *mine)> prepare,
                    std::function<int(const std::vector<char> &, int block)> deliver, MPI_Request *request) {
  auto x = nb_state(r, id);
  x->head = std::make_shared<Header>();
  Header *h = x->head.get();
  x->deliver = [h, deliver](const std::vector<char> &all) { return deliver(all, h->out[1]); };
  int rc = start_header(*r, id, MPI_PROC_NULL, bytes, x->head);
  if (rc != MPI_SUCCESS) return rc;
  return start_data(*r, std::move(x), request, [=](NbState &x, const Substitute &s, MPI_Request *q) {
    if (x.head->rc != MPI_SUCCESS) return PMPI_Ibarrier(s.comm, q);  // finish() reports the header's error
    const int block = x.head->out[1];
    if (x.block != block) {
      x.block = block;
      int rc = prepare(block, &x.mine);
      if (rc != MPI_SUCCESS) return rc;
    }
    const std::size_t total = static_cast<std::size_t>(block) * x.rec->union_size;
    NbState::Attempt &a = x.next_attempt(total);
    if (alltoall) {
      if (s.map.complete())
        return PMPI_Ialltoall(x.mine.data(), block, MPI_BYTE, a.bytes.data(), block, MPI_BYTE, s.comm, q);
      a.layout.uniform(s.map, block);
      return PMPI_Ialltoallv(x.mine.data(), a.layout.counts.data(), a.layout.displs.data(), MPI_BYTE, a.bytes.data(),
                             a.layout.counts.data(), a.layout.displs.data(), MPI_BYTE, s.comm, q);
    }
    if (s.map.complete())
      return PMPI_Iallgather(x.mine.data(), block, MPI_BYTE, a.bytes.data(), block, MPI_BYTE, s.comm, q);
    a.layout.uniform(s.map, block);
    return PMPI_Iallgatherv(x.mine.data(), block, MPI_BYTE, a.bytes.data(), a.layout.counts.data(),
                            a.layout.displs.data(), MPI_BYTE, s.comm, q);
  });
}

// Ireduce_scatter and Ireduce_scatter_block (MPI 4.0 6.10): every member's vector of `count` elements (the
// same count in both groups: no header), reduced over the remote group's; this rank keeps its slice
// (`offset` elements in, `mine_count` of them).
int reduce_scatter(const std::shared_ptr<const Record> &r, CallId id, const void *sendbuf, void *recvbuf, int count,
                   int offset, int mine_count, MPI_Datatype type, MPI_Op op, MPI_Request *request) {
  const int block = 1 + signature_bytes(count, type);
  TypeRef t = hold_type(type);
  const Record *rec = r.get();
  return allgather_blocks(r, id, sendbuf, count, type, block,
                          [=](const std::vector<char> &all) {
                            TypedBuffer whole(count, t->get());
                            int rc = reduce_remote(*rec, all, block, whole.data(), count, t->get(), op);
                            if (rc != MPI_SUCCESS || mine_count == 0) return rc;
                            // NOTE: untouched when no remote block was delivered: copy only the reduced slice.
                            bool any = false;
                            for (int u : rec->remote_u) any = any || all[static_cast<std::size_t>(u) * block] == 1;
                            if (!any) return MPI_SUCCESS;
                            MPI_Aint ext = extent_of(t->get());
                            return PMPI_Sendrecv(static_cast<char *>(whole.data()) + offset * ext, mine_count,
                                                 t->get(), 0, 0, recvbuf, mine_count, t->get(), 0, 0, cohort::self(),
                                                 MPI_STATUS_IGNORE);
                          },
                          request);
}

// A blocking call as its nonblocking twin and a wait.
int blocking(const std::function<int(MPI_Request *)> &start) {
  MPI_Request q = MPI_REQUEST_NULL;
  int rc = start(&q);
  if (rc != MPI_SUCCESS) return rc;
  return __wrap_MPI_Wait(&q, MPI_STATUS_IGNORE);
}

// For the blocking entry points: false when comm is not an intercommunicator cohort made.
bool blocking_twin(int *rc, MPI_Comm comm, const std::function<int(MPI_Request *)> &start) {
  if (!find(comm)) return false;
  *rc = blocking(start);
  return true;
}

// ---- creation ----

// Both lists of world ranks, as the local leader broadcasts them: [n_local, local..., n_remote, remote...]
// in a buffer of 2 * (world size + 1) ints.
struct Lists {
  std::vector<int> local, remote;
};

int exchange_lists(Alias &local, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag, Lists *out) {
  int world = 0, me = local.rank();
  PMPI_Comm_size(cohort::world(), &world);
  const int n = world + 1;
  std::vector<int> buf(2 * static_cast<std::size_t>(n), 0);
  if (me == local_leader) {
    std::vector<int> live = local.current().map.member_world_ranks();
    for (int a = 0; a < local.current().map.alias_size(); ++a) {
      if (local.known_failed(a)) live.erase(std::remove(live.begin(), live.end(), local.current().map.to_world(a)), live.end());
    }
    buf[0] = static_cast<int>(live.size());
    std::copy(live.begin(), live.end(), buf.begin() + 1);
    // NOTE: through cohort's wrapper: a dead remote leader is a dead peer (the receive policy).
    int rc = __wrap_MPI_Sendrecv(buf.data(), n, MPI_INT, remote_leader, tag, buf.data() + n, n, MPI_INT, remote_leader,
                                 tag, peer_comm, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) return rc;
  }
  CallDesc call = describe(CallId::MPI_Intercomm_create, local_leader);
  int rc = run(local, call, [&](const Substitute &s, int sub_root, MPI_Request *req) {
    return PMPI_Ibcast(buf.data(), 2 * n, MPI_INT, sub_root, s.comm, req);
  });
  if (rc != MPI_SUCCESS) return rc;
  if (buf[0] <= 0 || buf[n] <= 0) return MPI_ERR_OTHER;  // the dead-root policy skip: nothing was received
  out->local.assign(buf.begin() + 1, buf.begin() + 1 + buf[0]);
  out->remote.assign(buf.begin() + n + 1, buf.begin() + n + 1 + buf[n]);
  return MPI_SUCCESS;
}

// The union over both lists' members alive now (MPI_Comm_create_group over MPI_COMM_WORLD through
// cohort's wrapper: liveness discovery among the members only). First the list with the lower world rank.
int make_union(const Lists &lists, int tag, MPI_Comm *out, bool *local_first) {
  *local_first = *std::min_element(lists.local.begin(), lists.local.end()) <
                 *std::min_element(lists.remote.begin(), lists.remote.end());
  std::vector<int> members = *local_first ? lists.local : lists.remote;
  const std::vector<int> &second = *local_first ? lists.remote : lists.local;
  members.insert(members.end(), second.begin(), second.end());
  MPI_Group world, group;
  PMPI_Comm_group(cohort::world(), &world);
  PMPI_Group_incl(world, static_cast<int>(members.size()), members.data(), &group);
  PMPI_Group_free(&world);
  int rc = __wrap_MPI_Comm_create_group(cohort::world(), group, tag, out);
  PMPI_Group_free(&group);
  return rc;
}

// Makes the intercommunicator on the union's substitute (split by side, then MPI_Intercomm_create between
// the sides' first members) and fills the record from the substitute it was made on.
int make_intercomm(Alias &u, const Lists &lists, bool local_first, int tag, MPI_Comm *out, Record *rec) {
  int rc = barrier(u);  // every member agreed alive before a context id is allocated (driver.hpp)
  if (rc != MPI_SUCCESS) return rc;
  const Substitute *made_on = nullptr;
  std::vector<MPI_Comm *> slots;  // one per attempt: an abandoned attempt may still write its slot
  CallDesc call = describe(CallId::MPI_Intercomm_create);
  call.posted_hook = nullptr;
  call.creates_communicator = true;
  // The union holds the members alive at its creation: a member's group is found by its world rank.
  const std::vector<int> &first_list = local_first ? lists.local : lists.remote;
  auto in_first = [&first_list](const RankMap &m, int a) {
    return std::find(first_list.begin(), first_list.end(), m.to_world(a)) != first_list.end();
  };
  rc = run(u, call, [&](const Substitute &s, int, MPI_Request *req) {
    made_on = &s;
    slots.push_back(new MPI_Comm(MPI_COMM_NULL));
    MPI_Comm *slot = slots.back();
    bool first = in_first(s.map, s.map.to_alias(s.rank));
    int other_leader = -1;
    for (int k = 0; k < s.map.sub_size() && other_leader < 0; ++k) {
      if (in_first(s.map, s.map.to_alias(k)) != first) other_leader = k;
    }
    if (other_leader < 0) return MPI_ERR_OTHER;  // the other group has no survivor
    MPI_Comm comm = s.comm;
    return post_on_thread([comm, first, other_leader, tag, slot] {
      MPI_Comm side = MPI_COMM_NULL;
      int me = 0;
      PMPI_Comm_rank(comm, &me);
      PMPI_Comm_split(comm, first ? 0 : 1, me, &side);
      PMPI_Intercomm_create(side, 0, comm, other_leader, tag, slot);
      PMPI_Comm_free(&side);
    }, req);
  });
  if (rc != MPI_SUCCESS) return rc;
  *out = *slots.back();
  delete slots.back();  // the others belong to abandoned attempts
  const RankMap &m = made_on->map;
  for (int k = 0; k < m.sub_size(); ++k) {
    int a = m.to_alias(k);
    bool first = in_first(m, a);
    ((first == local_first) ? rec->local_u : rec->remote_u).push_back(a);
  }
  rec->my_u = m.to_alias(made_on->rank);
  rec->union_size = m.alias_size();
  return MPI_SUCCESS;
}

}  // namespace

// ---- the collectives (wrap/comm/intercomm.hpp) ----

int shrink(MPI_Comm comm, MPI_Comm *newcomm) {
  auto r = find(comm);
  if (!r) return MPI_ERR_COMM;
  *newcomm = MPI_COMM_NULL;
  MPI_Comm su = MPI_COMM_NULL;
  int rc = repair::shrink(r->union_comm, &su);
  if (rc != MPI_SUCCESS) return rc;
  copy_errhandler(comm, su);
  Alias *shrunk = register_alias(su);
  const Alias *old = find_alias(r->union_comm);
  if (shrunk == nullptr || old == nullptr) return MPI_ERR_OTHER;
  // Each group's survivors, by world rank: the old union's members that the shrunk union holds.
  const std::vector<int> alive = shrunk->current().map.member_world_ranks();
  Lists lists;
  auto keep = [&](const std::vector<int> &members, std::vector<int> *out) {
    for (int a : members) {
      int w = old->current().map.to_world(a);
      if (std::find(alive.begin(), alive.end(), w) != alive.end()) out->push_back(w);
    }
  };
  keep(r->local_u, &lists.local);
  keep(r->remote_u, &lists.remote);
  if (lists.local.empty() || lists.remote.empty()) return MPI_ERR_OTHER;  // a group has no survivor
  const bool local_first = *std::min_element(lists.local.begin(), lists.local.end()) <
                           *std::min_element(lists.remote.begin(), lists.remote.end());
  auto rec = std::make_shared<Record>();
  rec->union_comm = su;
  constexpr int kShrinkTag = 0x5348;  // (on the new union's own substitute: nothing else is sent there yet)
  rc = make_intercomm(*shrunk, lists, local_first, kShrinkTag, newcomm, rec.get());
  if (rc != MPI_SUCCESS) return rc;
  copy_errhandler(comm, *newcomm);
  std::lock_guard<std::mutex> lock(g_mu);
  g_records[*newcomm] = std::move(rec);
  return MPI_SUCCESS;
}

MPI_Comm union_of(MPI_Comm comm) {
  auto r = find(comm);
  return r ? r->union_comm : MPI_COMM_NULL;
}

int union_side(MPI_Comm comm) {
  auto r = find(comm);
  if (!r) return -1;
  return std::find(r->local_u.begin(), r->local_u.end(), 0) != r->local_u.end() ? 0 : 1;
}

bool collective(CallId id, int *rc, MPI_Comm comm) {
  auto r = id == CallId::MPI_Barrier ? find_for_call(comm) : nullptr;
  if (!r) return false;
  *rc = __wrap_MPI_Barrier(r->union_comm);
  return true;
}

// An intercommunicator barrier completes once every process of both groups entered it: a barrier over
// the union, which is cohort's own nonblocking collective (so a revoke of either interrupts it).
bool collective(CallId id, int *rc, MPI_Comm comm, MPI_Request *request) {
  auto r = id == CallId::MPI_Ibarrier ? find_for_call(comm) : nullptr;
  if (!r) return false;
  *rc = __wrap_MPI_Ibarrier(r->union_comm, request);
  return true;
}

bool collective(CallId id, int *rc, void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  auto r = id == CallId::MPI_Bcast ? find_for_call(comm) : nullptr;
  if (!r) return false;
  *rc = bcast(*r, buf, count, type, root);
  return true;
}

bool collective(CallId id, int *rc, const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                MPI_Comm comm) {
  if (id == CallId::MPI_Reduce_scatter_block) {
    return blocking_twin(rc, comm, [&](MPI_Request *q) {
      int irc = MPI_SUCCESS;
      collective(CallId::MPI_Ireduce_scatter_block, &irc, sendbuf, recvbuf, count, type, op, comm, q);
      return irc;
    });
  }
  auto r = id == CallId::MPI_Allreduce ? find_for_call(comm) : nullptr;
  if (!r) return false;
  *rc = allreduce(*r, sendbuf, recvbuf, count, type, op);
  return true;
}

bool collective(CallId id, int *rc, const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                int root, MPI_Comm comm) {
  auto r = id == CallId::MPI_Reduce ? find_for_call(comm) : nullptr;
  if (!r) return false;
  *rc = reduce(*r, sendbuf, recvbuf, count, type, op, root);
  return true;
}

bool collective(CallId id, int *rc, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  auto r = id == CallId::MPI_Gather || id == CallId::MPI_Scatter ? find_for_call(comm) : nullptr;
  if (!r) return false;
  *rc = id == CallId::MPI_Gather ? gather(*r, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root)
                                 : scatter(*r, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  return true;
}

bool collective(CallId id, int *rc, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  auto r = id == CallId::MPI_Allgather || id == CallId::MPI_Alltoall ? find_for_call(comm) : nullptr;
  if (!r) return false;
  *rc = id == CallId::MPI_Allgather ? allgather(*r, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype)
                                    : alltoall(*r, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  return true;
}


// The nonblocking collectives (see "the nonblocking collectives" above).

bool collective(CallId id, int *rc, void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
                MPI_Request *request) {
  auto r = id == CallId::MPI_Ibcast ? find_for_call(comm) : nullptr;
  if (!r) return false;
  *rc = ibcast(r, buf, count, type, root, request);
  return true;
}

bool collective(CallId id, int *rc, const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                MPI_Comm comm, MPI_Request *request) {
  auto r = id == CallId::MPI_Iallreduce || id == CallId::MPI_Ireduce_scatter_block ? find_for_call(comm) : nullptr;
  if (!r) return false;
  if (id == CallId::MPI_Ireduce_scatter_block) {
    int n = 0, me = 0;
    PMPI_Comm_size(comm, &n);
    PMPI_Comm_rank(comm, &me);
    *rc = reduce_scatter(r, id, sendbuf, recvbuf, n * count, me * count, count, type, op, request);
    return true;
  }
  const int block = 1 + signature_bytes(count, type);
  TypeRef t = hold_type(type);
  const Record *rec = r.get();
  *rc = allgather_blocks(r, id, sendbuf, count, type, block,
                         [=](const std::vector<char> &all) {
                           return reduce_remote(*rec, all, block, recvbuf, count, t->get(), op);
                         },
                         request);
  return true;
}

bool collective(CallId id, int *rc, const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request *request) {
  auto r = id == CallId::MPI_Ireduce ? find_for_call(comm) : nullptr;
  if (!r) return false;
  TypeRef t = hold_type(type);
  const Record *rec = r.get();
  *rc = gather_to_root(r, id, root, sendbuf, count, type, signature_bytes(count, type),
                       [=](const std::vector<char> &all, int block) {
                         return reduce_remote(*rec, all, block, recvbuf, count, t->get(), op);
                       },
                       request);
  return true;
}

bool collective(CallId id, int *rc, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request) {
  auto r = id == CallId::MPI_Igather || id == CallId::MPI_Iscatter ? find_for_call(comm) : nullptr;
  if (!r) return false;
  if (id == CallId::MPI_Iscatter) {
    *rc = scatter_from_root(r, id, sendbuf, sendcount, nullptr, nullptr, sendtype, recvbuf, recvcount, recvtype, root,
                            request);
    return true;
  }
  TypeRef t = hold_type(recvtype, root == MPI_ROOT);
  const Record *rec = r.get();
  *rc = gather_to_root(r, id, root, sendbuf, sendcount, sendtype,
                       root == MPI_ROOT ? signature_bytes(recvcount, recvtype) : 0,
                       [=](const std::vector<char> &all, int block) {
                         return unpack_remote_uniform(*rec, all, block, recvbuf, recvcount, t);
                       },
                       request);
  return true;
}

bool collective(CallId id, int *rc, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
  auto r = id == CallId::MPI_Iallgather || id == CallId::MPI_Ialltoall ? find_for_call(comm) : nullptr;
  if (!r) return false;
  if (id == CallId::MPI_Ialltoall) {
    *rc = ialltoall(r, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, request);
    return true;
  }
  const int block = uniform_block(sendcount, sendtype, recvcount, recvtype);
  TypeRef t = hold_type(recvtype);
  const Record *rec = r.get();
  *rc = allgather_blocks(r, id, sendbuf, sendcount, sendtype, block,
                         [=](const std::vector<char> &all) {
                           return unpack_remote_uniform(*rec, all, block, recvbuf, recvcount, t);
                         },
                         request);
  return true;
}


// The v and w variants and the reduce-scatters, blocking (their nonblocking twin and a wait) and not.

bool collective(CallId id, int *rc, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm,
                MPI_Request *request) {
  auto r = id == CallId::MPI_Igatherv ? find_for_call(comm) : nullptr;
  if (!r) return false;
  *rc = igatherv(r, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, request);
  return true;
}
bool collective(CallId id, int *rc, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (id != CallId::MPI_Gatherv) return false;
  return blocking_twin(rc, comm, [&](MPI_Request *q) {
    int irc = MPI_SUCCESS;
    collective(CallId::MPI_Igatherv, &irc, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
               comm, q);
    return irc;
  });
}

bool collective(CallId id, int *rc, const void *sendbuf, const int sendcounts[], const int displs[],
                MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                MPI_Request *request) {
  auto r = id == CallId::MPI_Iscatterv ? find_for_call(comm) : nullptr;
  if (!r) return false;
  *rc = scatter_from_root(r, id, sendbuf, 0, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                          request);
  return true;
}
bool collective(CallId id, int *rc, const void *sendbuf, const int sendcounts[], const int displs[],
                MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (id != CallId::MPI_Scatterv) return false;
  return blocking_twin(rc, comm, [&](MPI_Request *q) {
    int irc = MPI_SUCCESS;
    collective(CallId::MPI_Iscatterv, &irc, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
               comm, q);
    return irc;
  });
}

bool collective(CallId id, int *rc, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                MPI_Request *request) {
  auto r = id == CallId::MPI_Iallgatherv ? find_for_call(comm) : nullptr;
  if (!r) return false;
  const int n = static_cast<int>(r->remote_u.size());
  std::vector<int> counts(recvcounts, recvcounts + n), where(displs, displs + n);
  std::vector<TypeRef> types{hold_type(recvtype)};
  TypeRef st = hold_type(sendtype);
  const Record *rec = r.get();
  int bytes = 1 + std::max(signature_bytes(sendcount, sendtype), max_signature(recvcounts, n, recvtype));
  *rc = exchange_padded(
      r, id, false, bytes,
      [=](int block, std::vector<char> *mine) {
        mine->assign(static_cast<std::size_t>(block), 0);
        return pack(sendbuf, sendcount, st->get(), mine->data(), block);
      },
      [=](const std::vector<char> &all, int block) {
        return unpack_remote(*rec, all, block, recvbuf, counts, where, types, false);
      },
      request);
  return true;
}
bool collective(CallId id, int *rc, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  if (id != CallId::MPI_Allgatherv) return false;
  return blocking_twin(rc, comm, [&](MPI_Request *q) {
    int irc = MPI_SUCCESS;
    collective(CallId::MPI_Iallgatherv, &irc, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
               comm, q);
    return irc;
  });
}

bool collective(CallId id, int *rc, const void *sendbuf, const int sendcounts[], const int sdispls[],
                MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
  auto r = id == CallId::MPI_Ialltoallv ? find_for_call(comm) : nullptr;
  if (!r) return false;
  const int n = static_cast<int>(r->remote_u.size());
  std::vector<int> scounts(sendcounts, sendcounts + n), swhere(sdispls, sdispls + n);
  std::vector<int> counts(recvcounts, recvcounts + n), where(rdispls, rdispls + n);
  std::vector<TypeRef> types{hold_type(recvtype)};
  TypeRef st = hold_type(sendtype);
  const Record *rec = r.get();
  int bytes = 1 + std::max(max_signature(sendcounts, n, sendtype), max_signature(recvcounts, n, recvtype));
  *rc = exchange_padded(
      r, id, true, bytes,
      [=](int block, std::vector<char> *mine) {
        return pack_remote(*rec, sendbuf, scounts.data(), swhere.data(), nullptr, st->get(), false, block, mine);
      },
      [=](const std::vector<char> &all, int block) {
        return unpack_remote(*rec, all, block, recvbuf, counts, where, types, false);
      },
      request);
  return true;
}
bool collective(CallId id, int *rc, const void *sendbuf, const int sendcounts[], const int sdispls[],
                MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                MPI_Datatype recvtype, MPI_Comm comm) {
  if (id != CallId::MPI_Alltoallv) return false;
  return blocking_twin(rc, comm, [&](MPI_Request *q) {
    int irc = MPI_SUCCESS;
    collective(CallId::MPI_Ialltoallv, &irc, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
               recvtype, comm, q);
    return irc;
  });
}

bool collective(CallId id, int *rc, const void *sendbuf, const int sendcounts[], const int sdispls[],
                const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[],
                const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request) {
  auto r = id == CallId::MPI_Ialltoallw ? find_for_call(comm) : nullptr;
  if (!r) return false;
  const int n = static_cast<int>(r->remote_u.size());
  std::vector<int> scounts(sendcounts, sendcounts + n), swhere(sdispls, sdispls + n);
  std::vector<int> counts(recvcounts, recvcounts + n), where(rdispls, rdispls + n);
  std::vector<TypeRef> stypes = hold_types(sendtypes, n), types = hold_types(recvtypes, n);
  const Record *rec = r.get();
  int bytes = 0;
  for (int j = 0; j < n; ++j) {
    bytes = std::max(bytes, std::max(signature_bytes(sendcounts[j], sendtypes[j]),
                                      signature_bytes(recvcounts[j], recvtypes[j])));
  }
  *rc = exchange_padded(
      r, id, true, 1 + bytes,
      [=](int block, std::vector<char> *mine) {
        std::vector<MPI_Datatype> t;
        for (const TypeRef &h : stypes) t.push_back(h->get());
        return pack_remote(*rec, sendbuf, scounts.data(), swhere.data(), t.data(), MPI_DATATYPE_NULL, true, block,
                           mine);
      },
      [=](const std::vector<char> &all, int block) {
        return unpack_remote(*rec, all, block, recvbuf, counts, where, types, true);
      },
      request);
  return true;
}
bool collective(CallId id, int *rc, const void *sendbuf, const int sendcounts[], const int sdispls[],
                const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[],
                const MPI_Datatype recvtypes[], MPI_Comm comm) {
  if (id != CallId::MPI_Alltoallw) return false;
  return blocking_twin(rc, comm, [&](MPI_Request *q) {
    int irc = MPI_SUCCESS;
    collective(CallId::MPI_Ialltoallw, &irc, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
               recvtypes, comm, q);
    return irc;
  });
}

bool collective(CallId id, int *rc, const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype type,
                MPI_Op op, MPI_Comm comm, MPI_Request *request) {
  auto r = id == CallId::MPI_Ireduce_scatter ? find_for_call(comm) : nullptr;
  if (!r) return false;
  int n = 0, me = 0, count = 0, offset = 0;
  PMPI_Comm_size(comm, &n);
  PMPI_Comm_rank(comm, &me);
  for (int j = 0; j < n; ++j) {
    if (j < me) offset += recvcounts[j];
    count += recvcounts[j];
  }
  *rc = reduce_scatter(r, id, sendbuf, recvbuf, count, offset, recvcounts[me], type, op, request);
  return true;
}
bool collective(CallId id, int *rc, const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype type,
                MPI_Op op, MPI_Comm comm) {
  if (id != CallId::MPI_Reduce_scatter) return false;
  return blocking_twin(rc, comm, [&](MPI_Request *q) {
    int irc = MPI_SUCCESS;
    collective(CallId::MPI_Ireduce_scatter, &irc, sendbuf, recvbuf, recvcounts, type, op, comm, q);
    return irc;
  });
}

}  // namespace cohort::wrap::inter

namespace cohort::wrap {

bool free_intercomm(MPI_Comm comm) {
  std::shared_ptr<const inter::Record> r;
  {
    std::lock_guard<std::mutex> lock(inter::g_mu);
    auto it = inter::g_records.find(comm);
    if (it == inter::g_records.end()) return false;
    r = it->second;
    inter::g_records.erase(it);
  }
  MPI_Comm u = r->union_comm;
  __wrap_MPI_Comm_free(&u);
  return true;
}

bool intercomm_barrier(MPI_Comm comm, int *rc) {
  return inter::collective(CallId::MPI_Barrier, rc, comm);
}

}  // namespace cohort::wrap

using namespace cohort::wrap;  // NOLINT: the rest of this file only defines the extern "C" entry points

extern "C" int __wrap_MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                                           int remote_leader, int tag, MPI_Comm *newintercomm) {
  count_call(CallId::MPI_Intercomm_create);
  Alias *local = find_alias(local_comm);
  if (local == nullptr || newintercomm == nullptr)
    return PMPI_Intercomm_create(local_comm, local_leader, peer_comm, remote_leader, tag, newintercomm);
  *newintercomm = MPI_COMM_NULL;
  inter::Lists lists;
  int rc = inter::exchange_lists(*local, local_leader, peer_comm, remote_leader, tag, &lists);
  if (rc == MPI_ERR_OTHER) return MPI_SUCCESS;  // dead local leader under the skip policy: MPI_COMM_NULL
  if (rc != MPI_SUCCESS) return rc;
  bool local_first = false;
  MPI_Comm u = MPI_COMM_NULL;
  rc = inter::make_union(lists, tag, &u, &local_first);
  if (rc != MPI_SUCCESS) return rc;
  if (u == MPI_COMM_NULL) return MPI_ERR_OTHER;
  auto rec = std::make_shared<inter::Record>();
  rec->union_comm = u;
  rc = inter::make_intercomm(*find_alias(u), lists, local_first, tag, newintercomm, rec.get());
  if (rc != MPI_SUCCESS) return rc;
  copy_errhandler(local_comm, *newintercomm);
  std::lock_guard<std::mutex> lock(inter::g_mu);
  inter::g_records[*newintercomm] = std::move(rec);
  return MPI_SUCCESS;
}

// The union split with one color: the group that passes high = 0 first (each in rank order); when both
// pass the same, the union's order. Of a degraded intercommunicator: over its survivors.
extern "C" int __wrap_MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm) {
  count_call(CallId::MPI_Intercomm_merge);
  auto r = inter::find(intercomm);
  if (!r) return PMPI_Intercomm_merge(intercomm, high, newintracomm);
  int key = (high ? r->union_size : 0) + r->my_u;
  int rc = split_alias(*find_alias(r->union_comm), CallId::MPI_Intercomm_merge, 0, key, newintracomm);
  if (rc == MPI_SUCCESS && *newintracomm != MPI_COMM_NULL) copy_errhandler(intercomm, *newintracomm);
  return rc;
}

extern "C" int __wrap_MPI_Comm_remote_size(MPI_Comm comm, int *size) {
  count_call(CallId::MPI_Comm_remote_size);
  return PMPI_Comm_remote_size(comm, size);  // a real intercommunicator: MPI's answer never changes
}

extern "C" int __wrap_MPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group) {
  count_call(CallId::MPI_Comm_remote_group);
  return PMPI_Comm_remote_group(comm, group);
}

extern "C" int __wrap_MPI_Comm_test_inter(MPI_Comm comm, int *flag) {
  count_call(CallId::MPI_Comm_test_inter);
  return PMPI_Comm_test_inter(comm, flag);
}
