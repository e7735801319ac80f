// Parsing COHORT_INJECT_SDC: silent data corruption injected by cohort itself, for users who rehearse
// detection under replication (docs/design/sdc.md). Pure: no MPI, no environment.
//
// Syntax: entries separated by ';', each `rank=R,replica=K,send=N[,bit=B][,where=message|memory]`:
// replica K (0..r-1) of logical rank R flips bit B (default 0; taken modulo the message's size in bits,
// counting from the least significant bit of its first packed byte) of the N-th logical message it sends
// (N >= 1, counted over point-to-point sends and the messages of collectives alike).
//   where=message (default): the flip is made in cohort's packed copy of the send buffer, after the
//                  program's buffer was read: the program's memory stays intact (a fault on the send path).
//   where=memory:  the flip is made in the program's own buffer before cohort reads it, and stays there:
//                  the corrupted value goes on into the program's later computation (a fault in memory
//                  that reaches messages through computation, e.g. the input of a reduction).
#pragma once
#include <string>
#include <vector>

namespace cohort::replica::sdc {

struct Injection {
  int rank = -1;           ///< logical rank (of MPI_COMM_WORLD as the program sees it)
  int replica = -1;        ///< replica index, 0..r-1
  long long send = 0;      ///< the send-th logical message of that replica, from 1
  long long bit = 0;       ///< bit to flip, modulo the message's size in bits
  bool in_memory = false;  ///< where=memory
};

/// Parses the variable's value into *out. Returns "" or one line saying what is wrong (unknown key,
/// missing rank/replica/send, bad number, an entry given twice), every quoted value printable.
std::string parse_injections(const std::string &text, std::vector<Injection> *out);

/// Checks parsed entries against the job: rank in 0..logical_size-1, replica in 0..replicas-1, and
/// replication on (replicas >= 2). Returns "" or one line.
std::string validate_injections(const std::vector<Injection> &entries, int logical_size, int replicas);

/// The line that stops MPI_Init: "invalid COHORT_INJECT_SDC='<text>': <error>" (text printable).
std::string injection_failure_message(const std::string &text, const std::string &error);

}  // namespace cohort::replica::sdc
