# --- files (issue 12): MPI-IO on protected communicators. Files live under the build tree (a local file
# system with POSIX locks, which ROMIO's shared file pointer of the raw comparison needs).
cohort_test_program(file_faults file_faults.c)
set(_files ${CMAKE_CURRENT_BINARY_DIR}/files)
file(MAKE_DIRECTORY ${_files})
set(_file_hb ${_wrap_hb})  # the heartbeat settings of wrap_tests.cmake (included before this file)
set(_ff $<TARGET_FILE:file_faults>)
cohort_mpi_test(file.equiv_4 PART file NP 4 TIMEOUT 90 PASS 4 COMMAND ${_ff} ${_files}/equiv_4.dat equiv)
cohort_mpi_test(file.equiv_3 PART file NP 3 TIMEOUT 90 PASS 3 COMMAND ${_ff} ${_files}/equiv_3.dat equiv)
# For each call: a rank killed before the second step and another inside the third (inject hook), and two
# ranks killed before the same step. Every survivor reads the file back and checks it byte for byte.
foreach(call write_at_all write_all write_ordered set_size)
  cohort_mpi_test(file.fault.${call}.before_then_during PART file NP 4 TIMEOUT 60 PASS 2
    ENV ${_file_hb} COHORT_INJECT_FAILURE=rank=1,at=file_${call}.posted,hit=3
    COMMAND ${_ff} ${_files}/${call}_bd.dat ${call} none before:2 during:1 none)
  cohort_mpi_test(file.fault.${call}.two_before PART file NP 4 TIMEOUT 60 PASS 2
    ENV ${_file_hb} COMMAND ${_ff} ${_files}/${call}_2b.dat ${call} none before:1+2 none)
endforeach()
# The lowest survivor does set_size: rank 0 dies before it, rank 1 must do it.
cohort_mpi_test(file.fault.set_size.first_dead PART file NP 4 TIMEOUT 60 PASS 3
  ENV ${_file_hb} COMMAND ${_ff} ${_files}/set_size_0.dat set_size none before:0 none)
