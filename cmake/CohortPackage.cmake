# Installs what a user links against: lib/pkgconfig/cohort-<mpi>.pc, the CMake package
# (find_package(cohort) -> cohort::cohort carrying the --wrap flags; COHORT_RUN, COHORT_PRELOAD_LIBRARY) and
# bin/cohort-run with its man page (share/man/man1/cohort-run.1). lib/libcohort-preload.so is installed by
# cmake/CohortPreload.cmake.
include(CMakePackageConfigHelpers)

set(COHORT_PC_NAME cohort-${COHORT_MPI_NAME})
configure_file(${CMAKE_SOURCE_DIR}/cmake/cohort.pc.in ${CMAKE_BINARY_DIR}/${COHORT_PC_NAME}.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/${COHORT_PC_NAME}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(EXPORT cohortTargets NAMESPACE cohort:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cohort)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/cohortConfig.cmake.in
  ${CMAKE_BINARY_DIR}/cohortConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cohort
  PATH_VARS CMAKE_INSTALL_BINDIR CMAKE_INSTALL_LIBDIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cohortConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/cohortConfig.cmake ${CMAKE_BINARY_DIR}/cohortConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cohort)

install(PROGRAMS ${CMAKE_SOURCE_DIR}/scripts/cohort-run DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${CMAKE_SOURCE_DIR}/man/cohort-run.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
