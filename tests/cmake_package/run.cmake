# ctest script: installs this build of tlc into a temporary prefix, then
# configures, builds and runs an out-of-tree project against it.
#   cmake -DTLC_BINARY_DIR=... -DTLC_SOURCE_DIR=... -DPROJECT_DIR=... -DWORK_DIR=...
#         [-DPROJECT_ARGS="-DA=1 -DB=2"] [-DRUN=exe args] -P run.cmake
foreach(v TLC_BINARY_DIR TLC_SOURCE_DIR PROJECT_DIR WORK_DIR RUN)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run.cmake: ${v} is required")
  endif()
endforeach()

function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endfunction()

# tlc_add_kernel needs `tlc build --header/--embed`.
execute_process(COMMAND ${TLC_BINARY_DIR}/bin/tlc build --help OUTPUT_VARIABLE help ERROR_VARIABLE help)
if(NOT help MATCHES "--header" OR NOT help MATCHES "--embed")
  message(FATAL_ERROR "`tlc build` has no --header/--embed options: the driver must call "
                      "tlc::driver::writeHostFiles (compiler/driver/header_gen.h) after building")
endif()

separate_arguments(project_args UNIX_COMMAND "${PROJECT_ARGS}")
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
step(${CMAKE_COMMAND} --install ${TLC_BINARY_DIR} --prefix ${prefix})
foreach(f bin/tlc include/tlc/runtime.h lib/cmake/tlc/tlcConfig.cmake lib/cmake/tlc/TlcAddKernel.cmake)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "the install lacks ${f}")
  endif()
endforeach()
# A fresh configure: only the installed package is visible.
step(${CMAKE_COMMAND} -S ${PROJECT_DIR} -B ${WORK_DIR}/build -G Ninja -DCMAKE_BUILD_TYPE=Release
     -DCMAKE_PREFIX_PATH=${prefix} ${project_args})
step(${CMAKE_COMMAND} --build ${WORK_DIR}/build -j 2)
separate_arguments(run_cmd UNIX_COMMAND "${RUN}")
list(GET run_cmd 0 exe)
list(REMOVE_AT run_cmd 0)
step(${WORK_DIR}/build/${exe} ${run_cmd})
