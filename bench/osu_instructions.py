#!/usr/bin/env python3
"""Instructions per call of bench/osu's collectives under callgrind: cohort-linked `osu` against `osu_raw`,
split by where they run.

    osu_instructions.py BUILDS LABEL [--ranks N] [--benchmarks a,b] [MPI...]
        (appends CSV rows to stdout; MPI default: openmpi mpich)

BUILDS: the directory holding <mpi>/bench/osu{,_raw} (scripts/build's build/). 8 B, 1200 iterations (OMB's
1000 + 200 warm-up). COHORT_* variables in the environment reach the ranks (e.g. COHORT_CONFIRM_WINDOW).
- One rank (the default): nothing waits, so the count repeats exactly from run to run. Counted: the function
  `coll` of bench/osu.c (one call each, --toggle-collect) or, for the barrier, `barrier_`.
- N ranks (scripts/cohort-run, every rank under callgrind): an iteration is the call and the MPI_Barrier
  that separates iterations (`coll` and `barrier_`), averaged over ranks. Waits poll, so the counts vary
  with timing; the count of PMPI_Isend calls made by cohort's code per iteration (its schedules' messages
  and its count reports) shows the rounds of messages an iteration costs.
Columns: label,mpi,ranks,benchmark,variant,per_call (all instructions), in_program (the program's own
object: cohort's code, statically linked, and the benchmark's loop), in_libraries (MPI, libc, ...),
isends (PMPI_Isend calls per iteration and rank; 0 for raw, whose sends stay inside MPI).
"""
import glob
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter

BENCHES = ["bcast", "reduce", "allreduce", "gather", "alltoall", "barrier"]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse(path):
    """Self cost (Ir) per object of a callgrind output file, and calls per callee function name."""
    names, cur, tot, in_call, callee = {}, None, Counter(), False, None
    calls = Counter()

    def name(v, table):
        m = re.match(r"\((\d+)\)(?: (.*))?", v)
        if not m:
            return v
        if m.group(2):
            table[m.group(1)] = m.group(2)
        return table.get(m.group(1), v)

    fnames = {}
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("ob="):
            cur = name(line[3:], names)
        elif line.startswith("cob="):
            name(line[4:], names)
        elif line.startswith("fn="):
            name(line[3:], fnames)
        elif line.startswith("cfn="):
            callee = name(line[4:], fnames)
        elif line.startswith("calls="):
            in_call = True
            calls[callee] += int(line[6:].split()[0])
        elif line and (line[0].isdigit() or line[0] in "+-*"):
            if in_call:
                in_call = False  # (the inclusive cost of a call: not this function's own)
                continue
            parts = line.split()
            if len(parts) >= 2:
                tot[cur] += int(parts[1])
    return tot, calls


def main():
    args = sys.argv[1:]
    ranks, benches, rest = 1, BENCHES, []
    while args:
        a = args.pop(0)
        if a == "--ranks":
            ranks = int(args.pop(0))
        elif a == "--benchmarks":
            benches = args.pop(0).split(",")
        else:
            rest.append(a)
    builds, label = rest[0], rest[1]
    mpis = rest[2:] or ["openmpi", "mpich"]
    iters = 1200
    for mpi in mpis:
        for bench in benches:
            for variant in ("osu", "osu_raw"):
                prog = os.path.join(builds, mpi, "bench", variant)
                if ranks == 1:
                    fns = ["barrier_"] if bench == "barrier" else ["coll"]
                    launcher = ["/usr/bin/mpiexec." + mpi, "-n", "1"]
                    if mpi == "openmpi" and os.getuid() == 0:
                        launcher.append("--allow-run-as-root")
                else:
                    fns = ["barrier_"] if bench == "barrier" else ["coll", "barrier_"]
                    launcher = [os.path.join(ROOT, "scripts", "cohort-run"), "--mpi", mpi, "--timeout", "900",
                                "-n", str(ranks)]
                with tempfile.TemporaryDirectory() as d:
                    out = os.path.join(d, "cg.%p")
                    subprocess.run(launcher + ["valgrind", "-q", "--tool=callgrind", "--collect-atstart=no"] +
                                   [f"--toggle-collect={f}" for f in fns] +
                                   [f"--callgrind-out-file={out}", prog, bench, "--sizes", "8"],
                                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=960)
                    tot, calls, files = Counter(), Counter(), glob.glob(os.path.join(d, "cg.*"))
                    for f in files:
                        t, c = parse(f)
                        tot += t
                        calls += c
                n = iters * max(len(files), 1)
                own = sum(v for k, v in tot.items() if k and k.endswith("/bench/" + variant))
                allc = sum(tot.values())
                isends = calls.get("PMPI_Isend", 0) if variant == "osu" else 0
                print(f"{label},{mpi},{ranks},{bench},{'cohort' if variant == 'osu' else 'raw'},"
                      f"{allc / n:.0f},{own / n:.0f},{(allc - own) / n:.0f},{isends / n:.2f}", flush=True)


if __name__ == "__main__":
    main()
