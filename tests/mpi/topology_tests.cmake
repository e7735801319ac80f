# --- Topologies made from a communicator that has already lost ranks (tests/mpi/topology_holes.c, issue 35
# point 14): every constructor, ranks killed before it; the survivors check the queries, a halo exchange, the
# neighbourhood collectives and an allreduce. Label "topology" (also on the other topology tests). ---
cohort_test_program(topology_holes topology_holes.c)
if(COHORT_MPI_NAME STREQUAL "mpich")
  set(_topo_env COHORT_HB_PERIOD_MS=200 COHORT_HB_TIMEOUT_MS=2000 COHORT_ON_DEAD_PEER=skip)
else()
  set(_topo_env COHORT_HB_PERIOD_MS=50 COHORT_HB_TIMEOUT_MS=500 COHORT_ON_DEAD_PEER=skip)
endif()
foreach(ctor cart sub graph dist_graph adjacent)
  cohort_mpi_test(topology.holes.${ctor}_4 PART wrap NP 4 TIMEOUT 60 PASS 3 LABELS topology ENV ${_topo_env}
    COMMAND $<TARGET_FILE:topology_holes> ${ctor} 2)
endforeach()
cohort_mpi_test(topology.holes.cart_two_4 PART wrap NP 4 TIMEOUT 60 PASS 2 LABELS topology ENV ${_topo_env}
  COMMAND $<TARGET_FILE:topology_holes> cart 0+3)
# 3x3 grids and rings of 9 (MPICH stays at 4 ranks on this machine)
if(NOT COHORT_MPI_NAME STREQUAL "mpich")
  foreach(ctor cart sub graph dist_graph adjacent)
    cohort_mpi_test(topology.holes.${ctor}_9 PART wrap NP 9 TIMEOUT 90 PASS 7 LABELS topology ENV ${_topo_env}
      COMMAND $<TARGET_FILE:topology_holes> ${ctor} 4+6)
  endforeach()
endif()
