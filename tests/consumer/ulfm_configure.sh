#!/usr/bin/env bash
# COHORT_DETECTOR=ulfm must stop at configure time on these machines, naming the reason.
#   ulfm_configure.sh <mpi> <source dir>
set -uo pipefail
mpi=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=$(cmake -S "$src" -B "$work" -DCOHORT_MPI="$mpi" -DCOHORT_DETECTOR=ulfm -DCOHORT_BUILD_TESTS=OFF \
        -DCOHORT_BUILD_BENCH=OFF -DCOHORT_BUILD_EXAMPLES=OFF 2>&1)
rc=$?
echo "$out" | grep -A3 'CMake Error' | head -8
[ $rc -ne 0 ] || { echo "FAIL: configure succeeded"; exit 1; }
case "$mpi" in
  mpich) pat="device 'ch4:ucx'.*stubs" ;;
  openmpi) pat="does not declare MPIX_Comm_shrink" ;;
esac
echo "$out" | tr -s ' \n' '  ' | grep -q "$pat" || { echo "FAIL: the message does not give the reason (/$pat/)"; exit 1; }
echo PASS
