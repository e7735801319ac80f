#!/usr/bin/env bash
# bench/run_preload.sh: what the preload (PMPI) build costs beside the --wrap build and raw MPI, in one run.
#   bench/run_preload.sh [--mpi openmpi|mpich] [--launches L] [--chunk C] [--trials T] [--batches B] [--iterations N]
#                        [--no-instructions] [--out DIR]
#                        [--summary-only]   (recompute the summary from DIR/preload-<mpi>.txt, no launch)
# For each MPI built (build/<mpi>; scripts/build <mpi> first):
# 1. Instructions (if valgrind is installed; the steady figure, the same whatever else the machine does):
#    bench/instructions (--wrap) and bench/instructions_preload (under LD_PRELOAD), one rank each, under
#    `valgrind --tool=callgrind`: instructions per iteration (N iterations, default 2000) of 8 B messages
#    to self (send-recv: MPI_Irecv+MPI_Send+MPI_Wait then MPI_Isend+MPI_Recv+MPI_Wait; isend-irecv-wait:
#    twice MPI_Irecv+MPI_Isend+2 MPI_Wait) and of MPI_Comm_rank (entry), through cohort and raw.
# 2. Times: L launch pairs (default 11), the two builds taking turns going first, 2 ranks bound one per
#    core (HYDRA_BINDING=core; Open MPI's binding policy core): bench/pingpong and pingpong_preload (8 B and
#    1 MiB round trips, blocking and nonblocking, T trials; raw MPI timed in the same process, trials
#    interleaved), bench/overhead and overhead_preload (collectives, 8 B and 64 KiB, B rounds), bench/entry
#    and entry_preload (MPI_Comm_rank through cohort minus PMPI_Comm_rank, ns).
# Verdict (issue #15): at 8 B the preload build costs <= 1.05x the --wrap build. The metric: the median over
# launch pairs of preload/wrap of the times, where a launch's time is the program's own median over trials
# of µs per round trip (per call for collectives) through cohort, and a pair is the l-th launch of each
# build (run back to back). Printed beside it: the spread of those per-pair ratios, and the median of the
# per-pair ratios of cohort/raw (which cancels what moves raw MPI too).
# Writes DIR/preload-<mpi>.txt (every launch's lines), DIR/preload-<mpi>.csv (the same as CSV),
# DIR/preload-instructions.csv, and DIR/preload-summary.txt (default DIR: build/bench-results).
# The launches hold /tmp/cohort-ranks.lock (then the tests' lock) C launch pairs at a time (default 3, a
# few minutes): do not run this script under flock, it would wait on itself. The callgrind counts run one
# rank each, outside the lock.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/build/bench-results
launches=11 chunk=3 trials=7 batches=7 iterations=2000 mpis="openmpi mpich" summary_only=0 instructions=1
while [ $# -gt 0 ]; do
  case "$1" in
    --mpi) mpis=$2; shift 2 ;;
    --launches) launches=$2; shift 2 ;;
    --trials) trials=$2; shift 2 ;;
    --batches) batches=$2; shift 2 ;;
    --iterations) iterations=$2; shift 2 ;;
    --chunk) chunk=$2; shift 2 ;;
    --no-instructions) instructions=0; shift ;;
    --out) out=$2; shift 2 ;;
    --summary-only) summary_only=1; shift ;;
    *) echo "run_preload.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
summary=$out/preload-summary.txt
: > "$summary"
if [ "$summary_only" = 0 ] && [ "$instructions" = 1 ]; then
  if command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null; then
    [ -s "$out/preload-instructions.csv" ] ||
      echo "mpi,case,path,iterations,instructions_per_iteration" > "$out/preload-instructions.csv"
  else
    echo "run_preload.sh: valgrind not installed: no instruction counts" >&2
    instructions=0
  fi
fi
locked() {  # locked <command...>: one multi-rank launch, alone on the machine
  ( flock 8; ( flock 9; "$@" ) 9>/tmp/cohort-mpi-tests.lock ) 8>/tmp/cohort-ranks.lock
}
run() {  # run <mpi> [--preload] <program> [args...]: 2 ranks, one per core (called under the lock)
  local mpi=$1; shift
  env HYDRA_BINDING=core OMPI_MCA_hwloc_base_binding_policy=core \
    COHORT_PRELOAD_LIB="$root/build/$mpi/libcohort-preload.so" \
    timeout 600 "$root/scripts/cohort-run" --mpi "$mpi" --timeout 590 -n 2 "$@"
}
count() {  # count <mpi> <wrap|preload>: callgrind's instructions per iteration of bench/instructions
  local mpi=$1 build=$2 b=$root/build/$1 prog pre=() cg
  cg=$(mktemp "${TMPDIR:-/tmp}/run_preload.callgrind.XXXXXX")
  if [ "$build" = wrap ]; then prog=$b/bench/instructions; else prog=$b/bench/instructions_preload; fi
  if [ "$mpi" = mpich ]; then
    launcher=(/usr/bin/mpiexec.mpich -n 1)
    [ "$build" = preload ] && pre=(-genv LD_PRELOAD "$b/libcohort-preload.so")
  else
    launcher=(/usr/bin/mpiexec.openmpi -n 1)
    [ "$(id -u)" = 0 ] && launcher+=(--allow-run-as-root)
    [ "$build" = preload ] && pre=(-x LD_PRELOAD="$b/libcohort-preload.so")
  fi
  # NOTE: only the measure_* functions are counted (from entry to return, this thread): warm-up, MPI_Init
  # and the detector thread are not.
  timeout 600 "${launcher[@]}" "${pre[@]}" valgrind -q --tool=callgrind --collect-atstart=no \
    --toggle-collect='measure_*' --callgrind-out-file="$cg" "$prog" "$iterations" >/dev/null
  callgrind_annotate --inclusive=yes --threshold=100 "$cg" |
    awk -v mpi="$mpi" -v build="$build" -v n="$iterations" '
      match($0, /measure_[a-z]+_(cohort|real) /) {
        f = substr($0, RSTART + 8, RLENGTH - 9); split(f, p, "_"); x = $1; gsub(",", "", x)
        c = p[1] == "sendrecv" ? "send-recv" : p[1] == "isendirecvwait" ? "isend-irecv-wait" : p[1]
        printf "%s,%s,%s,%d,%.1f\n", mpi, c, (p[2] == "real" ? "raw(" build ")" : build), n, x / n }'
  rm -f "$cg"
}
for mpi in $mpis; do
  b=$root/build/$mpi
  for p in bench/pingpong bench/pingpong_preload bench/overhead bench/overhead_preload bench/entry \
           bench/entry_preload bench/instructions bench/instructions_preload libcohort-preload.so; do
    [ -e "$b/$p" ] || { echo "run_preload.sh: $b/$p not built; skipping $mpi" >&2; continue 2; }
  done
  if [ "$summary_only" = 0 ] && [ "$instructions" = 1 ]; then
    grep -v "^$mpi," "$out/preload-instructions.csv" > "$out/preload-instructions.csv.new" || true
    for build in wrap preload; do count "$mpi" "$build" >> "$out/preload-instructions.csv.new"; done
    mv "$out/preload-instructions.csv.new" "$out/preload-instructions.csv"
  fi
  raw=$out/preload-$mpi.txt
  [ "$summary_only" = 1 ] || : > "$raw"
  pair() {  # pair <launch>: both builds, back to back
    # Lines kept: "<build> <launch> pingpong <mpi> <bytes> B <mode> wrapped X us real Y us ..." and
    # "<build> <launch> <call> <bytes> B <ranks> ranks real X us ... wrapped Y us ...".
    # NOTE: the two builds take turns going first, so that neither always meets the machine in the same state.
    local l=$1 order="wrap preload" build pre sfx
    [ $((l % 2)) = 0 ] && order="preload wrap"
    for build in $order; do
      if [ "$build" = wrap ]; then pre=() sfx=""; else pre=(--preload) sfx=_preload; fi
      run "$mpi" "${pre[@]}" "$b/bench/pingpong$sfx" --trials "$trials" |
        sed -n "s/^pingpong /$build $l pingpong /p" >> "$raw"
      run "$mpi" "${pre[@]}" "$b/bench/overhead$sfx" "$batches" |
        sed -n "s/^\(MPI_[A-Za-z]*\) /$build $l \1 /p" >> "$raw"
      run "$mpi" "${pre[@]}" "$b/bench/entry$sfx" | sed -n "s/^entry /$build $l entry /p" >> "$raw"
    done
    echo "run_preload.sh: $mpi launch pair $l of $launches done" >&2
  }
  pairs() { local l; for ((l = $1; l <= $2; l++)); do pair "$l"; done; }
  # NOTE: the lock is held for $chunk pairs at a time (a few minutes), then left to others.
  for ((l = 1; l <= launches && summary_only == 0; l += chunk)); do
    locked pairs "$l" $((l + chunk - 1 < launches ? l + chunk - 1 : launches))
  done
  # every launch's figures as CSV: cohort_us is the time through cohort (ns for entry), raw_us MPI's own
  awk -v mpi="$mpi" 'BEGIN { print "mpi,build,launch,case,bytes,cohort_us,raw_us" }
    function field(name,   i) { for (i = 1; i < NF; i++) if ($i == name) return $(i + 1); return "" }
    $3 == "entry" { printf "%s,%s,%d,entry-ns,0,%s,%s\n", mpi, $1, $2, field("cohort"), field("real"); next }
    $3 == "pingpong" { printf "%s,%s,%d,pingpong %s,%s,%s,%s\n", mpi, $1, $2, $7, $5, field("wrapped"), field("real"); next }
    { printf "%s,%s,%d,%s,%s,%s,%s\n", mpi, $1, $2, $3, $4, field("wrapped"), field("real") }' "$raw" > "$out/preload-$mpi.csv"
  if [ -s "$out/preload-instructions.csv" ]; then
    awk -F, -v mpi="$mpi" '$1 == mpi { v[$2, $3] = $5; if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 } }
      END { for (i = 1; i <= n; i++) { c = order[i]; w = v[c, "wrap"]; p = v[c, "preload"]; r = v[c, "raw(wrap)"]
        if (w == "" || p == "") continue
        printf "%s instructions %-17s raw %7.1f  wrap %7.1f  preload %7.1f  preload/wrap %.4f  (+%.1f per iteration; raw in the preload run %.1f)\n",
          mpi, c, r, w, p, p / w, p - w, v[c, "raw(preload)"] } }' "$out/preload-instructions.csv" | tee -a "$summary"
  fi
  awk -v mpi="$mpi" '
    function sort(s, a,   m, i, j, t) { m = split(s, a, " "); for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
      if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }; return m }
    function med(s,   a, m) { m = sort(s, a); return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2 }
    function lo(s,   a) { sort(s, a); return a[1] }
    function hi(s,   a) { return a[sort(s, a)] }
    function field(name,   i) { for (i = 1; i < NF; i++) if ($i == name) return $(i + 1); return "" }
    $3 == "entry" { e[$1] = e[$1] " " field("cohort-real"); next }
    {
      if ($3 == "pingpong") { k = "pingpong " $5 " B " $7 } else { k = $3 " " $4 " B" }
      w = field("wrapped"); r = field("real")
      t[$1, $2, k] = w; q[$1, $2, k] = w / r; c[$1, k] = c[$1, k] " " w; if ($1 == "wrap") rr[k] = rr[k] " " r
      if (!(k in seen)) { seen[k] = 1; order[++n] = k }
      if ($2 > launches) launches = $2
    }
    END {
      if (("wrap" in e) && ("preload" in e))
        printf "%s entry (MPI_Comm_rank, cohort - real per call): wrap %.2f ns  preload %.2f ns  the preload entry point adds %.2f ns\n",
          mpi, med(e["wrap"]), med(e["preload"]), med(e["preload"]) - med(e["wrap"])
      for (i = 1; i <= n; i++) { k = order[i]; pt = ""; pq = ""; pairs = 0
        for (l = 1; l <= launches; l++) if (((("wrap", l, k) in t)) && ((("preload", l, k) in t))) {
          pt = pt " " t["preload", l, k] / t["wrap", l, k]; pq = pq " " q["preload", l, k] / q["wrap", l, k]; pairs++ }
        if (!pairs) continue
        printf "%s %-28s raw %9.3f us  wrap %9.3f us  preload %9.3f us  preload/wrap %.3f (%d pairs %.2f-%.2f; of ratios over raw %.3f)%s\n",
          mpi, k, med(rr[k]), med(c["wrap", k]), med(c["preload", k]), med(pt), pairs, lo(pt), hi(pt), med(pq),
          (k ~ / 8 B/ ? (med(pt) <= 1.05 ? "  8 B target <= 1.05: ok" : "  8 B target <= 1.05: ABOVE") : "")
      }
    }' "$raw" | tee -a "$summary"
done
echo "run_preload.sh: $launches launch pairs; raw lines in $out/preload-<mpi>.txt and .csv, summary in $summary"
