#include "compiler/backends/hip/hip_archs.h"

#include "compiler/backends/cuda/gpu_dialect.h"

namespace tlc::hip {

const std::vector<HipArch>& supportedHipArchs() {
  static const std::vector<HipArch> archs = {
      {"gfx90a", "MI210, MI250, MI250X", HipCompiler::Hiprtc, 0x3f},
      {"gfx942", "MI300A, MI300X, MI325X", HipCompiler::Clang, 0x4c},
  };
  return archs;
}

const HipArch* findHipArch(const std::string& name) {
  for (const HipArch& a : supportedHipArchs())
    if (a.name == name) return &a;
  return nullptr;
}

bool parseHipTarget(const std::string& target, std::string* arch) {
  if (target.rfind("hip:", 0) == 0) {
    *arch = target.substr(4);
    return true;
  }
  if (target.rfind("gfx", 0) == 0) {
    *arch = target;
    return true;
  }
  return false;
}

cuda::CudaOptions hipOptions(const std::string& arch) {
  cuda::CudaOptions o;
  o.language = cuda::GpuLanguage::Hip;
  o.arch = arch;
  const cuda::GpuDialect& d = cuda::gpuDialect(o.language);
  // Tensor-core gemms: float16 / bfloat16 / float32 / int8 ones, and float8
  // on gfx942, run on MFMA with its accumulator layout (cuda_mfma.cpp); the
  // others keep the mma.sync register layout, filled by multiply-adds
  // (cuda_mma_fma.cpp).
  o.tensorCores = true;
  o.asyncCopy = d.asyncCopies;
  o.warpSpecialize = false;
  o.persistent = false;
  o.maxSharedBytes = (int)d.maxSharedBytes;
  return o;
}

}  // namespace tlc::hip
