#!/usr/bin/env bash
# bench/run_osu.sh: the OSU micro-benchmarks' loops (bench/osu.c) as users run them, at default settings:
# `osu_raw` (the MPI only), `osu_raw --floor` (every timed call by its nonblocking variant, polled: the floor
# of any design that never blocks on a dead rank), `osu_raw --floor-confirm` (that, each collective followed
# by a polled MPI_Ibarrier: the floor of confirming each call) and `osu` (linked with cohort), launched alternately with
# the same scripts/cohort-run, for Open MPI at 2 and 4 ranks and MPICH at 2.
#   bench/run_osu.sh [--rounds R] [--configs "openmpi:2 openmpi:4 mpich:2"] [--benchmarks LIST]
#                    [--sizes LIST] [--name NAME] [--builds DIR] [--summary-only]
#     R default 5; LIST: comma-separated (osu.c's names; default all, every size 1 B .. 1 MiB);
#     NAME default osu; DIR: where <mpi>/bench/osu{,_raw} are (default build/, scripts/build's). COHORT_* variables in the environment reach the cohort-linked ranks (cohort-run).
# Each launch holds /tmp/cohort-ranks.lock for itself only; the variants' order rotates round by round.
# Writes bench/results/NAME.csv (round,mpi,ranks,variant,benchmark,bytes,value: µs, MB/s for bw) and
# NAME-summary.md (bench/osu_summary.py: median over rounds, cohort/raw, cohort/floor, cohort/confirm).
# Needs scripts/build openmpi and scripts/build mpich first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/bench/results
rounds=5 configs="openmpi:2 openmpi:4 mpich:2" benchmarks=all sizes="" name=osu builds=$root/build summary_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --configs) configs=$2; shift 2 ;;
    --benchmarks) benchmarks=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --name) name=$2; shift 2 ;;
    --builds) builds=$2; shift 2 ;;
    --summary-only) summary_only=1; shift ;;
    *) echo "usage: run_osu.sh [--rounds R] [--configs LIST] [--benchmarks LIST] [--sizes LIST] [--name NAME] [--summary-only]" >&2; exit 2 ;;
  esac
done
csv=$out/$name.csv
cmd="bench/run_osu.sh --rounds $rounds --configs \"$configs\" --benchmarks $benchmarks${sizes:+ --sizes $sizes}"
if [ "$summary_only" = 0 ]; then
  for c in $configs; do
    mpi=${c%%:*}
    for b in osu osu_raw; do
      [ -x "$builds/$mpi/bench/$b" ] || { echo "run_osu: build $mpi first (scripts/build $mpi)" >&2; exit 2; }
    done
  done
  mkdir -p "$out"
  echo "round,mpi,ranks,variant,benchmark,bytes,value" > "$csv"
  args=("$benchmarks")
  [ -n "$sizes" ] && args+=(--sizes "$sizes")
  variants=(raw floor confirm cohort)
  for ((i = 1; i <= rounds; i++)); do
    for c in $configs; do
      mpi=${c%%:*} np=${c##*:}
      for ((k = 0; k < 4; k++)); do
        v=${variants[$(((i + k) % 4))]}
        case $v in
          raw) prog=(osu_raw "${args[@]}") ;;
          floor) prog=(osu_raw "${args[@]}" --floor) ;;
          confirm) prog=(osu_raw "${args[@]}" --floor-confirm) ;;
          cohort) prog=(osu "${args[@]}") ;;
        esac
        echo "== round $i/$rounds: $mpi, $np ranks, $v" >&2
        # NOTE: one rank per core at 2 ranks, as Open MPI binds by default at <= 2 ranks and MPICH's hydra does not
        HYDRA_BINDING=core flock /tmp/cohort-ranks.lock timeout 600 "$root/scripts/cohort-run" --mpi "$mpi" \
          --timeout 590 -n "$np" "$builds/$mpi/bench/${prog[0]}" "${prog[@]:1}" 2>/dev/null |
          grep '^osu,' | sed "s/^osu,/$i,$mpi,$np,$v,/" >> "$csv"
      done
    done
  done
fi
python3 "$root/bench/osu_summary.py" "$csv" "$cmd" > "$out/$name-summary.md"
cat "$out/$name-summary.md"
