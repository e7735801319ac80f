#!/usr/bin/env bash
# The parts are optional: tests on without the examples (and without the benchmarks) must configure.
#   options_configure.sh <mpi> <source dir>
set -uo pipefail
mpi=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=$(cmake -S "$src" -B "$work" -DCOHORT_MPI="$mpi" -DCOHORT_BUILD_TESTS=ON -DCOHORT_BUILD_EXAMPLES=OFF \
        -DCOHORT_BUILD_BENCH=OFF 2>&1)
rc=$?
if [ $rc -ne 0 ]; then
  echo "$out" | grep -A6 'CMake Error' | head -20
  echo "FAIL: -DCOHORT_BUILD_EXAMPLES=OFF with tests on does not configure"
  exit 1
fi
echo PASS
