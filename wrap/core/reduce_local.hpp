// MPI_Reduce_local as cohort's own reductions use it (small collectives on messages, intercommunicator
// reductions, window logs, the hierarchy, deferred confirmations), and as the program's MPI_Reduce_local.
#pragma once
#include <mpi.h>

namespace cohort::wrap {

/// inout = in op inout, element by element, as MPI_Reduce_local. The MPI's own call, except under Open MPI 5
/// when MPI_Init has not run (the Sessions model alone): its MPI_Reduce_local then dereferences
/// MPI_COMM_WORLD's collective module and crashes (seen with 5.0.7), and cohort reduces itself where it can
/// (own_reduction_covers). Elsewhere MPI_ERR_OP, with one line naming the rank and `call`.
int reduce_local(const void *in, void *inout, int count, MPI_Datatype type, MPI_Op op, const char *call);

/// reduce_local needs no MPI_Reduce_local for this datatype and operation: MPI's is usable, or the operation
/// is a predefined one on a predefined datatype that cohort reduces itself.
bool reduce_local_covers(MPI_Datatype type, MPI_Op op);

}  // namespace cohort::wrap
