"""master_worker.py: a master/worker bag of tasks with mpi4py's comm.send/comm.recv.

    mpiexec -n 4 python3 master_worker.py [tasks]        (default 120)

Rank 0 is the master: it hands out task numbers with comm.send, collects (task, result) pairs with
comm.recv(source=ANY_SOURCE) and hands the next task to whoever answered. A task is a small computation
(a checksum over a range of integers) that the master can check. Once the bag is empty, the master hands
idle workers backup copies of the tasks still out (the first result wins), so it never waits for one
particular worker: under cohort (`cohort-run --preload -n 4 python3 master_worker.py`) a worker that dies
costs nothing but its current task, which a backup finishes, and a send to a dead worker returns. At the
end the master verifies every result and prints a checksum over all of them.
"""
import sys

from mpi4py import MPI

TASK, RESULT = 1, 2


def say(line):
    """One write per line, so that the ranks' lines do not interleave."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def work(task):
    base = task * 2000
    return sum((k * k) % 1000003 for k in range(base, base + 2000)) % 1000000007


def master(comm, n_tasks):
    n_workers = comm.Get_size() - 1
    results = {}
    out = {}  # worker -> task it holds
    todo = list(range(n_tasks))
    backups = 0
    for w in range(1, n_workers + 1):
        if todo:
            t = todo.pop(0)
            comm.send(t, dest=w, tag=TASK)
            out[w] = t
    status = MPI.Status()
    while len(results) < n_tasks:
        task, value = comm.recv(source=MPI.ANY_SOURCE, tag=RESULT, status=status)
        w = status.Get_source()
        out.pop(w, None)
        results.setdefault(task, value)
        if todo:
            t = todo.pop(0)
        else:
            missing = [t for t in range(n_tasks) if t not in results]
            if not missing:
                break
            t = missing[backups % len(missing)]
            backups += 1
        comm.send(t, dest=w, tag=TASK)
        out[w] = t
    for w in range(1, n_workers + 1):
        comm.send(None, dest=w, tag=TASK)
    wrong = [t for t in range(n_tasks) if results[t] != work(t)]
    checksum = sum(results.values()) % 1000000007
    say(f"master_worker.py: all {n_tasks} tasks done by {n_workers} workers, {backups} backup copies; "
        f"checksum {checksum}; {'verified' if not wrong else f'{len(wrong)} WRONG'}")


def worker(comm):
    done = 0
    while True:
        task = comm.recv(source=0, tag=TASK)
        if task is None:
            break
        comm.send((task, work(task)), dest=0, tag=RESULT)
        done += 1
    say(f"master_worker.py: rank {comm.Get_rank()} did {done} tasks")


def main():
    comm = MPI.COMM_WORLD
    n_tasks = int(sys.argv[1]) if len(sys.argv) > 1 else 120
    if comm.Get_rank() == 0:
        master(comm, n_tasks)
    else:
        worker(comm)


if __name__ == "__main__":
    main()
