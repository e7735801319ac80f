# --- deferred confirmation (issue 14, wrap/deferred.hpp): a loop of small Barrier/Bcast/Reduce/Allreduce
# (tests/mpi/wrap_window.c) with a rank killed while calls are unconfirmed, at COHORT_CONFIRM_WINDOW 1, 2
# 4 and 15 (the largest): right after it returned from its 5th call with a confirmation pending (hook confirm.deferred; at
# W = 1, where nothing is left pending, inside its 5th confirming barrier), a Bcast root that runs ahead of
# lagging receivers and dies, and survivors at different window positions (one lagging rank). Every
# survivor's buffers must match the uniform outcome. 4 ranks under both MPIs. Fault-free loops of each kind
# at 2 and 4 ranks and W = 8 (and 15) end in a settle point (MPI_Allgather) and MPI_Finalize: a rank that had every
# call confirmed without reporting its own count left the others waiting there (found in a benchmark loop).
cohort_test_program(wrap_window wrap_window.c)
if(COHORT_MPI_NAME STREQUAL "mpich")
  set(_ww_hb COHORT_HB_PERIOD_MS=200 COHORT_HB_TIMEOUT_MS=2000 COHORT_ON_DEAD_ROOT=skip)
else()
  set(_ww_hb COHORT_HB_PERIOD_MS=50 COHORT_HB_TIMEOUT_MS=500 COHORT_ON_DEAD_ROOT=skip)
endif()
set(_ww $<TARGET_FILE:wrap_window>)
cohort_mpi_test(wrap.window.w1.mixed_killed_unconfirmed PART wrap NP 4 TIMEOUT 60 PASS 3
  ENV ${_ww_hb} COHORT_CONFIRM_WINDOW=1 COHORT_INJECT_FAILURE=rank=1,at=confirm.posted,hit=5
  COMMAND ${_ww} 40 mixed)
foreach(w 2 4 15)
  cohort_mpi_test(wrap.window.w${w}.mixed_killed_unconfirmed PART wrap NP 4 TIMEOUT 60 PASS 3
    ENV ${_ww_hb} COHORT_CONFIRM_WINDOW=${w} COHORT_INJECT_FAILURE=rank=1,at=confirm.deferred,hit=5
    COMMAND ${_ww} 40 mixed)
  cohort_mpi_test(wrap.window.w${w}.bcast_root_ahead_dies PART wrap NP 4 TIMEOUT 60 PASS 3
    ENV ${_ww_hb} COHORT_CONFIRM_WINDOW=${w} COHORT_INJECT_FAILURE=rank=0,at=confirm.deferred,hit=6
    COMMAND ${_ww} 40 bcast lag=1+2+3)
  cohort_mpi_test(wrap.window.w${w}.positions_apart PART wrap NP 4 TIMEOUT 60 PASS 3
    ENV ${_ww_hb} COHORT_CONFIRM_WINDOW=${w} COHORT_INJECT_FAILURE=rank=1,at=confirm.deferred,hit=7
    COMMAND ${_ww} 40 mixed lag=3)
endforeach()
foreach(np 2 4)
  foreach(kind mixed allreduce reduce barrier)
    cohort_mpi_test(wrap.window.w8.np${np}.fault_free_${kind} PART wrap NP ${np} TIMEOUT 60 PASS ${np}
      ENV ${_ww_hb} COHORT_CONFIRM_WINDOW=8 COMMAND ${_ww} 200 ${kind})
  endforeach()
  cohort_mpi_test(wrap.window.w15.np${np}.fault_free_mixed PART wrap NP ${np} TIMEOUT 60 PASS ${np}
    ENV ${_ww_hb} COHORT_CONFIRM_WINDOW=15 COMMAND ${_ww} 200 mixed)
endforeach()
