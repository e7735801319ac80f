# --- files: MPI-IO on protected communicators. Files live under the build tree (a local file
# system with POSIX locks, which ROMIO's shared file pointer of the raw comparison needs).
cohort_test_program(file_faults file_faults.c)
set(_files ${CMAKE_CURRENT_BINARY_DIR}/files)
file(MAKE_DIRECTORY ${_files})
set(_file_hb ${_wrap_hb})  # the heartbeat settings of wrap_tests.cmake (included before this file)
set(_ff $<TARGET_FILE:file_faults>)
cohort_mpi_test(file.equiv_4 PART file NP 4 TIMEOUT 90 PASS 4 COMMAND ${_ff} ${_files}/equiv_4.dat equiv)
cohort_mpi_test(file.equiv_3 PART file NP 3 TIMEOUT 90 PASS 3 COMMAND ${_ff} ${_files}/equiv_3.dat equiv)
# For each call: a rank killed before the second step and another inside the third (inject hook; for
# [i]write_shared and [i]read_shared: the pointer moved, the side file's lock held, the record not written
# or read), and two ranks killed before the same step. Every survivor reads the file back and checks it byte
# for byte; for [i]read_shared (one record per rank and step, written first) every survivor checks the
# records read (each rank logs its ids, the dead ones' logs count too): each whole, none read twice, each
# rank's moving forward, and the shared pointer past one place per rank alive at each step.
# The nonblocking collective ones (iwrite_at_all by MPI_Wait, iwrite_all by MPI_Test) and the split ones
# (write_at_all_begin, write_ordered_begin, each with its end) the same way: their hook is the confirmation's.
foreach(call write_at_all write_all write_ordered set_size write_shared iwrite_shared read_shared iread_shared
        iwrite_at_all iwrite_all write_at_all_begin write_ordered_begin)
  cohort_mpi_test(file.fault.${call}.before_then_during PART file NP 4 TIMEOUT 60 PASS 2
    ENV ${_file_hb} COHORT_INJECT_FAILURE=rank=1,at=file_${call}.posted,hit=3
    COMMAND ${_ff} ${_files}/${call}_bd.dat ${call} none before:2 during:1 none)
  cohort_mpi_test(file.fault.${call}.two_before PART file NP 4 TIMEOUT 60 PASS 2
    ENV ${_file_hb} COMMAND ${_ff} ${_files}/${call}_2b.dat ${call} none before:1+2 none)
endforeach()
# The lowest survivor does set_size: rank 0 dies before it, rank 1 must do it.
cohort_mpi_test(file.fault.set_size.first_dead PART file NP 4 TIMEOUT 60 PASS 3
  ENV ${_file_hb} COMMAND ${_ff} ${_files}/set_size_0.dat set_size none before:0 none)
# The independent shared-pointer calls (side file under fcntl locks) mixed with the ordered ones, against raw
# MPI-IO (their kills are in the loop above); write_shared alternating with write_ordered, with a rank killed
# before the second step and another inside its third write_shared.
cohort_mpi_test(file.shared_equiv_4 PART file NP 4 TIMEOUT 90 PASS 4 COMMAND ${_ff} ${_files}/sh_equiv_4.dat shared_equiv)
# Nonblocking file calls in a loop while the detector thread polls MPI (README, Files: on Open MPI their I/O
# is done at the post): crashed in Open MPI's OMPIO progress nearly every run before.
cohort_mpi_test(file.nonblocking_stress PART file NP 3 TIMEOUT 90 PASS 3 ENV COHORT_HB_PERIOD_MS=1
  COMMAND ${_ff} ${_files}/nb_stress.dat nonblocking_stress 60000)
cohort_mpi_test(file.shared_two_opens PART file NP 3 TIMEOUT 60 PASS 3 COMMAND ${_ff} ${_files}/sh_two_opens.dat shared_two_opens)
cohort_mpi_test(file.shared_equiv_3 PART file NP 3 TIMEOUT 90 PASS 3 COMMAND ${_ff} ${_files}/sh_equiv_3.dat shared_equiv)
cohort_mpi_test(file.fault.mixed.before_then_during PART file NP 4 TIMEOUT 60 PASS 2
  ENV ${_file_hb} COHORT_INJECT_FAILURE=rank=1,at=file_write_shared.posted,hit=3
  COMMAND ${_ff} ${_files}/mixed_bd.dat mixed none before:2 none none during:1 none)
# Split collectives misused (an end with none open, a second begin): one line naming the rank and the call.
cohort_mpi_test(file.split_misuse PART file NP 2 TIMEOUT 60 PASS 2
  EXPECT "cohort\\[rank [01]\\] error: MPI_File_read_at_all_begin: a split collective is already open on this file \\(MPI allows one\\)$"
  COMMAND ${_ff} ${_files}/split_misuse.dat split_misuse)
# A side file that cannot be created (a file where its directory goes): one line, the job stops, no hang.
cohort_mpi_test(file.shared_side_file_error PART file NP 2 TIMEOUT 60 EXIT 1 PASS 0
  EXPECT "cohort\\[rank [01]\\] error: MPI_File_write_shared: cannot open the shared file pointer's side file .*side_blocked.dat.cohort-shfp/[0-9a-f]+\\.1: Not a directory$"
  COMMAND ${_ff} ${_files}/side_blocked.dat side_blocked)
if(COHORT_BUILD_EXAMPLES)
  # --- examples: checkpoint, 40 steps, a checkpoint every 5 (8 records per rank), fault-free and with rank 2
  # killed inside its 2nd checkpoint (its write done); each job's files are then checked by
  # `checkpoint --verify` (no MPI), byte for byte against a recomputation. With --log: write_shared lines and
  # write_ordered last lines.
  set(_ck $<TARGET_FILE:checkpoint>)
  foreach(t ok killed log_killed)
    file(MAKE_DIRECTORY ${_files}/checkpoint_${t})
  endforeach()
  cohort_mpi_test(examples.checkpoint PART examples NP 4 TIMEOUT 60 PASS 4
    COMMAND ${_ck} ${_files}/checkpoint_ok 40 5)
  cohort_mpi_test(examples.checkpoint_one_killed PART examples NP 4 TIMEOUT 60 PASS 3
    ENV ${_file_hb} COHORT_INJECT_FAILURE=rank=2,at=file_write_at_all.posted,hit=2
    COMMAND ${_ck} ${_files}/checkpoint_killed 40 5)
  cohort_mpi_test(examples.checkpoint_log_one_killed PART examples NP 4 TIMEOUT 60 PASS 3
    ENV ${_file_hb} COHORT_INJECT_FAILURE=rank=2,at=file_write_at_all.posted,hit=2
    COMMAND ${_ck} ${_files}/checkpoint_log_killed 40 5 --log)
  add_test(NAME examples.checkpoint.verify COMMAND ${_ck} --verify ${_files}/checkpoint_ok 4 40 5)
  add_test(NAME examples.checkpoint_one_killed.verify
    COMMAND ${_ck} --verify ${_files}/checkpoint_killed 4 40 5 --dead 2:2)
  add_test(NAME examples.checkpoint_log_one_killed.verify
    COMMAND ${_ck} --verify ${_files}/checkpoint_log_killed 4 40 5 --log --dead 2:2)
  foreach(t checkpoint checkpoint_one_killed checkpoint_log_one_killed)
    set_tests_properties(examples.${t} PROPERTIES FIXTURES_SETUP ${t})
    set_tests_properties(examples.${t}.verify PROPERTIES FIXTURES_REQUIRED ${t} LABELS "mpi;examples" TIMEOUT 30)
  endforeach()
endif()
