#!/usr/bin/env bash
# Legio's hierarchy at run time, Open MPI, 16 ranks on this host, K = 4 (4 local groups): the time from a
# SIGKILL to the survivors' next MPI_Allreduce result (slowest survivor), for a non-master (rank 13) and a
# master (rank 8), COHORT_HIERARCHY=off and =4 interleaved run by run; and the fault-free MPI_Allreduce of
# one long, off and 4, side by side. Needs `scripts/build openmpi` first.
#
#   bench/run_hierarchy.sh [outdir]   (default build/bench) -> hierarchy-run.csv; RUNS=7 REPS=300 by default
#
# Every launch holds /tmp/cohort-ranks.lock (one multi-rank job at a time on this machine).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/build/bench}
runs=${RUNS:-7}
reps=${REPS:-300}
np=16
k=4
bin=$root/build/openmpi/bench/hierarchy_bench
[ -x "$bin" ] || { echo "run_hierarchy: $bin missing (scripts/build openmpi)" >&2; exit 2; }
mkdir -p "$out"
csv=$out/hierarchy-run.csv
echo "kind,hierarchy,np,what,value1,value2,value3" >"$csv"
launch() {  # launch <hierarchy> args...
  local h=$1
  shift
  COHORT_HIERARCHY=$h COHORT_HB_PERIOD_MS=50 COHORT_HB_TIMEOUT_MS=500 flock /tmp/cohort-ranks.lock timeout 40 \
    "$root/scripts/cohort-run" --mpi openmpi --timeout 30 -n "$np" -- "$bin" "$@" 2>/dev/null | grep '^csv,' || true
}
for run in $(seq "$runs"); do
  for h in off $k; do
    launch "$h" free "$reps" | sed "s/^csv,free,/free,$h,/" >>"$csv"
    for v in 13 8; do
      # the slowest survivor of the run: kill,<h>,<np>,<victim>,<ms>,<local repairs>,<POV repairs> (of that rank)
      launch "$h" kill "$v" | sed "s/^csv,kill,//" | sort -t, -k3,3g | tail -1 | sed "s/^/kill,$h,/" >>"$csv"
    done
  done
done
python3 - "$csv" <<'PY'
import csv, statistics, sys
rows = list(csv.reader(open(sys.argv[1])))[1:]
def med(xs): return statistics.median(xs) if xs else float("nan")
print("| COHORT_HIERARCHY | fault-free MPI_Allreduce, median µs | kill non-master (13) -> result, median / max ms | kill master (8) -> result, median / max ms |")
print("|---|---|---|---|")
for h in ("off", "4"):
    free = [float(r[3]) for r in rows if r[0] == "free" and r[1] == h]
    k13 = [float(r[4]) for r in rows if r[0] == "kill" and r[1] == h and r[3] == "13"]
    k8 = [float(r[4]) for r in rows if r[0] == "kill" and r[1] == h and r[3] == "8"]
    print(f"| {h} | {med(free):.1f} | {med(k13):.2f} / {max(k13, default=float('nan')):.2f} ({len(k13)} runs) | "
          f"{med(k8):.2f} / {max(k8, default=float('nan')):.2f} ({len(k8)} runs) |")
PY
echo "run_hierarchy: CSV in $csv" >&2
