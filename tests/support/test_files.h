// The data files of a data-driven test: the files of one directory with a
// given extension, in name order, with their contents.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace tlc::testing {

struct TestFile {
  std::filesystem::path path;
  std::string name;  // the file name, for messages
  std::string text;
};

// Every file of `dir` whose name ends in `extension` (".tir"), sorted by name.
std::vector<TestFile> readTestFiles(const std::filesystem::path& dir, const std::string& extension);

}  // namespace tlc::testing
