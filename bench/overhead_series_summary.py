#!/usr/bin/env python3
"""Summary of bench/run_overhead_series.sh: per configuration and row, the median over launches of
wrapped/real (each launch's ratio of its batch medians), min-max, and the same for the two floors; then
the verdicts of issues #10 (each new call beside its same-class blocking call) and #12 (targets).

    overhead_series_summary.py CSV COMMAND    (markdown on stdout)
"""
import csv
import statistics
import sys
from collections import defaultdict

# issue 10: call -> its same-class blocking call, measured in the same launches
SAME_CLASS = {"MPI_Gatherv": "MPI_Gather", "MPI_Alltoall": "MPI_Allgather", "MPI_Iallreduce+Wait": "MPI_Allreduce"}
# issue 12: call -> target for the median wrapped/real
TARGETS = {"MPI_File_write_at_all": 1.10, "MPI_Put+Win_fence": 1.3}
CONFIGS = [("openmpi", "4"), ("openmpi", "2"), ("mpich", "2")]


def main():
    path, command = sys.argv[1], sys.argv[2]
    rows = defaultdict(list)  # (mpi, ranks, call, bytes) -> [row per launch]
    order = []
    with open(path) as f:
        for r in csv.DictReader(f):
            key = (r["mpi"], r["ranks"], r["call"], int(r["bytes"]))
            if key not in rows:
                order.append(key)
            rows[key].append(r)
    launches = len({r["launch"] for rs in rows.values() for r in rs})

    def stat(key, col):
        v = [float(r[col]) for r in rows[key]]
        return statistics.median(v), min(v), max(v), len(v)

    def own(key):  # median over launches of wrapped / (nb + barrier): cohort's own cost beside its floor
        return statistics.median(float(r["wrapped_us"]) / float(r["nb_confirm_us"]) for r in rows[key])

    def extra(key):  # median over launches of wrapped - (nb + barrier), in us
        return statistics.median(float(r["wrapped_us"]) - float(r["nb_confirm_us"]) for r in rows[key])

    print(f"# bench/overhead over {launches} launches per configuration\n")
    print(f"Command: `{command}`. Each launch runs every row four ways side by side in one process (real, "
          "nonblocking, nonblocking + barrier, wrapped; batches in rotated order) and gives each ratio over "
          "real from its batch medians; the table gives the median over launches of each ratio, and the "
          "range of wrapped/real; the last two columns are the medians of wrapped/(nb + barrier) and of "
          "wrapped − (nb + barrier): cohort's cost beside the floor of its design. Raw rows: the csv of the same name.\n")
    print("| MPI | ranks | call | bytes | launches | real (us, median) | wrapped/real median | min–max | nb/real | (nb+barrier)/real | wrapped/(nb+barrier) | wrapped − (nb+barrier) (us) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for mpi, ranks in CONFIGS:
        for key in order:
            if key[:2] != (mpi, ranks):
                continue
            m, lo, hi, n = stat(key, "ratio")
            real = stat(key, "real_us")[0]
            print(f"| {mpi} | {ranks} | {key[2]} | {key[3]} | {n} | {real:.2f} | {m:.3f} | {lo:.3f}–{hi:.3f} | "
                  f"{stat(key, 'nb_ratio')[0]:.3f} | {stat(key, 'nb_confirm_ratio')[0]:.3f} | {own(key):.3f} | {extra(key):.2f} |")
    def paired(a, b, num, den):  # per launch: (a's num/den) / (b's num/den); median, min, max
        by_launch = {r["launch"]: r for r in rows[b]}
        q = [(float(ra[num]) / float(ra[den])) / (float(by_launch[ra["launch"]][num]) / float(by_launch[ra["launch"]][den]))
             for ra in rows[a] if ra["launch"] in by_launch]
        return (statistics.median(q), min(q), max(q)) if q else (float("nan"),) * 3

    print("\n## Issue #10: each call beside its same-class blocking call (median wrapped/real)\n")
    print("The last two columns pair the two calls launch by launch: the call's wrapped/real over the same-class "
          "call's, and the same for cohort's own cost over its floor, wrapped/(nb + barrier). Where the second "
          "is near 1 and the first is not, the difference is the MPI's own nonblocking call, not cohort.\n")
    print("| MPI | ranks | bytes | call | ratio | same-class call | ratio | not worse? | paired wrapped/real, median (range) | paired wrapped/(nb+barrier), median (range) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for mpi, ranks in CONFIGS:
        for call, base in SAME_CLASS.items():
            for size in (8, 65536):
                a, b = (mpi, ranks, call, size), (mpi, ranks, base, size)
                if a not in rows or b not in rows:
                    continue
                ra, rb = stat(a, "ratio")[0], stat(b, "ratio")[0]
                pr = paired(a, b, "wrapped_us", "real_us")
                po = paired(a, b, "wrapped_us", "nb_confirm_us")
                print(f"| {mpi} | {ranks} | {size} | {call} | {ra:.3f} | {base} | {rb:.3f} | "
                      f"{'yes' if ra <= rb else 'no (+%.3f)' % (ra - rb)} | {pr[0]:.2f} ({pr[1]:.2f}–{pr[2]:.2f}) | "
                      f"{po[0]:.2f} ({po[1]:.2f}–{po[2]:.2f}) |")
    print("\n## Issue #12: targets (median wrapped/real)\n")
    print("| MPI | ranks | call | bytes | ratio | target | met? |")
    print("|---|---|---|---|---|---|---|")
    for mpi, ranks in CONFIGS:
        for key in order:
            if key[:2] == (mpi, ranks) and key[2] in TARGETS:
                m, t = stat(key, "ratio")[0], TARGETS[key[2]]
                print(f"| {mpi} | {ranks} | {key[2]} | {key[3]} | {m:.3f} | {t:.2f} | {'yes' if m <= t else 'no'} |")


if __name__ == "__main__":
    main()
