#!/usr/bin/env bash
# bench/run_replica.sh: replication's cost (docs/design/replication.md) and its SDC checking's
# (docs/design/sdc.md), side by side in one run: each benchmark launched as raw MPI (the *_raw build),
# through cohort at r = 1, and at r = 2 with COHORT_SDC=off, hash (the default) and full (r = 3 too with
# --r3), at the same logical ranks, alternately round by round with the same scripts/cohort-run.
#   bench/run_replica.sh [--rounds R] [--mpi openmpi|mpich] [--r3] [--name NAME] [--summary-only]
#     R default 3; NAME default replica.
# Variants: raw, r1, r2off, r2 (hash), r2full (and r3off, r3, r3full).
# Benchmarks (logical ranks): OSU ping-pong latency and bandwidth at 8 B, 1 KiB and 1 MiB, Allreduce and
# Bcast at 8 B and 64 KiB (bench/osu.c, 2 ranks); EP class A end to end (examples/ep, 1 and 2 ranks); the
# CG-like loop (bench/replica_cg.c, 2 ranks). A run with more processes than cores (r x ranks > nproc) is
# marked oversubscribed in the summary. Under MPICH (which busy-polls: oversubscribed it is ~1000x slower)
# only the runs that fit the cores are made.
# Each launch holds /tmp/cohort-ranks.lock for itself only. Writes bench/results/NAME.csv
# (round,mpi,benchmark,bytes,ranks,variant,processes,value: µs for latency and collectives, MB/s for bw,
# s for ep, ms for cg; benchmark cg_rss: the CG loop's peak resident memory of rank 0's process, KiB) and
# NAME-summary.md (bench/replica_summary.py). Needs scripts/build <mpi> first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/bench/results
rounds=3 mpi=openmpi r3=0 name=replica summary_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --mpi) mpi=$2; shift 2 ;;
    --r3) r3=1; shift ;;
    --name) name=$2; shift 2 ;;
    --summary-only) summary_only=1; shift ;;
    *) echo "usage: run_replica.sh [--rounds R] [--mpi openmpi|mpich] [--r3] [--name NAME] [--summary-only]" >&2
       exit 2 ;;
  esac
done
build=$root/build/$mpi
csv=$out/$name.csv
cores=$(nproc)
variants=(raw r1 r2off r2 r2full)
[ "$r3" = 1 ] && variants+=(r3off r3 r3full)

# launch ROUND BENCH RANKS VARIANT PROG ARGS...: one launch; its rows go to the CSV.
launch() {
  local round=$1 bench=$2 np=$3 v=$4 prog=$5
  shift 5
  local r=1 exe=$build/$prog sdc=hash
  case $v in
    raw) exe=$build/${prog}_raw ;;
    r?off) r=${v:1:1} sdc=off ;;
    r?full) r=${v:1:1} sdc=full ;;
    r?) r=${v:1:1} ;;
  esac
  local procs=$((np * r))
  if [ "$mpi" = mpich ] && [ "$procs" -gt "$cores" ]; then return 0; fi
  echo "== round $round/$rounds: $mpi $bench, $np ranks, $v ($procs processes)" >&2
  local t0 t1 lines
  t0=$(date +%s.%N)
  lines=$(COHORT_REPLICAS=$r COHORT_SDC=$sdc flock /tmp/cohort-ranks.lock timeout 900 "$root/scripts/cohort-run" --mpi "$mpi" \
            --timeout 890 -n "$np" "$exe" "$@" 2>/dev/null) || { echo "run_replica: $bench $v failed" >&2; return 0; }
  t1=$(date +%s.%N)
  case $bench in
    osu) grep '^osu,' <<<"$lines" | awk -F, -v p="$round,$mpi" -v s="$np,$v,$procs" '{print p","$2","$3","s","$4}' ;;
    ep)  echo "$round,$mpi,ep_A,0,$np,$v,$procs,$(awk "BEGIN{print $t1 - $t0}")" ;;
    cg)  grep '^replica_cg,' <<<"$lines" | awk -F, -v p="$round,$mpi" -v s="$np,$v,$procs" \
           '{print p",cg,0,"s","$3; print p",cg_rss,0,"s","$5}' ;;
  esac >>"$csv"
}

if [ "$summary_only" = 0 ]; then
  for p in bench/osu bench/osu_raw bench/replica_cg bench/replica_cg_raw examples/ep examples/ep_plain; do
    [ -x "$build/$p" ] || { echo "run_replica: build $mpi first (scripts/build $mpi): $build/$p is missing" >&2; exit 2; }
  done
  mkdir -p "$out"
  echo "round,mpi,benchmark,bytes,ranks,variant,processes,value" >"$csv"
  # NOTE: the ep rows time the whole launch (cohort-run included), as a user's job script would.
  ln -sf "$build/examples/ep_plain" "$build/examples/ep_raw"
  for ((i = 1; i <= rounds; i++)); do
    n=${#variants[@]}
    for ((k = 0; k < n; k++)); do
      v=${variants[$(((i + k) % n))]}
      launch "$i" osu 2 "$v" bench/osu latency,bw,allreduce,bcast --sizes 8,1024,65536,1048576
      launch "$i" ep 1 "$v" examples/ep A
      launch "$i" ep 2 "$v" examples/ep A
      launch "$i" cg 2 "$v" bench/replica_cg 5
    done
  done
fi
python3 "$root/bench/replica_summary.py" "$csv" "$cores" >"$out/$name-summary.md"
cat "$out/$name-summary.md"
