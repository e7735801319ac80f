#!/usr/bin/env bash
# bench/run_overhead_before_after.sh: bench/overhead of two builds of cohort (before and after a change),
# launches alternating in one run, for ratios that compare beside the launches' spread.
#   bench/run_overhead_before_after.sh BEFORE AFTER [--launches L] [--batches B] [--name NAME] [--configs LIST]
#     BEFORE, AFTER: build directories prefixes, each with <prefix>-<mpi>/bench/overhead for mpich, and
#       <prefix>/bench/overhead for openmpi (e.g. build/ovh-before gives build/ovh-before/bench/overhead and
#       build/ovh-before-mpich/bench/overhead)
#     L launches of each build per configuration (default 7), B batch rounds per launch (default 9),
#     NAME the results' name (default overhead-before-after), LIST configurations "mpi:ranks,..." (default
#     openmpi:2,openmpi:4,mpich:2).
# Round i runs every configuration once with each build, the two builds in alternating order (before first
# at odd i, after first at even i). Each round holds /tmp/cohort-ranks.lock, so that its launches run back to
# back: the two builds of a pair see the same machine, and a round waits for the lock once.
# The rows: OVERHEAD_CALLS (default every call but MPI_File_write_at_all) at OVERHEAD_BYTES (default 8).
# Writes bench/results/NAME.csv (a build and a launch column, then bench/overhead's columns) and
# NAME-summary.md (bench/overhead_before_after_summary.py).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/bench/results
[ $# -ge 2 ] || { echo "usage: run_overhead_before_after.sh BEFORE AFTER [--launches L] [--batches B] [--name NAME] [--configs LIST]" >&2; exit 2; }
before=$1 after=$2
shift 2
launches=7 batches=9 name=overhead-before-after configs=openmpi:2,openmpi:4,mpich:2
while [ $# -gt 0 ]; do
  case "$1" in
    --launches) launches=$2; shift 2 ;;
    --batches) batches=$2; shift 2 ;;
    --name) name=$2; shift 2 ;;
    --configs) configs=$2; shift 2 ;;
    *) echo "run_overhead_before_after: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
export OVERHEAD_BYTES=${OVERHEAD_BYTES:-8}
export OVERHEAD_CALLS=${OVERHEAD_CALLS:-MPI_Barrier,MPI_Bcast,MPI_Reduce,MPI_Allreduce,MPI_Gather,MPI_Gatherv,MPI_Allgather,MPI_Alltoall,MPI_Iallreduce+Wait,MPI_Put+Win_fence,MPI_Put+Win_fence/msg}
program() {  # program <prefix> <mpi>
  if [ "$2" = openmpi ]; then echo "$1/bench/overhead"; else echo "$1-$2/bench/overhead"; fi
}
for c in ${configs//,/ }; do
  for b in "$before" "$after"; do
    p=$(program "$b" "${c%%:*}")
    [ -x "$p" ] || { echo "run_overhead_before_after: no $p (build bench/overhead there first)" >&2; exit 2; }
  done
done
mkdir -p "$out"
csv=$out/$name.csv
echo "build,launch,mpi,ranks,call,bytes,batches,calls_per_batch,real_us,wrapped_us,ratio,nb_us,nb_confirm_us,nb_ratio,nb_confirm_ratio" > "$csv"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
round() {  # round <i>: the caller holds the lock
  local i=$1 c mpi np order which prefix
  for c in ${configs//,/ }; do
    mpi=${c%%:*} np=${c##*:}
    order="before after"
    [ $((i % 2)) = 0 ] && order="after before"
    for which in $order; do
      prefix=$before
      [ "$which" = after ] && prefix=$after
      echo "== launch $i/$launches: $mpi, $np ranks, $which"
      rm -f "$tmp/one.csv"
      # NOTE: one rank per core at 2 ranks, as Open MPI binds by default at <= 2 ranks and MPICH's hydra does not
      HYDRA_BINDING=core timeout 600 "$root/scripts/cohort-run" --mpi "$mpi" \
        --timeout 590 -n "$np" "$(program "$prefix" "$mpi")" "$batches" "$tmp/one.csv" >/dev/null
      tail -n +2 "$tmp/one.csv" | sed "s/^/$which,$i,/" >> "$csv"
    done
  done
}
for ((i = 1; i <= launches; i++)); do
  ( flock 9; round "$i" ) 9>/tmp/cohort-ranks.lock
done
python3 "$root/bench/overhead_before_after_summary.py" "$csv" \
  "bench/run_overhead_before_after.sh $before $after --launches $launches --batches $batches --configs $configs" \
  > "$out/$name-summary.md"
cat "$out/$name-summary.md"
