// The AMD GPU architectures the HIP backend generates code for, and how
// each is compiled on this machine:
//   gfx90a (CDNA2: MI210, MI250, MI250X) by hiprtc, loaded at run time;
//   gfx942 (CDNA3: MI300A, MI300X, MI325X) by clang with the AMDGPU target
//   (LLVM 19) and the ROCm device libraries: Debian's hiprtc (ROCm 5.2)
//   aborts on gfx94x (docs/hip-backend.md).
// Both run 64-lane wavefronts, have 64 KiB of LDS per workgroup and MFMA.
#pragma once

#include <string>
#include <vector>

#include "compiler/backends/cuda/cuda_options.h"

namespace tlc::hip {

enum class HipCompiler { Hiprtc, Clang };

struct HipArch {
  std::string name;     // "gfx942"
  std::string devices;  // "MI300A, MI300X, MI325X"
  HipCompiler compiler;
  unsigned elfMachine;  // EF_AMDGPU_MACH_* of the code object's e_flags
};

const std::vector<HipArch>& supportedHipArchs();
const HipArch* findHipArch(const std::string& name);
// "hip:gfx942" / "gfx942" -> the arch name; false when `target` does not
// name an AMD architecture at all (not "hip:..." nor "gfx...").
bool parseHipTarget(const std::string& target, std::string* arch);
// The emitter's options for `arch`: the HIP dialect, no NVIDIA-only paths.
cuda::CudaOptions hipOptions(const std::string& arch);

}  // namespace tlc::hip
