# Writes the headers HIP kernels are compiled with as C++ raw string
# literals: the HIP shim, the CUDA helpers it wraps (their parts inlined), the
# narrow-float encoders.
include(${CMAKE_CURRENT_LIST_DIR}/../../../cmake/TlcHeaderParts.cmake)
set(out "// Generated from runtime/hip/tlc_hip.h, runtime/cuda/tlc_cuda.h and runtime/cuda_emu/emu_float.h.\n")
foreach(pair "kTlcHipShim;${SRC}/runtime/hip/tlc_hip.h" "kTlcCudaHelpers;${SRC}/runtime/cuda/tlc_cuda.h"
             "kEmuFloat;${SRC}/runtime/cuda_emu/emu_float.h")
  list(GET pair 0 name)
  list(GET pair 1 file)
  tlc_read_header(${file} content)
  string(APPEND out "static const char ${name}[] = R\"TLCHIP(${content})TLCHIP\";\n")
endforeach()
file(WRITE ${OUTPUT}.tmp "${out}")
file(COPY_FILE ${OUTPUT}.tmp ${OUTPUT} ONLY_IF_DIFFERENT)
