# --- wrap: fault-free equivalence with raw MPI ---
cohort_test_program(wrap_equiv wrap_equiv.c)
# MPICH busy-polls and is ~1000x slower oversubscribed: it checks fewer counts and roots ("quick").
set(equiv_args)
if(COHORT_MPI_NAME STREQUAL "mpich")
  set(equiv_args quick)
endif()
cohort_mpi_test(wrap.equiv_4 PART wrap NP 4 TIMEOUT 90 PASS 4 COMMAND $<TARGET_FILE:wrap_equiv> ${equiv_args})
cohort_mpi_test(wrap.equiv_3 PART wrap NP 3 TIMEOUT 90 PASS 3 COMMAND $<TARGET_FILE:wrap_equiv> ${equiv_args})
