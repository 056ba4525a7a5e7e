// The CUDA architectures the backend generates code for. Its tensor-core
// (mma.sync, ldmatrix) and asynchronous-copy (cp.async) code needs sm_80 or
// newer; architectures newer than the list are refused until tested (each
// one listed compiles the examples with NVRTC; sm_90 and sm_90a run the GPU
// checks of scripts/gpu/).
#pragma once

#include <string>
#include <vector>

namespace tlc::cuda {

const std::vector<std::string>& supportedCudaArchs();
bool isSupportedCudaArch(const std::string& arch);
// The compute capability of "sm_XY[a]" as XY (0 when malformed).
int archVersion(const std::string& arch);

}  // namespace tlc::cuda
