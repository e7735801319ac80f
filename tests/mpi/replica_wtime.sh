#!/usr/bin/env bash
# Runs replica_wtime (a program whose steps depend on MPI_Wtime) under cohort-run and asserts that every
# replica of each logical rank took the same steps: without replication (each rank one line), at
# --replicas R fault-free (R identical lines per rank), and at --replicas R once per --kill (a
# COHORT_INJECT_FAILURE value naming world ranks; a survivor must log the death): the surviving replicas'
# lines of each rank are identical and equal to what rank 0 printed for it. Each run must exit 0 and
# print `cohort-test: rank 0 PASS`.
#   replica_wtime.sh --mpi M --np N --replicas R --timeout S [--kill SPEC]... [--env VAR=value]...
#                    -- prog SECONDS
set -u
mpi="" np="" replicas=2 timeout_s=60
kills=() envs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --mpi) mpi=$2; shift 2 ;;
    --np) np=$2; shift 2 ;;
    --replicas) replicas=$2; shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    --kill) kills+=("$2"); shift 2 ;;
    --env) envs+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "replica_wtime.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
run=${COHORT_RUN:-$(dirname "$0")/../../scripts/cohort-run}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
ok=1
# one_run NAME REPLICAS INJECT prog SECONDS
one_run() {
  local name=$1 r=$2 inject=$3 rc
  shift 3
  local e=("${envs[@]}")
  [ -n "$inject" ] && e+=("COHORT_INJECT_FAILURE=$inject")
  mkdir -p "$dir/$name"
  exec 9>/tmp/cohort-mpi-tests.lock
  flock 9
  env "${e[@]}" "$run" --mpi "$mpi" --timeout "$timeout_s" --replicas "$r" -n "$np" -- "$@" "$dir/$name" \
    >"$dir/$name.out" 2>"$dir/$name.err"
  rc=$?
  flock -u 9
  echo "--- $name: --replicas $r${inject:+, COHORT_INJECT_FAILURE=$inject}: exit $rc ---"
  cat "$dir/$name.out"
  sed 's/^/  stderr: /' "$dir/$name.err"
  [ "$rc" = 0 ] || { echo "FAIL: $name exited with $rc"; ok=0; }
  grep -aqE '^cohort-test: rank 0 PASS' "$dir/$name.out" || { echo "FAIL: $name: no PASS line"; ok=0; }
  if [ -n "$inject" ] && ! grep -aqE 'warn: replica [0-9]+ of logical rank [0-9]+ \(world rank [0-9]+, host .*\) died' "$dir/$name.err"; then
    echo "FAIL: $name: no survivor logged the replica's death"; ok=0
  fi
  local l files want n
  for ((l = 0; l < np; ++l)); do
    files=("$dir/$name/$l".*)
    n=0
    [ -e "${files[0]}" ] && n=${#files[@]}
    want=$(grep -aE "^rank $l: " "$dir/$name.out")
    echo "  rank $l: $n replica(s) wrote: $(cat "${files[@]}" 2>/dev/null | sort -u | tr '\n' '|')"
    if [ "$n" -lt 1 ] || { [ -z "$inject" ] && [ "$n" != "$r" ]; }; then
      echo "FAIL: $name: $n replica(s) of rank $l wrote their line"; ok=0; continue
    fi
    if [ "$(cat "${files[@]}" | sort -u | wc -l)" != 1 ]; then
      echo "FAIL: $name: the replicas of rank $l took different steps"; ok=0
    fi
    if [ "$(cat "${files[0]}")" != "$want" ]; then
      echo "FAIL: $name: rank 0 printed '$want' for rank $l, its replicas wrote '$(cat "${files[0]}")'"; ok=0
    fi
  done
}
one_run unreplicated 1 "" "$@"
one_run replicated "$replicas" "" "$@"
i=0
for k in "${kills[@]}"; do
  i=$((i + 1))
  one_run "killed$i" "$replicas" "$k" "$@"
done
[ $ok = 1 ] && { echo "PASS"; exit 0; }
exit 1
