#!/usr/bin/env python3
"""Summary of bench/run_osu.sh: per configuration, benchmark and size the median over rounds of raw, floor,
confirm (the floor with a confirming barrier per collective) and cohort, and cohort over each (for bw:
cohort's bandwidth as a fraction of the other's); first the rows of issue 42's targets with their verdicts.

    osu_summary.py CSV COMMAND [BEFORE_CSV]    (markdown on stdout)

BEFORE_CSV: the same benchmark's rows of an earlier build (bench/run_osu.sh --name osu-before): a table of
cohort/raw at 8 B and 64 KiB, before -> after, comes first.
"""
import csv
import statistics
import sys
from collections import defaultdict

COLLS = ["bcast", "reduce", "allreduce", "gather", "alltoall"]


def medians(path):
    vals = defaultdict(list)  # (mpi, ranks, benchmark, bytes, variant) -> values over rounds
    for r in csv.DictReader(open(path)):
        vals[(r["mpi"], int(r["ranks"]), r["benchmark"], int(r["bytes"]), r["variant"])].append(float(r["value"]))
    return {k: statistics.median(v) for k, v in vals.items()}, max((len(v) for v in vals.values()), default=0)


def ratio(med, mpi, np, bench, n, over="raw"):
    c, o = med.get((mpi, np, bench, n, "cohort")), med.get((mpi, np, bench, n, over))
    if c is None or o is None or o == 0 or c == 0:
        return None
    return c / o  # (bw: a ratio of bandwidths, so cohort's as a fraction of the other's)


def target(bench, n, np):
    """Issue 42's bound for cohort/raw (bw: the least fraction of raw), or None."""
    if bench in ("latency", "bw") and np != 2:
        return None  # (OMB runs them on exactly 2 ranks)
    if np >= 4:
        return ("<=", 3.0)
    if bench == "latency" and n == 8:
        return ("<=", 1.15)
    if bench == "bw" and n == 8:
        return (">=", 0.8)
    if bench in COLLS and n == 8:
        return ("<=", 2.0)
    if bench in COLLS and n == 65536:
        return ("<=", 1.3)
    if bench == "barrier":
        return ("<=", 2.0)
    return None


def main():
    path, command = sys.argv[1], sys.argv[2]
    med, rounds = medians(path)
    configs = sorted({(k[0], k[1]) for k in med}, key=lambda c: (c[0] != "openmpi", c[1]))
    order = ["latency", "bw"] + COLLS + ["barrier"]
    rows = sorted({(k[0], k[1], k[2], k[3]) for k in med},
                  key=lambda r: (configs.index((r[0], r[1])), order.index(r[2]), r[3]))
    print(f"# OSU loops, cohort against raw MPI\n\n`{command}`: medians over {rounds} rounds.\n")
    if len(sys.argv) > 3:
        before, brounds = medians(sys.argv[3])
        print(f"## cohort/raw before -> after (before: {sys.argv[3].split('/')[-1]}, {brounds} rounds)\n")
        order = ["latency", "bw"] + COLLS + ["barrier"]
        head = " | ".join(f"{m} {n}" for m, n in configs)
        print(f"| benchmark | bytes | {head} |\n|---|---|" + "---|" * len(configs))
        for bench in order:
            for n in ((0,) if bench == "barrier" else (8, 65536)):
                cells = []
                for mpi, np in configs:
                    b, a = ratio(before, mpi, np, bench, n), ratio(med, mpi, np, bench, n)
                    if bench in ("latency", "bw") and np != 2 or b is None or a is None:
                        cells.append("")
                    else:
                        cells.append(f"{b:.2f} -> {a:.2f}")
                print(f"| {bench} | {n} | " + " | ".join(cells) + " |")
        print()
    print("cohort/raw: time ratio (bw: cohort's bandwidth as a fraction of raw's); cohort/floor: the same "
          "against the MPI's nonblocking calls polled.\n")
    print("## Targets (issue 42)\n")
    print("| MPI | ranks | benchmark | bytes | cohort/raw | target | floor/raw | cohort/floor | confirm/raw | "
          "cohort/confirm | verdict |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for mpi, np, bench, n in rows:
        t = target(bench, n, np)
        if t is None or (np >= 4 and n not in (1, 8, 65536, 1048576, 0)):
            continue
        r = ratio(med, mpi, np, bench, n)
        if r is None:
            continue
        f = med.get((mpi, np, bench, n, "floor")), med.get((mpi, np, bench, n, "raw"))
        fr = f[0] / f[1] if None not in f else None
        cf = ratio(med, mpi, np, bench, n, "floor")
        k = med.get((mpi, np, bench, n, "confirm")), f[1]
        kr = k[0] / k[1] if None not in k else None
        ck = ratio(med, mpi, np, bench, n, "confirm")
        ok = r <= t[1] if t[0] == "<=" else r >= t[1]
        fmt = lambda x: "" if x is None else f"{x:.2f}"
        print(f"| {mpi} | {np} | {bench} | {n} | {r:.2f} | {t[0]} {t[1]} | "
              f"{fmt(fr)} | {fmt(cf)} | {fmt(kr)} | {fmt(ck)} | {'met' if ok else 'missed'} |")
    print("\n## Every row\n")
    print("| MPI | ranks | benchmark | bytes | raw | floor | confirm | cohort | cohort/raw | cohort/floor |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for mpi, np, bench, n in rows:
        if bench in ("latency", "bw") and np != 2:
            continue
        g = lambda v: med.get((mpi, np, bench, n, v))
        fmt = lambda x: "" if x is None else f"{x:.2f}"
        print(f"| {mpi} | {np} | {bench} | {n} | {fmt(g('raw'))} | {fmt(g('floor'))} | {fmt(g('confirm'))} | "
              f"{fmt(g('cohort'))} | "
              f"{fmt(ratio(med, mpi, np, bench, n))} | {fmt(ratio(med, mpi, np, bench, n, 'floor'))} |")


if __name__ == "__main__":
    main()
