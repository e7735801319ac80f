#!/usr/bin/env bash
# C++ and Fortran programs against an installed prefix, built with the MPI's compiler wrappers:
#   C++      tests/consumer/prog.cpp with mpicxx.<mpi> $(pkg-config --cflags --libs cohort-<mpi>), and with
#            find_package(cohort) beside MPI::MPI_CXX (both link the MPI's C++ bindings library, which calls
#            wrapped calls itself); its MPI_Barrier and MPI_Allreduce go through cohort. The same source built
#            without cohort, under `cohort-run --preload`, too.
#   Fortran  tests/consumer/prog.f90 counts its MPI_Barrier calls that reached cohort (through dlsym):
#            linked with mpif90.<mpi> and cohort's flags it links and runs, but none does (the MPI's Fortran
#            library calls MPI from inside a shared library, where --wrap cannot reach: 0). Built without
#            cohort and run under `cohort-run --preload`: MPICH's libmpichfort calls the MPI_* names, which the
#            preloaded library defines (1); Open MPI's libmpi_mpifh calls PMPI_*, which it does not (0).
# Each program runs on 4 ranks under the installed cohort-run; every rank must print PASS.
#   languages.sh cxx|fortran <mpi> <build dir> <source dir>
# Exits 77 (skipped) for fortran where there is no gfortran (scripts/setup installs it).
set -euo pipefail
lang=$1 mpi=$2 build=$3 src=$4
if [ "$lang" = fortran ] && ! command -v gfortran >/dev/null; then
  echo "SKIP: no gfortran"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
flags=$(pkg-config --cflags --libs "cohort-$mpi")
run4() { COHORT_RUN=$prefix/bin/cohort-run "$src/tests/mpi/run.sh" --mpi "$mpi" --np 4 --timeout 60 --pass 4 "$@"; }
preload4() { env -u COHORT_PRELOAD_LIB COHORT_RUN=$prefix/bin/cohort-run "$src/tests/mpi/run.sh" --mpi "$mpi" \
               --np 4 --timeout 60 --pass 4 --preload "$@"; }

cxx() {
  echo "--- C++: mpicxx.$mpi prog.cpp \$(pkg-config --cflags --libs cohort-$mpi)"
  "/usr/bin/mpicxx.$mpi" "$src/tests/consumer/prog.cpp" $flags -o "$work/cxx_pc" \
    || { echo "FAIL: a C++ program does not link with mpicxx.$mpi and cohort's flags"; exit 1; }
  run4 -- "$work/cxx_pc"

  echo "--- C++: find_package(cohort) and MPI::MPI_CXX"
  cmake -S "$src/tests/consumer/cmake_cxx" -B "$work/cm" -DCMAKE_PREFIX_PATH="$prefix" \
    -DMPI_C_COMPILER="/usr/bin/mpicc.$mpi" -DMPI_CXX_COMPILER="/usr/bin/mpicxx.$mpi" >/dev/null
  cmake --build "$work/cm" >/dev/null || { echo "FAIL: the find_package C++ consumer does not link"; exit 1; }
  run4 -- "$work/cm/consumer_cxx"

  echo "--- C++ without cohort, under cohort-run --preload"
  "/usr/bin/mpicxx.$mpi" "$src/tests/consumer/prog.cpp" -ldl -o "$work/cxx_plain"
  preload4 -- "$work/cxx_plain"
}

fortran() {
  echo "--- Fortran: mpif90.$mpi prog.f90 \$(pkg-config --libs cohort-$mpi)"
  # NOTE: --export-dynamic lets the program find cohort_call_count with dlsym, as the preloaded one does.
  "/usr/bin/mpif90.$mpi" "$src/tests/consumer/prog.f90" $(pkg-config --libs "cohort-$mpi") -Wl,--export-dynamic \
    -o "$work/f_pc" || { echo "FAIL: a Fortran program does not link with mpif90.$mpi and cohort's flags"; exit 1; }
  run4 -- "$work/f_pc" 0

  echo "--- Fortran without cohort, under cohort-run --preload"
  "/usr/bin/mpif90.$mpi" "$src/tests/consumer/prog.f90" -o "$work/f_plain"
  preload4 -- "$work/f_plain" "$([ "$mpi" = mpich ] && echo 1 || echo 0)"
}

"$lang"
