#!/usr/bin/python3
"""Plots of the current results in bench/results/ for docs/performance.md, as SVG into docs/plots/.

  bench/plots.py            (Debian's python3-matplotlib; scripts/setup installs it)

  overhead.svg      wrapped/real per call at 8 B and 64 KiB (overhead-series.csv, median over launches)
  detection.svg     SIGKILL -> last survivor notified, pidfd on and off, one host and 4 hosts
                    (detector_pidfd.csv, detector_hosts.csv)
  repair.svg        repair time after k failures and fault-free agree/shrink against ranks (repair.csv)
  propagation.svg   the failure notice's flood against N in the simulator: notices per failure and depth
                    (detector_sim.csv)
  osu.svg           the OSU loops (bench/osu.c): cohort/raw against message size, per benchmark and
                    configuration, median over rounds (osu.csv)
The SVGs carry no date, so a rerun on the same data changes nothing.
"""
import csv
import statistics
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RES = ROOT / "bench/results"
OUT = ROOT / "docs/plots"
plt.rcParams.update({"svg.hashsalt": "cohort", "font.size": 9})


def rows(name):
    with open(RES / name, newline="") as f:
        return list(csv.DictReader(f))


def save(fig, name):
    OUT.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(OUT / name, metadata={"Date": None})
    plt.close(fig)


def overhead():
    ratios = defaultdict(list)
    for r in rows("overhead-series.csv"):
        if r["call"].startswith(("MPI_Put", "MPI_File")):
            continue
        ratios[(r["call"], int(r["bytes"]), f"{r['mpi']} {r['ranks']}")].append(float(r["ratio"]))
    calls = list(dict.fromkeys(k[0] for k in ratios))
    configs = ["openmpi 4", "openmpi 2", "mpich 2"]
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4), sharey=True)
    for ax, size, label in ((axes[0], 8, "8 B"), (axes[1], 65536, "64 KiB")):
        width = 0.27
        for i, cfg in enumerate(configs):
            ys = [statistics.median(ratios.get((c, size if c != "MPI_Barrier" else 0, cfg), [float("nan")]))
                  for c in calls]
            ax.bar([x + (i - 1) * width for x in range(len(calls))], ys, width, label=cfg)
        ax.set_yscale("log")
        ax.axhline(1, color="grey", lw=0.8)
        ax.set_xticks(range(len(calls)))
        ax.set_xticklabels([c.replace("MPI_", "").replace("+Wait", "") for c in calls], rotation=45, ha="right")
        ax.set_title(f"{label} (Barrier: no payload)")
    axes[0].set_ylabel("wrapped / MPI's own call")
    axes[1].legend()
    save(fig, "overhead.svg")


def detection():
    fig, ax = plt.subplots(figsize=(6, 3))
    groups = defaultdict(list)
    for r in rows("detector_pidfd.csv"):
        groups[f"{r['mpi']} {r['n']}, pidfd {r['pidfd']}"].append(float(r["last_ms"]))
    for r in rows("detector_hosts.csv"):
        groups[f"{r['mpi']} {r['n']} on {r['hosts']} hosts, {r['case'].replace('_', ' ')}"].append(float(r["last_ms"]))
    labels = sorted(groups)
    ax.boxplot([groups[k] for k in labels], vert=False, labels=labels)
    ax.set_xscale("log")
    ax.set_xlabel("SIGKILL -> last survivor notified (ms)")
    save(fig, "detection.svg")


def repair():
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.2))
    rep = defaultdict(list)
    free = {}
    for r in rows("repair.csv"):
        if r["kind"] == "repair" and r["mpi"] == "openmpi":
            rep[(int(r["what"]), int(r["np"]))].append(float(r["value1"]))
        if r["kind"] == "free" and r["mpi"] == "openmpi":
            free[(r["what"], int(r["np"]))] = float(r["value1"])
    for label, pick in (("k = 1", lambda k, n: k == 1), ("k = 2", lambda k, n: k == 2),
                        ("k = N/2", lambda k, n: k == n // 2 and k > 2)):
        pts = sorted((n, statistics.median(v)) for (k, n), v in rep.items() if pick(k, n))
        if pts:
            axes[0].plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=label)
    axes[0].set_xlabel("ranks (Open MPI)")
    axes[0].set_ylabel("last detection -> shrunk communicator (ms)")
    axes[0].legend()
    for what in ("allreduce", "agree", "dup", "shrink"):
        pts = sorted((n, v) for (w, n), v in free.items() if w == what)
        axes[1].plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=what)
    axes[1].set_xlabel("ranks (Open MPI)")
    axes[1].set_ylabel("fault-free, median (µs)")
    axes[1].set_yscale("log")
    axes[1].legend()
    for ax in axes:
        ax.set_xscale("log", base=2)
    save(fig, "repair.svg")


def propagation():
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.2))
    for bcast in ("chord", "bmg", "hba"):
        pts = sorted((int(r["n"]), float(r["notices_per_failure"]), int(r["depth_hops"]))
                     for r in rows("detector_sim.csv")
                     if r["bcast"] == bcast and r["k"] == "1" and r["victims"] == "random" and r["shuffle"] == "0"
                     and r["latency_us"] == "20+exp30")
        axes[0].plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=bcast)
        axes[1].plot([p[0] for p in pts], [p[2] for p in pts], "o-", label=bcast)
    axes[0].set_ylabel("notices per failure")
    axes[0].set_yscale("log")
    axes[1].set_ylabel("flood depth (hops)")
    axes[1].set_yscale("log")
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xlabel("ranks N (simulated)")
        ax.legend()
    save(fig, "propagation.svg")


def osu():
    vals = defaultdict(list)
    for r in rows("osu.csv"):
        vals[(r["mpi"], int(r["ranks"]), r["benchmark"], int(r["bytes"]), r["variant"])].append(float(r["value"]))
    med = {k: statistics.median(v) for k, v in vals.items()}
    benches = ["latency", "bw", "bcast", "reduce", "allreduce", "gather", "alltoall"]
    configs = [("openmpi", 2), ("openmpi", 4), ("mpich", 2)]
    fig, axes = plt.subplots(2, 4, figsize=(11, 5.2), sharex=True)
    for ax, bench in zip(axes.flat, benches):
        for mpi, np in configs:
            pts = []
            for (m, n, b, size, v), c in med.items():
                if (m, n, b, v) != (mpi, np, bench, "cohort") or (b in ("latency", "bw") and n != 2):
                    continue
                raw = med.get((m, n, b, size, "raw"))
                if raw:
                    pts.append((size, c / raw))
            pts.sort()
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", ms=2.5, label=f"{mpi} {np}")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.axhline(1, color="grey", lw=0.8)
        ax.set_title(bench + (" (cohort's bandwidth / raw)" if bench == "bw" else " (cohort / raw)"), fontsize=8)
    for ax in axes[1]:
        ax.set_xlabel("bytes")
    axes.flat[-1].axis("off")
    axes.flat[0].legend(fontsize=7)
    save(fig, "osu.svg")


if __name__ == "__main__":
    overhead()
    detection()
    repair()
    propagation()
    osu()
    print(f"plots: wrote {OUT}/{{overhead,detection,repair,propagation,osu}}.svg")
