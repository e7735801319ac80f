# --- the multi-host bed: ranks on network-namespace hosts of scripts/cohort-hosts, label `hosts`;
# a lost host, a partition (link down), equal sides. Needs root and netns: otherwise SKIPPED (exit 77).
# Open MPI 4.1: 4 hosts x 2 ranks. MPICH: 4 hosts x 1 rank, equal sides 2 x 2 (tests <= 4 ranks), no lost-host tests:
# hydra 4.0.2's mpiexec asserts (`control_cb ... assert (!closed) failed`, pm/pmiserv/pmiserv_cb.c:206)
# when a proxy's control connection closes, and ends the job (README, "Running on a cluster").
# Only Open MPI 4.1 and MPICH: the bed's agent stands in for ssh, not for PRRTE's launcher (Open MPI 5).
if(NOT COHORT_BUILD_EXAMPLES)  # the tests run examples/montecarlo_pi
  return()
endif()
execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _mpiexec_version ERROR_QUIET)
if(COHORT_MPI_NAME STREQUAL "openmpi" AND NOT _mpiexec_version MATCHES "(Open MPI|OpenRTE)\\) 4\\.")
  return()
endif()
set(_pi $<TARGET_FILE:montecarlo_pi>)
if(COHORT_MPI_NAME STREQUAL "mpich")
  set(_hnp 4)
  set(_h4 3)       # the ranks of h4
  set(_cut_survivors "^survivors: 3 of 4 ranks \\(failed: 3\\)$")
else()
  set(_hnp 8)
  set(_h4 6,7)
  set(_cut_survivors "^survivors: 6 of 8 ranks \\(failed: (6 7|7 6)\\)$")
endif()
# hosts_test(<name> HOSTS <n> NP <ranks> [REPLICAS r] [EXIT <code>] [FENCED r,r] [LOSE host...] [CUT host]
#            [EXPECT regex...] [ENV VAR=value...] [PI_ARGS rounds samples])
function(hosts_test name)
  cmake_parse_arguments(T "" "HOSTS;NP;CUT;FENCED;REPLICAS" "LOSE;EXPECT;ENV;PI_ARGS" ${ARGN})
  if(NOT T_PI_ARGS)
    set(T_PI_ARGS 400 1000000)
  endif()
  set(args --mpi ${COHORT_MPI_NAME} --hosts ${T_HOSTS} --np ${T_NP} --timeout 60)
  if(T_REPLICAS)
    list(APPEND args --replicas ${T_REPLICAS})
  endif()
  foreach(h IN LISTS T_LOSE)
    list(APPEND args --lose ${h})
  endforeach()
  if(T_CUT)
    list(APPEND args --cut ${T_CUT} --fenced ${T_FENCED})
  endif()
  foreach(e IN LISTS T_EXPECT)
    list(APPEND args --expect ${e})
  endforeach()
  add_test(NAME hosts.${name} COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/hosts_run.sh ${args} -- ${_pi} ${T_PI_ARGS})
  set_tests_properties(hosts.${name} PROPERTIES LABELS "mpi;hosts" TIMEOUT 110 SKIP_RETURN_CODE 77)
  if(T_ENV)
    set_tests_properties(hosts.${name} PROPERTIES ENVIRONMENT "${T_ENV}")
  endif()
endfunction()

# NOTE: MPICH: a fault-free run across the hosts does not end, with or without cohort (the raw program under
# a plain mpiexec.mpich: 5 of 5 runs hung): inside MPICH's own PMPI_Finalize three ranks spin in UCX progress
# (disconnecting their endpoints) while the fourth waits in a blocking read on its PMI socket (gdb). So MPICH
# has the partition tests only (after a failure cohort skips MPICH's finalize).
if(COHORT_MPI_NAME STREQUAL "openmpi")
hosts_test(fault_free HOSTS 4 NP ${_hnp}
  EXPECT "^pi ~ 3\\.14[0-9]*, error [0-9.]+e-0[3-9]" "^survivors: ${_hnp} of ${_hnp} ranks$")
endif()
# h4's link down: its ranks fence themselves (exit 86), the others carry on.
# NOTE: these tests once failed 1 run in ~5 on both MPIs (the majority's output and exit never reached the
# launcher): the bed's bridge changed its MAC address when the cut host's port had held the lowest one
# (scripts/cohort-hosts now sets it).
hosts_test(partition HOSTS 4 NP ${_hnp} CUT h4 FENCED ${_h4}
  EXPECT "^pi ~ 3\\.14[0-9]*, error [0-9.]+e-0[3-9]" "${_cut_survivors}")
# Equal sides (2 hosts, h2 cut off: 2 ranks against 2): the side of the lowest rank (0) carries on, h2's
# ranks fence. (Cutting h1 instead also cuts rank 0 from the launcher, and its output with it.)
# NOTE: MPICH: h2's second rank never fenced until cohort undid MPICH's SIGUSR1 handler (wrap/runtime/init.cpp).
hosts_test(partition_equal HOSTS 2 NP 4 CUT h2 FENCED 2,3
  EXPECT "^pi ~ 3\\.14[0-9]*, error [0-9.]+e-0[3-9]" "^survivors: 2 of 4 ranks \\(failed: (2 3|3 2)\\)$")
if(COHORT_MPI_NAME STREQUAL "openmpi")
  # h3's last rank (5) is suspected by its observer (6, on h4) after the timeout; rank 4 then by the
  # lost-host probe (its host answered nothing), not after a second timeout.
  hosts_test(host_lost HOSTS 4 NP 8 LOSE h3
    EXPECT "^pi ~ 3\\.14[0-9]*, error [0-9.]+e-0[3-9]" "^round [0-9]+ of 400: 6 of 8 ranks contributed$"
    "^survivors: 6 of 8 ranks \\(failed: (4 5|5 4)\\)$"
    "cohort\\[rank 6\\] warn: rank 4 suspected: its host answered nothing")
  # SIGKILL of h2's last rank (3): its observer (4, on h3) cannot watch its process; h2's first rank (2) does.
  hosts_test(host_last_rank_killed HOSTS 4 NP 8 ENV "COHORT_INJECT_FAILURE=rank=3,at=reduce.posted,hit=50"
    EXPECT "^pi ~ 3\\.14[0-9]*, error [0-9.]+e-0[3-9]" "^survivors: 7 of 8 ranks \\(failed: 3\\)$"
    "cohort\\[rank 2\\] warn: rank 3 failed: its process exited \\(seen on this host by pidfd, as its host's last rank\\)")
  hosts_test(two_hosts_lost HOSTS 4 NP 8 LOSE h3 h4
    EXPECT "^pi ~ 3\\.14[0-9]*, error [0-9.]+e-0[3-9]" "^round [0-9]+ of 400: 4 of 8 ranks contributed$"
    "^survivors: 4 of 8 ranks \\(failed: [4-7] [4-7] [4-7] [4-7]\\)$")
endif()

# Replication across hosts (docs/design/replication.md, placement): the replicas of a logical rank go to
# different hosts, so a lost host (or a cut one, whose processes fence) takes at most one replica of each
# rank, and the survivors compute exactly the fault-free result: the pi line below is the one of 4 ranks
# (or 2) without replication and without a fault (the program's seeds depend only on the rank).
if(COHORT_MPI_NAME STREQUAL "openmpi")
  # 8 processes in blocks of 2: h3 holds world ranks 4 and 5, the second replicas of logical ranks 0 and 1.
  hosts_test(replica_host_lost HOSTS 4 NP 4 REPLICAS 2 LOSE h3
    EXPECT "^pi ~ 3\\.14155105, error 4\\.16e-05, from 1600000000 samples$" "^survivors: 4 of 4 ranks$"
    "warn: replica 1 of logical rank 0 \\(world rank 4, host h3\\) died; 1 of 2 replicas left$"
    "warn: replica 1 of logical rank 1 \\(world rank 5, host h3\\) died; 1 of 2 replicas left$")
endif()
# h2 cut off: it holds the second replicas (world ranks 2, 3) of both logical ranks, which fence as the
# equal side without rank 0; their twins finish. (MPICH: the replicas' wire communicator returns errors;
# with MPI's fatal handler, a replica whose send failed across the cut blocked in PMI holding MPICH's lock,
# and its detector thread never fenced it.) 4 x 10^6 samples: the run outlasts the minority's decision.
hosts_test(replica_partition HOSTS 2 NP 2 REPLICAS 2 CUT h2 FENCED 2,3 PI_ARGS 400 4000000
  EXPECT "^pi ~ 3\\.14159067, error 1\\.99e-06, from 3200000000 samples$" "^survivors: 2 of 2 ranks$"
  "warn: replica 1 of logical rank 0 \\(world rank 2, host h2\\) died; 1 of 2 replicas left$"
  "warn: replica 1 of logical rank 1 \\(world rank 3, host h2\\) died; 1 of 2 replicas left$")

