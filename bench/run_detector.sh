#!/usr/bin/env bash
# bench/run_detector.sh: the failure detector's benchmarks; writes bench/results/detector_*.csv and
# bench/results/detector_summary.md.
#   1. real detection latency: kill one rank, time until the last survivor learned it (Open MPI N=4,8,16;
#      MPICH N=4), for period/timeout 50/500 and 100/1000, REPS runs each;
#   1b. crash detection by pidfd: SIGKILL one rank, time until the last survivor learned it, with
#      COHORT_PIDFD=on and off side by side (Open MPI N=16, MPICH N=4; default period/timeout 100/1000),
#      PIDFD_REPS runs each, alternating on and off; bench/results/detector_pidfd.csv;
#   1c. on 4 namespace hosts (scripts/cohort-hosts, needs root): Open MPI 16 ranks as 4 x 4, MPICH
#      4 ranks as 2 x 2; SIGKILL of one rank whose observer is on its host (pidfd) and of a host's last
#      rank (its observer is on the next host: heartbeats), and a lost host (every process of it SIGKILLed
#      from outside, its MPI daemon included; Open MPI only: hydra ends the job then); HOSTS_REPS runs each;
#      bench/results/detector_hosts.csv. Overrides: DETECTOR_HOSTS_CSV (file), HOSTS_REPS, HOSTS_CASES (a regex
#      of case names), HOSTS_MPICH=0 (Open MPI only), DETECTOR_BENCH_PROG (another build's detector_latency).
#   2. detector thread CPU (getrusage RUSAGE_THREAD) at the default period, no failure, IDLE_S seconds;
#   3. the simulator (detector_sim): chord, bmg and hba at N up to 65,536, 1..16 failures, random or
#      consecutive victims, shuffle off/on.
# Needs build/openmpi and build/mpich (scripts/build openmpi; scripts/build mpich). Every multi-rank run
# holds /tmp/cohort-ranks.lock and has a hard timeout; --locked: the caller holds it for the whole run
# (e.g. flock /tmp/cohort-ranks.lock bench/run_detector.sh --pidfd-only --locked: about 2 minutes).
#   bench/run_detector.sh [--quick] [--locked] [--sim-only | --mpi-only | --pidfd-only | --hosts-only]
#   (--hosts-only: about 25 s a run, each run under the lock on its own)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/bench/results
mkdir -p "$out"
reps=3 idle_s=10 pidfd_reps=6 hosts_reps=6
lock="flock /tmp/cohort-ranks.lock"
sim_big="256,4096,65536"
sim_only=0 mpi_only=0 pidfd_only=0 hosts_only=0
root_dir=$root
# --bed-case MPI N HOSTS KIND VICTIMS [HOST]: one run inside a bed (internal; see hosts_case below).
if [ "${1:-}" = --bed-case ]; then
  mpi=$2 n=$3 nh=$4 kind=$5 victims=$6 lost=${7:-}
  prog=${DETECTOR_BENCH_PROG:-$root_dir/build/$mpi/bench/detector_latency}  # override: compare two builds
  work=$(mktemp -d) rc=0
  trap 'rm -rf "$work"' EXIT
  if [ "$kind" = host ]; then
    DETECTOR_BENCH_KILL_FILE=$work/kill_at COHORT_HB_PERIOD_MS=100 COHORT_HB_TIMEOUT_MS=1000 \
      "$root_dir/scripts/cohort-run" --mpi "$mpi" --timeout 60 --hosts "$HOSTBED_HOSTS" -n "$n" \
      "$prog" host "$victims" 1500 >"$work/log" 2>&1 &
    job=$!
    while kill -0 $job 2>/dev/null && [ ! -s "$work/kill_at" ]; do sleep 0.05; done
    if [ -s "$work/kill_at" ]; then
      at=$(cat "$work/kill_at")
      now=$(( $(date +%s%N) / 1000 ))
      [ $at -gt $now ] && sleep "$(awk -v d=$((at - now)) 'BEGIN { printf "%.6f", d / 1e6 }')"
      pids=$("$root_dir/scripts/cohort-hosts" pids "$lost" | tr '\n' ' ')
      t0=$(( $(date +%s%N) / 1000 ))
      kill -9 $pids 2>/dev/null || true
      "$root_dir/scripts/cohort-hosts" kill "$lost" || true  # what a dying daemon may still have forked
      echo "bed-kill-at-us $t0 processes $pids"
    fi
    rc=0; wait $job || rc=$?
  else
    COHORT_HB_PERIOD_MS=100 COHORT_HB_TIMEOUT_MS=1000 \
      "$root_dir/scripts/cohort-run" --mpi "$mpi" --timeout 60 --hosts "$HOSTBED_HOSTS" -n "$n" \
      "$prog" kill "$victims" 1500 >"$work/log" 2>&1 || rc=$?
  fi
  echo "bed-exit $rc"
  cat "$work/log"
  exit 0
fi
for a in "$@"; do
  case "$a" in
    --quick) reps=1 idle_s=3 sim_big="256,4096" pidfd_reps=3 hosts_reps=2 ;;
    --sim-only) sim_only=1 ;;
    --mpi-only) mpi_only=1 ;;
    --pidfd-only) pidfd_only=1 sim_only=1 mpi_only=1 ;;
    --hosts-only) hosts_only=1 sim_only=1 mpi_only=1 ;;
    --locked) lock="" ;;
    *) echo "run_detector: unknown option $a" >&2; exit 2 ;;
  esac
done
run=$root/scripts/cohort-run
if [ $sim_only = 0 ]; then

# --- 1. real detection latency ---
lat=$out/detector_latency.csv
echo "mpi,n,period_ms,timeout_ms,rep,victim,first_ms,last_ms,target_ms,survivors_reporting" > "$lat"
for mpi in openmpi mpich; do
  prog=$root/build/$mpi/bench/detector_latency
  [ -x "$prog" ] || { echo "run_detector: $prog missing (scripts/build $mpi)" >&2; exit 1; }
  if [ $mpi = openmpi ]; then sizes="4 8 16"; else sizes="4"; fi
  for n in $sizes; do
    for pt in 50/500 100/1000; do
      p=${pt%/*} t=${pt#*/}
      for ((rep = 1; rep <= reps; rep++)); do
        victim=$(( (rep * 5 + n / 2) % n ))
        log=$(COHORT_HB_PERIOD_MS=$p COHORT_HB_TIMEOUT_MS=$t $lock \
              timeout 120 "$run" --mpi $mpi --timeout 100 -n "$n" "$prog" kill "$victim" 700 2>&1 || true)
        echo "$log" | awk -v mpi=$mpi -v n="$n" -v p="$p" -v t="$t" -v rep="$rep" -v victim="$victim" '
          /^detector-bench: rank [0-9]+ victim/ { v = $7; if (v < 0) next; c++; if (min == "" || v < min) min = v; if (v > max) max = v }
          END { printf "%s,%d,%d,%d,%d,%d,%.1f,%.1f,%d,%d\n", mpi, n, p, t, rep, victim, min / 1000, max / 1000, t + 2 * p + 50, c }' >> "$lat"
        tail -1 "$lat"
      done
    done
  done
done

# --- 2. detector thread CPU, default period and timeout, no failure ---
cpu=$out/detector_cpu.csv
echo "mpi,n,rank,seconds,cpu_us,wall_us,cpu_percent_of_core,iterations,sent,received" > "$cpu"
for mpi in openmpi mpich; do
  prog=$root/build/$mpi/bench/detector_latency
  log=$($lock timeout 120 "$run" --mpi $mpi --timeout 100 -n 4 "$prog" idle "$idle_s" 2>&1 || true)
  echo "$log" | awk -v mpi=$mpi -v s="$idle_s" '
    /^detector-bench: rank [0-9]+ cpu_us/ { printf "%s,4,%d,%d,%d,%d,%.3f,%d,%d,%d\n", mpi, $3, s, $5, $7, 100 * $5 / $7, $9, $11, $13 }' >> "$cpu"
done
cat "$cpu"
fi

# --- 1b. crash detection by pidfd vs heartbeats only ---
if [ $sim_only = 0 ] || [ $pidfd_only = 1 ]; then
pcsv=$out/detector_pidfd.csv
echo "mpi,n,period_ms,timeout_ms,pidfd,rep,victim,first_ms,last_ms,survivors_reporting" > "$pcsv"
for mpi in openmpi mpich; do
  prog=$root/build/$mpi/bench/detector_latency
  [ -x "$prog" ] || { echo "run_detector: $prog missing (scripts/build $mpi)" >&2; exit 1; }
  if [ $mpi = openmpi ]; then n=16; else n=4; fi
  for ((rep = 1; rep <= pidfd_reps; rep++)); do
    victim=$(( (rep * 5 + n / 2) % n ))
    for pidfd in on off; do
      log=$(COHORT_PIDFD=$pidfd COHORT_HB_PERIOD_MS=100 COHORT_HB_TIMEOUT_MS=1000 $lock \
            timeout 120 "$run" --mpi $mpi --timeout 100 -n "$n" "$prog" kill "$victim" 700 2>&1 || true)
      echo "$log" | awk -v mpi=$mpi -v n="$n" -v pidfd=$pidfd -v rep="$rep" -v victim="$victim" '
        /^detector-bench: rank [0-9]+ victim/ { v = $7; if (v < 0) next; c++; if (min == "" || v < min) min = v; if (v > max) max = v }
        END { printf "%s,%d,100,1000,%s,%d,%d,%.1f,%.1f,%d\n", mpi, n, pidfd, rep, victim, min / 1000, max / 1000, c }' >> "$pcsv"
      tail -1 "$pcsv"
    done
  done
done
fi

# --- 1c. on namespace hosts ---
# hosts_case MPI N HOSTS CASE VICTIMS [HOST]: one run on a fresh bed of HOSTS hosts, one CSV row: per survivor
# the time (ms since the kill) at which it knew every victim failed; first and last survivor.
hosts_case() {
  local mpi=$1 n=$2 nh=$3 case=$4 victims=$5 lost=${6:-} kind=kill log
  [[ $case =~ ${HOSTS_CASES:-.} ]] || return 0
  [ -n "$lost" ] && kind=host
  log=$($lock timeout 150 "$root/scripts/cohort-hosts" -H "$nh" --timeout 120 -- \
        "$root/bench/run_detector.sh" --bed-case "$mpi" "$n" "$nh" "$kind" "$victims" "$lost" 2>&1 || true)
  echo "$log" | awk -v mpi=$mpi -v n="$n" -v nh="$nh" -v case="$case" -v rep="$rep" -v victims="$victims" \
                    -v lost="${lost:--}" -v kind=$kind '
    /^bed-kill-at-us / { t0 = $2 }
    /^bed-exit / { code = $2 }
    /^detector-bench: rank [0-9]+ victim/ {
      r = $3; v = $7
      if (v < 0) { bad[r] = 1; next }
      if (kind == "host") v = $9 - t0   # ms since the processes were killed, not since the planned time
      if (!(r in worst) || v > worst[r]) worst[r] = v
      nv[r]++
    }
    END {
      nvict = split(victims, vs, ","); c = 0; gsub(",", " ", victims)  # one CSV field
      for (r in worst) if (!(r in bad) && nv[r] == nvict) {
        c++; if (min == "" || worst[r] < min) min = worst[r]; if (worst[r] > max) max = worst[r]
      }
      if (kind == "host" && t0 == "") c = 0
      printf "%s,%d,%d,%s,%d,%s,%s,%.1f,%.1f,%d,%d,%s\n", mpi, n, nh, case, rep, victims, lost,
             min / 1000, max / 1000, c, n - nvict, code == "" ? "-" : code }' >> "$hcsv"
  tail -1 "$hcsv"
  if [ "$(tail -1 "$hcsv" | cut -d, -f10)" != "$(tail -1 "$hcsv" | cut -d, -f11)" ]; then
    echo "$log" | grep -av "PMIX ERROR: BAD-PARAM" | tail -30 > "$out/detector_hosts-incomplete-$case-$rep.log"
  fi
}
if [ $hosts_only = 1 ]; then
hcsv=${DETECTOR_HOSTS_CSV:-$out/detector_hosts.csv} hosts_reps=${HOSTS_REPS:-$hosts_reps}
echo "mpi,n,hosts,case,rep,victims,lost_host,first_ms,last_ms,survivors_reporting,survivors,bed_exit" > "$hcsv"
prog=$root/build/openmpi/bench/detector_latency
[ -x "$prog" ] || { echo "run_detector: $prog missing (scripts/build openmpi)" >&2; exit 1; }
# Open MPI, 16 ranks on h1..h4 (0-3, 4-7, 8-11, 12-15; the ring in that order). Rank 5's observer is rank 6
# on its host (pidfd); rank 7 is h2's last rank: its observer is rank 8 on h3 (heartbeats only).
for ((rep = 1; rep <= hosts_reps; rep++)); do
  hosts_case openmpi 16 4 rank_observer_same_host 5
  hosts_case openmpi 16 4 rank_observer_other_host 7
  if [ $((rep % 2)) = 1 ]; then hosts_case openmpi 16 4 host_lost 4,5,6,7 h2
  else hosts_case openmpi 16 4 host_lost 8,9,10,11 h3; fi
done
# MPICH (<= 4 ranks): 2 hosts x 2 ranks; rank 0's observer is rank 1 (same host), rank 1's is rank 2 (h2).
if [ -x "$root/build/mpich/bench/detector_latency" ] && [ "${HOSTS_MPICH:-1}" = 1 ]; then
  for ((rep = 1; rep <= hosts_reps; rep++)); do
    hosts_case mpich 4 2 rank_observer_same_host 0
    hosts_case mpich 4 2 rank_observer_other_host 1
  done
fi
fi

# --- 3. simulator ---
if [ $mpi_only = 0 ]; then
sim=$root/build/openmpi/bench/detector_sim
simcsv=$out/detector_sim.csv
"$sim" --n 64,1024 --k 1,2,4,8,16 --csv "$simcsv.part1"
"$sim" --n "$sim_big" --k 1,16 --csv "$simcsv.part2"
"$sim" --n 4096 --k 1,4 --victims random --shuffle 0 --latency-us 5+exp500 --csv "$simcsv.part3"
{ cat "$simcsv.part1"; tail -n +2 "$simcsv.part2"; tail -n +2 "$simcsv.part3"; } > "$simcsv"
rm -f "$simcsv".part*
fi

python3 "$root/bench/detector_summary.py" "$out" > "$out/detector_summary.md"
cat "$out/detector_summary.md"
