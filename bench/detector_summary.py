#!/usr/bin/env python3
"""Summarises bench/results/detector_{latency,cpu,sim}.csv into markdown (bench/run_detector.sh)."""
import csv
import os
import statistics
import sys
from collections import defaultdict

out = sys.argv[1]


def rows(name):
    with open(f"{out}/{name}") as f:
        return list(csv.DictReader(f))


print("# Failure detector benchmarks\n")
print("Produced by `bench/run_detector.sh` on this machine (2 cores, oversubscribed ranks).\n")

print("## Real detection latency (kill -> last survivor notified)\n")
print("| MPI | N | period/timeout ms | runs | observer ms (median) | last survivor ms (median, max) | target ms | within target |")
print("|---|---|---|---|---|---|---|---|")
groups = defaultdict(list)
for r in rows("detector_latency.csv"):
    groups[(r["mpi"], int(r["n"]), int(r["period_ms"]), int(r["timeout_ms"]))].append(r)
for (mpi, n, p, t), rs in sorted(groups.items()):
    ok = [r for r in rs if int(r["survivors_reporting"]) == n - 1]
    first = [float(r["first_ms"]) for r in ok]
    last = [float(r["last_ms"]) for r in ok]
    target = t + 2 * p + 50
    if not ok:
        print(f"| {mpi} | {n} | {p}/{t} | 0 of {len(rs)} complete | - | - | {target} | no |")
        continue
    within = all(x <= target for x in last)
    print(f"| {mpi} | {n} | {p}/{t} | {len(ok)} of {len(rs)} | {statistics.median(first):.1f} | "
          f"{statistics.median(last):.1f}, {max(last):.1f} | {target} | {'yes' if within else 'no'} |")

if os.path.exists(f"{out}/detector_pidfd.csv"):
    print("\n## Crash detection by pidfd (SIGKILL -> last survivor notified, one host, 100/1000 ms)\n")
    print("The observer on the victim's host watches its process (`COHORT_PIDFD=on`, the default) or waits for "
          "the heartbeat timeout (`off`); runs alternate on/off, side by side. Target: <= 20 ms.\n")
    print("| MPI | N | runs on/off | on: last survivor ms (median, max) | off: (median, max) | off/on (medians) | on within 20 ms |")
    print("|---|---|---|---|---|---|---|")
    pg = defaultdict(lambda: defaultdict(list))
    for r in rows("detector_pidfd.csv"):
        pg[(r["mpi"], int(r["n"]))][r["pidfd"]].append(r)
    for (mpi, n), d in sorted(pg.items()):
        ok = {k: [float(r["last_ms"]) for r in v if int(r["survivors_reporting"]) == n - 1] for k, v in d.items()}
        on, off = ok.get("on", []), ok.get("off", [])
        if not on or not off:
            print(f"| {mpi} | {n} | {len(on)}/{len(off)} complete | - | - | - | no |")
            continue
        mo, mf = statistics.median(on), statistics.median(off)
        print(f"| {mpi} | {n} | {len(on)}/{len(off)} of {len(d['on'])}/{len(d['off'])} | {mo:.1f}, {max(on):.1f} | "
              f"{mf:.1f}, {max(off):.1f} | {mf / mo:.0f} | {'yes' if max(on) <= 20 else 'no'} |")



def hosts_table(name, title):
    """One table per results file of bench/run_detector.sh --hosts-only."""
    if not os.path.exists(f"{out}/{name}"):
        return
    print(title)
    print("| MPI | ranks on hosts | case | victims | runs complete | first survivor ms (median) | last survivor ms (median, max) | target ms | within target |")
    print("|---|---|---|---|---|---|---|---|---|")
    hg = defaultdict(list)
    for r in rows(name):
        hg[(r["mpi"], int(r["n"]), int(r["hosts"]), r["case"])].append(r)
    order = {"rank_observer_same_host": 0, "rank_observer_other_host": 1, "host_lost": 2}
    for (mpi, n, h, case), rs in sorted(hg.items(), key=lambda kv: (kv[0][0], kv[0][1], order.get(kv[0][3], 9))):
        ok = [r for r in rs if int(r["survivors_reporting"]) == int(r["survivors"])]
        victims = " or ".join(sorted({r["victims"].replace(",", " ") + (f" ({r['lost_host']})" if r["lost_host"] != "-" else "") for r in rs}))
        target = 1200 if case == "host_lost" else 20
        if not ok:
            print(f"| {mpi} | {n} on {h} | {case} | {victims} | 0 of {len(rs)} | - | - | {target} | no |")
            continue
        first = [float(r["first_ms"]) for r in ok]
        last = [float(r["last_ms"]) for r in ok]
        within = "yes" if max(last) <= target else "no"
        print(f"| {mpi} | {n} on {h} | {case} | {victims} | {len(ok)} of {len(rs)} | {statistics.median(first):.1f} | "
              f"{statistics.median(last):.1f}, {max(last):.1f} | {target} | {within} |")


hosts_table("detector_hosts.csv",
            "\n## On namespace hosts (scripts/cohort-hosts; SIGKILL or lost host -> survivors notified, 100/1000 ms)\n\n"
            "`bench/run_detector.sh --hosts-only`. Ranks in blocks (Open MPI 16 = 4 x 4: h1 0-3, h2 4-7, h3 8-11, h4"
            " 12-15; MPICH 4 = 2 x 2). *rank_observer_same_host*: the victim's observer is on its host (pidfd);"
            " *rank_observer_other_host*: the victim is its host's last rank, its observer on the next host; its host's"
            " first rank watches its process too (before that: heartbeats only, about the timeout); *host_lost*: every process of the host SIGKILLed from outside, times since that kill, a survivor"
            " counted when it knew every rank of the host failed. Targets: SIGKILL <= 20 ms; lost host <="
            " timeout + 2 x period = 1200 ms.\n")
hosts_table("detector_hosts-before-fix.csv",
            "\n## On 4 namespace hosts, before the lost-host probe (scripts/cohort-hosts, 100/1000 ms)\n\n"
            "The detector as of 7d84e55 (same bench, `DETECTOR_BENCH_PROG` pointing at that build): a lost host's ranks"
            " are suspected one timeout + grace after the other.\n")

print("\n## Detector thread CPU (default 100/1000 ms, no failure, 4 ranks)\n")
print("| MPI | ranks | mean % of a core | max % of a core | loop iterations/s |")
print("|---|---|---|---|---|")
cg = defaultdict(list)
for r in rows("detector_cpu.csv"):
    cg[r["mpi"]].append(r)
for mpi, rs in sorted(cg.items()):
    pct = [float(r["cpu_percent_of_core"]) for r in rs]
    its = statistics.mean(int(r["iterations"]) * 1e6 / int(r["wall_us"]) for r in rs)
    print(f"| {mpi} | {len(rs)} | {statistics.mean(pct):.2f} | {max(pct):.2f} | {its:.0f} |")

print("\n## Simulator (virtual time; latency 20 µs + exp(30 µs) unless noted; period/timeout 100/1000 ms)\n")
sim = rows("detector_sim.csv")
print("Notices sent per failure (flooding: every rank forwards once) and the Chord ratios, same runs side by side:\n")
print("Hops: *first* = hop count of the notice through which the last survivor first learned a victim; *depth* = the"
      " flood's depth (fewest hops over all copies a survivor received, max over survivors).\n")
print("| N | k | victims | shuffle | latency µs | chord notices/failure | bmg | hba | chord/bmg | chord/hba | hops first chord/bmg/hba | depth chord/bmg/hba | bound ceil(log2 N)+1 | all know ms chord/bmg/hba |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
by = defaultdict(dict)
for r in sim:
    by[(int(r["n"]), int(r["k"]), r["victims"], r["shuffle"], r["latency_us"])][r["bcast"]] = r
bad = []
for key, d in sorted(by.items()):
    if not all(b in d for b in ("chord", "bmg", "hba")):
        continue
    n, k, vic, sh, latency = key
    c, b, h = d["chord"], d["bmg"], d["hba"]
    npf = {x: float(d[x]["notices_per_failure"]) for x in d}
    hops = "/".join(d[x]["max_hops"] for x in ("chord", "bmg", "hba"))
    depth = "/".join(d[x]["depth_hops"] for x in ("chord", "bmg", "hba"))
    know = "/".join(d[x]["all_know_ms"] for x in ("chord", "bmg", "hba"))
    print(f"| {n} | {k} | {vic} | {sh} | {latency} | {npf['chord']:.0f} | {npf['bmg']:.0f} | {npf['hba']:.0f} | "
          f"{npf['chord'] / npf['bmg']:.3f} | {npf['chord'] / npf['hba']:.3f} | {hops} | {depth} | {c['hop_bound']} | {know} |")
    for x in d.values():
        if float(x["all_know_ms"]) < 0 or int(x["false_positives"]) != 0:
            bad.append(x)
print()
hop_ok = [r for r in sim if r["bcast"] in ("chord", "bmg")]
for col, what in (("depth_hops", "flood depth"), ("max_hops", "first-arrival hop count")):
    over = [r for r in hop_ok if int(r[col]) > int(r["hop_bound"])]
    print(f"- Chord and BMG runs whose {what} exceeds ceil(log2 N) + 1: {len(over)} of {len(hop_ok)}"
          + ("" if not over else " (" + ", ".join(f"{r['bcast']} N={r['n']} k={r['k']} latency {r['latency_us']}: {r[col]}" for r in over[:6]) + ")"))
hb = [r for r in sim if r["bcast"] == "hba"]
print(f"- HBA (k nearest on each side) needs up to {max(int(r['max_hops']) for r in hb)} hops "
      f"(diameter about N / (2 floor(log2 N))).")
print(f"- Runs where some survivor never learned a victim, or learned a live rank as failed: {len(bad)}.")
cons = [(int(r["n"]), int(r["k"]), r["bcast"], r["shuffle"], float(r["all_know_ms"])) for r in sim
        if r["victims"] == "consecutive" and int(r["k"]) == 16 and r["bcast"] == "chord"]
for n, k, bc, sh, ms in sorted(cons):
    print(f"- N={n}, 16 consecutive victims, chord, shuffle {sh}: everyone knows after {ms:.0f} ms")
