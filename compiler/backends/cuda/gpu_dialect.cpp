#include "compiler/backends/cuda/gpu_dialect.h"

namespace tlc::cuda {

const GpuDialect& gpuDialect(GpuLanguage language) {
  static const GpuDialect cuda{GpuLanguage::Cuda, "CUDA", "cuda", "tlc_cuda.h", 32, true, true, false, true,
                               227 * 1024, "__half", "__nv_bfloat16", "__nv_fp8_e4m3", "__nv_fp8_e5m2"};
  // CDNA2/3 have 64 KiB of LDS per workgroup.
  static const GpuDialect hip{GpuLanguage::Hip, "HIP", "hip", "tlc_hip.h", 64, false, false, true, false,
                              64 * 1024, "__half", "tlc_bfloat16", "tlc_fp8_e4m3", "tlc_fp8_e5m2"};
  return language == GpuLanguage::Hip ? hip : cuda;
}

int64_t shuffleLanes(const GpuDialect& dialect, int64_t threads) {
  return threads % dialect.warpSize == 0 ? dialect.warpSize : 32;
}

const char* narrowTypeName(const GpuDialect& d, DType t) {
  switch (t) {
    case DType::Float16: return d.float16;
    case DType::BFloat16: return d.bfloat16;
    case DType::Float8E4M3: return d.float8e4m3;
    case DType::Float8E5M2: return d.float8e5m2;
    default: return nullptr;
  }
}

}  // namespace tlc::cuda
