# The `tlc` executable. Included from compiler/CMakeLists.txt after every
# library exists, so the optional targets (cpu, cuda, the CUDA emulator) are
# linked in when they were built.
set(_driver ${CMAKE_CURRENT_LIST_DIR})
add_executable(tlc ${_driver}/main.cpp ${_driver}/compile.cpp ${_driver}/subcommands.cpp ${_driver}/targets.cpp
  ${_driver}/output_paths.cpp ${_driver}/tuner.cpp ${_driver}/tune_targets.cpp ${_driver}/tuned_build.cpp)
target_link_libraries(tlc PRIVATE tlc_sema tlc_ir tlc_run_common tlc_header_gen tlc_tune CLI11::CLI11)
# `tlc --version` prints the project version.
target_compile_definitions(tlc PRIVATE TLC_VERSION_STRING="${PROJECT_VERSION}")
if(TARGET tlc_cpu_target)
  target_link_libraries(tlc PRIVATE tlc_cpu_target)
  target_sources(tlc PRIVATE ${_driver}/tune_cpu.cpp)
  target_compile_definitions(tlc PRIVATE TLC_HAVE_CPU_TARGET)
endif()
if(TARGET tlc_cuda_target)
  target_link_libraries(tlc PRIVATE tlc_cuda_target)
  target_sources(tlc PRIVATE ${_driver}/tune_gpu.cpp)
  target_compile_definitions(tlc PRIVATE TLC_HAVE_CUDA_TARGET)
endif()
if(TARGET tlc_hip_target)
  target_link_libraries(tlc PRIVATE tlc_hip_target)
  target_compile_definitions(tlc PRIVATE TLC_HAVE_HIP_TARGET)
endif()
if(TARGET tlc_emulate_target)
  target_link_libraries(tlc PRIVATE tlc_emulate_target)
  target_compile_definitions(tlc PRIVATE TLC_HAVE_CUDA_EMULATOR)
endif()
set_target_properties(tlc PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
