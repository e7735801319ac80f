// repair::agree and repair::shrink on real ranks. Every survivor checks the flag, the failed set (exact
// world ranks), the size, the members and their order of every communicator it gets, and that the
// survivors' results are identical.
//
//   repair_agree_shrink nofail            agree (world, a registered dup and split), shrink, shrink again
//   repair_agree_shrink kill R[,R...]|half [wait]
//                                         those ranks die before the calls (SIGKILL); with `wait` the
//                                         survivors call only once their detector knows
//   repair_agree_shrink coord             rank 0, the tree root, dies inside the first agree (the test sets
//                                         COHORT_INJECT_FAILURE=rank=0,at=agree.decide[,hit=k])
//   repair_agree_shrink second R V        rank R dies before the shrink, rank V inside it (the test sets
//                                         COHORT_INJECT_FAILURE=rank=V,at=shrink.<step>)
//   repair_agree_shrink stopped R MS      rank R is stopped (SIGSTOP) before the shrink and resumed
//                                         later (the test sets COHORT_INJECT_FAILURE=rank=R,...,
//                                         signal=STOP,cont_ms=...): the survivors shrink without it and
//                                         stay MS ms after start; R must exit by self-fencing
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "repair_common.hpp"

using namespace repair_test;
using cohort::repair::agree;
using cohort::repair::shrink;

namespace {

int me, n;

// Every survivor's (flag, failed set) must be the same: compared over the shrunk communicator.
void check_uniform(MPI_Comm comm, int flag, const std::vector<int> &failed, const char *what) {
  int mine[2] = {flag, 0};
  for (int f : failed) mine[1] = mine[1] * 31 + f + 1;
  int size;
  PMPI_Comm_size(comm, &size);
  std::vector<int> all(2 * size);
  PMPI_Allgather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, comm);
  for (int i = 0; i < size; ++i) {
    CHECK(all[2 * i] == mine[0] && all[2 * i + 1] == mine[1], "%s: survivor %d decided differently", what, i);
  }
}

// Ends a run with failures: one last agreement so that nobody leaves while another still needs its
// answers, then exit without MPI_Finalize (which may hang after a death).
[[noreturn]] void finish(MPI_Comm comm, const char *msg) {
  int flag = 1;
  std::vector<int> failed;
  agree(comm, &flag, &failed);
  TEST_PASS("%s", msg);
  usleep(300 * 1000);
  _exit(0);
}

void nofail() {
  for (int round = 0; round < 40; ++round) {
    int flag = me == round % n ? ~(1 << (round % 30)) : ~0;
    std::vector<int> failed{99};
    CHECK(agree(MPI_COMM_WORLD, &flag, &failed) == MPI_SUCCESS, "agree failed");
    CHECK(flag == ~(1 << (round % 30)), "round %d: flag %#x", round, flag);
    CHECK(failed.empty(), "round %d: failed set %s", round, show(failed).c_str());
  }
  MPI_Comm dup, half;
  PMPI_Comm_dup(MPI_COMM_WORLD, &dup);
  cohort::repair::register_comm(dup, MPI_COMM_WORLD);
  PMPI_Comm_split(MPI_COMM_WORLD, me % 2, -me, &half);  // reversed order inside each half
  cohort::repair::register_comm(half, MPI_COMM_WORLD);
  for (int round = 0; round < 10; ++round) {
    int flag = 0x10 | (1 << (me % 4)), want = 0x10;
    std::vector<int> failed;
    agree(dup, &flag, &failed);
    if (n == 1) want |= 1;
    CHECK(flag == want && failed.empty(), "dup: flag %#x", flag);
    flag = me;
    agree(half, &flag, &failed);
    int and_half = ~0;
    for (int r = me % 2; r < n; r += 2) and_half &= r;
    CHECK(flag == and_half && failed.empty(), "half: flag %#x, expected %#x", flag, and_half);
  }
  MPI_Comm s1, s2, s3;
  CHECK(shrink(MPI_COMM_WORLD, &s1) == MPI_SUCCESS, "shrink failed");
  check_comm(s1, survivors(n, {}), "shrink(world)");
  CHECK(shrink(s1, &s2) == MPI_SUCCESS, "shrink failed");
  check_comm(s2, survivors(n, {}), "shrink(shrink(world))");
  CHECK(shrink(half, &s3) == MPI_SUCCESS, "shrink failed");
  std::vector<int> want_half;
  for (int r = n - 1; r >= 0; --r) {
    if (r % 2 == me % 2) want_half.push_back(r);
  }
  check_comm(s3, want_half, "shrink(half)");
  int flag = 3;
  std::vector<int> failed;
  agree(s2, &flag, &failed);
  CHECK(flag == 3 && failed.empty(), "agree on the shrunk comm: %#x", flag);
  cohort::repair::ack_failed(MPI_COMM_WORLD);
  cohort::repair::get_failed(MPI_COMM_WORLD, &failed);
  CHECK(failed.empty(), "get_failed: %s", show(failed).c_str());
  TEST_PASS("agree and shrink without failures on %d ranks", n);
  MPI_Finalize();
}

void killed(const std::vector<int> &dead, bool wait) {
  kill_victims(dead);
  if (wait) wait_detected(dead);
  std::vector<int> live = survivors(n, dead);
  int flag = 0x7 & ~(1 << (me % 3)), want = 0x7;
  for (int r : live) want &= ~(1 << (r % 3));
  std::vector<int> failed;
  agree(MPI_COMM_WORLD, &flag, &failed);
  CHECK(failed == dead, "agree: failed set %s, expected %s", show(failed).c_str(), show(dead).c_str());
  CHECK(flag == want, "agree: flag %#x, expected %#x", flag, want);
  MPI_Comm s;
  CHECK(shrink(MPI_COMM_WORLD, &s) == MPI_SUCCESS, "shrink failed");
  check_comm(s, live, "shrink(world)");
  check_uniform(s, flag, failed, "agree");
  flag = 1;
  agree(s, &flag, &failed);
  CHECK(flag == 1 && failed.empty(), "agree on the shrunk comm: flag %d, failed %s", flag, show(failed).c_str());
  cohort::repair::ack_failed(MPI_COMM_WORLD);
  cohort::repair::get_failed(MPI_COMM_WORLD, &failed);
  CHECK(failed == dead, "get_failed: %s", show(failed).c_str());
  finish(s, ("survivors agreed on " + show(dead) + " and shrank to " + std::to_string(live.size())).c_str());
}

void coordinator() {
  // Rank 0's input clears bit 0: a decision that includes it must say rank 0 was alive, and back.
  int flag = me == 0 ? 0x6 : 0x7;
  std::vector<int> failed;
  agree(MPI_COMM_WORLD, &flag, &failed);
  // NOTE: a rank that decided early now computes (sleeps) outside cohort: the others, still in the
  // agreement, can only get its decision from the detector thread's progress hook.
  usleep(2000 * 1000);
  CHECK(failed.empty() || failed == std::vector<int>{0}, "failed set %s", show(failed).c_str());
  CHECK(flag == (failed.empty() ? 0x6 : 0x7), "flag %#x with failed set %s", flag, show(failed).c_str());
  MPI_Comm s;
  shrink(MPI_COMM_WORLD, &s);
  check_comm(s, survivors(n, {0}), "shrink(world)");
  check_uniform(s, flag, failed, "agree");
  finish(s, (std::string("the root died mid-agree; survivors decided ") + (failed.empty() ? "its round" : "without it"))
                .c_str());
}

void second(int before, int during) {
  kill_victims({before});
  MPI_Comm s;
  CHECK(shrink(MPI_COMM_WORLD, &s) == MPI_SUCCESS, "shrink failed");
  std::vector<int> dead{before, during};
  std::sort(dead.begin(), dead.end());
  check_comm(s, survivors(n, dead), "shrink(world)");
  finish(s, ("shrink survived a death inside it; survivors " + show(survivors(n, dead))).c_str());
}

void stopped(int victim, int stay_ms) {
  double start = MPI_Wtime();
  sleep_ms(600);  // the victim is stopped meanwhile
  MPI_Comm s;
  shrink(MPI_COMM_WORLD, &s);
  CHECK(me != victim, "rank %d was declared dead but returned from shrink instead of exiting", me);
  check_comm(s, survivors(n, {victim}), "shrink(world)");
  int flag = 1;
  std::vector<int> failed;
  agree(s, &flag, &failed);
  // NOTE: the survivors stay until the victim has resumed and learned its fate from them.
  while ((MPI_Wtime() - start) * 1000 < stay_ms) usleep(10 * 1000);
  TEST_PASS("shrank without the stopped rank %d", victim);
  _exit(0);
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  me = world_rank();
  n = world_size();
  CHECK(argc >= 2, "usage: repair_agree_shrink nofail|kill|coord|second ...");
  if (std::strcmp(argv[1], "nofail") == 0) {
    nofail();
    return 0;
  } else if (std::strcmp(argv[1], "kill") == 0 && argc >= 3) {
    killed(parse_ranks(argv[2], n), argc >= 4 && std::strcmp(argv[3], "wait") == 0);
  } else if (std::strcmp(argv[1], "coord") == 0) {
    coordinator();
  } else if (std::strcmp(argv[1], "second") == 0 && argc >= 4) {
    second(std::atoi(argv[2]), std::atoi(argv[3]));
  } else if (std::strcmp(argv[1], "stopped") == 0 && argc >= 4) {
    stopped(std::atoi(argv[2]), std::atoi(argv[3]));
  }
  CHECK(false, "unknown mode %s", argv[1]);
}
