#include "compiler/backends/cuda/cuda_archs.h"

#include <algorithm>

namespace tlc::cuda {

const std::vector<std::string>& supportedCudaArchs() {
  static const std::vector<std::string> archs = {"sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a"};
  return archs;
}

bool isSupportedCudaArch(const std::string& arch) {
  const std::vector<std::string>& archs = supportedCudaArchs();
  return std::find(archs.begin(), archs.end(), arch) != archs.end();
}

}  // namespace tlc::cuda
