// Options of the CUDA target.
#pragma once

#include <string>

#include "compiler/backends/cuda/gpu_dialect.h"

namespace tlc::cuda {

struct CudaOptions {
  // The emitter's language: CUDA C, or HIP C for an AMD arch (hip_archs.h, hipOptions).
  GpuLanguage language = GpuLanguage::Cuda;
  const GpuDialect& dialect() const { return gpuDialect(language); }
  std::string arch = "sm_90";  // one of supportedCudaArchs() (cuda_archs.h)
  bool tensorCores = true;     // ldmatrix + mma.sync for eligible gemms
  bool asyncCopy = true;       // cp.async for global->shared copies and pipelining
  // With asyncCopy: copies into shared memory outside pipelines issued as
  // cp.async groups (cuda-async-copies, cuda_async_copies.h).
  bool asyncStandaloneCopies = true;
  bool swizzle = true;         // swizzled layouts for gemm operands in shared memory
  // sm_90a: warp-specialized TMA + wgmma mainloops for eligible pipelined gemms (cuda_hopper.h)
  bool warpSpecialize = true;
  // sm_90a: tile copies by TMA. Off in the version of a kernel for tensors
  // TMA cannot address (rows that are not whole 16-byte multiples): no
  // warp-specialized loops, and gemm mainloops run as wgmma in place on the
  // tiles the block's threads copy (cuda_hopper.h, WgmmaGemm).
  bool tma = true;
  // sm_90a: a gemm operand that TMA cannot address where it lies is copied
  // by the launch into rows padded to 16 bytes and mapped there (tensor_map.h,
  // TensorMapArg::stage) instead of running the version without TMA.
  bool stageTma = true;
  // sm_90a: kernels whose mainloop is a warp-specialized gemm loop run
  // persistently: a 1-D grid of at most blocks-per-SM x SMs blocks, each
  // looping over the kernel's tiles (its logical grid), so that the producer
  // loads the next tile while the consumers run the last one's epilogue.
  // On by default (faster at every size measured, bench/RESULTS.md).
  bool persistent = true;
  int maxSharedBytes = 227 * 1024;
  bool lineDirectives = true;  // #line directives naming the .tl line of each generated line
  bool printAfterAll = false;  // print the generated CUDA to stderr
  bool timePasses = false;     // print code generation and NVRTC times
  bool warnSpills = false;     // report ptxas's register spills (cuda-register-spills)
  int benchRuns = 0;           // timed runs with --bench (0: as many as fit in ~0.5 s, at least 5)
};

// Parses "cuda:sm_90" / "sm_90" / "cuda" into an arch; false if malformed.
bool parseCudaTarget(const std::string& target, std::string* arch);

}  // namespace tlc::cuda
