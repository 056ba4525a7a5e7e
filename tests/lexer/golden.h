// Golden-file helpers for the front-end tests.
//
// A golden test runs a phase over every `<name>.tl` in a directory and
// compares the produced text with `<name>.<ext>` next to it. On a mismatch
// the test fails and prints a line diff (`-` expected, `+` actual). Setting
// TLC_UPDATE_GOLDEN=1 in the environment rewrites the expected files instead
// (review the change with `git diff` before committing it).
#pragma once

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/support/diagnostics.h"
#include "compiler/support/source.h"

namespace tlc::testing {

inline std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::vector<std::string> splitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::string cur;
  for (char c : text) {
    if (c == '\n') {
      lines.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) lines.push_back(cur);
  return lines;
}

// A line diff by longest common subsequence (golden files are small).
inline std::string lineDiff(const std::string& expected, const std::string& actual) {
  std::vector<std::string> a = splitLines(expected), b = splitLines(actual);
  size_t n = a.size(), m = b.size();
  std::vector<std::vector<uint32_t>> lcs(n + 1, std::vector<uint32_t>(m + 1, 0));
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  std::string out;
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      ++i, ++j;
    } else if (j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j])) {
      out += "+" + b[j++] + "\n";
    } else {
      out += "-" + a[i++] + "\n";
    }
  }
  return out;
}

inline bool updateGolden() {
  const char* v = std::getenv("TLC_UPDATE_GOLDEN");
  return v && std::string(v) == "1";
}

// Compares `actual` with the golden file; returns the diff ("" when equal).
inline std::string compareGolden(const std::filesystem::path& goldenPath, const std::string& actual) {
  if (updateGolden()) {
    std::ofstream(goldenPath, std::ios::binary) << actual;
    return "";
  }
  if (!std::filesystem::exists(goldenPath))
    return "missing golden file " + goldenPath.string() + " (run with TLC_UPDATE_GOLDEN=1 to create it)\n";
  std::string expected = readFile(goldenPath);
  if (expected == actual) return "";
  return "golden mismatch for " + goldenPath.string() + " (-expected +actual):\n" + lineDiff(expected, actual);
}

// The `.tl` inputs of a golden directory, sorted by name.
inline std::vector<std::filesystem::path> goldenInputs(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> inputs;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == ".tl") inputs.push_back(entry.path());
  std::sort(inputs.begin(), inputs.end());
  return inputs;
}

// A source buffer registered under its base name, so dumps and rendered
// diagnostics do not depend on where the checkout lives.
inline uint32_t addInput(SourceManager& sm, const std::filesystem::path& path) {
  return sm.addBuffer(path.filename().string(), readFile(path));
}

}  // namespace tlc::testing
