#!/usr/bin/env python3
"""Summary of bench/run_overhead_before_after.sh: per configuration and row, the median over launches of
wrapped/real for each build, the range over launches (the spread), and whether the after build's median is
worse than the before build's beyond that spread.

    overhead_before_after_summary.py CSV COMMAND    (markdown on stdout)

"Worse beyond the spread": the after median exceeds the before median by more than the larger of the two
builds' half-ranges (max - min over launches, halved), i.e. the difference is outside what one build's
launches already differ by among themselves.
"""
import csv
import statistics
import sys
from collections import defaultdict


def main():
    path, command = sys.argv[1], sys.argv[2]
    ratios = defaultdict(list)  # (mpi, ranks, call, bytes, build) -> [wrapped/real per launch]
    by_round = defaultdict(dict)  # (mpi, ranks, call, bytes, build) -> {launch: wrapped/real}
    order = []
    with open(path) as f:
        for r in csv.DictReader(f):
            key = (r["mpi"], r["ranks"], r["call"], int(r["bytes"]))
            if key not in order:
                order.append(key)
            ratios[key + (r["build"],)].append(float(r["ratio"]))
            by_round[key + (r["build"],)][r["launch"]] = float(r["ratio"])
    configs = []
    for k in order:
        if k[:2] not in configs:
            configs.append(k[:2])
    print("# bench/overhead before and after\n")
    print(f"Command: `{command}`. Each launch runs every row four ways side by side in one process and gives "
          "wrapped/real from its batch medians; per build the table gives the median over launches and the range "
          "(min–max). A row is *worse* when the after median exceeds the before median by more than the larger "
          "half-range of the two builds. *paired*: per round (the two builds launched back to back), after's "
          "wrapped/real over before's, median and range. Raw rows: the csv of the same name.\n")
    print("| MPI | ranks | call | bytes | launches | before: median | before: min–max | after: median | "
          "after: min–max | after/before | paired: median (min–max) | worse beyond the spread? |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    worse = []
    for cfg in configs:
        for key in order:
            if key[:2] != cfg:
                continue
            b, a = ratios[key + ("before",)], ratios[key + ("after",)]
            if not b or not a:
                continue
            mb, ma = statistics.median(b), statistics.median(a)
            spread = max(max(b) - min(b), max(a) - min(a)) / 2
            bad = ma - mb > spread
            if bad:
                worse.append(f"{key[0]} {key[1]} ranks {key[2]}")
            rb, ra = by_round[key + ("before",)], by_round[key + ("after",)]
            q = [ra[i] / rb[i] for i in ra if i in rb]
            pq = f"{statistics.median(q):.3f} ({min(q):.3f}–{max(q):.3f})" if q else ""
            print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {len(b)}+{len(a)} | {mb:.3f} | {min(b):.3f}–{max(b):.3f} | "
                  f"{ma:.3f} | {min(a):.3f}–{max(a):.3f} | {ma / mb:.3f} | {pq} | {'yes' if bad else 'no'} |")
    print()
    print("Worse beyond the spread: " + (", ".join(worse) if worse else "none") + ".")


if __name__ == "__main__":
    main()
