#!/usr/bin/env python3
"""Instructions per call of bench/osu's collectives under callgrind, one rank (nothing waits, so the count is
the same from run to run): cohort-linked `osu` against `osu_raw`, split by where they run.

    osu_instructions.py BUILDS LABEL [MPI...]    (appends CSV rows to stdout; MPI default: openmpi mpich)

BUILDS: the directory holding <mpi>/bench/osu{,_raw} (scripts/build's build/). Counted: the function `coll`
of bench/osu.c (one call each, --toggle-collect), 8 B, 1200 calls (OMB's 1000 + 200 warm-up) and the
barrier's `barrier_` (1200 calls: 1000 + 200 warm-up).
Columns: label,mpi,benchmark,variant,per_call (all instructions), in_program (the program's own object:
cohort's code, statically linked, and the benchmark's loop), in_libraries (MPI, libc, ...).
"""
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter

BENCHES = ["bcast", "reduce", "allreduce", "gather", "alltoall", "barrier"]


def per_object(path):
    """Self cost (Ir) per object of a callgrind output file."""
    names, cur, tot, in_call = {}, None, Counter(), False

    def name(v):
        m = re.match(r"\((\d+)\)(?: (.*))?", v)
        if not m:
            return v
        if m.group(2):
            names[m.group(1)] = m.group(2)
        return names[m.group(1)]

    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("ob="):
            cur = name(line[3:])
        elif line.startswith("cob="):
            name(line[4:])
        elif line.startswith("calls="):
            in_call = True
        elif line and (line[0].isdigit() or line[0] in "+-*"):
            if in_call:
                in_call = False  # (the inclusive cost of a call: not this function's own)
                continue
            parts = line.split()
            if len(parts) >= 2:
                tot[cur] += int(parts[1])
    return tot


def main():
    builds, label = sys.argv[1], sys.argv[2]
    mpis = sys.argv[3:] or ["openmpi", "mpich"]
    for mpi in mpis:
        launcher = ["/usr/bin/mpiexec." + mpi, "-n", "1"]
        if mpi == "openmpi" and os.getuid() == 0:
            launcher.append("--allow-run-as-root")
        for bench in BENCHES:
            for variant in ("osu", "osu_raw"):
                prog = os.path.join(builds, mpi, "bench", variant)
                fn, calls = ("barrier_", 1200) if bench == "barrier" else ("coll", 1200)
                with tempfile.NamedTemporaryFile(suffix=".cg") as cg:
                    subprocess.run(launcher + ["valgrind", "-q", "--tool=callgrind", "--collect-atstart=no",
                                               f"--toggle-collect={fn}", f"--callgrind-out-file={cg.name}", prog,
                                               bench, "--sizes", "8"],
                                   check=True, stdout=subprocess.DEVNULL, timeout=600)
                    tot = per_object(cg.name)
                own = sum(v for k, v in tot.items() if k and k.endswith("/bench/" + variant))
                allc = sum(tot.values())
                print(f"{label},{mpi},{bench},{'cohort' if variant == 'osu' else 'raw'},"
                      f"{allc / calls:.0f},{own / calls:.0f},{(allc - own) / calls:.0f}", flush=True)


if __name__ == "__main__":
    main()
