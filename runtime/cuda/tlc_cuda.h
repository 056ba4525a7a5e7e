// Device helpers for CUDA C emitted by tlc. Embedded into the tlc binary and
// handed to NVRTC as an in-memory header, so no files are needed on disk.
// Everything lives in namespace tlc; only CUDA's own fp16/bf16 headers are used.
#pragma once
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>

namespace tlc {

#include "tlc_cuda_core.h"

#include "tlc_cuda_memory.h"

#include "tlc_cuda_mma.h"

#include "tlc_cuda_hopper.h"

}  // namespace tlc
