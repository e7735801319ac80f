#!/usr/bin/env python3
"""Summary of bench/run_replica.sh: per benchmark, size and logical ranks the median over rounds of raw MPI,
cohort at r = 1 and at r = 2 (and r = 3), the ratios r2/r1 and r2/raw (for bw: r2's bandwidth as a fraction
of the other's), the messages and bytes on the wire per logical message, and issue 38's goals. A run with
more processes than cores is marked oversubscribed and not judged against a goal.

    replica_summary.py CSV CORES    (markdown on stdout)
"""
import csv
import statistics
import sys
from collections import defaultdict

# wrap/replica/replica.cpp's Header: 8 x int32, 2 x uint64, int64, uint64 (the digest), before each
# copy's payload.
HEADER_BYTES = 64
UNITS = {"latency": "µs", "bw": "MB/s", "allreduce": "µs", "bcast": "µs", "ep_A": "s", "cg": "ms"}  # (cg: 200 iterations of 32768 doubles and an 8 B Allreduce per rank)
# Issue 38's goals with a core per process: (benchmark, bytes) -> (bound on r2/r1, "<=" or ">=").
GOALS = {("ep_A", 0): (1.05, "<="), ("latency", 8): (1.5, "<="), ("bw", 1048576): (0.5, ">=")}


def size_name(n):
    if n == 0:
        return "-"
    for unit, k in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= k and n % k == 0:
            return f"{n // k} {unit}"
    return f"{n} B"


def main():
    path, cores = sys.argv[1], int(sys.argv[2])
    vals, procs, mpis = defaultdict(list), {}, set()
    for r in csv.DictReader(open(path)):
        key = (r["benchmark"], int(r["bytes"]), int(r["ranks"]))
        vals[key + (r["variant"],)].append(float(r["value"]))
        procs[key + (r["variant"],)] = int(r["processes"])
        mpis.add(r["mpi"])
    rounds = max((len(v) for v in vals.values()), default=0)
    med = {k: statistics.median(v) for k, v in vals.items()}
    variants = [v for v in ("raw", "r1", "r2", "r3") if any(k[3] == v for k in med)]
    rows = sorted({k[:3] for k in med}, key=lambda k: (list(UNITS).index(k[0]) if k[0] in UNITS else 99, k[1], k[2]))
    print(f"# Replication's cost ({', '.join(sorted(mpis))}; {cores} cores; median of {rounds} rounds)\n")
    print("Command: `bench/run_replica.sh` (raw MPI, cohort r = 1, r = 2 launched alternately round by round).")
    print("For bw the ratios are bandwidth fractions (higher is better); otherwise time ratios. Wire: the")
    print(f"mirror protocol sends r x r copies of each logical message, each with a {HEADER_BYTES}-byte header.\n")
    head = ["benchmark", "size", "ranks"] + [f"{v}" for v in variants] + ["r2/r1", "r2/raw"]
    if "r3" in variants:
        head.append("r3/r1")
    head += ["r2 processes", "wire per logical message at r2", "goal (r2/r1)"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for b, n, np in rows:
        def m(v):
            return med.get((b, n, np, v))

        def ratio(a, o):
            x, y = m(a), m(o)
            return f"{x / y:.2f}" if x and y else "-"

        cells = [b, size_name(n), str(np)]
        cells += [f"{m(v):.4g} {UNITS.get(b, '')}" if m(v) is not None else "-" for v in variants]
        cells += [ratio("r2", "r1"), ratio("r2", "raw")]
        if "r3" in variants:
            cells.append(ratio("r3", "r1"))
        p2 = procs.get((b, n, np, "r2"))
        over = p2 is not None and p2 > cores
        cells.append(f"{p2}{' (oversubscribed)' if over else ''}" if p2 else "-")
        if n and b in ("latency", "bw"):
            cells.append(f"4 messages, {4 * (n + HEADER_BYTES)} B (raw: 1, {n} B)")
        else:
            cells.append("-")
        goal = GOALS.get((b, n))
        if goal is None:
            cells.append("-")
        elif over or m("r2") is None or m("r1") is None:
            cells.append(f"{goal[1]} {goal[0]}: not judged (oversubscribed)" if over else "-")
        else:
            r = m("r2") / m("r1")
            ok = r <= goal[0] if goal[1] == "<=" else r >= goal[0]
            cells.append(f"{goal[1]} {goal[0]}: {'met' if ok else 'missed'}")
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
