// Fault-free equivalence: every point-to-point call behaves through cohort exactly as in MPI itself.
// Each scenario runs twice in the same process, once through the wrappers and once through __real_MPI_*,
// records what the program can observe (data, MPI_Status source/tag/count, flags, indices) and checks
// both the expected values and that the two transcripts are identical. Runs on MPI_COMM_WORLD and on a
// communicator with reversed rank order. At the end cohort's request table must be empty.
#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

#include "check.h"
#include "cohort/cohort.h"
#include "p2p_api.hpp"
#include "wrap/p2p/request.hpp"

namespace {

using Transcript = std::vector<long>;

int value(int from, int tag, int i) { return from * 100000 + tag * 1000 + i; }

std::vector<int> pattern(int from, int tag, int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = value(from, tag, i);
  return v;
}

void note_status(Transcript &t, const MPI_Status &st) {
  int bytes = -1;
  PMPI_Get_count(&st, MPI_BYTE, &bytes);
  t.push_back(st.MPI_SOURCE);
  t.push_back(st.MPI_TAG);
  t.push_back(bytes);
}

void expect_data(const std::vector<int> &got, int from, int tag, const char *what) {
  for (std::size_t i = 0; i < got.size(); ++i) {
    CHECK(got[i] == value(from, tag, static_cast<int>(i)), "%s: element %zu is %d, expected %d", what, i, got[i],
          value(from, tag, static_cast<int>(i)));
  }
}

struct Ctx {
  const P2pApi &api;
  MPI_Comm comm;
  int rank, size, left, right;
  Transcript t;
};

// Blocking ring with a specific tag, then with MPI_ANY_TAG; small and 1 MiB messages.
void blocking_ring(Ctx &c) {
  for (int n : {4, 262144}) {
    for (int any_tag = 0; any_tag < 2; ++any_tag) {
      int tag = 3 + n % 7 + any_tag;
      std::vector<int> out = pattern(c.rank, tag, n), in(static_cast<std::size_t>(n), -1);
      MPI_Status st;
      int rtag = any_tag ? MPI_ANY_TAG : tag;
      if (c.rank % 2 == 0) {
        CHECK(c.api.send(out.data(), n, MPI_INT, c.right, tag, c.comm) == MPI_SUCCESS, "send");
        CHECK(c.api.recv(in.data(), n, MPI_INT, c.left, rtag, c.comm, &st) == MPI_SUCCESS, "recv");
      } else {
        CHECK(c.api.recv(in.data(), n, MPI_INT, c.left, rtag, c.comm, &st) == MPI_SUCCESS, "recv");
        CHECK(c.api.send(out.data(), n, MPI_INT, c.right, tag, c.comm) == MPI_SUCCESS, "send");
      }
      expect_data(in, c.left, tag, "blocking ring");
      CHECK(st.MPI_SOURCE == c.left && st.MPI_TAG == tag, "status %d/%d", st.MPI_SOURCE, st.MPI_TAG);
      note_status(c.t, st);
    }
  }
}

// Rank 0 receives one message from every other rank with MPI_ANY_SOURCE and MPI_ANY_TAG.
void any_source(Ctx &c) {
  if (c.rank == 0) {
    std::vector<std::tuple<int, int, int>> got;
    for (int k = 1; k < c.size; ++k) {
      std::vector<int> in(8, -1);
      MPI_Status st;
      CHECK(c.api.recv(in.data(), 8, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, c.comm, &st) == MPI_SUCCESS, "recv");
      int bytes = 0;
      PMPI_Get_count(&st, MPI_BYTE, &bytes);
      CHECK(st.MPI_TAG == 10 + st.MPI_SOURCE && bytes == 4 * (st.MPI_SOURCE + 1), "status %d/%d/%d",
            st.MPI_SOURCE, st.MPI_TAG, bytes);
      in.resize(static_cast<std::size_t>(st.MPI_SOURCE + 1));
      expect_data(in, st.MPI_SOURCE, st.MPI_TAG, "any source");
      got.emplace_back(st.MPI_SOURCE, st.MPI_TAG, bytes);
    }
    std::sort(got.begin(), got.end());  // arrival order is MPI's business
    for (int k = 1; k < c.size; ++k) {
      CHECK(std::get<0>(got[static_cast<std::size_t>(k - 1)]) == k, "sender %d missing", k);
    }
    for (auto &g : got) c.t.insert(c.t.end(), {std::get<0>(g), std::get<1>(g), std::get<2>(g)});
  } else {
    std::vector<int> out = pattern(c.rank, 10 + c.rank, c.rank + 1);
    CHECK(c.api.send(out.data(), c.rank + 1, MPI_INT, 0, 10 + c.rank, c.comm) == MPI_SUCCESS, "send");
  }
}

void sendrecv_shift(Ctx &c) {
  for (int n : {1, 262144}) {
    std::vector<int> out = pattern(c.rank, 21, n), in(static_cast<std::size_t>(n), -1);
    MPI_Status st;
    CHECK(c.api.sendrecv(out.data(), n, MPI_INT, c.right, 21, in.data(), n, MPI_INT, c.left, MPI_ANY_TAG, c.comm,
                         &st) == MPI_SUCCESS,
          "sendrecv");
    expect_data(in, c.left, 21, "sendrecv");
    note_status(c.t, st);
  }
}

// The send modes around the ring: Ssend, Bsend (with an attached buffer), Rsend (its receive is posted
// and a barrier passed first), Issend, Irsend, Ibsend + Wait; then Sendrecv_replace.
void send_modes(Ctx &c) {
  const int n = 64;
  std::vector<char> attached(8 * (n * sizeof(int) + MPI_BSEND_OVERHEAD));
  PMPI_Buffer_attach(attached.data(), static_cast<int>(attached.size()));
  for (int mode = 0; mode < 6; ++mode) {
    int tag = 40 + mode;
    std::vector<int> out = pattern(c.rank, tag, n), in(static_cast<std::size_t>(n), -1);
    MPI_Request rr, sr = MPI_REQUEST_NULL;
    MPI_Status st;
    c.api.irecv(in.data(), n, MPI_INT, c.left, tag, c.comm, &rr);
    PMPI_Barrier(c.comm);  // every receive is posted: a ready send is legal
    int rc = MPI_SUCCESS;
    switch (mode) {
      case 0: rc = c.api.ssend(out.data(), n, MPI_INT, c.right, tag, c.comm); break;
      case 1: rc = c.api.bsend(out.data(), n, MPI_INT, c.right, tag, c.comm); break;
      case 2: rc = c.api.rsend(out.data(), n, MPI_INT, c.right, tag, c.comm); break;
      case 3: rc = c.api.issend(out.data(), n, MPI_INT, c.right, tag, c.comm, &sr); break;
      case 4: rc = c.api.irsend(out.data(), n, MPI_INT, c.right, tag, c.comm, &sr); break;
      case 5: rc = c.api.ibsend(out.data(), n, MPI_INT, c.right, tag, c.comm, &sr); break;
    }
    CHECK(rc == MPI_SUCCESS, "send mode %d: %d", mode, rc);
    CHECK(c.api.wait(&sr, MPI_STATUS_IGNORE) == MPI_SUCCESS && c.api.wait(&rr, &st) == MPI_SUCCESS, "waits");
    expect_data(in, c.left, tag, "send modes");
    note_status(c.t, st);
  }
  void *detached;
  int bytes;
  PMPI_Buffer_detach(&detached, &bytes);
  std::vector<int> buf = pattern(c.rank, 47, n);
  MPI_Status st;
  CHECK(c.api.sendrecv_replace(buf.data(), n, MPI_INT, c.right, 47, c.left, 47, c.comm, &st) == MPI_SUCCESS,
        "sendrecv_replace");
  expect_data(buf, c.left, 47, "sendrecv_replace");
  note_status(c.t, st);
}

// Eight requests (two tags to and from each neighbour) and two MPI_REQUEST_NULL, one Waitall.
void waitall_mix(Ctx &c) {
  for (int ignore = 0; ignore < 2; ++ignore) {
    std::vector<std::vector<int>> in(4, std::vector<int>(16, -1)), out;
    for (int k = 0; k < 4; ++k) out.push_back(pattern(c.rank, 30 + k, 16));
    MPI_Request r[10];
    r[0] = MPI_REQUEST_NULL;
    c.api.irecv(in[0].data(), 16, MPI_INT, c.left, 30, c.comm, &r[1]);
    c.api.irecv(in[1].data(), 16, MPI_INT, c.left, 31, c.comm, &r[2]);
    c.api.irecv(in[2].data(), 16, MPI_INT, c.right, 32, c.comm, &r[3]);
    c.api.irecv(in[3].data(), 16, MPI_INT, c.right, MPI_ANY_TAG, c.comm, &r[4]);
    r[5] = MPI_REQUEST_NULL;
    c.api.isend(out[0].data(), 16, MPI_INT, c.right, 30, c.comm, &r[6]);
    c.api.isend(out[1].data(), 16, MPI_INT, c.right, 31, c.comm, &r[7]);
    c.api.isend(out[2].data(), 16, MPI_INT, c.left, 32, c.comm, &r[8]);
    c.api.isend(out[3].data(), 16, MPI_INT, c.left, 33, c.comm, &r[9]);
    MPI_Status st[10];
    CHECK(c.api.waitall(10, r, ignore ? MPI_STATUSES_IGNORE : st) == MPI_SUCCESS, "waitall");
    for (auto &q : r) CHECK(q == MPI_REQUEST_NULL, "request left active");
    expect_data(in[0], c.left, 30, "waitall 0");
    expect_data(in[1], c.left, 31, "waitall 1");
    expect_data(in[2], c.right, 32, "waitall 2");
    expect_data(in[3], c.right, 33, "waitall 3");
    if (!ignore) {
      for (int i = 0; i < 5; ++i) note_status(c.t, st[i]);  // receives and the first null
    }
  }
}

// Receives from and sends to every other rank, completed one by one with Waitany.
void waitany_all(Ctx &c) {
  int n = c.size - 1;
  std::vector<MPI_Request> r;
  std::vector<std::vector<int>> in(static_cast<std::size_t>(c.size), std::vector<int>(4, -1));
  std::vector<int> out = pattern(c.rank, 40, 4);
  for (int p = 0; p < c.size; ++p) {
    if (p == c.rank) continue;
    r.emplace_back();
    c.api.irecv(in[static_cast<std::size_t>(p)].data(), 4, MPI_INT, p, 40, c.comm, &r.back());
  }
  for (int p = 0; p < c.size; ++p) {
    if (p == c.rank) continue;
    r.emplace_back();
    c.api.isend(out.data(), 4, MPI_INT, p, 40, c.comm, &r.back());
  }
  std::vector<std::pair<int, int>> seen;
  for (;;) {
    int idx = -7;
    MPI_Status st;
    CHECK(c.api.waitany(static_cast<int>(r.size()), r.data(), &idx, &st) == MPI_SUCCESS, "waitany");
    if (idx == MPI_UNDEFINED) break;
    CHECK(idx >= 0 && idx < 2 * n && r[static_cast<std::size_t>(idx)] == MPI_REQUEST_NULL, "index %d", idx);
    seen.emplace_back(idx, idx < n ? st.MPI_SOURCE : -1);
  }
  std::sort(seen.begin(), seen.end());
  CHECK(static_cast<int>(seen.size()) == 2 * n, "%zu completions", seen.size());
  for (auto &s : seen) c.t.insert(c.t.end(), {s.first, s.second});
  for (int p = 0; p < c.size; ++p) {
    if (p != c.rank) expect_data(in[static_cast<std::size_t>(p)], p, 40, "waitany");
  }
}

// A receive tests incomplete before its sender sends (the sender waits for a barrier), then completes.
// A receive from and a send to every other rank, completed three ways: MPI_Testany polled, MPI_Waitsome,
// MPI_Testsome polled. The transcript keeps the sorted (index, source) pairs, which do not depend on timing.
void some_and_any(Ctx &c) {
  for (int way = 0; way < 3; ++way) {
    int tag = 70 + way;
    std::vector<MPI_Request> r;
    std::vector<std::vector<int>> in(static_cast<std::size_t>(c.size), std::vector<int>(4, -1));
    std::vector<int> out = pattern(c.rank, tag, 4);
    for (int p = 0; p < c.size; ++p)
      if (p != c.rank) r.emplace_back(), c.api.irecv(in[static_cast<std::size_t>(p)].data(), 4, MPI_INT, p, tag, c.comm, &r.back());
    int n = static_cast<int>(r.size());
    for (int p = 0; p < c.size; ++p)
      if (p != c.rank) r.emplace_back(), c.api.isend(out.data(), 4, MPI_INT, p, tag, c.comm, &r.back());
    const int m = static_cast<int>(r.size());
    std::vector<std::pair<int, int>> seen;
    std::vector<int> idx(static_cast<std::size_t>(m));
    std::vector<MPI_Status> st(static_cast<std::size_t>(m));
    while (static_cast<int>(seen.size()) < m) {
      if (way == 0) {
        int i = -7, flag = 0;
        CHECK(c.api.testany(m, r.data(), &i, &flag, &st[0]) == MPI_SUCCESS, "testany");
        if (flag) {
          CHECK(i >= 0 && i < m, "testany index %d", i);
          seen.emplace_back(i, i < n ? st[0].MPI_SOURCE : -1);
        }
        continue;
      }
      int k = -7;
      int rc = way == 1 ? c.api.waitsome(m, r.data(), &k, idx.data(), st.data())
                        : c.api.testsome(m, r.data(), &k, idx.data(), st.data());
      CHECK(rc == MPI_SUCCESS && k >= 0 && (way == 2 || k > 0), "%s: rc %d outcount %d", way == 1 ? "waitsome" : "testsome", rc, k);
      for (int j = 0; j < k; ++j) seen.emplace_back(idx[static_cast<std::size_t>(j)], idx[static_cast<std::size_t>(j)] < n ? st[static_cast<std::size_t>(j)].MPI_SOURCE : -1);
    }
    int k = -7;
    CHECK(c.api.testsome(m, r.data(), &k, idx.data(), st.data()) == MPI_SUCCESS && k == MPI_UNDEFINED, "all null: %d", k);
    std::sort(seen.begin(), seen.end());
    for (auto &s2 : seen) c.t.insert(c.t.end(), {s2.first, s2.second});
    for (int p = 0; p < c.size; ++p)
      if (p != c.rank) expect_data(in[static_cast<std::size_t>(p)], p, tag, "some_and_any");
  }
}

void test_loop(Ctx &c) {
  std::vector<int> in(4, -1), out = pattern(c.rank, 50, 4);
  MPI_Request rr, sr;
  int flag = -1;
  MPI_Status st;
  c.api.irecv(in.data(), 4, MPI_INT, c.left, 50, c.comm, &rr);
  CHECK(c.api.test(&rr, &flag, &st) == MPI_SUCCESS && flag == 0, "test before send: flag %d", flag);
  c.t.push_back(flag);
  PMPI_Barrier(c.comm);
  c.api.isend(out.data(), 4, MPI_INT, c.right, 50, c.comm, &sr);
  do {
    c.api.test(&rr, &flag, &st);
  } while (!flag);
  CHECK(rr == MPI_REQUEST_NULL, "completed request not null");
  note_status(c.t, st);
  do {
    c.api.test(&sr, &flag, MPI_STATUS_IGNORE);
  } while (!flag);
  // Test on MPI_REQUEST_NULL: flag 1, empty status
  CHECK(c.api.test(&rr, &flag, &st) == MPI_SUCCESS && flag == 1, "test null");
  note_status(c.t, st);
  expect_data(in, c.left, 50, "test");
}

void testall_loop(Ctx &c) {
  std::vector<int> a(4, -1), b(4, -1), out = pattern(c.rank, 60, 4);
  MPI_Request r[4];
  c.api.irecv(a.data(), 4, MPI_INT, c.left, 60, c.comm, &r[0]);
  c.api.irecv(b.data(), 4, MPI_INT, c.right, 60, c.comm, &r[1]);
  int flag = -1;
  MPI_Status st[4];
  CHECK(c.api.testall(2, r, &flag, st) == MPI_SUCCESS && flag == 0, "testall before send: flag %d", flag);
  CHECK(r[0] != MPI_REQUEST_NULL && r[1] != MPI_REQUEST_NULL, "testall changed handles");
  c.t.push_back(flag);
  PMPI_Barrier(c.comm);
  c.api.isend(out.data(), 4, MPI_INT, c.right, 60, c.comm, &r[2]);
  c.api.isend(out.data(), 4, MPI_INT, c.left, 60, c.comm, &r[3]);
  do {
    c.api.testall(4, r, &flag, st);
  } while (!flag);
  for (int i = 0; i < 2; ++i) note_status(c.t, st[i]);
  expect_data(a, c.left, 60, "testall a");
  expect_data(b, c.right, 60, "testall b");
}

// MPI_Request_free on an active send: MPI still delivers the message.
void free_active(Ctx &c) {
  std::vector<int> in(1024, -1), out = pattern(c.rank, 70, 1024);
  MPI_Request r;
  c.api.isend(out.data(), 1024, MPI_INT, c.right, 70, c.comm, &r);
  CHECK(c.api.request_free(&r) == MPI_SUCCESS && r == MPI_REQUEST_NULL, "request_free");
  MPI_Status st;
  c.api.recv(in.data(), 1024, MPI_INT, c.left, 70, c.comm, &st);
  expect_data(in, c.left, 70, "request_free");
  note_status(c.t, st);
  PMPI_Barrier(c.comm);  // every receive done: the freed sends completed, their buffers can go
}

// Probe the size of a message, then receive it; Iprobe finds nothing before the barrier.
void probes(Ctx &c) {
  int n = 5 + c.left;  // the left neighbour sends 5 + its rank ints
  int flag = -1;
  MPI_Status st;
  CHECK(c.api.iprobe(c.left, 80, c.comm, &flag, &st) == MPI_SUCCESS && flag == 0, "iprobe early: %d", flag);
  c.t.push_back(flag);
  PMPI_Barrier(c.comm);
  std::vector<int> out = pattern(c.rank, 80, 5 + c.rank), out2 = pattern(c.rank, 81, 3);
  MPI_Request r[2];
  c.api.isend(out.data(), 5 + c.rank, MPI_INT, c.right, 80, c.comm, &r[0]);
  c.api.isend(out2.data(), 3, MPI_INT, c.right, 81, c.comm, &r[1]);
  CHECK(c.api.probe(c.left, 80, c.comm, &st) == MPI_SUCCESS, "probe");
  int count = -1;
  PMPI_Get_count(&st, MPI_INT, &count);
  CHECK(count == n && st.MPI_SOURCE == c.left && st.MPI_TAG == 80, "probe status %d/%d/%d", count, st.MPI_SOURCE,
        st.MPI_TAG);
  note_status(c.t, st);
  std::vector<int> in(static_cast<std::size_t>(count), -1);
  c.api.recv(in.data(), count, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, c.comm, MPI_STATUS_IGNORE);
  expect_data(in, c.left, 80, "probe");
  do {
    c.api.iprobe(MPI_ANY_SOURCE, 81, c.comm, &flag, &st);
  } while (!flag);
  note_status(c.t, st);
  std::vector<int> in2(3, -1);
  c.api.recv(in2.data(), 3, MPI_INT, st.MPI_SOURCE, 81, c.comm, MPI_STATUS_IGNORE);
  expect_data(in2, c.left, 81, "iprobe");
  c.api.waitall(2, r, MPI_STATUSES_IGNORE);
}

// MPI_PROC_NULL everywhere: immediate completion, status source MPI_PROC_NULL, tag MPI_ANY_TAG, count 0.
void proc_null(Ctx &c) {
  int x = 1, flag = -1;
  MPI_Status st;
  MPI_Request r[2];
  CHECK(c.api.send(&x, 1, MPI_INT, MPI_PROC_NULL, 1, c.comm) == MPI_SUCCESS, "send null");
  CHECK(c.api.recv(&x, 1, MPI_INT, MPI_PROC_NULL, 1, c.comm, &st) == MPI_SUCCESS, "recv null");
  note_status(c.t, st);
  c.api.isend(&x, 1, MPI_INT, MPI_PROC_NULL, 1, c.comm, &r[0]);
  c.api.irecv(&x, 1, MPI_INT, MPI_PROC_NULL, 1, c.comm, &r[1]);
  c.api.wait(&r[0], &st);
  c.api.wait(&r[1], &st);
  note_status(c.t, st);
  c.api.probe(MPI_PROC_NULL, 1, c.comm, &st);
  note_status(c.t, st);
  c.api.iprobe(MPI_PROC_NULL, 1, c.comm, &flag, &st);
  c.t.push_back(flag);
  note_status(c.t, st);
  CHECK(x == 1, "buffer touched");
}

// Send to self; Wait on a null request.
void self_and_null(Ctx &c) {
  std::vector<int> out = pattern(c.rank, 90, 64), in(64, -1);
  MPI_Request r;
  MPI_Status st;
  c.api.isend(out.data(), 64, MPI_INT, c.rank, 90, c.comm, &r);
  c.api.recv(in.data(), 64, MPI_INT, c.rank, 90, c.comm, &st);
  c.api.wait(&r, MPI_STATUS_IGNORE);
  expect_data(in, c.rank, 90, "self");
  note_status(c.t, st);
  CHECK(c.api.wait(&r, &st) == MPI_SUCCESS, "wait null");
  note_status(c.t, st);
}

// Persistent requests around the ring: Recv_init/Send_init made once, three rounds of Startall+Waitall
// and two of Start+Wait/Test with fresh data; the other send modes' inits (Ssend, Bsend, Rsend: its
// receive started and a barrier passed first); Wait, Test and Request_get_status on inactive requests
// complete at once with an empty status; then Request_free. Last, a derived datatype freed right after the
// inits (MPI keeps it for the requests; so does cohort, with its duplicate).
void persistent(Ctx &c) {
  const int n = 1000;  // 4000 B
  std::vector<int> out(n), in(n, -1);
  MPI_Request r[2];
  MPI_Status st[2];
  CHECK(c.api.recv_init(in.data(), n, MPI_INT, c.left, 100, c.comm, &r[0]) == MPI_SUCCESS &&
            c.api.send_init(out.data(), n, MPI_INT, c.right, 100, c.comm, &r[1]) == MPI_SUCCESS,
        "inits");
  for (int round = 0; round < 5; ++round) {
    std::vector<int> p = pattern(c.rank + round, 100, n);
    std::copy(p.begin(), p.end(), out.begin());
    std::fill(in.begin(), in.end(), -1);
    if (round < 3) {
      CHECK(c.api.startall(2, r) == MPI_SUCCESS, "startall");
      CHECK(c.api.waitall(2, r, st) == MPI_SUCCESS, "waitall");
    } else {
      CHECK(c.api.start(&r[0]) == MPI_SUCCESS && c.api.start(&r[1]) == MPI_SUCCESS, "start");
      int flag = 0;
      if (round == 3) {
        CHECK(c.api.wait(&r[1], &st[1]) == MPI_SUCCESS, "wait send");
        while (!flag) c.api.test(&r[0], &flag, &st[0]);
      } else {
        while (!flag) c.api.request_get_status(r[0], &flag, &st[0]);  // frees nothing: a Wait follows
        CHECK(c.api.wait(&r[0], &st[0]) == MPI_SUCCESS && c.api.wait(&r[1], &st[1]) == MPI_SUCCESS, "waits");
      }
    }
    CHECK(r[0] != MPI_REQUEST_NULL && r[1] != MPI_REQUEST_NULL, "a persistent request became null");
    expect_data(in, c.left + round, 100, "persistent");
    note_status(c.t, st[0]);
  }
  // inactive: complete at once, empty status (source MPI_ANY_SOURCE, tag MPI_ANY_TAG, count 0)
  int flag = -1;
  CHECK(c.api.wait(&r[0], &st[0]) == MPI_SUCCESS, "wait inactive");
  note_status(c.t, st[0]);
  CHECK(c.api.test(&r[0], &flag, &st[0]) == MPI_SUCCESS && flag == 1, "test inactive: flag %d", flag);
  note_status(c.t, st[0]);
  flag = -1;
  CHECK(c.api.request_get_status(r[1], &flag, &st[1]) == MPI_SUCCESS && flag == 1, "get_status inactive: %d", flag);
  int index = -7;
  CHECK(c.api.waitany(2, r, &index, &st[0]) == MPI_SUCCESS && index == MPI_UNDEFINED, "waitany inactive: %d", index);
  for (auto &q : r) CHECK(c.api.request_free(&q) == MPI_SUCCESS && q == MPI_REQUEST_NULL, "request_free");
  // the other send modes
  std::vector<char> attached(4 * (n * sizeof(int) + MPI_BSEND_OVERHEAD));
  PMPI_Buffer_attach(attached.data(), static_cast<int>(attached.size()));
  for (int mode = 0; mode < 3; ++mode) {
    int tag = 101 + mode;
    std::vector<int> p = pattern(c.rank, tag, n);
    std::copy(p.begin(), p.end(), out.begin());
    std::fill(in.begin(), in.end(), -1);
    c.api.recv_init(in.data(), n, MPI_INT, c.left, tag, c.comm, &r[0]);
    auto init = mode == 0 ? c.api.ssend_init : mode == 1 ? c.api.bsend_init : c.api.rsend_init;
    CHECK(init(out.data(), n, MPI_INT, c.right, tag, c.comm, &r[1]) == MPI_SUCCESS, "init mode %d", mode);
    c.api.start(&r[0]);
    PMPI_Barrier(c.comm);  // every receive is started: a ready send is legal
    c.api.start(&r[1]);
    CHECK(c.api.waitall(2, r, st) == MPI_SUCCESS, "waitall mode %d", mode);
    expect_data(in, c.left, tag, "persistent send modes");
    note_status(c.t, st[0]);
    for (auto &q : r) c.api.request_free(&q);
  }
  void *detached;
  int bytes;
  PMPI_Buffer_detach(&detached, &bytes);
  // A derived datatype freed right after the inits (MPI keeps it for the requests): two rounds.
  MPI_Datatype pair;
  PMPI_Type_contiguous(2, MPI_INT, &pair);
  PMPI_Type_commit(&pair);
  CHECK(c.api.recv_init(in.data(), n / 2, pair, c.left, 104, c.comm, &r[0]) == MPI_SUCCESS &&
            c.api.send_init(out.data(), n / 2, pair, c.right, 104, c.comm, &r[1]) == MPI_SUCCESS,
        "inits of a derived datatype");
  PMPI_Type_free(&pair);
  for (int round = 0; round < 2; ++round) {
    std::vector<int> p = pattern(c.rank + round, 104, n);
    std::copy(p.begin(), p.end(), out.begin());
    std::fill(in.begin(), in.end(), -1);
    CHECK(c.api.startall(2, r) == MPI_SUCCESS && c.api.waitall(2, r, st) == MPI_SUCCESS, "derived round %d", round);
    expect_data(in, c.left + round, 104, "persistent derived datatype");
    note_status(c.t, st[0]);
  }
  for (auto &q : r) CHECK(c.api.request_free(&q) == MPI_SUCCESS, "request_free derived");
}

// Matched probes: Mprobe + Mrecv of a message whose size the probe tells; Improbe (none before the
// barrier, then polled) + Imrecv + Wait; Mprobe from MPI_ANY_SOURCE; MPI_PROC_NULL gives
// MPI_MESSAGE_NO_PROC, which Mrecv completes at once.
void matched_probes(Ctx &c) {
  int flag = -1;
  MPI_Message m = MPI_MESSAGE_NULL;
  MPI_Status st;
  CHECK(c.api.improbe(c.left, 110, c.comm, &flag, &m, &st) == MPI_SUCCESS && flag == 0, "improbe early: %d", flag);
  c.t.push_back(flag);
  PMPI_Barrier(c.comm);
  std::vector<int> a = pattern(c.rank, 110, 7 + c.rank), b = pattern(c.rank, 111, 3), d = pattern(c.rank, 112, 9);
  MPI_Request r[3];
  c.api.isend(a.data(), 7 + c.rank, MPI_INT, c.right, 110, c.comm, &r[0]);
  c.api.isend(b.data(), 3, MPI_INT, c.right, 111, c.comm, &r[1]);
  c.api.isend(d.data(), 9, MPI_INT, c.right, 112, c.comm, &r[2]);
  CHECK(c.api.mprobe(c.left, 110, c.comm, &m, &st) == MPI_SUCCESS && m != MPI_MESSAGE_NULL, "mprobe");
  int count = -1;
  PMPI_Get_count(&st, MPI_INT, &count);
  CHECK(count == 7 + c.left && st.MPI_SOURCE == c.left, "mprobe status %d/%d", count, st.MPI_SOURCE);
  note_status(c.t, st);
  std::vector<int> in(static_cast<std::size_t>(count), -1);
  CHECK(c.api.mrecv(in.data(), count, MPI_INT, &m, &st) == MPI_SUCCESS && m == MPI_MESSAGE_NULL, "mrecv");
  expect_data(in, c.left, 110, "mrecv");
  note_status(c.t, st);
  do {
    c.api.improbe(c.left, 111, c.comm, &flag, &m, &st);
  } while (!flag);
  note_status(c.t, st);
  std::vector<int> in2(3, -1);
  MPI_Request rr;
  CHECK(c.api.imrecv(in2.data(), 3, MPI_INT, &m, &rr) == MPI_SUCCESS && c.api.wait(&rr, &st) == MPI_SUCCESS, "imrecv");
  expect_data(in2, c.left, 111, "imrecv");
  note_status(c.t, st);
  CHECK(c.api.mprobe(MPI_ANY_SOURCE, 112, c.comm, &m, &st) == MPI_SUCCESS && st.MPI_SOURCE == c.left, "mprobe any");
  std::vector<int> in3(9, -1);
  c.api.mrecv(in3.data(), 9, MPI_INT, &m, &st);
  expect_data(in3, c.left, 112, "mprobe any");
  note_status(c.t, st);
  CHECK(c.api.mprobe(MPI_PROC_NULL, 113, c.comm, &m, &st) == MPI_SUCCESS && m == MPI_MESSAGE_NO_PROC, "mprobe null");
  note_status(c.t, st);
  int x = 5;
  CHECK(c.api.mrecv(&x, 1, MPI_INT, &m, &st) == MPI_SUCCESS && x == 5 && m == MPI_MESSAGE_NULL, "mrecv no_proc");
  note_status(c.t, st);
  c.api.waitall(3, r, MPI_STATUSES_IGNORE);
}

// MPI_Cancel of a receive nobody sends to: Wait reports it cancelled. MPI_Request_get_status of a
// receive before and after its sender sends: flag 0, then 1 with the status, and the request stays
// valid until the Wait.
void cancel_and_get_status(Ctx &c) {
  int x = -1, flag = -1, cancelled = -1;
  MPI_Request r;
  MPI_Status st;
  c.api.irecv(&x, 1, MPI_INT, c.left, 120, c.comm, &r);
  CHECK(c.api.cancel(&r) == MPI_SUCCESS, "cancel");
  CHECK(c.api.wait(&r, &st) == MPI_SUCCESS && r == MPI_REQUEST_NULL, "wait cancelled");
  PMPI_Test_cancelled(&st, &cancelled);
  CHECK(cancelled == 1 && x == -1, "receive not cancelled: %d", cancelled);
  c.t.push_back(cancelled);
  std::vector<int> in(16, -1), out = pattern(c.rank, 121, 16);
  c.api.irecv(in.data(), 16, MPI_INT, c.left, 121, c.comm, &r);
  CHECK(c.api.request_get_status(r, &flag, &st) == MPI_SUCCESS && flag == 0, "get_status early: %d", flag);
  c.t.push_back(flag);
  PMPI_Barrier(c.comm);
  MPI_Request s;
  c.api.isend(out.data(), 16, MPI_INT, c.right, 121, c.comm, &s);
  do {
    c.api.request_get_status(r, &flag, &st);
  } while (!flag);
  CHECK(r != MPI_REQUEST_NULL, "get_status freed the request");
  note_status(c.t, st);
  CHECK(c.api.wait(&r, &st) == MPI_SUCCESS && r == MPI_REQUEST_NULL, "wait after get_status");
  note_status(c.t, st);
  PMPI_Test_cancelled(&st, &cancelled);
  c.t.push_back(cancelled);
  c.api.wait(&s, MPI_STATUS_IGNORE);
  expect_data(in, c.left, 121, "get_status");
}

// The ring on comm: this rank, its left and right neighbours, an empty transcript.
Ctx ring_ctx(const P2pApi &api, MPI_Comm comm) {
  Ctx c{api, comm, 0, 0, 0, 0, {}};
  PMPI_Comm_rank(comm, &c.rank);
  PMPI_Comm_size(comm, &c.size);
  c.left = (c.rank + c.size - 1) % c.size;
  c.right = (c.rank + 1) % c.size;
  return c;
}

Transcript run(const P2pApi &api, MPI_Comm comm) {
  Ctx c = ring_ctx(api, comm);
  for (auto scenario : {blocking_ring, any_source, sendrecv_shift, send_modes, waitall_mix, waitany_all, some_and_any, test_loop, testall_loop,
                        free_active, probes, proc_null, self_and_null, persistent, matched_probes,
                        cancel_and_get_status}) {
    scenario(c);
    c.t.push_back(-999);  // scenario separator
    PMPI_Barrier(comm);
  }
  return c.t;
}

int g_handler_calls = 0;
int g_handler_code = MPI_SUCCESS;
void count_error(MPI_Comm *, int *code, ...) {
  ++g_handler_calls;
  g_handler_code = *code;
}

// Through cohort only (erroneous in MPI, so nothing to compare with): MPI_Start of an active persistent
// request returns MPI_ERR_REQUEST after calling the communicator's error handler once, and leaves the
// request as it was: its operation still completes with the right data, and it can be started again.
void start_active(MPI_Comm comm) {
  Ctx c = ring_ctx(kWrapped, comm);
  MPI_Errhandler counting, before;
  MPI_Comm_get_errhandler(comm, &before);
  MPI_Comm_create_errhandler(count_error, &counting);
  MPI_Comm_set_errhandler(comm, counting);
  const int n = 64;
  std::vector<int> out = pattern(c.rank, 130, n), in(n, -1);
  MPI_Request r[2];
  CHECK(c.api.recv_init(in.data(), n, MPI_INT, c.left, 130, comm, &r[0]) == MPI_SUCCESS &&
            c.api.send_init(out.data(), n, MPI_INT, c.right, 130, comm, &r[1]) == MPI_SUCCESS,
        "start_active: inits");
  CHECK(c.api.start(&r[0]) == MPI_SUCCESS, "start_active: first start");
  int rc = c.api.start(&r[0]);
  int eclass = MPI_SUCCESS;
  MPI_Error_class(rc, &eclass);
  CHECK(eclass == MPI_ERR_REQUEST, "start of an active request returned class %d, expected MPI_ERR_REQUEST", eclass);
  CHECK(g_handler_calls == 1 && g_handler_code == rc, "the communicator's handler ran %d times (code %d, returned %d)",
        g_handler_calls, g_handler_code, rc);
  CHECK(r[0] != MPI_REQUEST_NULL, "the active request became null");
  for (int round = 0; round < 2; ++round) {
    if (round == 1) {
      std::fill(in.begin(), in.end(), -1);
      CHECK(c.api.start(&r[0]) == MPI_SUCCESS, "start_active: start after completion");
    }
    CHECK(c.api.start(&r[1]) == MPI_SUCCESS, "start_active: start send");
    MPI_Status st[2];
    CHECK(c.api.waitall(2, r, st) == MPI_SUCCESS, "start_active: waitall, round %d", round);
    expect_data(in, c.left, 130, "start_active");
  }
  for (auto &q : r) CHECK(c.api.request_free(&q) == MPI_SUCCESS, "start_active: request_free");
  MPI_Comm_set_errhandler(comm, before);
  MPI_Errhandler_free(&counting);
  CHECK(g_handler_calls == 1, "the communicator's handler ran %d times in all, expected 1", g_handler_calls);
  PMPI_Barrier(comm);
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm reversed;
  PMPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &reversed);
  for (MPI_Comm comm : {MPI_COMM_WORLD, reversed}) {
    Transcript wrapped = run(kWrapped, comm);
    Transcript real = run(kReal, comm);
    CHECK(wrapped.size() == real.size(), "transcripts differ in length: %zu vs %zu", wrapped.size(), real.size());
    for (std::size_t i = 0; i < wrapped.size(); ++i) {
      CHECK(wrapped[i] == real[i], "transcripts differ at %zu: wrapped %ld, real %ld", i, wrapped[i], real[i]);
    }
  }
  start_active(MPI_COMM_WORLD);
  for (const char *call : {"MPI_Send", "MPI_Recv", "MPI_Sendrecv", "MPI_Isend", "MPI_Irecv", "MPI_Wait",
                           "MPI_Waitall", "MPI_Waitany", "MPI_Test", "MPI_Testall", "MPI_Request_free", "MPI_Probe",
                           "MPI_Iprobe", "MPI_Ssend", "MPI_Rsend", "MPI_Bsend", "MPI_Issend", "MPI_Irsend",
                           "MPI_Ibsend", "MPI_Sendrecv_replace", "MPI_Testany", "MPI_Testsome", "MPI_Waitsome",
                           "MPI_Request_get_status", "MPI_Cancel", "MPI_Mprobe", "MPI_Improbe", "MPI_Mrecv",
                           "MPI_Imrecv", "MPI_Send_init", "MPI_Bsend_init", "MPI_Ssend_init", "MPI_Rsend_init",
                           "MPI_Recv_init", "MPI_Start", "MPI_Startall"}) {
    CHECK(cohort_call_count(call) > 0, "%s never went through cohort", call);
  }
  CHECK(cohort::wrap::p2p::tracked_requests() == 0, "%zu request records leaked",
        cohort::wrap::p2p::tracked_requests());
  CHECK(cohort::wrap::p2p::abandoned_requests() == 0, "%zu requests abandoned",
        cohort::wrap::p2p::abandoned_requests());
  PMPI_Comm_free(&reversed);
  TEST_PASS("wrapped and real point-to-point transcripts identical");
  MPI_Finalize();
  return 0;
}
