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

int archVersion(const std::string& arch) {
  if (arch.size() < 5 || arch.compare(0, 3, "sm_") != 0) return 0;
  int v = 0;
  for (size_t i = 3; i < arch.size() && arch[i] >= '0' && arch[i] <= '9'; ++i) v = v * 10 + (arch[i] - '0');
  return v;
}

}  // namespace tlc::cuda
