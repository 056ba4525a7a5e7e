# install() rules: the `tlc` executable, the host runtime library and its
# header, the CPU kernel runtime archive (linked into every built .so), the
# stdlib modules, and the CMake package (find_package(tlc), tlc_add_kernel).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TLC_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/tlc)
set(TLC_INSTALL_CPU_RUNTIME ${CMAKE_INSTALL_LIBDIR}/tlc/libtlc_cpu_runtime.a)

if(TARGET tlc)
  install(TARGETS tlc RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(TARGETS tlc_runtime EXPORT tlcTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${CMAKE_SOURCE_DIR}/runtime/include/tlc/runtime.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tlc)
if(TARGET tlc_cpu_runtime)
  install(FILES $<TARGET_FILE:tlc_cpu_runtime> DESTINATION ${CMAKE_INSTALL_LIBDIR}/tlc)
endif()
install(DIRECTORY ${CMAKE_SOURCE_DIR}/stdlib/ DESTINATION ${CMAKE_INSTALL_DATADIR}/tlc/stdlib FILES_MATCHING PATTERN "*.tl")

install(EXPORT tlcTargets NAMESPACE tlc:: DESTINATION ${TLC_INSTALL_CMAKEDIR})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/tlcConfig.cmake.in
  ${CMAKE_BINARY_DIR}/cmake/tlcConfig.cmake
  INSTALL_DESTINATION ${TLC_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_BINDIR CMAKE_INSTALL_INCLUDEDIR TLC_INSTALL_CPU_RUNTIME)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cmake/tlcConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/cmake/tlcConfig.cmake ${CMAKE_BINARY_DIR}/cmake/tlcConfigVersion.cmake
  ${CMAKE_SOURCE_DIR}/cmake/TlcAddKernel.cmake DESTINATION ${TLC_INSTALL_CMAKEDIR})
