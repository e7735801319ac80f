#!/usr/bin/env bash
# bench/run_overhead.sh: cohort's overhead, measured side by side in one run.
#   1. bench/overhead (in one process, batches alternating in rotated order): each call four ways, real
#      (__real_MPI_X, MPI's blocking call on world), nb (PMPI_IX + PMPI_Test polling on a PMPI_Comm_dup of
#      world), nb + barrier (nb, then a polled PMPI_Ibarrier: cohort's protocol without its bookkeeping) and
#      wrapped (MPI_X through cohort); 4 ranks of Open MPI and 2 of MPICH, every row of bench/overhead
#      (collectives at 8 B and 64 KiB, MPI_Put+Win_fence, MPI_File_write_at_all at 1 MiB). The summary
#      gives wrapped/real beside the two floors' ratios over real.
#   2. EP class A end to end: examples/ep (linked with cohort) vs examples/ep_plain (the same program
#      without cohort), 4 ranks of Open MPI, runs alternating; launch to exit is timed from when the lock
#      is held.
# Writes bench/results/overhead.csv, bench/results/ep.csv and bench/results/overhead-summary.md.
# One launch's ratios swing by ±30% here; bench/run_overhead_series.sh gives medians over many launches.
# Needs scripts/build openmpi and scripts/build mpich first. Environment: EP_RUNS (default 7: one EP class A run varies by ±5% here), BATCHES
# (default 15), EP_CLASS (default A).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/bench/results
mkdir -p "$out"
batches=${BATCHES:-15}
ep_runs=${EP_RUNS:-7}
ep_class=${EP_CLASS:-A}
lock=/tmp/cohort-mpi-tests.lock
launch() {  # launch <mpi> <ranks> <program> [args...]: one launch; the caller holds the lock
  local mpi=$1 np=$2; shift 2
  timeout 600 "$root/scripts/cohort-run" --mpi "$mpi" --timeout 590 -n "$np" "$@"
}
run() {  # run <mpi> <ranks> <program> [args...]: one launch, never two at once (the tests' lock)
  ( flock 9; launch "$@" ) 9>"$lock"
}
for mpi in openmpi mpich; do
  [ -x "$root/build/$mpi/bench/overhead" ] || { echo "run_overhead: build $mpi first (scripts/build $mpi)" >&2; exit 2; }
done

rm -f "$out/overhead.csv"
echo "== collectives: real, nonblocking, nonblocking + barrier, wrapped (median of $batches rotated batch rounds)"
run openmpi 4 "$root/build/openmpi/bench/overhead" "$batches" "$out/overhead.csv"
# NOTE: one rank per core, as Open MPI binds by default at <= 2 ranks and MPICH's hydra does not.
HYDRA_BINDING=${HYDRA_BINDING:-core} run mpich 2 "$root/build/mpich/bench/overhead" "$batches" "$out/overhead.csv"

echo "== EP class $ep_class, 4 ranks of Open MPI: with cohort vs without, $ep_runs runs each, alternating"
echo "variant,run,ep_seconds,launch_seconds" > "$out/ep.csv"
for ((i = 1; i <= ep_runs; i++)); do
  for variant in ep_plain ep; do
    # NOTE: the clock starts once the lock is held: waiting for another user's launch is not launch time
    res=$({ flock 9; start=$(date +%s%N); launch openmpi 4 "$root/build/openmpi/examples/$variant" "$ep_class" |
      grep '^EP class'; echo "wall $(( ($(date +%s%N) - start) / 1000000 ))"; } 9>"$lock")
    line=$(echo "$res" | grep '^EP class')
    wall=$(echo "$res" | sed -n 's/^wall //p')
    secs=$(echo "$line" | sed -n 's/.* ranks, \([0-9.]*\) s$/\1/p')
    echo "$variant,$i,$secs,$(awk -v w="$wall" 'BEGIN { printf "%.3f", w / 1000 }')" >> "$out/ep.csv"
    echo "  $variant run $i: $secs s in EP, $wall ms launch to exit"
  done
done

{
  echo "# cohort overhead ($(date -u +%Y-%m-%d), $(nproc) cores, $(uname -m))"
  echo
  echo "Command: \`bench/run_overhead.sh\` (BATCHES=$batches, EP_RUNS=$ep_runs). Medians; ratios over real."
  echo
  echo "| MPI | ranks | call | bytes | real (us) | nonblocking (us) | nb + barrier (us) | wrapped (us) | nb/real | (nb+barrier)/real | wrapped/real |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  tail -n +2 "$out/overhead.csv" | awk -F, '{ printf "| %s | %s | %s | %s | %.2f | %.2f | %.2f | %.2f | %.3f | %.3f | %.3f |\n",
    $1, $2, $3, $4, $7, $10, $11, $8, $12, $13, $9 }'
  echo
  echo "The two floors are measured in the same run: nonblocking is the MPI's own nonblocking call (PMPI_Ibcast, ...) polled with PMPI_Test on a duplicate of MPI_COMM_WORLD, as cohort posts on a substitute communicator; nb + barrier adds the confirming PMPI_Ibarrier that cohort runs after every collective, so wrapped / (nb + barrier) is cohort's own bookkeeping."
  echo
  awk -F, 'NR > 1 { v[$1] = v[$1] " " $3; w[$1] = w[$1] " " $4 }
    function med(s,   a, n, i, j, t) { n = split(s, a, " "); for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
    END { pe = med(v["ep_plain"]); ce = med(v["ep"]); pw = med(w["ep_plain"]); cw = med(w["ep"])
      printf "EP class '"$ep_class"', 4 ranks of Open MPI, median of '"$ep_runs"' runs: without cohort %.3f s, with cohort %.3f s in EP (ratio %.3f); launch to exit %.3f s vs %.3f s (ratio %.3f)\n", pe, ce, ce / pe, pw, cw, cw / pw }' "$out/ep.csv"
} > "$out/overhead-summary.md"
echo
cat "$out/overhead-summary.md"
