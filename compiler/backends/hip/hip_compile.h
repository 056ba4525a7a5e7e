// HIP C -> AMD GPU code object (.hsaco), and its disassembly.
//
// tlc links neither ROCm nor LLVM's AMDGPU target; both compilers are found
// at run time, so tlc builds and runs on machines without them and says
// which one is missing:
//  - hiprtc (gfx90a), loaded with dlopen: $TLC_HIPRTC, then libhiprtc.so
//    {,.6,.5}, then libamdhip64.so{,.6,.5} (ROCm 5 ships hiprtc inside it),
//    then /opt/rocm/lib;
//  - clang with the AMDGPU target (gfx942): $TLC_HIP_CLANG, then clang-19,
//    clang-20, clang-18, clang on PATH and under /usr/lib/llvm-N/bin, in HIP
//    mode for the device only, linked with the ROCm device libraries
//    ($TLC_ROCM_DEVICE_LIBS, or Debian's /usr/lib/x86_64-linux-gnu/amdgcn/
//    bitcode, or /opt/rocm/amdgcn/bitcode). When the libraries lack the
//    arch's oclc_isa_version_N.bc (Debian's stop at gfx940), tlc writes one
//    (the constant __oclc_ISA_version = N) into a private copy of the
//    library directory under $TMPDIR.
// The source includes "tlc_hip.h", which hipHelperHeader() provides.
#pragma once

#include <string>

#include "compiler/backends/hip/hip_archs.h"

namespace tlc::hip {

struct HipBuildResult {
  bool ok = false;
  std::string error;   // why finding or running the compiler failed, with its log
  std::string binary;  // the code object (ELF for AMDGPU)
};

// Compiles `source` for `arch` with the compiler supportedHipArchs() names for it.
HipBuildResult compileHip(const std::string& source, const HipArch& arch);
// True when the compiler for `arch` can be found (tests skip otherwise).
bool hipCompilerAvailable(const HipArch& arch, std::string* why = nullptr);

// The AMDGPU disassembly of a code object (llvm-objdump -d --mcpu=ARCH:
// $TLC_LLVM_OBJDUMP, llvm-objdump-19, -20, -18, llvm-objdump); false and
// *error when no disassembler is found or it fails.
bool disassembleHsaco(const std::string& binary, const HipArch& arch, std::string* text, std::string* error);

// The architecture an AMDGPU code object was built for ("gfx942"), from its
// ELF header; empty when `binary` is not an AMDGPU ELF file.
std::string hsacoArch(const std::string& binary);

// The helper header HIP kernels include: runtime/hip/tlc_hip.h with the
// narrow-float encoders and runtime/cuda/tlc_cuda.h's helpers in place.
const std::string& hipHelperHeader();

}  // namespace tlc::hip
