# COHORT_SANITIZE: compiler sanitizers for every target of this build (the library, the tests, the
# examples, the benchmarks), as -fsanitize=<list>: e.g. `address,undefined`, or `thread` (the unit tests and
# the detector's simulated network only: MPI libraries are not built for it). A finding stops the process
# (-fno-sanitize-recover), so a test that meets one fails. Run the MPI tests with ASAN_OPTIONS=detect_leaks=0
# (the MPI libraries' own allocations at exit are not cohort's). scripts/build puts such a build in
# build/<mpi>-san.
set(COHORT_SANITIZE "" CACHE STRING "sanitizers for every target: a -fsanitize= list, e.g. address,undefined")
if(COHORT_SANITIZE)
  if(COHORT_SANITIZE MATCHES "thread" AND COHORT_SANITIZE MATCHES "address|leak|memory")
    message(FATAL_ERROR "COHORT_SANITIZE=${COHORT_SANITIZE}: thread cannot be combined with address, leak or memory")
  endif()
  add_compile_options(-fsanitize=${COHORT_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${COHORT_SANITIZE})
  # NOTE: GCC 12 with address and undefined together reports every store to a thread_local object as
  # "member access within null pointer": its null check of the TLS address (%fs - offset) branches on the
  # flags of ASan's shadow test (objdump of RequestTable::own_segment). A null dereference still stops the
  # process under ASan (SEGV with a stack), so only UBSan's null check goes.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND COHORT_SANITIZE MATCHES "undefined" AND COHORT_SANITIZE MATCHES "address")
    add_compile_options(-fno-sanitize=null)
  endif()
endif()
