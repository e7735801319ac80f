#!/usr/bin/env python3
"""Summary of bench/hierarchy_scale's CSV: per N, the flat repair beside the hierarchy's expected repair per
failure (best K), the fault-free MPI_Allreduce on each, and the break-even: how many collectives per failure
the hierarchy may run before its extra rounds on every call outweigh what it saves on a repair.

    hierarchy_summary.py results/hierarchy.csv > results/hierarchy-summary-table.md
"""
import csv
import sys
from collections import defaultdict

rows = defaultdict(dict)  # n -> (k, case) -> (messages, rounds)
with open(sys.argv[1]) as f:
    for r in csv.reader(f):
        if len(r) < 9 or r[0] != "csv" or r[2] == "n":
            continue
        rows[int(r[2])][(int(r[3]), r[4])] = (float(r[5]), float(r[6]))

print("| N | flat repair: msgs, rounds | best K (rounds), with POV: msgs, rounds | best K, no POV: msgs, rounds "
      "| Allreduce flat / hier (K as no POV): rounds | calls per failure to break even (rounds) |")
print("|---|---|---|---|---|---|")
for n in sorted(rows):
    d = rows[n]
    flat = d[(0, "flat")]
    call_flat = d[(0, "call_flat")]
    ks = sorted({k for k, c in d if k > 0})
    best = min(ks, key=lambda k: (d[(k, "expected")][1], d[(k, "expected")][0]))
    best_np = min(ks, key=lambda k: (d[(k, "expected_nopov")][1], d[(k, "expected_nopov")][0]))
    e, enp = d[(best, "expected")], d[(best_np, "expected_nopov")]
    call_h = d[(best_np, "call_hier")]
    extra = call_h[1] - call_flat[1]
    saved = flat[1] - enp[1]
    be = "never" if saved <= 0 else ("always" if extra <= 0 else f"{saved / extra:.2f}")
    print(f"| {n} | {flat[0]:.0f}, {flat[1]:.0f} | K={best}: {e[0]:.0f}, {e[1]:.2f} | K={best_np}: {enp[0]:.0f}, "
          f"{enp[1]:.2f} | {call_flat[1]:.0f} / {call_h[1]:.0f} | {be} |")
