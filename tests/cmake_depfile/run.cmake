# ctest script: installs this build of tlc, then for the Ninja and Makefile
# generators builds tests/cmake_depfile, checks that a second build does
# nothing, edits the imported module, and checks that the kernel is rebuilt
# and the program sees the new value.
#   cmake -DTLC_BINARY_DIR=... -DPROJECT_DIR=... -DWORK_DIR=... -P run.cmake
foreach(v TLC_BINARY_DIR PROJECT_DIR WORK_DIR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run.cmake: ${v} is required")
  endif()
endforeach()

function(step out_var)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(${out_var} "${out}${err}" PARENT_SCOPE)
endfunction()

function(write_sources kernel_dir factor)
  file(WRITE ${kernel_dir}/factors.tl "macro factor():\n    return ${factor}\n")
  file(WRITE ${kernel_dir}/scale.tl
    "import factors\n\n"
    "def scale(A: Tensor[(64,), float32], B: Tensor[(64,), float32]):\n"
    "    with T.Kernel(1) as bx:\n"
    "        for i in T.Parallel(64):\n"
    "            B[i] = A[i] * factors.factor()\n")
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
step(out ${CMAKE_COMMAND} --install ${TLC_BINARY_DIR} --prefix ${prefix})

foreach(generator "Ninja" "Unix Makefiles")
  string(MAKE_C_IDENTIFIER "${generator}" gen_dir)
  set(kernel_dir ${WORK_DIR}/${gen_dir}/kernels)
  set(build ${WORK_DIR}/${gen_dir}/build)
  write_sources(${kernel_dir} 2.0)
  step(out ${CMAKE_COMMAND} -S ${PROJECT_DIR} -B ${build} -G ${generator} -DCMAKE_BUILD_TYPE=Release
       -DCMAKE_PREFIX_PATH=${prefix} -DKERNEL_DIR=${kernel_dir})
  step(out ${CMAKE_COMMAND} --build ${build})
  step(out ${build}/app)
  if(NOT out MATCHES "B\\[0\\] = 2")
    message(FATAL_ERROR "${generator}: expected B[0] = 2, got: ${out}")
  endif()
  step(out ${CMAKE_COMMAND} --build ${build})
  if(out MATCHES "tlc: building")
    message(FATAL_ERROR "${generator}: a second build with nothing changed ran tlc again:\n${out}")
  endif()
  # Only the imported module changes.
  file(WRITE ${kernel_dir}/factors.tl "macro factor():\n    return 3.0\n")
  step(out ${CMAKE_COMMAND} --build ${build})
  if(NOT out MATCHES "tlc: building")
    message(FATAL_ERROR "${generator}: editing the imported module did not rebuild the kernel:\n${out}")
  endif()
  step(out ${build}/app)
  if(NOT out MATCHES "B\\[0\\] = 3")
    message(FATAL_ERROR "${generator}: after the edit expected B[0] = 3, got: ${out}")
  endif()
  message(STATUS "${generator}: the depfile rebuilds the kernel after an edit of its import")
endforeach()
