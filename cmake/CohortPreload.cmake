# libcohort-preload.so: the PMPI build of cohort, for programs that are not relinked (LD_PRELOAD, or
# `cohort-run --preload`). The same objects as libcohort.a (they are PIC) plus wrap/preload.cpp, which
# generates from wrap/calls.def the MPI_X entry points (forwarding to __wrap_MPI_X) and __real_MPI_X
# (= PMPI_X). Exports only MPI_* and cohort_* (cmake/cohort-preload.map); linked with the MPI library, so
# that preloading it into a program that loads libmpi only later (python3 + mpi4py) resolves too.
# cohort_add_preload_library(<object generator expressions...>)
function(cohort_add_preload_library)
  add_library(cohort_preload SHARED ${PROJECT_SOURCE_DIR}/wrap/preload.cpp ${ARGN})
  target_include_directories(cohort_preload PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include)
  set(_map ${PROJECT_SOURCE_DIR}/cmake/cohort-preload.map)
  target_link_libraries(cohort_preload PRIVATE MPI::MPI_C Threads::Threads m)
  target_link_options(cohort_preload PRIVATE LINKER:--version-script=${_map} LINKER:--no-undefined)
  set_target_properties(cohort_preload PROPERTIES OUTPUT_NAME cohort-preload LINK_DEPENDS ${_map})
  install(TARGETS cohort_preload LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endfunction()
