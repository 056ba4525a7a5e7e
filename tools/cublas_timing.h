// cuBLAS as the reference of tlc_cuda_runner's gemm benchmarks: the library
// is loaded at run time (no link dependency), and each gemm is timed as the
// runner times kernels, for about 0.5 s of launches at sustained clocks.
#pragma once

#include <cstdint>
#include <string>

#include "compiler/backends/gpu_driver.h"

namespace tlc::tools {

// The element type cuBLAS is timed with: that of the gemm's first tensor.
enum class GemmKind { F16, BF16, I8, F8 };
const char* gemmKindName(GemmKind k);

struct CublasTiming {
  double ms = -1;             // the median of the timed runs
  std::string configuration;  // what was timed, for the report
};

// Times cuBLAS on row-major C = A @ B (`batch` independent products):
// - F16 / BF16: 16-bit inputs, float32 accumulation into 16-bit C
//   (cublasGemmStridedBatchedEx);
// - I8: int8 inputs with B given as [N, K], int32 accumulation into int32 C
//   (its int8 tensor-core form);
// - F8: float8 e4m3 inputs with B given as [N, K] and float32 accumulation
//   into bfloat16 C through cublasLt (the only float8 layout it has), once
//   with its default accumulation and once with fast accumulation (no
//   periodic promotion, as tlc's kernels accumulate); the faster counts.
// ms < 0 with *why on failure.
CublasTiming timeCublas(backend::GpuDriver* drv, int64_t M, int64_t N, int64_t K, int64_t batch, GemmKind kind,
                        std::string* why);

}  // namespace tlc::tools
