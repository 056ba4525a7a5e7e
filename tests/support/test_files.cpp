#include "tests/support/test_files.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace tlc::testing {

std::vector<TestFile> readTestFiles(const std::filesystem::path& dir, const std::string& extension) {
  std::vector<TestFile> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != extension) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    files.push_back({entry.path(), entry.path().filename().string(), text.str()});
  }
  std::sort(files.begin(), files.end(), [](const TestFile& a, const TestFile& b) { return a.name < b.name; });
  return files;
}

}  // namespace tlc::testing
