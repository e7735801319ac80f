#!/usr/bin/env bash
# bench/run_detector.sh: the failure detector's benchmarks; writes bench/results/detector_*.csv and
# bench/results/detector_summary.md.
#   1. real detection latency: kill one rank, time until the last survivor learned it (Open MPI N=4,8,16;
#      MPICH N=4), for period/timeout 50/500 and 100/1000, REPS runs each;
#   1b. crash detection by pidfd (issue 16): SIGKILL one rank, time until the last survivor learned it, with
#      COHORT_PIDFD=on and off side by side (Open MPI N=16, MPICH N=4; default period/timeout 100/1000),
#      PIDFD_REPS runs each, alternating on and off; bench/results/detector_pidfd.csv;
#   2. detector thread CPU (getrusage RUSAGE_THREAD) at the default period, no failure, IDLE_S seconds;
#   3. the simulator (detector_sim): chord, bmg and hba at N up to 65,536, 1..16 failures, random or
#      consecutive victims, shuffle off/on.
# Needs build/openmpi and build/mpich (scripts/build openmpi; scripts/build mpich). Every multi-rank run
# holds /tmp/cohort-ranks.lock and has a hard timeout; --locked: the caller holds it for the whole run
# (e.g. flock /tmp/cohort-ranks.lock bench/run_detector.sh --pidfd-only --locked: about 2 minutes).
#   bench/run_detector.sh [--quick] [--locked] [--sim-only | --mpi-only | --pidfd-only]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/bench/results
mkdir -p "$out"
reps=3 idle_s=10 pidfd_reps=6
lock="flock /tmp/cohort-ranks.lock"
sim_big="256,4096,65536"
sim_only=0 mpi_only=0 pidfd_only=0
for a in "$@"; do
  case "$a" in
    --quick) reps=1 idle_s=3 sim_big="256,4096" pidfd_reps=3 ;;
    --sim-only) sim_only=1 ;;
    --mpi-only) mpi_only=1 ;;
    --pidfd-only) pidfd_only=1 sim_only=1 mpi_only=1 ;;
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
