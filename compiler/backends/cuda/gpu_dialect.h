// The GPU C dialects of the one kernel emitter (cuda_kernel_emitter.h):
// CUDA C for NVRTC and HIP C for AMD GPUs (compiler/backends/hip/).
//
// The emitter lowers a kernel the same way for both; what the languages
// spell or provide differently is data in this table, which the emitter and
// the code generator ask instead of testing the language:
//  - the helper header the source includes (runtime/cuda/tlc_cuda.h, or
//    runtime/hip/tlc_hip.h, which gives the same `tlc::` helpers HIP meaning);
//  - the spelling of the narrow element types;
//  - the hardware warp size (32 lanes; 64 per CDNA wavefront). The emitter's
//    warp-level code (row and column reductions, the lane groups of
//    reductions in shared memory) combines up to shuffleLanes() lanes with
//    xor shuffles: a whole wavefront on CDNA, one more step (distance 32)
//    than on a CUDA warp; MFMA gemms partition their tiles over whole
//    64-lane wavefronts (cuda_mfma.cpp), whose accumulator rows each lie
//    within one half;
//  - the instructions a target may use: mma.sync / ldmatrix, cp.async and
//    wgmma / TMA exist only on NVIDIA GPUs; MFMA only on CDNA;
//  - the shared memory (LDS) of one block.
// Target-specific choices (which CUDA or AMD architecture) stay in
// CudaOptions::arch; this table is per language.
#pragma once

#include <cstdint>

#include "compiler/ir/dtype.h"

namespace tlc::cuda {

enum class GpuLanguage { Cuda, Hip };

struct GpuDialect {
  GpuLanguage language;
  const char* name;          // "CUDA", "HIP": in messages
  const char* targetPrefix;  // "cuda", "hip": of target names
  const char* helperHeader;  // the embedded header every kernel source includes
  int warpSize;              // lanes of the hardware's warp or wavefront
  bool nvidiaTensorCores;    // mma.sync, ldmatrix, wgmma
  bool asyncCopies;          // cp.async and TMA
  bool mfma;                 // CDNA matrix cores (v_mfma_*)
  bool halfPairs;            // arithmetic on pairs of float16 / bfloat16 (__half2, __nv_bfloat162)
  int64_t maxSharedBytes;    // shared memory (LDS) one block may use
  // C spellings of the narrow element types.
  const char* float16;
  const char* bfloat16;
  const char* float8e4m3;
  const char* float8e5m2;
};

const GpuDialect& gpuDialect(GpuLanguage language);
// The lanes one group of xor shuffles may span in a block of `threads`
// threads: the dialect's warp when the block is whole warps of it (64 on
// CDNA), else 32.
int64_t shuffleLanes(const GpuDialect& dialect, int64_t threads);
// The spelling of `t` when it is one of the narrow float types; nullptr otherwise.
const char* narrowTypeName(const GpuDialect& dialect, DType t);

}  // namespace tlc::cuda
