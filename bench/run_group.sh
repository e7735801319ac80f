#!/usr/bin/env bash
# Non-collective creation: cohort's group shrink (what the wrapped MPI_Comm_create_group runs)
# beside the raw PMPI_Comm_create_group in the same run, without and with one dead member, at 2-8 ranks of
# Open MPI and 2-4 of MPICH; then the creation's simulated message count at 10^4 members. Needs
# `scripts/build openmpi` and `scripts/build mpich` first.
#
#   bench/run_group.sh [outdir]       (default build/bench) -> group.csv, group-summary.md
#   REPS=100 bench/run_group.sh
#
# All launches run inside one hold of /tmp/cohort-ranks.lock (one multi-rank job at a time here).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/build/bench}
reps=${REPS:-100}
mkdir -p "$out"
csv=$out/group.csv
summary=$out/group-summary.md
echo "kind,case_or_mpi,n_or_np,..." >"$csv"

"$root/build/openmpi/bench/liveness_scale" 10000 | grep '^csv,' | sed 's/^csv,//' >>"$csv"

launches() {
  for cfg in openmpi:2 openmpi:4 openmpi:6 openmpi:8 mpich:2 mpich:4; do
    mpi=${cfg%%:*} np=${cfg##*:}
    [ -x "$root/build/$mpi/bench/group_bench" ] || { echo "run_group: build/$mpi missing" >&2; exit 2; }
    hb="COHORT_HB_PERIOD_MS=100 COHORT_HB_TIMEOUT_MS=1000" r=$reps
    [ "$mpi" = mpich ] && hb="COHORT_HB_PERIOD_MS=200 COHORT_HB_TIMEOUT_MS=3000" r=$((reps / 4))
    for kase in free dead; do
      echo "== $mpi, $np ranks, $kase, $r repetitions" >&2
      # shellcheck disable=SC2086
      env $hb timeout 150 "$root/scripts/cohort-run" --mpi "$mpi" --timeout 120 -n "$np" -- \
        "$root/build/$mpi/bench/group_bench" "$kase" "$r" 2>&1 | grep '^csv,' | sed 's/^csv,//' || true
    done
  done
}
export -f launches
export root reps
flock /tmp/cohort-ranks.lock bash -c launches >>"$csv"

{
  echo "# non-collective creation ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
  echo
  echo "## creation time, medians in microseconds (slowest rank; raw and cohort interleaved in one run)"
  echo "free: the group is every rank. dead: rank n-1 is dead and detected; raw = PMPI_Comm_create_group over"
  echo "the live ranks (over the dead one it hangs), cohort = cohort_group_shrink over all n."
  echo
  echo "| MPI | ranks | case | raw | cohort | cohort/raw | cohort p10-p90 |"
  echo "|---|---|---|---|---|---|---|"
  awk -F, '$1=="group" { k=$2","$3","$4; v[k","$5]=$6; lo[k","$5]=$7; hi[k","$5]=$8; keys[k]=1 }
    END { for (k in keys) { split(k, a, ","); r=v[k",raw"]; c=v[k",cohort"];
      printf "| %s | %d | %s | %.0f | %.0f | %.2f | %.0f-%.0f |\n", a[1], a[2], a[3], r, c, c/r, lo[k",cohort"], hi[k",cohort"] } }' \
    "$csv" | sort -t'|' -k2,2r -k3,3n -k4,4r
  echo
  echo "## simulated (bench/liveness_scale, synchronous rounds, no MPI): messages among the group's members"
  echo
  echo "| case | members | messages | rounds | attempts | wall ms |"
  echo "|---|---|---|---|---|---|"
  awk -F, '$1=="liveness" { printf "| %s | %d | %d | %d | %d | %.0f |\n", $2, $3, $4, $5, $6, $7 }' "$csv"
} >"$summary"
cat "$summary"
echo "run_group: CSV in $csv, summary in $summary" >&2
