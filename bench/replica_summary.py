#!/usr/bin/env python3
"""Summary of bench/run_replica.sh: per benchmark, size and logical ranks the median over rounds of raw MPI,
cohort at r = 1, and at r = 2 (and 3) with COHORT_SDC=off, hash and full; the ratios of replication's cost
(r2off/r1, r2off/raw) and of SDC checking's (hash/off, full/off; for bw: bandwidth fractions), the messages
and bytes on the wire per logical message, and the goals of issues 38 (replication) and 39 (SDC). A run with
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
UNITS = {"latency": "µs", "bw": "MB/s", "allreduce": "µs", "bcast": "µs", "ep_A": "s", "cg": "ms",
         "cg_rss": "KiB"}  # (cg: 200 iterations of 32768 doubles and an 8 B Allreduce per rank)
# Goals with a core per process: (benchmark, bytes) -> (ratio, bound, "<=" or ">=").
GOALS = {("ep_A", 0): [("r2off/r1", 1.05, "<="), ("hash/off", 1.05, "<=")],
         ("latency", 8): [("r2off/r1", 1.5, "<=")],
         ("bw", 1048576): [("r2off/r1", 0.5, ">=")],
         ("cg", 0): [("hash/off", 1.05, "<=")]}
ORDER = ["raw", "r1", "r2off", "r2", "r2full", "r3off", "r3", "r3full"]
RATIOS = [("r2off/r1", "r2off", "r1"), ("r2off/raw", "r2off", "raw"), ("hash/off", "r2", "r2off"),
          ("full/off", "r2full", "r2off"), ("r3off/r1", "r3off", "r1"), ("r3 hash/off", "r3", "r3off")]


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
    variants = [v for v in ORDER if any(k[3] == v for k in med)]
    ratios = [r for r in RATIOS if r[1] in variants and r[2] in variants]
    rows = sorted({k[:3] for k in med}, key=lambda k: (list(UNITS).index(k[0]) if k[0] in UNITS else 99, k[1], k[2]))
    print(f"# Replication's and SDC checking's cost ({', '.join(sorted(mpis))}; {cores} cores; median of {rounds} "
          "rounds)\n")
    print("Command: `bench/run_replica.sh` (raw MPI, cohort r = 1, r = 2 with `COHORT_SDC=off`, `hash` (r2, the")
    print("default) and `full`, launched alternately round by round). For bw the ratios are bandwidth fractions")
    print("(higher is better); otherwise time ratios (cg_rss: memory). Wire: the mirror protocol sends r x r")
    print(f"copies of each logical message, each with a {HEADER_BYTES}-byte header.\n")
    head = ["benchmark", "size", "ranks"] + variants + [r[0] for r in ratios]
    head += ["r2 processes", "wire per logical message at r2", "goals"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for b, n, np in rows:
        def m(v):
            return med.get((b, n, np, v))

        def ratio(a, o):
            x, y = m(a), m(o)
            return x / y if x and y else None

        cells = [b, size_name(n), str(np)]
        cells += [f"{m(v):.4g} {UNITS.get(b, '')}" if m(v) is not None else "-" for v in variants]
        cells += [f"{ratio(a, o):.2f}" if ratio(a, o) is not None else "-" for _, a, o in ratios]
        p2 = procs.get((b, n, np, "r2off")) or procs.get((b, n, np, "r2"))
        over = p2 is not None and p2 > cores
        cells.append(f"{p2}{' (oversubscribed)' if over else ''}" if p2 else "-")
        cells.append(f"4 messages, {4 * (n + HEADER_BYTES)} B (raw: 1, {n} B)" if n and b in ("latency", "bw") else "-")
        verdicts = []
        for name, bound, sense in GOALS.get((b, n), []):
            pair = next(((a, o) for nm, a, o in RATIOS if nm == name), None)
            r = ratio(*pair) if pair else None
            if r is None:
                continue
            if over:
                verdicts.append(f"{name} {sense} {bound}: not judged (oversubscribed)")
            else:
                ok = r <= bound if sense == "<=" else r >= bound
                verdicts.append(f"{name} {sense} {bound}: {'met' if ok else 'missed'}")
        cells.append("; ".join(verdicts) if verdicts else "-")
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
