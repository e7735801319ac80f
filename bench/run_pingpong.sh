#!/usr/bin/env bash
# Ping-pong overhead of cohort's point-to-point wrappers against MPI's own calls, 2 ranks, 8 B and 1 MiB,
# for each MPI that is built (build/<mpi>/bench/pingpong; scripts/build <mpi> first).
#   bench/run_pingpong.sh [--out DIR] [--trials T] [--launches L]     (default DIR: build/bench-results)
# Ranks are bound one per core (without binding, MPICH's 8 B round trip is 0.37 us or 1.37 us from one
# launch to the next, as the OS places the two ranks and their detector threads). Each MPI is launched L
# times (default 7); the verdict uses the median over launches of each launch's ratio (medians of T trials).
# Writes DIR/pingpong-<mpi>.csv (every trial) and DIR/pingpong-summary.txt (per launch, then the medians,
# ratios, targets: <= 1.15x at 8 B, <= 1.03x at 1 MiB).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/build/bench-results
trials=15
launches=7
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --trials) trials=$2; shift 2 ;;
    --launches) launches=$2; shift 2 ;;
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
  : > "$csv"
  for ((l = 1; l <= launches; l++)); do
    # NOTE: never two multi-rank jobs at once on this machine: hold the test lock. One rank per core, under
    # both MPIs: Open MPI binds to cores by default at 2 ranks, MPICH's hydra does not (HYDRA_BINDING).
    HYDRA_BINDING=${HYDRA_BINDING:-core} flock /tmp/cohort-mpi-tests.lock timeout 600 "$root/scripts/cohort-run" --mpi "$mpi" --timeout 580 -n 2 \
      "$prog" --csv "$csv.$l" --trials "$trials" | sed "s/^pingpong /pingpong launch $l /" | tee -a "$summary"
    if [ -s "$csv" ]; then tail -n +2 "$csv.$l" >> "$csv"; else cat "$csv.$l" > "$csv"; fi
    rm -f "$csv.$l"
  done
  ran=1
done
[ $ran = 1 ] || { echo "run_pingpong.sh: nothing built" >&2; exit 1; }
# Lines: pingpong launch L <mpi> <bytes> B <mode> wrapped X us real Y us nb Z us nb/real Q ratio R
awk '/^pingpong launch/ { k = $4 " " $5 " " $7; r[k] = r[k] " " $NF; fl[k] = fl[k] " " $(NF - 2); if (!(k in seen)) { seen[k] = 1; order[++n] = k } }
  function med(s,   a, m, i, j, t) { m = split(s, a, " "); for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2 }
  END { for (i = 1; i <= n; i++) { split(order[i], f, " "); target = (f[2] == 8) ? 1.15 : 1.03; ratio = med(r[order[i]])
    printf "%s %s B %s: median ratio over launches %.3f (target <= %.2f) %s; per launch:%s; floor (nb/real) median %.3f\n", f[1], f[2], f[3], ratio, target, (ratio <= target ? "ok" : "ABOVE TARGET"), r[order[i]], med(fl[order[i]]) } }' "$summary" | tee -a "$summary.tmp"
cat "$summary.tmp" >> "$summary"; rm -f "$summary.tmp"
echo "run_pingpong.sh: CSV and summary in $out"
