#!/usr/bin/env python3
"""Summary of bench/schedule_floors runs at several windows W: the floor of deferred
confirmation's messages (p2p schedule + count reports, no cohort bookkeeping) beside MPI's blocking call.
  bench/schedule_floors_windows.py CSV > SUMMARY.md
CSV: schedule_floors rows "mpi,ranks,variant,us" (variants "p2p <call>+reports W=<w>" for each W run).
Per cell: median over launches of µs per call, and in brackets the ratio to the blocking call's median."""
import csv
import re
import statistics
import sys
from collections import defaultdict

rows = defaultdict(list)
with open(sys.argv[1]) as f:
    for r in csv.DictReader(f):
        rows[(r["mpi"], int(r["ranks"]), r["variant"])].append(float(r["us"]))
configs = sorted({(m, n) for (m, n, _) in rows}, key=lambda c: (c[0] != "openmpi", -c[1]))
windows = sorted({int(m.group(1)) for (_, _, v) in rows for m in [re.search(r"W=(\d+)$", v)] if m})
med = {k: statistics.median(v) for k, v in rows.items()}
print("# bench/schedule_floors: the messages of deferred confirmation alone, by window W\n")
print("`scripts/cohort-run --mpi M -n N build/M/bench/schedule_floors 20000 CSV W` for W in " +
      ", ".join(str(w) for w in windows) + ", launches alternating configuration and W (MPICH with "
      "HYDRA_BINDING=core); `bench/schedule_floors_windows.py CSV`.\n")
print("Plain MPI, no cohort: each call on cohort's point-to-point schedule, then deferred confirmation's count "
      "reports (every ceil(W/2) calls an 8-byte MPI_Isend to every other rank, an MPI_ANY_SOURCE receive read "
      "when W - 1 calls are unconfirmed, a wait only when W - 1 calls ahead of the slowest report). "
      "This is the floor of the design at window W; cohort's wrapped calls pay their bookkeeping on top. "
      "Per cell: median over launches of µs per call (8 B), and in brackets the ratio to MPI's blocking call "
      "of the same launches.\n")
print("| call | variant | " + " | ".join(f"{m} {n} ranks" for m, n in configs) + " |")
print("|---|---|" + "---|" * len(configs))
for call in ["Bcast", "Reduce", "Allreduce"]:
    variants = [call, f"p2p {call.lower()}"] + [f"p2p {call.lower()}+reports W={w}" for w in windows]
    for v in variants:
        cells = []
        for m, n in configs:
            if (m, n, v) not in med or (m, n, call) not in med:
                cells.append("—")
                continue
            cells.append(f"{med[(m, n, v)]:.3f} ({med[(m, n, v)] / med[(m, n, call)]:.2f})")
        print(f"| {call} | {v} | " + " | ".join(cells) + " |")
