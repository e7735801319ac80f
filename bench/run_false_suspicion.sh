#!/usr/bin/env bash
# False suspicion under load: runs a fault-free job many times while busy processes load the cores, and
# counts the runs in which cohort suspected (declared dead) any rank. No rank dies, so every suspicion is
# a false one.
#
#   bench/run_false_suspicion.sh [--mpi openmpi|mpich] [--runs 100] [--load 6] [--np 4] [--tag label]
#                                [--first K] [-- program args...]
#
# Defaults: Open MPI, 100 runs, 6 busy processes (3x the 2 cores of these machines), 4 ranks of
# examples/montecarlo_pi (12 rounds of 100000 samples, an MPI_Reduce per round), cohort's default
# heartbeat settings. --first K numbers the runs from K (to split a measurement into chunks under the
# rank lock). Appends one line per run to bench/results/false_suspicion.csv:
#   tag,mpi,np,load,run,exit,suspicions,fenced,wall_ms,loadavg
# and prints the runs with a suspicion. Run it under the rank lock:
#   flock /tmp/cohort-ranks.lock bench/run_false_suspicion.sh --runs 50
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
mpi=openmpi runs=100 load=6 np=4 tag=current first=1
while [ $# -gt 0 ]; do
  case "$1" in
    --mpi) mpi=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --load) load=$2; shift 2 ;;
    --np) np=$2; shift 2 ;;
    --tag) tag=$2; shift 2 ;;
    --first) first=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "run_false_suspicion: unknown option $1" >&2; exit 2 ;;
  esac
done
if [ $# -eq 0 ]; then set -- "$root/build/$mpi/examples/montecarlo_pi" 12 100000; fi
[ -x "$1" ] || { echo "run_false_suspicion: $1 is missing (scripts/build $mpi)" >&2; exit 2; }
out=$root/bench/results/false_suspicion.csv
[ -s "$out" ] || echo "tag,mpi,np,load,run,exit,suspicions,fenced,wall_ms,loadavg" > "$out"

hogs=()
stop_hogs() { [ ${#hogs[@]} -gt 0 ] && kill "${hogs[@]}" 2>/dev/null; wait 2>/dev/null; }
trap stop_hogs EXIT
for ((i = 0; i < load; i++)); do
  sh -c 'while :; do :; done' &
  hogs+=($!)
done
sleep 2  # let the load settle

log=$(mktemp)
any=0
for ((k = first; k < first + runs; k++)); do
  t0=$(date +%s%N)
  "$root/scripts/cohort-run" --mpi "$mpi" --timeout 120 -n "$np" -- "$@" > "$log" 2>&1
  rc=$?
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  sus=$(grep -c 'suspected after' "$log")
  fen=$(grep -c 'error: fenced' "$log")
  la=$(cut -d' ' -f1 /proc/loadavg)
  echo "$tag,$mpi,$np,$load,$k,$rc,$sus,$fen,$ms,$la" >> "$out"
  if [ "$sus" -gt 0 ] || [ "$rc" -ne 0 ]; then
    any=$((any + 1))
    echo "run $k: exit $rc, $sus suspicion(s), $fen fenced, ${ms} ms, load $la"
    grep -E 'suspected after|fenced|cohort-run:' "$log" | head -5 | sed 's/^/    /'
  fi
done
rm -f "$log"
echo "$tag: $any of $runs runs with a suspicion or a non-zero exit ($mpi, $np ranks, $load busy processes)"
