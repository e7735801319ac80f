#!/usr/bin/env bash
# bench/run_overhead_series.sh: bench/overhead over many launches, for ratios steadier than one run's.
# One launch on this 2-core shared machine swings by ±30% per row; this runs L launches of each
# configuration (Open MPI 4 ranks, Open MPI 2 ranks, MPICH 2 ranks), alternating configuration launch by
# launch, and reports per row the median over launches of wrapped/real (each launch's wrapped/real is itself
# the ratio of the medians of its batches, measured side by side in one process), with min–max.
#   bench/run_overhead_series.sh [--launches L] [--batches B] [--name NAME] [--summary-only]
#     L default 7, B (bench/overhead's batch rounds per launch) default 9, NAME default overhead-series.
# Each launch holds /tmp/cohort-ranks.lock for itself only, so that others run in between.
# Writes bench/results/NAME.csv (bench/overhead's columns after a launch column) and NAME-summary.md
# (bench/overhead_series_summary.py). The file rows write into a directory under build/<mpi>/bench (ext4).
# Needs scripts/build openmpi and scripts/build mpich first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/bench/results
launches=7 batches=9 name=overhead-series summary_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --launches) launches=$2; shift 2 ;;
    --batches) batches=$2; shift 2 ;;
    --name) name=$2; shift 2 ;;
    --summary-only) summary_only=1; shift ;;
    *) echo "usage: run_overhead_series.sh [--launches L] [--batches B] [--name NAME] [--summary-only]" >&2; exit 2 ;;
  esac
done
csv=$out/$name.csv
cmd="bench/run_overhead_series.sh --launches $launches --batches $batches"
if [ "$summary_only" = 0 ]; then
  for mpi in openmpi mpich; do
    [ -x "$root/build/$mpi/bench/overhead" ] || { echo "run_overhead_series: build $mpi first (scripts/build $mpi)" >&2; exit 2; }
  done
  mkdir -p "$out"
  echo "launch,mpi,ranks,call,bytes,batches,calls_per_batch,real_us,wrapped_us,ratio,nb_us,nb_confirm_us,nb_ratio,nb_confirm_ratio" > "$csv"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  for ((i = 1; i <= launches; i++)); do
    for config in "openmpi 4" "openmpi 2" "mpich 2"; do
      set -- $config
      mpi=$1 np=$2
      echo "== launch $i/$launches: $mpi, $np ranks"
      rm -f "$tmp/one.csv"
      # NOTE: one rank per core at 2 ranks, as Open MPI binds by default at <= 2 ranks and MPICH's hydra does not
      HYDRA_BINDING=core flock /tmp/cohort-ranks.lock timeout 600 "$root/scripts/cohort-run" --mpi "$mpi" \
        --timeout 590 -n "$np" "$root/build/$mpi/bench/overhead" "$batches" "$tmp/one.csv" "$root/build/$mpi/bench"
      tail -n +2 "$tmp/one.csv" | sed "s/^/$i,/" >> "$csv"
    done
  done
fi
python3 "$root/bench/overhead_series_summary.py" "$csv" "$cmd" > "$out/$name-summary.md"
cat "$out/$name-summary.md"
