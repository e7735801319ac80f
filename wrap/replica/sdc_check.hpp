// Silent data corruption (SDC) checking under replication (docs/design/sdc.md): the MPI side of the
// sans-IO comparison (replica/sdc_compare.hpp). The replication engine (replica.cpp) calls these hooks:
// each send's packed payload gets its digest (and, when COHORT_INJECT_SDC says so, a flipped bit) before
// the protocol copies it; each data copy that arrives is fed to the Comparator beside the endpoint, after
// the endpoint kept or dropped it (the program's receive is never delayed by a comparison); a verdict of
// mismatch is reported once (by the receiver's leader) and acted on: r = 3 with a majority fences the
// minority sender replicas and a tainted receiver replica (exit 86), no majority follows COHORT_ON_SDC.
//
// Settings, read at MPI_Init by configure(): COHORT_SDC=off|hash|full (default hash when replicas >= 2),
// COHORT_ON_SDC=abort|warn (default abort: the job stops with kExitSdc), COHORT_INJECT_SDC (the
// injection, replica/sdc_inject.hpp). An invalid value: one line, exit code 2.
//
// Thread-safety: the program's thread only (the replication engine's progress).
#pragma once
#include <mpi.h>

#include <cstdint>

#include "replica/protocol.hpp"

namespace cohort::wrap::replica::sdc_check {

/// The exit code of a job stopped by COHORT_ON_SDC=abort (no majority among the sender's replicas).
inline constexpr int kExitSdc = 87;

/// Reads the three settings (every process, at MPI_Init, before the engine starts); an invalid value,
/// or an injection without replication or outside the job: one line and exit code 2.
void configure(int replicas, int logical_size);
/// Checking is on: replicas >= 2 and COHORT_SDC is not off.
bool on();
/// The engine's placement and endpoint (they outlive every call below), and the fd of the standard
/// error this process had at MPI_Init (a twin's fd 2 is /dev/null; injection lines go there).
void attach(const cohort::replica::Placement *placement, int stderr_fd);

/// The call the program entered (a CallId of wrap/calls.h): named in the header of the copies it makes.
void set_call(int call_id);

/// The program's buffer (count x type at buf) was packed into *packed for a message: where=memory
/// injection flips the bit there and in the program's buffer.
void packed(const void *buf, int count, MPI_Datatype type, cohort::replica::Bytes *packed);
/// The next logical message this replica sends: its payload (possibly the copy with the injected flip,
/// kept in *scratch), its digest and call for the copies' header.
const cohort::replica::Bytes &outgoing(const cohort::replica::Bytes &payload, cohort::replica::Bytes *scratch,
                                       std::uint64_t *digest, int *call);
/// That message went out as (c, seq): names it in the injection's line when one was made.
void sent(const cohort::replica::Channel &c, std::uint64_t seq);

/// A data copy arrived; `kept`: the endpoint keeps it for the program. Acts on the verdicts.
void arrived(const cohort::replica::Wire &w, bool kept, const cohort::replica::Endpoint &ep);
/// World rank w died (after Endpoint::replica_died): its pending comparisons stop waiting for it.
void replica_died(int w, const cohort::replica::Endpoint &ep);
/// In every progress round: a twin that learned of a mismatch under COHORT_ON_SDC=abort and became its
/// rank's leader reports it and stops the job.
void poll(const cohort::replica::Endpoint &ep);
/// The bound of pending comparisons is reached: deliver no message whose comparison is pending for now.
bool full();
/// The comparison of message (c, seq) is pending (some copy awaited).
bool pending(const cohort::replica::Channel &c, std::uint64_t seq);
/// No comparison pending (what MPI_Finalize waits for).
bool idle();

}  // namespace cohort::wrap::replica::sdc_check
