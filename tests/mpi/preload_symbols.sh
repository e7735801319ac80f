#!/bin/sh
# preload_symbols.sh LIBCOHORT_A LIBCOHORT_PRELOAD_SO CALL...: the recursion guarantee and the entry points
# of the preload build, checked on the built files.
#  - libcohort.a (the objects of both builds) references no MPI_X function: every call cohort makes itself
#    (wrappers, driver, repair, detector thread) is a PMPI_X call, which no preloaded MPI_X can catch.
#  - libcohort-preload.so exports exactly one MPI_X per wrapped call of wrap/calls.def (the CALL list), and
#    besides them only MPIX_X (ULFM's API) and cohort_X: no __wrap_/__real_ or C++ symbol.
set -u
archive=$1 so=$2
shift 2
ok=0
calls=$(nm "$archive" 2>/dev/null | awk '$1 == "U" && $2 ~ /^MPI_/ {print $2}' | sort -u)
if [ -n "$calls" ]; then echo "FAIL: cohort calls MPI_X (not PMPI_X): $calls"; ok=1; fi
want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
got=$(nm -D --defined-only "$so" | awk '$3 ~ /^MPI_/ {print $3}' | sort | tr '\n' ' ')
if [ "$want" != "$got" ]; then echo "FAIL: exported MPI_X entry points differ from wrap/calls.def"; echo " want: $want"; echo " got:  $got"; ok=1; fi
other=$(nm -D --defined-only "$so" | awk '$3 !~ /^(MPI_|MPIX_|cohort_)/ {print $3}')
if [ -n "$other" ]; then echo "FAIL: $so exports more than MPI_*, MPIX_* and cohort_*: $other"; ok=1; fi
[ $ok = 0 ] && echo "PASS: no MPI_X call inside cohort; $(echo "$got" | wc -w) entry points, as in wrap/calls.def"
exit $ok
