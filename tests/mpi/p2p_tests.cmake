# Point-to-point and requests (issue 6). Included from tests/mpi/CMakeLists.txt.
function(cohort_p2p_program name)
  cohort_test_program(${name} ${ARGN})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
endfunction()

cohort_p2p_program(p2p_equivalence p2p_equivalence.cpp)
cohort_mpi_test(p2p.equivalence PART wrap NP 4 TIMEOUT 60 PASS 4 COMMAND $<TARGET_FILE:p2p_equivalence>)
cohort_mpi_test(p2p.equivalence_3 PART wrap NP 3 TIMEOUT 60 PASS 3 COMMAND $<TARGET_FILE:p2p_equivalence>)
