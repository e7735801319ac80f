# ULFM's API: the ULFM-style programs of ulfm_api.c. Heartbeat builds (MPICH, Open MPI 4.1): linked
# with cohort, whose MPIX_* they call. The ulfm build (Open MPI 5 --with-ft=ulfm): the same source built
# natively (-DULFM_NATIVE, MPI only, no cohort), as the reference the cohort runs are held to.
# ulfm_program(target source label): the executable of a ULFM program, linked with cohort in the heartbeat
# builds and built natively in the ulfm build (-DULFM_NATIVE, MPI and cohort's headers only). Sets in the
# caller: ULFM_LABELS (label, and ulfm_native natively), ULFM_KILLED (natively EXIT 137: without cohort no
# survivor records the victim's death, so cohort-run reports its SIGKILL; the survivors' PASS lines are
# counted all the same), ULFM_ENV (the heartbeat settings of this MPI) and ULFM_TIMEOUT (s, per run).
function(ulfm_program target source label)
  add_executable(${target} ${source})
  if(COHORT_USE_ULFM)
    target_compile_definitions(${target} PRIVATE ULFM_NATIVE=1)
    target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/include)
    target_link_libraries(${target} PRIVATE MPI::MPI_C)
    set(ULFM_LABELS ${label} ulfm_native PARENT_SCOPE)
    set(ULFM_KILLED EXIT 137 PARENT_SCOPE)
  else()
    target_link_libraries(${target} PRIVATE cohort::cohort)
    set(ULFM_LABELS ${label} PARENT_SCOPE)
    set(ULFM_KILLED "" PARENT_SCOPE)
  endif()
  if(COHORT_MPI_NAME STREQUAL "mpich")
    set(ULFM_ENV COHORT_HB_PERIOD_MS=200 COHORT_HB_TIMEOUT_MS=2000 PARENT_SCOPE)
    set(ULFM_TIMEOUT 120 PARENT_SCOPE)
  else()
    set(ULFM_ENV COHORT_HB_PERIOD_MS=50 COHORT_HB_TIMEOUT_MS=500 PARENT_SCOPE)
    set(ULFM_TIMEOUT 60 PARENT_SCOPE)
  endif()
endfunction()

ulfm_program(ulfm_api ulfm_api.c ulfm_api)
set(_ulfm_labels ${ULFM_LABELS})
set(_ulfm_killed ${ULFM_KILLED})
set(_ulfm_env ${ULFM_ENV})
set(_ulfm_timeout ${ULFM_TIMEOUT})
set(_ulfm $<TARGET_FILE:ulfm_api>)
# ulfm_api_test(name pass killed|none args...): pass = survivors that must print PASS.
function(ulfm_api_test name pass killed)
  set(_exit)
  if(killed STREQUAL "killed")
    set(_exit ${_ulfm_killed})
  endif()
  cohort_mpi_test(ulfm_api.${name} PART ulfm_api NP 4 TIMEOUT ${_ulfm_timeout} PASS ${pass} ${_exit}
    ENV ${_ulfm_env} LABELS ${_ulfm_labels} COMMAND ${_ulfm} ${ARGN})
endfunction()
ulfm_api_test(error_revoke_shrink_loop 3 killed loop 2 3)
ulfm_api_test(agree_with_dead_participant 3 killed agree 1)
ulfm_api_test(revoke_interrupts_receive 4 none revoke)
ulfm_api_test(any_source_acknowledged 3 killed anysource 3)
ulfm_api_test(repeated_failures_shrink 2 killed repeated 3 1)
if(NOT COHORT_USE_ULFM)
  # How a program selects ULFM mode (README, "ULFM's API without ULFM"): off keeps cohort's transparent
  # shrinking; without the header's selection only the communicator the program calls MPIX_* on is in it.
  cohort_mpi_test(ulfm_api.off_stays_transparent PART ulfm_api NP 4 TIMEOUT ${_ulfm_timeout} PASS 3
    ENV ${_ulfm_env} COHORT_ULFM_API=off LABELS ulfm_api COMMAND ${_ulfm} transparent 2 3)
  add_executable(ulfm_api_per_communicator ulfm_api.c)
  target_compile_definitions(ulfm_api_per_communicator PRIVATE ULFM_PER_COMMUNICATOR=1)
  target_link_libraries(ulfm_api_per_communicator PRIVATE cohort::cohort)
  cohort_mpi_test(ulfm_api.per_communicator_mode PART ulfm_api NP 4 TIMEOUT ${_ulfm_timeout} PASS 3
    ENV ${_ulfm_env} LABELS ulfm_api COMMAND $<TARGET_FILE:ulfm_api_per_communicator> loop 1 3)
endif()
