#!/usr/bin/env bash
# launcher_options.sh COHORT_RUN: cohort-run's command line without launching ranks.
# - --help exits 0 and lists every option that the parser accepts, each on its own line;
# - what it cannot take is rejected with exit 2 and one line naming it: an unknown option with no `--` after
#   it, cohort-run's own options among the launcher options, a bad --tolerate.
set -u
run=$1
ok=1
fail() { echo "FAIL: $*"; ok=0; }

help=$("$run" --help) || fail "--help exited with $?"
# The parser's options: the case patterns of the option loop ("    --mpi) ...", "    -n|-np) ...").
parsed=$(sed -n '/^while \[ \$# -gt 0 \]; do/,/^done/p' "$run" | sed -n 's/^    \(-[-a-z|]*\)\(=\*\)\{0,1\})\s.*/\1/p' | tr '|' '\n' | sort -u)
[ -n "$parsed" ] || fail "found no options in $run's parser"
for o in $parsed; do
  [ "$o" = -- ] && continue
  n=$(printf '%s\n' "$help" | grep -cE -- "^  (-[^ ]+, )?$o( |,|$)")
  [ "$n" = 1 ] || fail "option $o is on $n lines of --help, expected 1"
done

# expect_reject REGEX ARGS...: cohort-run ARGS exits 2 with a line matching REGEX.
expect_reject() {
  local re=$1 out rc; shift
  out=$("$run" "$@" 2>&1); rc=$?
  [ "$rc" = 2 ] || fail "cohort-run $* exited with $rc, expected 2"
  printf '%s\n' "$out" | grep -qE -- "$re" || fail "cohort-run $*: no line matches /$re/ in: $out"
}
expect_reject "^cohort-run: '--bogus' is not a cohort-run option; to pass launcher options, end them with --" -n 2 --bogus ./prog
expect_reject "^cohort-run: '-n' among the launcher options: the number of ranks is cohort-run's -n N" --mca btl self -n 2 -- ./prog
expect_reject "^cohort-run: '-c' among the launcher options" -n 2 -c 4 -- ./prog
expect_reject "^cohort-run: '--timeout' among the launcher options: give cohort-run's own options before them" -n 2 --mca btl self --timeout 3 -- ./prog
expect_reject "^cohort-run: --tolerate takes crash, exit or all" --tolerate segv -n 2 ./prog

[ $ok = 1 ] && echo PASS && exit 0
exit 1
