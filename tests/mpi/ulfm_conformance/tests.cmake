# ULFM conformance suite (docs/ulfm-conformance.md maps each statement of the ULFM chapter to its
# test). One program, conformance.c, one subtest per statement, 4 ranks. Heartbeat builds (MPICH, Open MPI
# 4.1): linked with cohort, whose MPIX_* it calls (label ulfm_conformance). The ulfm build (Open MPI 5
# --with-ft=ulfm): the same source built natively (-DULFM_NATIVE, MPI only), labels ulfm_conformance and
# ulfm_native; a test that fails there documents a difference of native ULFM and stays registered.
ulfm_program(ulfm_conformance ${CMAKE_CURRENT_LIST_DIR}/conformance.c ulfm_conformance)
set(_conf_labels ${ULFM_LABELS})
set(_conf_killed ${ULFM_KILLED})
set(_conf_env ${ULFM_ENV})
# DELAY: how long the survivors wait for a death to be detected ("before") or the victim waits before dying
# while the survivors are in the operation ("during"); past the heartbeat timeout of each MPI's settings.
if(COHORT_MPI_NAME STREQUAL "mpich")
  set(_conf_delay 3000)
  set(_conf_timeout 40)
else()
  set(_conf_delay 1000)
  set(_conf_timeout 30)
endif()
set(_conf $<TARGET_FILE:ulfm_conformance>)
# conformance_test(name pass killed|none [TIMEOUT s] args...): pass = ranks that must print PASS.
function(conformance_test name pass killed)
  cmake_parse_arguments(C "" "TIMEOUT" "" ${ARGN})
  set(_exit)
  if(killed STREQUAL "killed")
    set(_exit ${_conf_killed})
  endif()
  set(_t ${_conf_timeout})
  if(C_TIMEOUT)
    set(_t ${C_TIMEOUT})
  endif()
  cohort_mpi_test(ulfm_conformance.${name} PART ulfm_conformance NP 4 TIMEOUT ${_t} PASS ${pass} ${_exit}
    ENV ${_conf_env} LABELS ${_conf_labels} COMMAND ${_conf} ${C_UNPARSED_ARGUMENTS})
endfunction()

# ULFM 17.2.2: an operation that involves a dead process raises MPIX_ERR_PROC_FAILED (dead before the call,
# or during it), for every kind; persistent collectives only where the MPI has them (MPI 4.0: MPICH).
set(_conf_kinds recv send sendrecv irecv isend waitall waitany testloop probe precv psend
  barrier allreduce bcast ibarrier iallreduce ibcast dup)
if(COHORT_MPI_NAME STREQUAL "mpich")
  list(APPEND _conf_kinds pbarrier)
endif()
foreach(k IN LISTS _conf_kinds)
  foreach(when before during)
    conformance_test(failure_notification.${k}.${when} 3 killed failure_notification ${k} ${when} ${_conf_delay})
  endforeach()
endforeach()
# ULFM 17.2.2: MPI_ANY_SOURCE: _PENDING for a nonblocking receive (active until acknowledged), PROC_FAILED
# for a blocking one.
conformance_test(failure_notification.any_source_pending.before 3 killed any_source_pending before ${_conf_delay} ack)
conformance_test(failure_notification.any_source_pending.during 3 killed any_source_pending during ${_conf_delay} ack)
conformance_test(failure_notification.any_source_pending.ack_failed 3 killed
  any_source_pending before ${_conf_delay} ack_failed)
conformance_test(failure_notification.any_source_blocking 3 killed any_source_blocking ${_conf_delay})
# Issue 35 item 1: MPI_ERRORS_RETURN on rank 0 only, no failure: nothing changes.
conformance_test(failure_notification.errhandler_on_one_rank 4 none errhandler_mixed)
# Issue 35 item 8: the returned code is the class constant.
conformance_test(failure_notification.error_code_is_class 3 killed error_code ${_conf_delay})
# ULFM 17.2.1: MPI_Finalize completes without calling MPI_COMM_WORLD's error handler.
conformance_test(startup_finalize.no_errhandler_call 4 none finalize none ${_conf_delay})
conformance_test(startup_finalize.no_errhandler_call_after_death 3 killed finalize 3 ${_conf_delay})

# ULFM 17.3.1 MPI_COMM_REVOKE: a revocation interrupts a process blocked in every kind (no failure at all,
# issue 35 item 1); agree and shrink work on the revoked communicator.
foreach(k IN LISTS _conf_kinds)
  if(NOT k STREQUAL "dup")
    conformance_test(comm_revoke.interrupts.${k} 4 none comm_revoke ${k})
  endif()
endforeach()
# ... also when a member is dead (the revocation propagates despite failures).
foreach(k recv isend barrier ibarrier allreduce)
  conformance_test(comm_revoke.interrupts_with_dead_member.${k} 3 killed comm_revoke ${k} 3 ${_conf_delay})
endforeach()
# ... on an intercommunicator, both sides, blocking and nonblocking (rooted ones with MPI_ROOT /
# MPI_PROC_NULL in the root's group).
set(_conf_inter_kinds recv send irecv isend waitany testloop barrier allreduce bcast alltoallv ibarrier iallreduce
  ibcast igatherv)
foreach(k IN LISTS _conf_inter_kinds)
  conformance_test(comm_revoke.intercomm_interrupts.${k} 4 none inter_revoke ${k})
endforeach()
# Once revoked locally, every operation of every kind raises MPIX_ERR_REVOKED at once, also on an
# intercommunicator.
foreach(k IN LISTS _conf_kinds ITEMS alltoallv igatherv)
  conformance_test(comm_revoke.revoked.${k} 4 none revoked_op ${k})
  conformance_test(comm_revoke.intercomm_revoked.${k} 4 none revoked_op ${k} inter)
endforeach()

# ULFM 17.3.1 MPI_COMM_AGREE / MPI_COMM_IAGREE.
conformance_test(comm_agree.uniform_and 4 none agree_uniform)
conformance_test(comm_agree.intercomm_remote_and 4 none inter_agree)
conformance_test(comm_agree.dead_unacknowledged.before 3 killed agree_dead before ${_conf_delay} agree)
conformance_test(comm_agree.dead_unacknowledged.during 3 killed agree_dead during ${_conf_delay} agree)
conformance_test(comm_agree.dead_unacknowledged.iagree 3 killed agree_dead before ${_conf_delay} iagree)
conformance_test(comm_agree.acknowledged_by_some_only 3 killed agree_partial_ack ${_conf_delay})

# ULFM 17.3.1 MPI_COMM_SHRINK: membership, order, and the reduction over the live ranks.
conformance_test(comm_shrink.no_failure 4 none comm_shrink none ${_conf_delay})
conformance_test(comm_shrink.one_dead 3 killed comm_shrink 1 ${_conf_delay})
conformance_test(comm_shrink.two_dead 2 killed comm_shrink 1+3 ${_conf_delay})

# ULFM 17.3.1 MPI_COMM_FAILURE_ACK / GET_ACKED; FT slice 1 MPI_COMM_ACK_FAILED / GET_FAILED.
conformance_test(comm_failure_ack.get_acked 3 killed failure_ack ${_conf_delay})
conformance_test(comm_ack_failed.get_failed 2 killed ack_failed ${_conf_delay})

# The MPIX_FT attribute and the MPI-5 names (reported as missing until the headers provide them).
conformance_test(ft_attribute.mpix_ft 4 none ft_attribute)
conformance_test(mpi5_names.present 4 none mpi5_names)

# Stress: 100 rounds of each repair call with 4 MiB requests pending.
foreach(mode revoke agree shrink)
  conformance_test(stress.${mode} 4 none TIMEOUT 300 stress ${mode} 100)
  conformance_test(stress.${mode}.deaths 2 killed TIMEOUT 300 stress ${mode} 100 3@30 1@60)
endforeach()

# Where a run differs from the specification (docs/ulfm-conformance.md says how): the tests stay
# registered and run by hand; scripts/test leaves these labels out.
# - conformance_todo (cohort's builds): none at present.
# - native_differs (the ulfm build, Open MPI 5.0.7's own ULFM): fails or hangs there.
if(COHORT_USE_ULFM)
  set(_conf_differs failure_notification.dup.before
    comm_revoke.interrupts.send comm_revoke.interrupts.isend comm_revoke.interrupts.psend
    comm_revoke.interrupts.ibcast comm_revoke.interrupts_with_dead_member.isend
    comm_revoke.revoked.ibarrier comm_revoke.revoked.ibcast comm_revoke.revoked.isend comm_revoke.revoked.psend
    comm_revoke.intercomm_revoked.isend comm_revoke.intercomm_revoked.psend comm_revoke.intercomm_revoked.ibcast
    comm_revoke.revoked.igatherv comm_revoke.intercomm_revoked.igatherv
    comm_agree.dead_unacknowledged.before comm_agree.dead_unacknowledged.during
    comm_agree.dead_unacknowledged.iagree
    comm_agree.acknowledged_by_some_only mpi5_names.present)
  foreach(k IN LISTS _conf_inter_kinds)
    list(APPEND _conf_differs comm_revoke.intercomm_interrupts.${k})
  endforeach()
  set(_conf_label native_differs)
else()
  set(_conf_differs)
  set(_conf_label conformance_todo)
endif()
foreach(t IN LISTS _conf_differs)
  set_property(TEST ulfm_conformance.${t} APPEND PROPERTY LABELS ${_conf_label})
endforeach()
