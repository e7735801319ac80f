#!/usr/bin/env bash
# Ping-pong overhead of cohort's point-to-point wrappers against MPI's own calls, 2 ranks, 8 B and 1 MiB,
# for each MPI that is built (build/<mpi>/bench/pingpong; scripts/build <mpi> first).
#   bench/run_pingpong.sh [--out DIR] [--trials T]     (default DIR: build/bench-results)
# Writes DIR/pingpong-<mpi>.csv (every trial) and DIR/pingpong-summary.txt (medians, ratios, targets:
# <= 1.15x at 8 B, <= 1.03x at 1 MiB).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/build/bench-results
trials=15
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --trials) trials=$2; shift 2 ;;
    *) echo "run_pingpong.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
summary=$out/pingpong-summary.txt
: > "$summary"
ran=0
for mpi in openmpi mpich; do
  prog=$root/build/$mpi/bench/pingpong
  [ -x "$prog" ] || { echo "run_pingpong.sh: $prog not built; skipping $mpi" >&2; continue; }
  csv=$out/pingpong-$mpi.csv
  # NOTE: never two multi-rank jobs at once on this machine: hold the test lock.
  flock /tmp/cohort-mpi-tests.lock timeout 600 "$root/scripts/cohort-run" --mpi "$mpi" --timeout 580 -n 2 \
    "$prog" --csv "$csv" --trials "$trials" | tee -a "$summary"
  ran=1
done
[ $ran = 1 ] || { echo "run_pingpong.sh: nothing built" >&2; exit 1; }
awk '/^pingpong/ {
  target = ($3 == 8) ? 1.15 : 1.03
  ratio = $NF
  printf "%s %s B %s: ratio %s (target <= %.2f) %s\n", $2, $3, $5, ratio, target, (ratio <= target ? "ok" : "ABOVE TARGET")
}' "$summary" | tee -a "$summary.tmp"
cat "$summary.tmp" >> "$summary"; rm -f "$summary.tmp"
echo "run_pingpong.sh: CSV and summary in $out"
