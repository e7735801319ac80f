# Select one MPI for this build directory.
# FindMPI's MPI_HOME does not select MPICH on Debian; set the three compiler/launcher variables instead
# (ARCHITECTURE.md, "Measured on these machines").
if(COHORT_MPI STREQUAL "mpich" OR COHORT_MPI STREQUAL "openmpi")
  set(_sfx ${COHORT_MPI})
  foreach(_v C)
    string(TOLOWER "${_v}" _l)
    if(_l STREQUAL "c")
      set(_w mpicc)
    else()
      set(_w mpicxx)
    endif()
    if(NOT EXISTS /usr/bin/${_w}.${_sfx})
      message(FATAL_ERROR "cohort: COHORT_MPI=${COHORT_MPI} but /usr/bin/${_w}.${_sfx} is missing (run scripts/setup)")
    endif()
    set(MPI_${_v}_COMPILER /usr/bin/${_w}.${_sfx} CACHE FILEPATH "" FORCE)
  endforeach()
  set(MPIEXEC_EXECUTABLE /usr/bin/mpiexec.${_sfx} CACHE FILEPATH "" FORCE)
elseif(NOT COHORT_MPI STREQUAL "auto")
  message(FATAL_ERROR "cohort: COHORT_MPI must be mpich, openmpi or auto, not '${COHORT_MPI}'")
endif()

find_package(MPI 3.0 REQUIRED COMPONENTS C)
# cohort uses the C API only, also from C++.
add_compile_definitions(OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1)

# Which MPI did we get? Ask the library's own header.
file(WRITE ${CMAKE_BINARY_DIR}/cohort_which_mpi.c
  "#include <mpi.h>\n#if defined(OPEN_MPI)\n#error cohort_mpi=openmpi\n#elif defined(MPICH_VERSION)\n#error cohort_mpi=mpich\n#else\n#error cohort_mpi=unknown\n#endif\n")
try_compile(_unused ${CMAKE_BINARY_DIR}/cohort_which_mpi
  SOURCES ${CMAKE_BINARY_DIR}/cohort_which_mpi.c
  LINK_LIBRARIES MPI::MPI_C
  OUTPUT_VARIABLE _which_out)
string(REGEX MATCH "cohort_mpi=([a-z]+)" _m "${_which_out}")
set(COHORT_MPI_NAME "${CMAKE_MATCH_1}")
if(NOT COHORT_MPI_NAME OR COHORT_MPI_NAME STREQUAL "unknown")
  message(FATAL_ERROR "cohort: cannot tell whether ${MPI_C_COMPILER} is MPICH or Open MPI")
endif()
if(NOT COHORT_MPI STREQUAL "auto" AND NOT COHORT_MPI_NAME STREQUAL COHORT_MPI)
  message(FATAL_ERROR "cohort: asked for ${COHORT_MPI} but ${MPI_C_COMPILER} is ${COHORT_MPI_NAME}")
endif()
set(COHORT_MPIEXEC ${MPIEXEC_EXECUTABLE})
message(STATUS "cohort: building for ${COHORT_MPI_NAME} (${MPI_C_COMPILER}, ${MPIEXEC_EXECUTABLE})")

# MPI 4.0's MPI_Comm_create_from_group (MPICH 4, Open MPI 5; Open MPI 4.1 has none). calls.def lists it
# either way (one table); where the MPI lacks it, wrap/calls.h declares PMPI_Comm_create_from_group weak so
# that the pass-through path and the preload build still link, and its tests are not registered.
include(CheckCSourceCompiles)
set(CMAKE_REQUIRED_LIBRARIES MPI::MPI_C)
check_c_source_compiles([=[
#include <mpi.h>
int main(void) {
  MPI_Comm c;
  return MPI_Comm_create_from_group(MPI_GROUP_EMPTY, "cohort", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
}]=] COHORT_HAVE_COMM_CREATE_FROM_GROUP)
unset(CMAKE_REQUIRED_LIBRARIES)
if(COHORT_HAVE_COMM_CREATE_FROM_GROUP)
  add_compile_definitions(COHORT_HAVE_COMM_CREATE_FROM_GROUP=1)
endif()
# MPI 4.0's Sessions (MPI_Session_init & co.: MPICH 4, Open MPI 5; not Open MPI 4.1). calls.def lists the
# wrapped ones either way; where the MPI lacks them, wrap/calls.h declares the handle type and their PMPI_
# names (weak), wrap/runtime/session.cpp defines entry points that no program can reach, and their tests are not
# registered.
set(CMAKE_REQUIRED_LIBRARIES MPI::MPI_C)
check_c_source_compiles([=[
#include <mpi.h>
int main(void) {
  MPI_Session s;
  MPI_Group g;
  return MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s) +
         MPI_Group_from_session_pset(s, "mpi://WORLD", &g) + MPI_Session_finalize(&s);
}]=] COHORT_HAVE_SESSIONS)
unset(CMAKE_REQUIRED_LIBRARIES)
if(COHORT_HAVE_SESSIONS)
  add_compile_definitions(COHORT_HAVE_SESSIONS=1)
endif()
# MPI 4.0's persistent collectives (MPI_Allreduce_init & co.: MPICH 4, Open MPI 5; not Open MPI 4.1). The
# same way: wrap/calls.h declares their PMPI_ names weak where the MPI lacks them, and the tests of
# wrap/coll/persistent_coll.cpp are registered only where the MPI has them.
set(CMAKE_REQUIRED_LIBRARIES MPI::MPI_C)
check_c_source_compiles([=[
#include <mpi.h>
int main(void) {
  MPI_Request r;
  return MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &r) + MPI_Neighbor_alltoallw_init(0, 0, 0, 0, 0, 0, 0, 0,
         MPI_COMM_WORLD, MPI_INFO_NULL, &r);
}]=] COHORT_HAVE_PERSISTENT_COLL)
unset(CMAKE_REQUIRED_LIBRARIES)
if(COHORT_HAVE_PERSISTENT_COLL)
  add_compile_definitions(COHORT_HAVE_PERSISTENT_COLL=1)
endif()
