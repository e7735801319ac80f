"""montecarlo_pi.py: estimates pi with mpi4py, an ordinary MPI program in Python.

    mpiexec -n 4 python3 montecarlo_pi.py [rounds] [samples per rank per round]   (defaults 40, 20000)

Every round each rank throws random points at the unit square and counts those inside the quarter
circle; one Allreduce sums (hits, samples, contributing ranks) over all ranks, so every rank holds the
running estimate. Under cohort (`cohort-run --preload -n 4 python3 montecarlo_pi.py`) the program keeps
running when a rank dies: the sums continue over the survivors, and since the samples are summed with the
hits, the estimate stays unbiased. Every rank prints its estimate, its error and how many ranks
contributed to the last round.

The sums use the buffer interface (comm.Allreduce, one MPI_Allreduce). mpi4py's pickle-based
comm.allreduce is not one MPI collective (a binomial tree of MPI_Send/MPI_Recv, or MPI_Allgather plus
MPI_Allgatherv): see the README, "Programs that are not relinked".
"""
import math
import random
import sys
from array import array

from mpi4py import MPI


def say(line):
    """One write per line, so that the ranks' lines do not interleave."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main():
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    per_round = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    rng = random.Random(12345 + 7919 * rank)
    hits = samples = 0.0
    contributors = size
    t0 = MPI.Wtime()
    for r in range(rounds):
        inside = 0
        for _ in range(per_round):
            x, y = rng.random(), rng.random()
            if x * x + y * y <= 1.0:
                inside += 1
        mine = array("d", [inside, per_round, 1])
        total = array("d", [0, 0, 0])
        comm.Allreduce(mine, total, op=MPI.SUM)
        hits += total[0]
        samples += total[1]
        if int(total[2]) != contributors:
            contributors = int(total[2])
            if rank == 0:
                say(f"round {r + 1} of {rounds}: {contributors} of {size} ranks contributed")
    pi = 4.0 * hits / samples
    say(f"rank {rank}: pi ~ {pi:.8f}, error {abs(pi - math.pi):.2e}, from {int(samples)} samples; "
        f"last round from {contributors} of {size} ranks; {MPI.Wtime() - t0:.2f} s")


if __name__ == "__main__":
    main()
