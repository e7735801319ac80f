#!/usr/bin/env bash
# bench/run_preload.sh: what the preload (PMPI) build costs beside the --wrap build and raw MPI, in one run.
#   bench/run_preload.sh [--mpi openmpi|mpich] [--launches L] [--trials T] [--batches B] [--out DIR]
#                        [--summary-only]   (recompute the summary from DIR/preload-<mpi>.txt, no launch)
# For each MPI built (build/<mpi>; scripts/build <mpi> first), L times (default 5) in alternation:
#   - bench/pingpong (linked with --wrap) and bench/pingpong_preload (the same source without cohort, under
#     `cohort-run --preload`): 2 ranks bound one per core, 8 B and 1 MiB round trips, blocking and
#     nonblocking; each process also times raw MPI (real) in interleaved trials;
#   - bench/overhead and bench/overhead_preload: Barrier/Bcast/Reduce/Allreduce, 8 B and 64 KiB, real and
#     cohort in rotated batches (4 ranks of Open MPI, 2 of MPICH, as bench/run_overhead.sh);
#   - bench/entry and bench/entry_preload: MPI_Comm_rank through cohort against PMPI_Comm_rank, no
#     communication: the difference between the builds is what the preload entry point adds per call (ns).
# Per case it reports the medians over launches of cohort's time per call under --wrap and under --preload,
# raw MPI's, and preload/wrap two ways: of the times, and of each launch's cohort/real ratio (which
# cancels launch-to-launch placement, as bench/run_pingpong.sh judges). Target at 8 B: preload/wrap of the
# ratios over raw <= 1.05 (the verdict); the ratio of the times is printed beside it.
# Writes DIR/preload-<mpi>.txt (every launch's lines) and DIR/preload-summary.txt (default DIR:
# build/bench-results). Launches never overlap other users' (the tests' lock, per launch).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/build/bench-results
launches=7 trials=7 batches=7 mpis="openmpi mpich" summary_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --mpi) mpis=$2; shift 2 ;;
    --launches) launches=$2; shift 2 ;;
    --trials) trials=$2; shift 2 ;;
    --batches) batches=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --summary-only) summary_only=1; shift ;;
    *) echo "run_preload.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
summary=$out/preload-summary.txt
: > "$summary"
lock=/tmp/cohort-mpi-tests.lock
run() {  # run <mpi> <ranks> [--preload] <program> [args...]: one launch, under the tests' lock
  local mpi=$1 np=$2; shift 2
  ( flock 9; HYDRA_BINDING=${HYDRA_BINDING:-core} COHORT_PRELOAD_LIB=$root/build/$mpi/libcohort-preload.so \
      timeout 600 "$root/scripts/cohort-run" --mpi "$mpi" --timeout 590 -n "$np" "$@" ) 9>"$lock"
}
for mpi in $mpis; do
  b=$root/build/$mpi
  for p in bench/pingpong bench/pingpong_preload bench/overhead bench/overhead_preload bench/entry \
           bench/entry_preload libcohort-preload.so; do
    [ -e "$b/$p" ] || { echo "run_preload.sh: $b/$p not built; skipping $mpi" >&2; continue 2; }
  done
  np=4
  [ "$mpi" = mpich ] && np=2
  raw=$out/preload-$mpi.txt
  [ "$summary_only" = 1 ] || : > "$raw"
  for ((l = 1; l <= launches && summary_only == 0; l++)); do
    # Lines kept: "<build> <launch> pingpong <mpi> <bytes> B <mode> wrapped X us real Y us ..." and
    # "<build> <launch> <call> <bytes> B <ranks> ranks real X us ... wrapped Y us ...".
    # NOTE: the two builds take turns going first, so that neither always meets the machine in the same state.
    order="wrap preload"
    [ $((l % 2)) = 0 ] && order="preload wrap"
    for build in $order; do
      if [ "$build" = wrap ]; then pre=() sfx=""; else pre=(--preload) sfx=_preload; fi
      run "$mpi" 2 "${pre[@]}" "$b/bench/pingpong$sfx" --trials "$trials" |
        sed -n "s/^pingpong /$build $l pingpong /p" >> "$raw"
      run "$mpi" "$np" "${pre[@]}" "$b/bench/overhead$sfx" "$batches" |
        sed -n "s/^\(MPI_[A-Za-z]*\) /$build $l \1 /p" >> "$raw"
      run "$mpi" 2 "${pre[@]}" "$b/bench/entry$sfx" | sed -n "s/^entry /$build $l entry /p" >> "$raw"
    done
    echo "run_preload.sh: $mpi launch $l of $launches done" >&2
  done
  awk -v mpi="$mpi" '
    function med(s,   a, m, i, j, t) { m = split(s, a, " "); for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
      if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }; return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2 }
    function field(name,   i) { for (i = 1; i < NF; i++) if ($i == name) return $(i + 1); return "" }
    $3 == "entry" { e[$1] = e[$1] " " field("cohort-real"); next }
    {
      if ($3 == "pingpong") { k = "pingpong " $5 " B " $7 } else { k = $3 " " $4 " B" }
      w = field("wrapped"); r = field("real")
      c[$1, k] = c[$1, k] " " w; q[$1, k] = q[$1, k] " " (w / r); if ($1 == "wrap") rr[k] = rr[k] " " r
      if (!(k in seen)) { seen[k] = 1; order[++n] = k }
    }
    END {
      if (("wrap" in e) && ("preload" in e))
        printf "%s entry (MPI_Comm_rank, cohort - real per call): wrap %.2f ns  preload %.2f ns  the preload entry point adds %.2f ns\n",
          mpi, med(e["wrap"]), med(e["preload"]), med(e["preload"]) - med(e["wrap"])
      for (i = 1; i <= n; i++) { k = order[i]
        pw = med(c["preload", k]); ww = med(c["wrap", k]); pq = med(q["preload", k]); wq = med(q["wrap", k])
        printf "%s %-28s raw %9.3f us  wrap %9.3f us  preload %9.3f us  preload/wrap %.3f (of ratios over raw %.3f)%s\n",
          mpi, k, med(rr[k]), ww, pw, pw / ww, pq / wq, (k ~ / 8 B/ ? (pq / wq <= 1.05 ? "  8 B target <= 1.05: ok" : "  8 B target <= 1.05: ABOVE") : "")
      }
    }' "$raw" | tee -a "$summary"
done
echo "run_preload.sh: medians over $launches launches; raw lines in $out/preload-<mpi>.txt, summary in $summary"
