#!/usr/bin/env bash
# Runs one program under cohort-run several ways and asserts that its standard output is the same byte for
# byte: without replication (the reference), at --replicas R fault-free, and at --replicas R once per --kill
# (a COHORT_INJECT_FAILURE value naming world ranks, i.e. replicas; a survivor must log the death). Each run
# must exit 0 and print `cohort-test: ... PASS` or the --expect regex; lines matching --ignore (e.g. a wall
# time) are left out of the comparison.
#   replica_compare.sh --mpi M --np N --replicas R --timeout S [--kill SPEC]... [--ignore REGEX]
#                      [--expect REGEX] [--env VAR=value]... -- prog args...
set -u
. "$(dirname "$0")/launcher_notice.sh"
mpi="" np="" replicas=2 timeout_s=60 ignore='^$^' expect='cohort-test: rank 0 PASS'
kills=() envs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --mpi) mpi=$2; shift 2 ;;
    --np) np=$2; shift 2 ;;
    --replicas) replicas=$2; shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    --kill) kills+=("$2"); shift 2 ;;
    --ignore) ignore=$2; shift 2 ;;
    --expect) expect=$2; shift 2 ;;
    --env) envs+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "replica_compare.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
run=${COHORT_RUN:-$(dirname "$0")/../../scripts/cohort-run}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
ok=1
# one_run NAME REPLICAS INJECT
one_run() {
  local name=$1 r=$2 inject=$3 rc
  shift 3
  local e=("${envs[@]}")  # (one word at least: env needs no empty array)
  [ -n "$inject" ] && e+=("COHORT_INJECT_FAILURE=$inject")
  exec 9>/tmp/cohort-mpi-tests.lock
  flock 9
  env "${e[@]}" "$run" --mpi "$mpi" --timeout "$timeout_s" --replicas "$r" -n "$np" -- "$@" \
    >"$dir/$name.out" 2>"$dir/$name.err"
  rc=$?
  flock -u 9
  echo "--- $name: --replicas $r${inject:+, COHORT_INJECT_FAILURE=$inject}: exit $rc ---"
  cat "$dir/$name.out"
  sed 's/^/  stderr: /' "$dir/$name.err"
  [ "$rc" = 0 ] || { echo "FAIL: $name exited with $rc"; ok=0; }
  grep -aqE -- "$expect" "$dir/$name.out" || { echo "FAIL: $name: no output line matches /$expect/"; ok=0; }
  # A kill must land while the program runs: a survivor logged the replica's death (warn).
  if [ -n "$inject" ] && ! grep -aqE 'warn: replica [0-9]+ of logical rank [0-9]+ \(world rank [0-9]+, host .*\) died' "$dir/$name.err"; then
    echo "FAIL: $name: no survivor logged the replica's death"; ok=0
  fi
  without_launcher_notice "$dir/$name.out" | grep -avE -- "$ignore" >"$dir/$name.cmp"
}
one_run reference 1 "" "$@"
one_run replicated "$replicas" "" "$@"
i=0
for k in "${kills[@]}"; do
  i=$((i + 1))
  one_run "killed$i" "$replicas" "$k" "$@"
done
for f in "$dir"/replicated.cmp "$dir"/killed*.cmp; do
  [ -e "$f" ] || continue
  if ! cmp -s "$dir/reference.cmp" "$f"; then
    echo "FAIL: the output of $(basename "$f" .cmp) differs from the reference:"
    diff "$dir/reference.cmp" "$f" | head -20
    ok=0
  fi
done
[ $ok = 1 ] && { echo "PASS"; exit 0; }
exit 1
