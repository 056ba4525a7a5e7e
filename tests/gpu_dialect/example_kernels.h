// Test helper: every kernel file under examples/, as paths relative to the
// source tree, in order.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace tlc::test {

inline std::vector<std::string> exampleKernels() {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  fs::path root(TLC_SOURCE_DIR);
  for (auto& e : fs::recursive_directory_iterator(root / "examples"))
    if (e.path().extension() == ".tl") out.push_back(fs::relative(e.path(), root).string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace tlc::test
