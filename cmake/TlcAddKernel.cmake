# tlc_add_kernel: build tile-language kernels ahead of time and link them,
# embedded, into a target.
#
#   tlc_add_kernel(<target>
#     SOURCES k.tl [...]            # one module per source
#     [TARGETS cpu cuda:sm_90 hip:gfx942 ...]  # default: cpu
#     [DEFINES M=4096 dtype=float16 ...]   # compile-time parameters, for every source
#     [TUNED [DIMS M=4096 ...]]     # the configurations `tlc tune` found (docs/tuning.md),
#                                   # for the shape bucket of DIMS (default: the newest)
#     [OPTIONS ...])                # extra `tlc build` arguments
#
# For each source `k.tl` and target T, `tlc build` runs at build time and
# writes, under ${CMAKE_CURRENT_BINARY_DIR}/tlc/<target>/:
#   <name>.h        launch functions (one per kernel) and `tlc_module* <name>_module(void)`
#   <name>_embed.c  the binary, embedded; compiled into <target>
# where <name> is `k` for cpu, `k_cuda_sm_90` for cuda:sm_90 and `k_hip_gfx942`
# for hip:gfx942 (the binary is then a .cubin / .hsaco with its metadata
# embedded beside it; the runtime loads it through the CUDA driver / the HIP
# runtime, found at run time). The target
# gets the include directory and links tlc::runtime: #include "k.h" and call
#   k_launch(k_module(), A, B, C, M, N, stream)   // see the header
# The kernels are rebuilt when a source, a module it imports (through the
# depfile `tlc build --depfile` writes; Ninja and Makefile generators), the
# tlc executable or the arguments change; with TUNED, also when the tuning
# record used changes (`tlc tune --force` again). A TUNED kernel that was
# never tuned fails the build with the `tlc tune` command to run.
include_guard(GLOBAL)

function(tlc_add_kernel target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "TUNED" "" "SOURCES;TARGETS;DEFINES;DIMS;OPTIONS")
  if(NOT TARGET ${target})
    message(FATAL_ERROR "tlc_add_kernel: `${target}` is not a target (call add_executable/add_library first)")
  endif()
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "tlc_add_kernel(${target}): SOURCES is required")
  endif()
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tlc_add_kernel(${target}): unexpected arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_TARGETS)
    set(ARG_TARGETS cpu)
  endif()
  if(NOT TLC_EXECUTABLE)
    message(FATAL_ERROR "tlc_add_kernel: TLC_EXECUTABLE is not set (use find_package(tlc))")
  endif()

  set(defines)
  foreach(d IN LISTS ARG_DEFINES)
    if(NOT d MATCHES "^[A-Za-z_][A-Za-z0-9_]*=.+$")
      message(FATAL_ERROR "tlc_add_kernel(${target}): DEFINES entries are NAME=VALUE, got `${d}`")
    endif()
    list(APPEND defines -D ${d})
  endforeach()
  set(tuned)
  if(ARG_TUNED)
    set(tuned --tuned)
    foreach(d IN LISTS ARG_DIMS)
      if(NOT d MATCHES "^[A-Za-z_][A-Za-z0-9_]*=[0-9]+$")
        message(FATAL_ERROR "tlc_add_kernel(${target}): DIMS entries are NAME=SIZE, got `${d}`")
      endif()
      list(APPEND tuned --dim ${d})
    endforeach()
  elseif(ARG_DIMS)
    message(FATAL_ERROR "tlc_add_kernel(${target}): DIMS picks tuning results: use it with TUNED")
  endif()

  set(outdir ${CMAKE_CURRENT_BINARY_DIR}/tlc/${target})
  file(MAKE_DIRECTORY ${outdir})
  set(env)
  if(TLC_CPU_RUNTIME_ARCHIVE)
    set(env ${CMAKE_COMMAND} -E env TLC_CPU_RUNTIME=${TLC_CPU_RUNTIME_ARCHIVE})
  endif()
  set(tlc_dep ${TLC_EXECUTABLE})
  if(TARGET tlc)
    set(tlc_dep tlc)
  endif()
  # DEPFILE is supported by these generators (Makefiles since CMake 3.20).
  set(use_depfile OFF)
  if(CMAKE_GENERATOR MATCHES "Ninja|Makefiles")
    set(use_depfile ON)
  endif()

  foreach(src IN LISTS ARG_SOURCES)
    get_filename_component(src_abs ${src} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    get_filename_component(stem ${src} NAME_WE)
    string(MAKE_C_IDENTIFIER "${stem}" stem)
    foreach(tgt IN LISTS ARG_TARGETS)
      if(tgt STREQUAL "cpu")
        set(name ${stem})
        set(ext so)
      elseif(tgt MATCHES "^cuda(:sm_[0-9]+a?)?$")
        string(MAKE_C_IDENTIFIER "${stem}_${tgt}" name)
        set(ext cubin)
      elseif(tgt MATCHES "^hip(:gfx[0-9a-f]+)?$")
        string(MAKE_C_IDENTIFIER "${stem}_${tgt}" name)
        set(ext hsaco)
      else()
        message(FATAL_ERROR "tlc_add_kernel(${target}): unknown target `${tgt}` (cpu, cuda:sm_XX, hip:gfxXXX)")
      endif()
      string(REGEX REPLACE "_+$" "" name "${name}")
      set(bin ${outdir}/${name}.${ext})
      set(header ${outdir}/${name}.h)
      set(embed ${outdir}/${name}_embed.c)
      set(depfile_args)
      set(depfile_option)
      if(use_depfile)
        set(depfile_args --depfile ${outdir}/${name}.d)
        set(depfile_option DEPFILE ${outdir}/${name}.d)
      endif()
      add_custom_command(
        OUTPUT ${bin} ${header} ${embed}
        COMMAND ${env} ${TLC_EXECUTABLE} build ${src_abs} --target=${tgt} ${defines} ${tuned} ${ARG_OPTIONS}
                -o ${bin} --header ${header} --embed ${embed} ${depfile_args}
        DEPENDS ${src_abs} ${tlc_dep}
        ${depfile_option}
        COMMENT "tlc: building ${src} for ${tgt}"
        VERBATIM)
      target_sources(${target} PRIVATE ${embed} ${header})
      set_source_files_properties(${embed} PROPERTIES LANGUAGE C)
    endforeach()
  endforeach()
  target_include_directories(${target} PRIVATE ${outdir})
  target_link_libraries(${target} PRIVATE tlc::runtime)
endfunction()
