# libcohort-preload.so: the PMPI build of cohort, for programs that are not relinked (LD_PRELOAD, or
# `cohort-run --preload`). The same objects as libcohort.a (they are PIC) plus wrap/runtime/preload.cpp, which
# generates from wrap/calls.def the MPI_X entry points (forwarding to __wrap_MPI_X) and __real_MPI_X
# (= PMPI_X). Exports only MPI_* and cohort_* (cmake/cohort-preload.map); linked with the MPI library, so
# that preloading it into a program that loads libmpi only later (python3 + mpi4py) resolves too.
# cohort_add_preload_library(<object libraries...>)
function(cohort_add_preload_library)
  set(_objects)
  foreach(_p IN LISTS ARGN)
    list(APPEND _objects $<TARGET_OBJECTS:${_p}>)
    # NOTE: thread-locals (per-thread call counters, request-table caches) are read on every call. In a
    # shared library the default TLS model costs a __tls_get_addr call per access; initial-exec is one
    # load, and valid because the library is loaded at startup (LD_PRELOAD). The static build is not
    # affected (the linker turns either model into local-exec in an executable).
    target_compile_options(${_p} PRIVATE -ftls-model=initial-exec)
  endforeach()
  add_library(cohort_preload SHARED ${PROJECT_SOURCE_DIR}/wrap/runtime/preload.cpp ${_objects})
  target_include_directories(cohort_preload PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include)
  set(_map ${PROJECT_SOURCE_DIR}/cmake/cohort-preload.map)
  target_link_libraries(cohort_preload PRIVATE MPI::MPI_C Threads::Threads m)
  target_link_options(cohort_preload PRIVATE LINKER:--version-script=${_map} LINKER:--no-undefined)
  set_target_properties(cohort_preload PROPERTIES OUTPUT_NAME cohort-preload LINK_DEPENDS ${_map})
  install(TARGETS cohort_preload LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endfunction()
