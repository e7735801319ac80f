#!/usr/bin/env bash
# Silent data corruption checking under replication (docs/design/sdc.md), seeded injections of
# COHORT_INJECT_SDC. Runs the program under cohort-run:
#   clean    fault-free at --replicas R with COHORT_SDC=hash and =full: exit 0, the output of the hash run
#            equal to the full run's and to the run with COHORT_SDC=off, and no report line (false
#            positives: 0).
#   abort    (R = 2) --jobs J runs, one seeded flip each, COHORT_ON_SDC=abort: the job stops with exit code
#            87 and one report line names the injected message (sender, receiver, sequence number).
#   warn     (R = 2) --jobs J runs of --flips F seeded flips each (entries of one COHORT_INJECT_SDC), on
#            distinct replicas' sends, COHORT_ON_SDC=warn: exit 0, each injected message reported
#            exactly once.
#   fence    (R = 3) --jobs J runs, one seeded flip each: the survivors' output equal byte for byte to the
#            fault-free run's, one report line naming the injected message, and the minority replica
#            fenced (exit 86).
# A flip goes to a seeded logical rank, replica, send (1..--sends) and bit, in cohort's copy or (one in
# four) in the program's memory.
#   replica_sdc.sh --mpi M --np N --replicas R --timeout S --case clean|abort|warn|fence [--jobs J]
#                  [--flips F] [--sends K] [--seed X] [--env VAR=value]... -- prog args...
set -u
. "$(dirname "$0")/launcher_notice.sh"
mpi="" np="" replicas=2 timeout_s=60 case_="" jobs=1 flips=1 sends=40 seed=1 envs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --mpi) mpi=$2; shift 2 ;;
    --np) np=$2; shift 2 ;;
    --replicas) replicas=$2; shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    --case) case_=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --flips) flips=$2; shift 2 ;;
    --sends) sends=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --env) envs+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "replica_sdc.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
run=${COHORT_RUN:-$(dirname "$0")/../../scripts/cohort-run}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
ok=1 detected=0 injected=0 fed=0
RANDOM=$seed
fail() { echo "FAIL: $*"; ok=0; }

# one_run NAME VAR=value... : runs the program; leaves $dir/NAME.out, .err, and rc in $rc.
one_run() {
  local name=$1
  shift
  local e=(COHORT_LOG=warn "${envs[@]}" "$@")
  exec 9>/tmp/cohort-mpi-tests.lock
  flock 9
  env "${e[@]}" "$run" --mpi "$mpi" --timeout "$timeout_s" --replicas "$replicas" -n "$np" -- "${prog[@]}" \
    >"$dir/$name.out" 2>"$dir/$name.err"
  rc=$?
  flock -u 9
}
show() {
  echo "--- $1: exit $rc ---"
  sed 's/^/  stdout: /' "$dir/$1.out" | head -20
  sed 's/^/  stderr: /' "$dir/$1.err" | head -30
}
# A seeded injection entry: rank, replica (ENTRY_REPLICA_<rank> when set), send, bit, where.
entry() {
  local where=message rank=$((RANDOM % np)) replica=$((RANDOM % replicas)) fixed
  [ $((RANDOM % 4)) = 0 ] && where=memory
  fixed=ENTRY_REPLICA_$rank
  [ -n "${!fixed:-}" ] && replica=${!fixed}
  echo "rank=$rank,replica=$replica,send=$((RANDOM % sends + 1)),bit=$((RANDOM % 512)),where=$where"
}
# Each message an inject line names must be reported exactly once (a line of the report with its key). A
# where=memory flip in a buffer that fed a computation (a reduction's own contribution) names no message:
# the computation may absorb it (a low bit of a floating-point sum), so it is counted, not checked.
check_reports() {
  local name=$1 want=$2 n key count
  n=$(grep -ac 'inject: flipped bit' "$dir/$name.err")
  [ "$n" = "$want" ] || fail "$name: $n flips made, $want expected"
  injected=$((injected + n))
  fed=$((fed + $(grep -ac 'inject: flipped bit .* (where=memory) that feeds' "$dir/$name.err")))
  # NOTE: two entries can flip the same bit of one message (a where=memory entry and a message entry whose
  # send was empty and moved to the next one): they cancel, the copies agree, and nothing is to report.
  local flips want_reports
  while IFS=$'\t' read -r key flips; do
    count=$(grep -a 'silent data corruption: ' "$dir/$name.err" | grep -acF "$key")
    want_reports=1
    [ "$flips" = 0 ] && want_reports=0
    if [ "$count" = "$want_reports" ]; then
      detected=$((detected + want_reports))
    else
      fail "$name: '$key' reported $count times, not $want_reports"
    fi
  done < <(grep -a 'inject: flipped bit [0-9]* of message' "$dir/$name.err" |
             sed -E 's/.*flipped bit ([0-9]+) of (message [0-9]+ of context [0-9]+ from logical rank [0-9]+ to logical rank [0-9]+) .*/\2\t\1/' |
             awk -F'\t' '{ n[$1 "\t" $2]++; keys[$1] = 1 }
                         END { for (k in keys) { odd = 0; for (kb in n) { split(kb, p, "\t"); if (p[1] == k && n[kb] % 2) odd++ }
                                                 print k "\t" odd } }')
}

prog=("$@")
case "$case_" in
  clean)
    for mode in off hash full; do
      one_run "$mode" COHORT_SDC=$mode
      [ "$rc" = 0 ] || { show "$mode"; fail "$mode: exit $rc"; }
      grep -aq 'cohort-test: rank 0 PASS' "$dir/$mode.out" || { show "$mode"; fail "$mode: no PASS line"; }
      if grep -aq 'silent data corruption' "$dir/$mode.err"; then show "$mode"; fail "$mode: a false positive"; fi
    done
    for mode in hash full; do
      cmp -s <(without_launcher_notice "$dir/off.out") <(without_launcher_notice "$dir/$mode.out") || fail "the output with COHORT_SDC=$mode differs from COHORT_SDC=off"
    done
    ;;
  abort|fence)
    if [ "$case_" = fence ]; then
      one_run reference
      [ "$rc" = 0 ] || { show reference; fail "the fault-free run exited $rc"; }
    fi
    for ((j = 1; j <= jobs; j++)); do
      spec=$(entry)
      policy=abort
      one_run "job$j" COHORT_ON_SDC=$policy "COHORT_INJECT_SDC=$spec"
      bad=$ok
      if grep -aq 'inject: flipped bit .* (where=memory) that feeds' "$dir/job$j.err" &&
         ! grep -aq 'silent data corruption: ' "$dir/job$j.err"; then
        # (absorbed by the computation: nothing to detect)
        [ "$rc" = 0 ] || fail "job$j ($spec): exit $rc"
      elif [ "$case_" = abort ]; then
        [ "$rc" = 87 ] || fail "job$j ($spec): exit $rc, not 87"
        grep -aq 'error: silent data corruption: .*COHORT_ON_SDC=abort' "$dir/job$j.err" || fail "job$j ($spec): no abort line"
      else
        # NOTE: cohort-run exits 86 when world rank 0 was fenced (its rule 3), whose twin printed.
        if [ "$rc" != 0 ] && ! { [ "$rc" = 86 ] && grep -aq 'rank 0 was fenced' "$dir/job$j.err"; }; then
          fail "job$j ($spec): exit $rc"
        fi
        cmp -s <(without_launcher_notice "$dir/reference.out") <(without_launcher_notice "$dir/job$j.out") || fail "job$j ($spec): the survivors' output differs from the fault-free run's"
        grep -aqE 'rank [0-9]+ \(fenced\)|rank 0 was fenced' "$dir/job$j.err" || fail "job$j ($spec): no replica was fenced"
      fi
      check_reports "job$j" 1
      [ "$bad" = "$ok" ] || show "job$j"
    done
    ;;
  warn)
    for ((j = 1; j <= jobs; j++)); do
      # One replica per rank takes its flips (two replicas flipping the same bit of one message would
      # agree: replication cannot see that), and each flip a send of its own.
      for ((r = 0; r < np; r++)); do eval "ENTRY_REPLICA_$r=$((RANDOM % replicas))"; done
      spec="" used=" "
      while [ "$(echo "$spec" | tr ';' '\n' | grep -c rank)" -lt "$flips" ]; do
        e=$(entry)
        rr=${e%%,send=*}
        s=${e#*send=}; s=${s%%,*}
        [ "${used#* $rr:$s }" != "$used" ] && continue
        used="$used$rr:$s "
        spec="$spec${spec:+;}$e"
      done
      one_run "job$j" COHORT_ON_SDC=warn "COHORT_INJECT_SDC=$spec"
      bad=$ok
      [ "$rc" = 0 ] || fail "job$j: exit $rc"
      check_reports "job$j" "$flips"
      [ "$bad" = "$ok" ] || { echo "  COHORT_INJECT_SDC=$spec"; show "job$j"; }
    done
    ;;
  *) echo "replica_sdc.sh: --case clean|abort|warn|fence" >&2; exit 2 ;;
esac
echo "replica_sdc.sh: case $case_, $injected flips made ($fed into a computation's input), $detected reported once"
# Every report gives its detection latency; its spread over this run's reports.
reports=$(cat "$dir"/*.err | grep -a 'silent data corruption: message ')
if [ -n "$reports" ]; then
  timed=$(grep -aoE '\(detected [0-9]+ copies and [0-9]+ us after its first copy arrived\)' <<<"$reports")
  [ "$(wc -l <<<"$timed")" = "$(wc -l <<<"$reports")" ] || fail "a report without its detection latency"
  n=$(wc -l <<<"$timed")
  copies=$(awk '{print $2}' <<<"$timed" | sort -n)
  us=$(awk '{print $5}' <<<"$timed" | sort -n)
  echo "replica_sdc.sh: detection latency over $n reports: copies median $(sed -n "$(((n + 1) / 2))p" <<<"$copies"), max $(tail -1 <<<"$copies"); us median $(sed -n "$(((n + 1) / 2))p" <<<"$us"), max $(tail -1 <<<"$us")"
fi
[ $ok = 1 ] && { echo "PASS"; exit 0; }
exit 1
