#!/usr/bin/env bash
# Repair benchmarks: fault-free agree and shrink beside MPI_Allreduce (one int) and MPI_Comm_dup
# in the same run, at 4, 8, 16 ranks of Open MPI and 4 of MPICH; the repair time after k = 1, 2, N/2
# ranks die; the agreement state machine alone up to 10^5 members. Needs `scripts/build openmpi` and
# `scripts/build mpich` first.
#
#   bench/run_repair.sh [outdir]        (default build/bench) -> repair.csv, repair-summary.txt
#   REPS=200 RUNS=3 bench/run_repair.sh
#   PARTS=openmpi5 bench/run_repair.sh  only the Open MPI 5 part (PARTS=debian12: only the rest)
#
# Open MPI 5 (the Debian 13 root, `scripts/build openmpi5` and `scripts/build openmpi5
# -DCOHORT_DETECTOR=ulfm` first): in one run per size, at 2, 4 and 8 ranks, cohort's MPI-only agree and
# shrink beside MPIX_Comm_agree, MPIX_Comm_shrink, MPI_Allreduce and MPI_Comm_dup (heartbeat build, with
# Open MPI's ULFM enabled: OMPI_MCA_mpi_ft_enable=1); and the time from a SIGKILL to a usable shrunk
# communicator for both backends (openmpi5: heartbeat; openmpi5-ulfm: ULFM's own detection and shrink).
#
# Every launch holds /tmp/cohort-ranks.lock (one multi-rank job at a time on this machine).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/build/bench}
reps=${REPS:-200}
runs=${RUNS:-3}
mkdir -p "$out"
csv=$out/repair.csv
summary=$out/repair-summary.txt
echo "kind,mpi,np,what,value1,value2,value3" >"$csv"

launch() {  # launch <mpi> <np> <timeout> "<VAR=value ...>" args...
  local mpi=$1 np=$2 t=$3 envs=$4
  shift 4
  # shellcheck disable=SC2086
  env $envs flock /tmp/cohort-ranks.lock timeout $((t + 20)) "$root/scripts/cohort-run" --mpi "$mpi" \
    --timeout "$t" -n "$np" -- "$root/build/$mpi/bench/repair_bench" "$@" 2>&1 | grep '^csv,' | sed 's/^csv,//' || true
}

launch5() {  # launch5 <build dir name> <np> <timeout> "<VAR=value ...>" args...
  local b=$1 np=$2 t=$3 envs=$4
  shift 4
  # shellcheck disable=SC2086
  env $envs flock /tmp/cohort-ranks.lock timeout $((t + 20)) "$root/scripts/in-openmpi5" "$root/scripts/cohort-run" \
    --timeout "$t" -n "$np" -- "$root/build/$b/bench/repair_bench" "$@" 2>&1 | grep '^csv,' | sed 's/^csv,//' || true
}

parts=${PARTS:-all}
if [ "$parts" != debian12 ]; then
  for b in openmpi5 openmpi5-ulfm; do
    [ -x "$root/build/$b/bench/repair_bench" ] || { echo "run_repair: build/$b missing (scripts/build openmpi5 ...)" >&2; exit 2; }
  done
  for np in 2 4 8; do
    echo "== fault-free: openmpi5, $np ranks, $reps repetitions (cohort beside ULFM)" >&2
    launch5 openmpi5 "$np" 300 "OMPI_MCA_mpi_ft_enable=1" free "$reps" >>"$csv"
  done
  for b in openmpi5 openmpi5-ulfm; do
    for np in 4 8; do
      for run in $(seq "$runs"); do
        echo "== repair: $b, $np ranks, k=1, run $run" >&2
        launch5 "$b" "$np" 120 "COHORT_HB_PERIOD_MS=100 COHORT_HB_TIMEOUT_MS=1000" repair 1 >>"$csv"
      done
    done
  done
fi
[ "$parts" = openmpi5 ] && skip12=1 || skip12=""

if [ -z "$skip12" ]; then
echo "== the agreement state machine alone, up to 10^5 members" >&2
"$root/build/openmpi/bench/repair_scale" 100000 | grep '^csv,' | sed 's/^csv,//' >>"$csv"

for cfg in openmpi:4 openmpi:8 openmpi:16 mpich:4; do
  mpi=${cfg%%:*} np=${cfg##*:}
  [ -x "$root/build/$mpi/bench/repair_bench" ] || { echo "run_repair: build/$mpi missing (scripts/build $mpi)" >&2; exit 2; }
  r=$reps
  [ "$mpi" = mpich ] && r=$((reps / 4))  # MPICH busy-polls: ~1000x slower oversubscribed
  echo "== fault-free: $mpi, $np ranks, $r repetitions" >&2
  launch "$mpi" "$np" 300 "" free "$r" >>"$csv"
done

for cfg in openmpi:4 openmpi:8 openmpi:16 mpich:4; do
  mpi=${cfg%%:*} np=${cfg##*:}
  hb="COHORT_HB_PERIOD_MS=100 COHORT_HB_TIMEOUT_MS=1000"
  [ "$mpi" = mpich ] && hb="COHORT_HB_PERIOD_MS=200 COHORT_HB_TIMEOUT_MS=3000"
  for k in 1 2 half; do
    for run in $(seq "$runs"); do
      echo "== repair: $mpi, $np ranks, k=$k, run $run" >&2
      launch "$mpi" "$np" 120 "$hb" repair "$k" >>"$csv"
    done
  done
done

fi

{
  echo "# repair benchmarks ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
  echo
  echo "## fault-free latency, medians in microseconds (same run, same communicator)"
  echo
  echo "| MPI | ranks | allreduce | agree | agree/allreduce | dup | shrink | shrink/dup |"
  echo "|---|---|---|---|---|---|---|---|"
  awk -F, '$1=="free" { v[$2","$3","$4]=$5; k[$2","$3]=1 }
    END { for (c in k) { split(c, a, ","); ar=v[c",allreduce"]; ag=v[c",agree"]; du=v[c",dup"]; sh=v[c",shrink"];
      printf "| %s | %d | %.1f | %.1f | %.2f | %.1f | %.1f | %.2f |\n", a[1], a[2], ar, ag, ag/ar, du, sh, sh/du } }' \
    "$csv" | sort -t'|' -k2,2r -k3,3n
  echo
  echo "## Open MPI 5: cohort's MPI-only agree and shrink beside ULFM's, medians in microseconds (same run)"
  echo
  echo "| ranks | allreduce | cohort agree | MPIX_Comm_agree | agree/MPIX | dup | cohort shrink | MPIX_Comm_shrink | shrink/MPIX |"
  echo "|---|---|---|---|---|---|---|---|---|"
  awk -F, '$1=="free" && $2=="openmpi5" { v[$3","$4]=$5; k[$3]=1 }
    END { for (c in k) { ar=v[c",allreduce"]; ag=v[c",agree"]; ua=v[c",ulfm_agree"]; du=v[c",dup"]; sh=v[c",shrink"]; us=v[c",ulfm_shrink"];
      if (ua == "" || us == "") continue;
      printf "| %d | %.1f | %.1f | %.1f | %.2f | %.1f | %.1f | %.1f | %.2f |\n", c, ar, ag, ua, ag/ua, du, sh, us, sh/us } }' \
    "$csv" | sort -t'|' -k2,2n
  echo
  echo "## repair after k failures: last detection -> shrunk communicator usable (ms), median of runs"
  echo "## (openmpi5: heartbeat backend; openmpi5-ulfm: ULFM backend; kill -> usable = detection + repair)"
  echo
  echo "| MPI | ranks | k | repair ms | detection ms (from the kill) | runs |"
  echo "|---|---|---|---|---|---|"
  awk -F, '$1=="repair" { key=$2","$3","$4; n[key]++; r[key]=r[key] " " $5; d[key]=d[key] " " $6 }
    function med(s,   a, m, i, j, t) { m = split(s, a, " "); for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
      if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t } return a[int((m + 1) / 2)] }
    END { for (c in n) { split(c, a, ","); printf "| %s | %d | %d | %.2f | %.0f | %d |\n", a[1], a[2], a[3], med(r[c]), med(d[c]), n[c] } }' \
    "$csv" | sort -t'|' -k2,2r -k3,3n -k4,4n
  echo
  echo "## the agreement state machine alone (bench/repair_scale, synchronous rounds, no MPI)"
  echo
  echo "| case | members | radix | messages | rounds | wall ms |"
  echo "|---|---|---|---|---|---|"
  awk -F, '$1=="scale" { printf "| %s | %d | %d | %d | %d | %.0f |\n", $2, $3, $4, $5, $6, $7 }' "$csv"
} >"$summary"
cat "$summary"
echo "run_repair: CSV in $csv, summary in $summary" >&2
