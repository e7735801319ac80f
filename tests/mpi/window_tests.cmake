# --- deferred confirmation (wrap/core/deferred.hpp): a loop of small Barrier/Bcast/Reduce/Allreduce
# (tests/mpi/wrap_window.c) with a rank killed while calls are unconfirmed, at COHORT_CONFIRM_WINDOW 1, 2,
# 4, 15 (the largest with a one-int agreement code), 40 (three ints) and 63 (the largest, four): right after it returned from its 5th call with a confirmation pending (hook confirm.deferred; at
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
foreach(w 2 4 15 40 63)
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
# An Alltoall (never deferred) between deferred calls confirms the calls pending before it by its own
# confirmation: a rank killed with calls unconfirmed, and survivors at different positions, as above.
foreach(w 4 15)
  cohort_mpi_test(wrap.window.w${w}.alltoall_killed_unconfirmed PART wrap NP 4 TIMEOUT 60 PASS 3
    ENV ${_ww_hb} COHORT_CONFIRM_WINDOW=${w} COHORT_INJECT_FAILURE=rank=1,at=confirm.deferred,hit=5
    COMMAND ${_ww} 40 mixed_alltoall)
  cohort_mpi_test(wrap.window.w${w}.alltoall_positions_apart PART wrap NP 4 TIMEOUT 60 PASS 3
    ENV ${_ww_hb} COHORT_CONFIRM_WINDOW=${w} COHORT_INJECT_FAILURE=rank=1,at=confirm.deferred,hit=7
    COMMAND ${_ww} 40 mixed_alltoall lag=3)
  cohort_mpi_test(wrap.window.w${w}.alltoall_killed_in_alltoall PART wrap NP 4 TIMEOUT 60 PASS 3
    ENV ${_ww_hb} COHORT_CONFIRM_WINDOW=${w} COHORT_INJECT_FAILURE=rank=2,at=alltoall.posted,hit=2
    COMMAND ${_ww} 40 mixed_alltoall lag=3)
endforeach()
foreach(np 2 4)
  cohort_mpi_test(wrap.window.w8.np${np}.fault_free_mixed_alltoall PART wrap NP ${np} TIMEOUT 60 PASS ${np}
    ENV ${_ww_hb} COHORT_CONFIRM_WINDOW=8 COMMAND ${_ww} 200 mixed_alltoall)
endforeach()
# Wide windows: a Bcast root 30 calls ahead of every receiver when it dies (W = 40); survivors up to W calls
# apart (rank 3 lags, rank 1 dies after 30 (W = 40) or 50 (W = 63) calls; the log shows e.g. "survivors
# completed 2 to 40 calls"): their counts span two to four ints of the agreement code.
cohort_mpi_test(wrap.window.w40.bcast_root_far_ahead_dies PART wrap NP 4 TIMEOUT 60 PASS 3
  ENV ${_ww_hb} COHORT_CONFIRM_WINDOW=40 COHORT_INJECT_FAILURE=rank=0,at=confirm.deferred,hit=30
  COMMAND ${_ww} 60 bcast lag=1+2+3)
cohort_mpi_test(wrap.window.w40.positions_far_apart PART wrap NP 4 TIMEOUT 60 PASS 3
  ENV ${_ww_hb} COHORT_CONFIRM_WINDOW=40 COHORT_INJECT_FAILURE=rank=1,at=confirm.deferred,hit=30
  COMMAND ${_ww} 60 bcast lag=3)
cohort_mpi_test(wrap.window.w63.positions_far_apart PART wrap NP 4 TIMEOUT 60 PASS 3
  ENV ${_ww_hb} COHORT_CONFIRM_WINDOW=63 COHORT_INJECT_FAILURE=rank=1,at=confirm.deferred,hit=50
  COMMAND ${_ww} 90 bcast lag=3)
foreach(np 2 4)
  cohort_mpi_test(wrap.window.w63.np${np}.fault_free_mixed PART wrap NP ${np} TIMEOUT 60 PASS ${np}
    ENV ${_ww_hb} COHORT_CONFIRM_WINDOW=63 COMMAND ${_ww} 200 mixed)
  foreach(kind mixed allreduce reduce barrier)
    cohort_mpi_test(wrap.window.w8.np${np}.fault_free_${kind} PART wrap NP ${np} TIMEOUT 60 PASS ${np}
      ENV ${_ww_hb} COHORT_CONFIRM_WINDOW=8 COMMAND ${_ww} 200 ${kind})
  endforeach()
  cohort_mpi_test(wrap.window.w15.np${np}.fault_free_mixed PART wrap NP ${np} TIMEOUT 60 PASS ${np}
    ENV ${_ww_hb} COHORT_CONFIRM_WINDOW=15 COMMAND ${_ww} 200 mixed)
endforeach()
