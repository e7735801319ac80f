# COHORT_DETECTOR=ulfm: failures come from the MPI's own ULFM (MPIX_Comm_shrink/agree/revoke/failure_ack).
# Fails at configure time, naming the reason, where the MPI lacks the symbols or where they are known stubs.
if(COHORT_DETECTOR STREQUAL "heartbeat")
  set(COHORT_USE_ULFM OFF)
  return()
elseif(NOT COHORT_DETECTOR STREQUAL "ulfm")
  message(FATAL_ERROR "cohort: COHORT_DETECTOR must be heartbeat or ulfm, not '${COHORT_DETECTOR}'")
endif()

include(CheckCSourceCompiles)
set(CMAKE_REQUIRED_LIBRARIES MPI::MPI_C)
check_c_source_compiles([=[
#include <mpi.h>
#if defined(OPEN_MPI)
#include <mpi-ext.h>
#endif
int main(int argc, char **argv) {
  MPI_Comm c; int flag = 1; MPI_Group g;
  MPIX_Comm_revoke(MPI_COMM_WORLD);
  MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
  MPIX_Comm_shrink(MPI_COMM_WORLD, &c);
  MPIX_Comm_failure_ack(MPI_COMM_WORLD);
  MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &g);
  return flag + MPIX_ERR_PROC_FAILED + MPIX_ERR_REVOKED;
}]=] COHORT_HAVE_ULFM_SYMBOLS)
unset(CMAKE_REQUIRED_LIBRARIES)

if(NOT COHORT_HAVE_ULFM_SYMBOLS)
  message(FATAL_ERROR "cohort: COHORT_DETECTOR=ulfm needs an MPI with ULFM, but ${COHORT_MPI_NAME} "
    "(${MPI_C_COMPILER}) does not declare MPIX_Comm_shrink/agree/revoke/failure_ack. "
    "Use Open MPI >= 5 configured --with-ft=ulfm or MPICH built with the ch3 device, or COHORT_DETECTOR=heartbeat.")
endif()

if(COHORT_MPI_NAME STREQUAL "mpich")
  # MPICH exports the MPIX_Comm_* symbols from every device, but only ch3 implements them: under ch4
  # they abort with MPIR_Assert(0). Ask the installation which device it was built with.
  get_filename_component(_bindir ${MPI_C_COMPILER} DIRECTORY)
  find_program(COHORT_MPICHVERSION NAMES mpichversion HINTS ${_bindir})
  set(_device "unknown")
  if(COHORT_MPICHVERSION)
    execute_process(COMMAND ${COHORT_MPICHVERSION} --device OUTPUT_VARIABLE _out ERROR_QUIET)
    string(REGEX MATCH "ch[0-9][:a-z0-9]*" _device "${_out}")
  endif()
  if(NOT _device MATCHES "^ch3")
    if(COHORT_ULFM_ALLOW_STUBS)
      message(WARNING "cohort: MPICH device '${_device}' has only stub MPIX_Comm_* (they abort); "
        "building the ulfm backend as a compile check only (COHORT_ULFM_ALLOW_STUBS=ON)")
    else()
      message(FATAL_ERROR "cohort: COHORT_DETECTOR=ulfm: this MPICH uses device '${_device}', whose "
        "MPIX_Comm_shrink/agree/revoke are stubs that abort (MPIR_Assert(0)); only MPICH's ch3 device "
        "implements ULFM. Use COHORT_DETECTOR=heartbeat here (or -DCOHORT_ULFM_ALLOW_STUBS=ON for a compile-only check).")
    endif()
  endif()
endif()
# MPIX_Comm_get_failed (ULFM as in Open MPI 5) lists the failures a process knows without acknowledging
# them; older ULFM (MPICH) has only failure_ack + failure_get_acked.
set(CMAKE_REQUIRED_LIBRARIES MPI::MPI_C)
check_c_source_compiles([=[
#include <mpi.h>
#if defined(OPEN_MPI)
#include <mpi-ext.h>
#endif
int main(void) { MPI_Group g; return MPIX_Comm_get_failed(MPI_COMM_WORLD, &g); }]=] COHORT_HAVE_MPIX_COMM_GET_FAILED)
unset(CMAKE_REQUIRED_LIBRARIES)
if(COHORT_HAVE_MPIX_COMM_GET_FAILED)
  add_compile_definitions(COHORT_HAVE_MPIX_COMM_GET_FAILED=1)
endif()
set(COHORT_USE_ULFM ON)
# Every part can tell the ULFM build apart (e.g. the detector need not run its heartbeat ring).
add_compile_definitions(COHORT_USE_ULFM=1)
message(STATUS "cohort: ULFM backend selected")
