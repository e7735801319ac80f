# --- preload: programs that were not relinked, run with `cohort-run --preload` ---
# Every test here carries the label `preload` (cohort_mpi_test PRELOAD, or set below).

# The recursion guarantee and the generated entry points, on the built files (no launch).
add_test(NAME build.preload_symbols
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/preload_symbols.sh $<TARGET_FILE:cohort> $<TARGET_FILE:cohort_preload>
          ${COHORT_WRAPPED_CALLS})
set_tests_properties(build.preload_symbols PROPERTIES LABELS "unit;build;preload" TIMEOUT 30)

if(COHORT_MPI_NAME STREQUAL "mpich")
  set(_pl_hb COHORT_HB_PERIOD_MS=200 COHORT_HB_TIMEOUT_MS=2000)
else()
  set(_pl_hb COHORT_HB_PERIOD_MS=50 COHORT_HB_TIMEOUT_MS=500)
endif()

# A shared library that calls MPI itself (tests/mpi/solver): with --wrap its MPI_Allreduce escapes cohort
# (the test asserts that cohort saw none of the library's calls: the README's "Limits of --wrap"); preloaded,
# cohort sees every one, and when a rank dies the library's reductions continue over the survivors.
add_library(cohort_test_solver SHARED solver/solver.c)
target_link_libraries(cohort_test_solver PUBLIC MPI::MPI_C)
target_include_directories(cohort_test_solver PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/solver)
add_executable(solver_app_wrapped solver/solver_app.c)
target_link_libraries(solver_app_wrapped PRIVATE cohort_test_solver cohort::cohort ${CMAKE_DL_LIBS})
set_target_properties(solver_app_wrapped PROPERTIES ENABLE_EXPORTS ON)  # cohort_call_count for dlsym
add_executable(solver_app_plain solver/solver_app.c)
target_link_libraries(solver_app_plain PRIVATE cohort_test_solver ${CMAKE_DL_LIBS})
cohort_mpi_test(preload.solver_library_escapes_wrap PART preload NP 4 TIMEOUT 60 PASS 4
  COMMAND $<TARGET_FILE:solver_app_wrapped> count 20 escapes)
set_property(TEST preload.solver_library_escapes_wrap APPEND PROPERTY LABELS preload)
cohort_mpi_test(preload.solver_library_covered PART preload NP 4 TIMEOUT 60 PASS 4 PRELOAD
  COMMAND $<TARGET_FILE:solver_app_plain> count 20 covered)
cohort_mpi_test(preload.solver_library_one_killed PART preload NP 4 TIMEOUT 60 PASS 3 PRELOAD
  ENV ${_pl_hb} COHORT_INJECT_FAILURE=rank=2,after_ms=300
  EXPECT "^rank [013]: last dot product 28 over 3 of 4 ranks$"
  COMMAND $<TARGET_FILE:solver_app_plain> survive 150 20)

if(COHORT_BUILD_EXAMPLES)
# The C examples built without cohort's flags give the results of the relinked builds (the same EXPECTs as
# tests/mpi/wrap_tests.cmake and p2p_tests.cmake), with and without a killed rank.
cohort_mpi_test(preload.montecarlo_pi PART preload NP 4 TIMEOUT 60 PRELOAD
  EXPECT "^pi ~ 3\\.14[0-9]*, error [0-9.]+e-0[3-9]" "^survivors: 4 of 4 ranks$"
  COMMAND $<TARGET_FILE:montecarlo_pi_plain> 20 200000)
cohort_mpi_test(preload.montecarlo_pi_one_killed PART preload NP 4 TIMEOUT 60 PRELOAD
  ENV ${_pl_hb} COHORT_INJECT_FAILURE=rank=2,after_ms=300
  EXPECT "^pi ~ 3\\.14[0-9]*, error [0-9.]+e-0[3-9]" "^survivors: 3 of 4 ranks$"
  "^round [0-9]+ of 200: 3 of 4 ranks contributed$"
  COMMAND $<TARGET_FILE:montecarlo_pi_plain> 200 200000)
cohort_mpi_test(preload.ep_class_S_verifies PART preload NP 4 TIMEOUT 60 PRELOAD
  EXPECT "^verification: SUCCESSFUL$" "^pairs counted: 256 of 256 batches"
  COMMAND $<TARGET_FILE:ep_plain> S)
# Rank 2 dies as MPI_Init returns, before its share (hook init.done: class S computes in ~0.1 s, so a kill
# 100 ms after MPI_Init could come after the job was done, and a kill inside the Allgather may leave its
# delivered block counted): the survivors' sums are those of the relinked ep (bitwise).
cohort_mpi_test(preload.ep_class_S_one_killed PART preload NP 4 TIMEOUT 60 PRELOAD
  ENV ${_pl_hb} COHORT_INJECT_FAILURE=rank=2,at=init.done
  EXPECT "^sx = -1\\.831991305654257e\\+03 " "^sy = -6\\.561848964892713e\\+03 "
  "^pairs counted: 192 of 256 batches = 0\\.750000; ranks: \\(n-f\\)/n = \\(4-1\\)/4"
  COMMAND $<TARGET_FILE:ep_plain> S)
cohort_mpi_test(examples.ep_class_S_one_killed_relinked PART examples NP 4 TIMEOUT 60
  ENV ${_pl_hb} COHORT_INJECT_FAILURE=rank=2,at=init.done
  EXPECT "^sx = -1\\.831991305654257e\\+03 " "^sy = -6\\.561848964892713e\\+03 "
  "^pairs counted: 192 of 256 batches = 0\\.750000; ranks: \\(n-f\\)/n = \\(4-1\\)/4"
  COMMAND $<TARGET_FILE:ep> S)
cohort_mpi_test(preload.bag_of_tasks PART preload NP 4 TIMEOUT 60 PRELOAD
  EXPECT ${BAG_OK} COMMAND $<TARGET_FILE:bag_of_tasks_plain> --input ${BAG_INPUT} --verify)
cohort_mpi_test(preload.bag_of_tasks_one_killed PART preload NP 4 TIMEOUT 60 PRELOAD
  ENV ${P2P_HB} COHORT_INJECT_FAILURE=rank=2,at=recv.posted,hit=5
  EXPECT "^bag_of_tasks: all 240 tasks scored by 3 workers .*; checksum ${BAG_CHECKSUM};"
  COMMAND $<TARGET_FILE:bag_of_tasks_plain> --input ${BAG_INPUT} --panel 48)
endif()

# mpi4py (Debian's python3-mpi4py, built for Open MPI): examples/python, run by the system python3 (the
# one Debian's package installs into), unmodified, under `cohort-run --preload`.
set(_py /usr/bin/python3)
if(COHORT_MPI_NAME STREQUAL "openmpi")
  execute_process(COMMAND ${_py} -c "import mpi4py" RESULT_VARIABLE _no_mpi4py OUTPUT_QUIET ERROR_QUIET)
  if(_no_mpi4py)
    message(WARNING "cohort: ${_py} has no mpi4py (apt-get install python3-mpi4py; scripts/setup does): "
                    "the mpi4py tests are not registered")
  else()
    set(_pydir ${PROJECT_SOURCE_DIR}/examples/python)
    set(_pi "pi ~ 3\\.1[0-9]+, error [0-9.]+e-0[3-9], from [0-9]+ samples; last round from")
    cohort_mpi_test(preload.python_montecarlo_pi PART preload NP 4 TIMEOUT 60 PRELOAD
      EXPECT "^rank 0: ${_pi} 4 of 4 ranks" "^rank 1: ${_pi} 4 of 4 ranks" "^rank 2: ${_pi} 4 of 4 ranks"
      "^rank 3: ${_pi} 4 of 4 ranks"
      COMMAND ${_py} ${_pydir}/montecarlo_pi.py)
    # Rank 2 dies in its 10th Allreduce: the 3 survivors finish with an estimate over their samples.
    cohort_mpi_test(preload.python_montecarlo_pi_one_killed PART preload NP 4 TIMEOUT 60 PRELOAD
      ENV ${_pl_hb} COHORT_INJECT_FAILURE=rank=2,at=allreduce.posted,hit=10
      EXPECT "^rank 0: ${_pi} 3 of 4 ranks" "^rank 1: ${_pi} 3 of 4 ranks" "^rank 3: ${_pi} 3 of 4 ranks"
      "^round 1[01] of 40: 3 of 4 ranks contributed$"
      COMMAND ${_py} ${_pydir}/montecarlo_pi.py)
    set(_mw "^master_worker.py: all 120 tasks done by 3 workers, [0-9]+ backup copies; checksum 864526631; verified$")
    cohort_mpi_test(preload.python_master_worker PART preload NP 4 TIMEOUT 60 PRELOAD
      EXPECT ${_mw} COMMAND ${_py} ${_pydir}/master_worker.py)
    # Worker 2 dies sending its 5th result: a backup copy finishes its task.
    cohort_mpi_test(preload.python_master_worker_one_killed PART preload NP 4 TIMEOUT 60 PRELOAD
      ENV ${_pl_hb} COHORT_INJECT_FAILURE=rank=2,at=send.posted,hit=5
      EXPECT ${_mw} COMMAND ${_py} ${_pydir}/master_worker.py)
  endif()
endif()
