#!/usr/bin/env bash
# Installs the build into a fresh prefix, builds tests/consumer/prog.c out of tree with
#   mpicc.<mpi> prog.c $(pkg-config --cflags --libs cohort-<mpi>)   and with   find_package(cohort)
# checks with ldd that only this MPI is linked, and runs both with the installed cohort-run (4 ranks):
# every rank must report that its MPI_Barrier went through cohort. Then the same program built without
# cohort runs with the installed `cohort-run --preload`, which must find lib/libcohort-preload.so beside it.
#   consumer.sh <mpi> <build dir> <source dir>
set -euo pipefail
mpi=$1 build=$2 src=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
other=$([ "$mpi" = mpich ] && echo openmpi || echo mpich)
check_ldd() {
  local libs
  libs=$(ldd "$1")
  if [ "$mpi" = mpich ]; then
    echo "$libs" | grep -q 'libmpich\.so' || { echo "FAIL: $1 does not link libmpich"; exit 1; }
    ! echo "$libs" | grep -q 'libmpi\.so' || { echo "FAIL: $1 also links Open MPI's libmpi"; exit 1; }
  else
    echo "$libs" | grep -q 'libmpi\.so' || { echo "FAIL: $1 does not link Open MPI's libmpi"; exit 1; }
    ! echo "$libs" | grep -q 'libmpich' || { echo "FAIL: $1 also links MPICH"; exit 1; }
  fi
  echo "ldd: $1 links only $mpi (not $other)"
}

echo "--- pkg-config consumer"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
flags=$(pkg-config --cflags --libs "cohort-$mpi")
echo "pkg-config --cflags --libs cohort-$mpi: $flags"
"/usr/bin/mpicc.$mpi" "$src/tests/consumer/prog.c" $flags -o "$work/prog_pc"
check_ldd "$work/prog_pc"
COHORT_RUN=$prefix/bin/cohort-run "$src/tests/mpi/run.sh" --mpi "$mpi" --np 4 --timeout 60 --pass 4 -- "$work/prog_pc"

echo "--- find_package(cohort) consumer"
cmake -S "$src/tests/consumer/cmake" -B "$work/cm" -DCMAKE_PREFIX_PATH="$prefix" \
  -DMPI_C_COMPILER="/usr/bin/mpicc.$mpi" >/dev/null
cmake --build "$work/cm" >/dev/null
check_ldd "$work/cm/consumer"
COHORT_RUN=$prefix/bin/cohort-run "$src/tests/mpi/run.sh" --mpi "$mpi" --np 4 --timeout 60 --pass 4 -- "$work/cm/consumer"

echo "--- plain program under the installed cohort-run --preload"
"/usr/bin/mpicc.$mpi" "$src/tests/consumer/prog.c" -o "$work/prog_plain"
check_ldd "$work/prog_plain"
# NOTE: the .pc file names the configured prefix (CMAKE_INSTALL_PREFIX), not the --prefix of this install.
plib=$(pkg-config --variable=preloadlib "cohort-$mpi")
[ "$plib" = "$(pkg-config --variable=libdir "cohort-$mpi")/libcohort-preload.so" ] && [ -f "$plib" ] \
  || { echo "FAIL: pkg-config --variable=preloadlib cohort-$mpi is '$plib', not an installed library"; exit 1; }
env -u COHORT_PRELOAD_LIB COHORT_RUN=$prefix/bin/cohort-run "$src/tests/mpi/run.sh" --mpi "$mpi" --np 4 --timeout 60 \
  --pass 4 --preload -- "$work/prog_plain"
