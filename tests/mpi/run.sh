#!/usr/bin/env bash
# Runs one multi-rank test under cohort-run with a hard timeout and judges it:
#   run.sh --mpi M --np N --timeout S [--pass K] [--exit C] [--env VAR=value]... [--expect REGEX]... [--preload]
#          [--run-arg X]... [--launcher-arg X]... -- prog args...
# (--run-arg: a cohort-run option; --launcher-arg: a word cohort-run passes on to the launcher)
# Passes when cohort-run exits with C (default 0), exactly K ranks printed `cohort-test: rank R PASS`
# (when --pass is given) and every --expect regex matches some output line.
# Holds /tmp/cohort-mpi-tests.lock so that no two multi-rank tests ever run at once on this machine.
set -u
mpi="" np="" timeout_s=60 pass="" want_exit=0
expects=() envs=() runargs=() launcherargs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --mpi) mpi=$2; shift 2 ;;
    --np) np=$2; shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    --pass) pass=$2; shift 2 ;;
    --exit) want_exit=$2; shift 2 ;;
    --env) envs+=("$2"); shift 2 ;;
    --expect) expects+=("$2"); shift 2 ;;
    --preload) runargs+=(--preload); shift ;;
    --run-arg) runargs+=("$2"); shift 2 ;;
    --launcher-arg) launcherargs+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
run=${COHORT_RUN:-$(dirname "$0")/../../scripts/cohort-run}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
exec 9>/tmp/cohort-mpi-tests.lock
flock 9
start=$(date +%s%N)
env "${envs[@]}" "$run" --mpi "$mpi" --timeout "$timeout_s" "${runargs[@]}" -n "$np" "${launcherargs[@]}" -- "$@" >"$log" 2>&1
rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
flock -u 9
ok=1
if [ "$rc" != "$want_exit" ]; then
  echo "FAIL: cohort-run exited with $rc, expected $want_exit" ; ok=0
fi
if [ -n "$pass" ]; then
  # NOTE: counted anywhere in a line: another process's unterminated stderr line (e.g. Open MPI's libnbc
  # error report) can precede a rank's message on the same line. grep -a: Open MPI 5's warning boxes can
  # hold bytes that make grep take the log for a binary file (and count nothing).
  got=$(grep -aoE 'cohort-test: rank [0-9]+ PASS' "$log" | wc -l)
  if [ "$got" != "$pass" ]; then echo "FAIL: $got ranks passed, expected $pass"; ok=0; fi
fi
if grep -aqE 'cohort-test: rank [0-9]+ FAIL' "$log"; then echo "FAIL: a rank reported FAIL"; ok=0; fi
for e in "${expects[@]}"; do
  grep -aqE -- "$e" "$log" || { echo "FAIL: no output line matches /$e/"; ok=0; }
done
echo "--- output ($mpi, $np ranks, ${ms} ms) ---"
cat "$log"
[ $ok = 1 ] && { echo "PASS"; exit 0; }
exit 1
