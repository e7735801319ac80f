# --- windows (issue 12): one-sided communication on protected communicators ---
cohort_test_program(win_faults win_faults.c)
set(_wf $<TARGET_FILE:win_faults>)
cohort_mpi_test(win.equiv_4 PART win NP 4 TIMEOUT 90 PASS 4 COMMAND ${_wf} equiv)
cohort_mpi_test(win.equiv_3 PART win NP 3 TIMEOUT 90 PASS 3 COMMAND ${_wf} equiv)
# Fence epochs: a rank killed before the second step and another inside the fence of the third (inject
# hook: the fence's confirmation); two ranks killed before the same step.
cohort_mpi_test(win.fault.fence.before_then_during PART win NP 4 TIMEOUT 60 PASS 2
  ENV ${_wrap_hb} COHORT_INJECT_FAILURE=rank=1,at=win_fence.posted,hit=4
  COMMAND ${_wf} fence none before:2 during:1 none)
# Lock epochs: two ranks killed before the same step. (_known: the survivors pass a barrier first.)
cohort_mpi_test(win.fault.lock.two_before_known PART win NP 4 TIMEOUT 60 PASS 2
  ENV ${_wrap_hb} COMMAND ${_wf} lock_known none before:1+2 none)
cohort_mpi_test(win.fault.fence.two_before_known PART win NP 4 TIMEOUT 60 PASS 2
  ENV ${_wrap_hb} COMMAND ${_wf} fence_known none before:1+2 none)
# RMA to ranks that died and are not detected yet. NOTE: under MPICH the survivors' abandoned flushes
# (helper threads left inside MPI) starve the detector threads of MPICH's lock: a live rank was falsely
# suspected (README, windows). Open MPI only until that is solved.
if(COHORT_MPI_NAME STREQUAL "openmpi")
  cohort_mpi_test(win.fault.fence.two_before PART win NP 4 TIMEOUT 60 PASS 2
    ENV ${_wrap_hb} COMMAND ${_wf} fence none before:1+2 none)
  cohort_mpi_test(win.fault.lock.two_before PART win NP 4 TIMEOUT 60 PASS 2
    ENV ${_wrap_hb} COMMAND ${_wf} lock none before:1+2 none)
  # A put's target dies during the epoch (rank 3 dies after its own 6th put, in step 1).
  cohort_mpi_test(win.fault.fence.put_during PART win NP 4 TIMEOUT 60 PASS 3
    ENV ${_wrap_hb} COHORT_INJECT_FAILURE=rank=3,at=put.posted,hit=6 COMMAND ${_wf} fence none during:3 none)
endif()
