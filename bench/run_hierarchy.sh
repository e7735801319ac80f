#!/usr/bin/env bash
# Legio's hierarchy at run time, Open MPI, 16 ranks on this host, K = 4 (4 local groups): the time from a
# SIGKILL to the survivors' next MPI_Allreduce result (slowest survivor), for a non-master (rank 13) and a
# master (rank 8), COHORT_HIERARCHY=off and =4 interleaved run by run; and the fault-free MPI_Allreduce of
# one long, off and 4, side by side. Needs `scripts/build openmpi` first.
#
#   bench/run_hierarchy.sh [outdir]   (default build/bench) -> hierarchy-run.csv; RUNS=7 REPS=300 by default;
#                                   KINDS="free" or "kill" for one half (default both); LAUNCH_TIMEOUT=S
#                                   seconds per launch (default 30); launches' stderr: hierarchy-launches.log
#   HOSTS=4 bench/run_hierarchy.sh [outdir]   the same on 4 namespace hosts of scripts/cohort-hosts (needs
#                                   root), 4 ranks a host (ranks 0-3 on h1, ...: the K = 4 groups are the
#                                   hosts; 8 dies on h3, 13 on h4) -> hierarchy-hosts.csv
#
# Every launch holds /tmp/cohort-ranks.lock (one multi-rank job at a time on this machine).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/build/bench}
runs=${RUNS:-7}
reps=${REPS:-300}
limit=${LAUNCH_TIMEOUT:-30}  # seconds per launch
np=16
k=4
bin=$root/build/openmpi/bench/hierarchy_bench
[ -x "$bin" ] || { echo "run_hierarchy: $bin missing (scripts/build openmpi)" >&2; exit 2; }
hosts=${HOSTS:-}
if [ -n "$hosts" ] && [ -z "${HOSTBED_HOSTS:-}" ]; then
  # one bed for the whole series (bringing it up needs no ranks, so it holds no lock)
  exec "$root/scripts/cohort-hosts" -H "$hosts" -- "$0" "$out"
fi
mkdir -p "$out"
csv=$out/hierarchy-run.csv
where=()
period=50 timeout_ms=500
if [ -n "$hosts" ]; then
  csv=$out/hierarchy-hosts.csv
  where=(--hosts "$HOSTBED_HOSTS")
  # NOTE: 16 ranks over the bed's TCP on 2 cores: with a 500 ms timeout the heartbeats of a whole host
  # came late and the ranks fenced themselves as a minority (seen in the first launch).
  period=200 timeout_ms=3000
fi
echo "kind,hierarchy,np,what,value1,value2,value3" >"$csv"
launch() {  # launch <hierarchy> args...
  local h=$1
  shift
  COHORT_HIERARCHY=$h COHORT_HB_PERIOD_MS=$period COHORT_HB_TIMEOUT_MS=$timeout_ms flock /tmp/cohort-ranks.lock timeout $((limit + 10)) \
    "$root/scripts/cohort-run" --mpi openmpi --timeout "$limit" "${where[@]}" -n "$np" -- "$bin" "$@" 2>>"$out/hierarchy-launches.log" | grep '^csv,' || true
}
kinds=${KINDS:-free kill}
for run in $(seq "$runs"); do
  for h in off $k; do
    case " $kinds " in *" free "*) launch "$h" free "$reps" | sed "s/^csv,free,/free,$h,/" >>"$csv" ;; esac
    case " $kinds " in *" kill "*) ;; *) continue ;; esac
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
