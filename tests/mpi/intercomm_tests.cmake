# --- wrap: intercommunicators (tests/mpi/wrap_intercomm.c): even world ranks against odd ones.
# Fault-free equivalence with raw MPI; ranks killed before the creation, inside it, right after it
# (a non-leader, a leader, one per side) and inside a collective. 4 ranks at most (MPICH). ---
cohort_test_program(wrap_intercomm wrap_intercomm.c)
set(_ic $<TARGET_FILE:wrap_intercomm>)
cohort_mpi_test(wrap.intercomm.equiv_4 PART wrap NP 4 TIMEOUT 60 PASS 4 COMMAND ${_ic} equiv)
cohort_mpi_test(wrap.intercomm.equiv_3 PART wrap NP 3 TIMEOUT 60 PASS 3 COMMAND ${_ic} equiv)
cohort_mpi_test(wrap.intercomm.created_without_2 PART wrap NP 4 TIMEOUT 60 PASS 3 ENV ${_wrap_hb}
  COHORT_ON_DEAD_PEER=skip COMMAND ${_ic} created 2)
cohort_mpi_test(wrap.intercomm.created_without_leader PART wrap NP 4 TIMEOUT 60 PASS 3 ENV ${_wrap_hb}
  COHORT_ON_DEAD_PEER=skip COMMAND ${_ic} created 1)
cohort_mpi_test(wrap.intercomm.create_during PART wrap NP 4 TIMEOUT 60 PASS 3 ENV ${_wrap_hb}
  COHORT_ON_DEAD_PEER=skip COHORT_INJECT_FAILURE=rank=2,at=intercomm_create.posted COMMAND ${_ic} create_during 2)
cohort_mpi_test(wrap.intercomm.killed_before PART wrap NP 4 TIMEOUT 60 PASS 3 ENV ${_wrap_hb}
  COHORT_ON_DEAD_PEER=skip COMMAND ${_ic} before 2)
cohort_mpi_test(wrap.intercomm.leader_killed_before PART wrap NP 4 TIMEOUT 60 PASS 3 ENV ${_wrap_hb}
  COHORT_ON_DEAD_PEER=skip COMMAND ${_ic} before 1)
cohort_mpi_test(wrap.intercomm.killed_during PART wrap NP 4 TIMEOUT 60 PASS 3 ENV ${_wrap_hb}
  COHORT_ON_DEAD_PEER=skip COHORT_INJECT_FAILURE=rank=1,at=allgather.posted COMMAND ${_ic} during 1)
cohort_mpi_test(wrap.intercomm.two_killed PART wrap NP 4 TIMEOUT 60 PASS 2 ENV ${_wrap_hb}
  COHORT_ON_DEAD_PEER=skip COMMAND ${_ic} before 1+2)
# The nonblocking twins of the collectives (cohort's own on the union), all in flight at once.
cohort_mpi_test(wrap.intercomm.nb_equiv_4 PART wrap NP 4 TIMEOUT 60 PASS 4 COMMAND ${_ic} equiv nb)
cohort_mpi_test(wrap.intercomm.nb_killed_before PART wrap NP 4 TIMEOUT 60 PASS 3 ENV ${_wrap_hb}
  COHORT_ON_DEAD_PEER=skip COMMAND ${_ic} before 2 nb)
cohort_mpi_test(wrap.intercomm.nb_leader_killed_before PART wrap NP 4 TIMEOUT 60 PASS 3 ENV ${_wrap_hb}
  COHORT_ON_DEAD_PEER=skip COMMAND ${_ic} before 1 nb)
cohort_mpi_test(wrap.intercomm.nb_killed_during PART wrap NP 4 TIMEOUT 60 PASS 3 ENV ${_wrap_hb}
  COHORT_ON_DEAD_PEER=skip COHORT_INJECT_FAILURE=rank=1,at=iallreduce.posted COMMAND ${_ic} during 1 nb)
cohort_mpi_test(wrap.intercomm.nb_two_killed PART wrap NP 4 TIMEOUT 60 PASS 2 ENV ${_wrap_hb}
  COHORT_ON_DEAD_PEER=skip COMMAND ${_ic} before 1+2 nb)
