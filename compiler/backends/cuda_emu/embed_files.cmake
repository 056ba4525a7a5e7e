# Writes the emulator's prelude files and the CUDA device helper header as
# C++ raw string literals (kEmuAbi, kEmuFloat, kEmuPrelude, kDeviceHelpers),
# the header's parts inlined.
include(${CMAKE_CURRENT_LIST_DIR}/../../../cmake/TlcHeaderParts.cmake)
set(out "// Generated from runtime/cuda_emu/*.h and runtime/cuda/tlc_cuda.h; do not edit.\n")
foreach(pair "kEmuAbi;${SRC}/runtime/cuda_emu/emu_abi.h" "kEmuFloat;${SRC}/runtime/cuda_emu/emu_float.h"
             "kEmuPrelude;${SRC}/runtime/cuda_emu/emu_prelude.h" "kDeviceHelpers;${SRC}/runtime/cuda/tlc_cuda.h")
  list(GET pair 0 name)
  list(GET pair 1 file)
  if(EXISTS ${file})
    tlc_read_header(${file} content)
  else()
    set(content "")
  endif()
  string(APPEND out "static const char ${name}[] = R\"TLCEMU(${content})TLCEMU\";\n")
endforeach()
file(WRITE ${OUTPUT}.tmp "${out}")
file(COPY_FILE ${OUTPUT}.tmp ${OUTPUT} ONLY_IF_DIFFERENT)
