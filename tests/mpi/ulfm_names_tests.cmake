# ULFM's names as programs use them (tests/mpi/ulfm_names.c): codes equal to their classes, strings, MPIX_FT,
# the names without the X. Heartbeat builds: linked with cohort, and once more linked with
# libcohort-preload.so and run under `cohort-run --preload` (an error handler, which runs inside the call
# that failed, asks MPI_Error_class about cohort's code). The ulfm build (Open MPI 5 --with-ft=ulfm): the same
# source built natively (-DULFM_NATIVE, MPI only, cohort's header only), the reference the cohort runs meet.
ulfm_program(ulfm_names ulfm_names.c ulfm_api)
set(_un_labels ${ULFM_LABELS})
set(_un_killed ${ULFM_KILLED})
set(_un_env ${ULFM_ENV})
set(_un_timeout ${ULFM_TIMEOUT})
cohort_mpi_test(ulfm_api.names.no_failure PART ulfm_api NP 4 TIMEOUT ${_un_timeout} PASS 4 ENV ${_un_env}
  LABELS ${_un_labels} COMMAND $<TARGET_FILE:ulfm_names> names)
cohort_mpi_test(ulfm_api.names.codes_of_a_failure PART ulfm_api NP 4 TIMEOUT ${_un_timeout} PASS 3 ${_un_killed}
  ENV ${_un_env} LABELS ${_un_labels} COMMAND $<TARGET_FILE:ulfm_names> failed 2)
if(NOT COHORT_USE_ULFM)
  add_executable(ulfm_names_preload ulfm_names.c)
  target_include_directories(ulfm_names_preload PRIVATE ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(ulfm_names_preload PRIVATE cohort_preload MPI::MPI_C)
  cohort_mpi_test(ulfm_api.names.no_failure_preload PART ulfm_api NP 4 TIMEOUT ${_un_timeout} PASS 4 PRELOAD
    ENV ${_un_env} LABELS ulfm_api COMMAND $<TARGET_FILE:ulfm_names_preload> names)
  cohort_mpi_test(ulfm_api.names.codes_of_a_failure_preload PART ulfm_api NP 4 TIMEOUT ${_un_timeout} PASS 3
    PRELOAD ENV ${_un_env} LABELS ulfm_api COMMAND $<TARGET_FILE:ulfm_names_preload> failed 2)
endif()
