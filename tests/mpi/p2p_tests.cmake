# Point-to-point and requests. Included from tests/mpi/CMakeLists.txt.
function(cohort_p2p_program name)
  cohort_test_program(${name} ${ARGN})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
endfunction()

cohort_p2p_program(p2p_equivalence p2p_equivalence.cpp)
cohort_mpi_test(p2p.equivalence PART wrap NP 4 TIMEOUT 60 PASS 4 COMMAND $<TARGET_FILE:p2p_equivalence>)
cohort_mpi_test(p2p.equivalence_3 PART wrap NP 3 TIMEOUT 60 PASS 3 COMMAND $<TARGET_FILE:p2p_equivalence>)

if(COHORT_BUILD_EXAMPLES)
# --- the bag-of-tasks example: with cohort, and the same source built without it ---
set(BAG_INPUT ${PROJECT_SOURCE_DIR}/examples/bag_of_tasks_items.txt)
set(BAG_OK "^bag_of_tasks: all 240 tasks scored" "^bag_of_tasks: verified")
cohort_mpi_test(examples.bag_of_tasks PART examples NP 4 TIMEOUT 60
  EXPECT ${BAG_OK} COMMAND $<TARGET_FILE:bag_of_tasks> --input ${BAG_INPUT} --verify)
cohort_mpi_test(examples.bag_of_tasks_without_cohort PART examples NP 4 TIMEOUT 60
  EXPECT ${BAG_OK} COMMAND $<TARGET_FILE:bag_of_tasks_plain> --input ${BAG_INPUT} --verify)
# The plain build really is plain MPI: no cohort symbol, no wrapper, on its link line.
add_test(NAME build.bag_of_tasks_links_without_cohort
  COMMAND sh -c "! nm \"$1\" | grep -E 'cohort|__wrap_'" sh $<TARGET_FILE:bag_of_tasks_plain>)
set_tests_properties(build.bag_of_tasks_links_without_cohort PROPERTIES LABELS "unit;build" TIMEOUT 30)
endif()

# --- dead peers (tests/mpi/p2p_faults.cpp) ---
cohort_p2p_program(p2p_faults p2p_faults.cpp)
# NOTE: with the placeholder detector no death is ever detected, so these would only time out.
if(EXISTS ${PROJECT_SOURCE_DIR}/detector/runtime_stub.cpp)
  message(STATUS "cohort: point-to-point fault tests off until the failure detector replaces its stub")
  return()
endif()
# NOTE: detection in ~0.3 s (Open MPI) / ~1 s (MPICH, which busy-polls oversubscribed cores).
if(COHORT_MPI_NAME STREQUAL "mpich")
  set(P2P_HB COHORT_HB_PERIOD_MS=100 COHORT_HB_TIMEOUT_MS=1000)
  set(P2P_WAITALL_PASS 2)
  # NOTE: the two tests that kill a rank in the middle of a 512 KiB message: MPICH's UCX moves it by CMA
  # (process_vm_readv) and aborts the receiving survivor when the sender is gone ("No such process"), inside
  # UCX, outside cohort's reach (README, "A limit outside cohort's reach"). It failed both tries of one of
  # them in 2 of the last 3 full CI runs; without CMA (UCX_TLS=^cma, these tests only) it does not happen.
  set(P2P_NO_CMA UCX_TLS=^cma)
else()
  set(P2P_HB COHORT_HB_PERIOD_MS=50 COHORT_HB_TIMEOUT_MS=300)
  set(P2P_WAITALL_PASS 3)
  set(P2P_NO_CMA)
endif()
set(P2P_ABORT_LINE "policy abort\\)$")
cohort_mpi_test(p2p.dead_peer_skip PART wrap NP 4 TIMEOUT 60 PASS 3
  ENV ${P2P_HB} COHORT_ON_DEAD_PEER=skip P2P_SEND=skip P2P_RECV=skip COMMAND $<TARGET_FILE:p2p_faults> dead_peer)
cohort_mpi_test(p2p.dead_peer_error PART wrap NP 4 TIMEOUT 60 PASS 3
  ENV ${P2P_HB} COHORT_ON_DEAD_PEER=error P2P_SEND=error P2P_RECV=error COMMAND $<TARGET_FILE:p2p_faults> dead_peer)
cohort_mpi_test(p2p.dead_peer_send_error_recv_skip PART wrap NP 3 TIMEOUT 60 PASS 2
  ENV ${P2P_HB} COHORT_ON_DEAD_PEER_SEND=error COHORT_ON_DEAD_PEER_RECV=skip P2P_SEND=error P2P_RECV=skip
  COMMAND $<TARGET_FILE:p2p_faults> dead_peer)
# Legio's defaults: the receive from the dead rank ends the job, with one line saying why.
cohort_mpi_test(p2p.dead_peer_default_recv_aborts PART wrap NP 3 TIMEOUT 60 EXIT 1
  ENV ${P2P_HB} EXPECT "cohort\\[rank 0\\] error: MPI_Recv: receive from rank 1 \\(world rank 1\\): the rank is dead \\(policy abort\\)$"
  COMMAND $<TARGET_FILE:p2p_faults> dead_peer)
cohort_mpi_test(p2p.dead_peer_send_abort PART wrap NP 3 TIMEOUT 60 EXIT 1
  ENV ${P2P_HB} COHORT_ON_DEAD_PEER_SEND=abort COHORT_ON_DEAD_PEER_RECV=skip
  EXPECT "cohort\\[rank 0\\] error: MPI_Wait: send to rank 1 \\(world rank 1\\): the rank is dead \\(policy abort\\)$"
  COMMAND $<TARGET_FILE:p2p_faults> dead_peer)
cohort_mpi_test(p2p.delivered_before_death PART wrap NP 3 TIMEOUT 60 PASS 2
  ENV ${P2P_HB} COHORT_ON_DEAD_PEER_RECV=skip COMMAND $<TARGET_FILE:p2p_faults> delivered)
cohort_mpi_test(p2p.killed_during_call PART wrap NP 4 TIMEOUT 60 PASS 2
  ENV ${P2P_HB} ${P2P_NO_CMA} COHORT_ON_DEAD_PEER=skip
  COMMAND $<TARGET_FILE:p2p_faults> during)
# The same after a deferred MPI_Barrier (COHORT_CONFIRM_WINDOW=4): rank 3 waits outside MPI (polling
# cohort_is_alive) while ranks 0-2 wait at their settle point for its count; the detector thread reports
# it (wrap/core/deferred.hpp report_idle). Without that, it hung every run.
cohort_mpi_test(p2p.killed_during_call_w4 PART wrap NP 4 TIMEOUT 60 PASS 2
  ENV ${P2P_HB} ${P2P_NO_CMA} COHORT_ON_DEAD_PEER=skip COHORT_CONFIRM_WINDOW=4
  COMMAND $<TARGET_FILE:p2p_faults> during)
cohort_mpi_test(p2p.any_source_one_sender_dies PART wrap NP 4 TIMEOUT 60 PASS 3
  ENV ${P2P_HB} COHORT_ON_DEAD_PEER_RECV=skip COMMAND $<TARGET_FILE:p2p_faults> any_source)
cohort_mpi_test(p2p.any_source_all_dead_skip PART wrap NP 3 TIMEOUT 60 PASS 1
  ENV ${P2P_HB} COHORT_ON_DEAD_PEER_RECV=skip P2P_RECV=skip COMMAND $<TARGET_FILE:p2p_faults> all_dead)
cohort_mpi_test(p2p.any_source_all_dead_error PART wrap NP 3 TIMEOUT 60 PASS 1
  ENV ${P2P_HB} COHORT_ON_DEAD_PEER_RECV=error P2P_RECV=error COMMAND $<TARGET_FILE:p2p_faults> all_dead)
cohort_mpi_test(p2p.any_source_all_dead_abort PART wrap NP 3 TIMEOUT 60 EXIT 1
  ENV ${P2P_HB} EXPECT "MPI_Recv: receive from MPI_ANY_SOURCE: every rank that could send is dead \\(policy abort\\)$"
  COMMAND $<TARGET_FILE:p2p_faults> all_dead)
cohort_mpi_test(p2p.waitall_two_of_four_peers_die PART wrap NP 5 NP_MPICH 4 TIMEOUT 60 PASS ${P2P_WAITALL_PASS}
  ENV ${P2P_HB} COHORT_ON_DEAD_PEER=skip COMMAND $<TARGET_FILE:p2p_faults> waitall)
cohort_mpi_test(p2p.waitall_two_of_four_peers_die_error PART wrap NP 5 NP_MPICH 4 TIMEOUT 60 PASS ${P2P_WAITALL_PASS}
  ENV ${P2P_HB} COHORT_ON_DEAD_PEER=error P2P_SEND=error P2P_RECV=error COMMAND $<TARGET_FILE:p2p_faults> waitall)
# Issue 10: persistent requests, MPI_Mprobe/MPI_Mrecv, MPI_Cancel and MPI_Request_get_status with dead
# peers (the dead_peer and delivered scenarios above cover them too).
# Persistent requests are cohort's own: also under the ulfm backend, where Open MPI 5 frees a
# persistent request that it fails, the program's handles stay valid.
cohort_mpi_test(p2p.persistent_killed_during_start PART wrap NP 4 TIMEOUT 60 PASS 2
  ENV ${P2P_HB} ${P2P_NO_CMA} COHORT_ON_DEAD_PEER=skip
  COMMAND $<TARGET_FILE:p2p_faults> during_persistent)
cohort_mpi_test(p2p.persistent_waitall_two_of_four_peers_die PART wrap NP 5 NP_MPICH 4 TIMEOUT 60 PASS ${P2P_WAITALL_PASS}
  ENV ${P2P_HB} COHORT_ON_DEAD_PEER=skip COMMAND $<TARGET_FILE:p2p_faults> waitall_persistent)
cohort_mpi_test(p2p.persistent_waitall_two_of_four_peers_die_error PART wrap NP 5 NP_MPICH 4 TIMEOUT 60 PASS ${P2P_WAITALL_PASS}
  ENV ${P2P_HB} COHORT_ON_DEAD_PEER=error P2P_SEND=error P2P_RECV=error COMMAND $<TARGET_FILE:p2p_faults> waitall_persistent)

if(COHORT_BUILD_EXAMPLES)
# --- the bag of tasks with workers killed at random points of their work: 20 seeded runs (10 with one
# worker killed, 10 with two). A victim kills itself at its k-th result send (hook send.posted) or k-th
# task receive (hook recv.posted), k in 2..30 from the seed: always while the bag is being worked, never
# during MPI_Init (a timed kill can land there when MPI_Init is slow on a loaded machine). Every run must
# score all 240 items exactly: the checksum over all scores is that of a fault-free run (--panel 48;
# examples.bag_of_tasks verifies item by item). More runs: scripts/soak-bag-of-tasks. ---
set(BAG_CHECKSUM 38858511)
if(COHORT_MPI_NAME STREQUAL "mpich")
  set(BAG_NP 4)
else()
  set(BAG_NP 6)
endif()
math(EXPR BAG_WORKERS "${BAG_NP} - 1")
set(BAG_HOOKS send.posted recv.posted)
foreach(seed RANGE 1 20)
  string(RANDOM LENGTH 6 ALPHABET 123456789 RANDOM_SEED ${seed} r)
  math(EXPR a "1 + ${r} % ${BAG_WORKERS}")
  math(EXPR ha "(${r} / 3) % 2")
  math(EXPR ka "2 + (${r} / 7) % 29")
  list(GET BAG_HOOKS ${ha} hook)
  set(spec "rank=${a},at=${hook},hit=${ka}")
  set(kills 1)
  if(seed GREATER 10)
    math(EXPR b "1 + (${a} + (${r} / 13) % (${BAG_WORKERS} - 1)) % ${BAG_WORKERS}")
    math(EXPR hb "(${r} / 5) % 2")
    math(EXPR kb "2 + (${r} / 11) % 29")
    list(GET BAG_HOOKS ${hb} hook)
    set(spec "${spec}/rank=${b},at=${hook},hit=${kb}")
    set(kills 2)
  endif()
  cohort_mpi_test(examples.bag_of_tasks_kill${kills}_seed${seed} PART examples NP ${BAG_NP} TIMEOUT 60
    ENV ${P2P_HB}
    EXPECT "^bag_of_tasks: all 240 tasks scored by ${BAG_WORKERS} workers .*; checksum ${BAG_CHECKSUM};"
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/p2p_inject.sh ${spec} $<TARGET_FILE:bag_of_tasks>
            --input ${BAG_INPUT} --panel 48)
endforeach()
endif()
