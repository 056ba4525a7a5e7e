// The kernels of tests/support/copy_regions.tl and what they must write,
// computed here with plain loops over the input tensors (not by the
// interpreter), for the targets' tests: run a kernel with
// RunSettings::saveDir = dir, then checkCopyRegionOutputs(kernel, dir).
#pragma once

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "compiler/interp/npy_io.h"

namespace tlc::test {

struct CopyRegionCase {
  std::string kernel;
  std::map<std::string, int64_t> dims;
};

inline std::string copyRegionsFile() { return std::string(TLC_SOURCE_DIR) + "/tests/support/copy_regions.tl"; }

// Sizes the tiles (16 and 8 elements) do and do not divide.
inline std::vector<CopyRegionCase> copyRegionCases() {
  return {
      {"heads", {{"B", 2}, {"S", 37}, {"H", 3}}},
      {"heads", {{"B", 1}, {"S", 32}, {"H", 2}}},
      {"rows3d", {{"B", 3}, {"M", 7}, {"N", 13}}},
      {"rows3d", {{"B", 2}, {"M", 6}, {"N", 16}}},
      {"column", {{"M", 37}, {"N", 5}}},
      {"column", {{"M", 16}, {"N", 4}}},
      {"slices", {{"M", 21}, {"N", 12}}},
      {"slices", {{"M", 32}, {"N", 10}}},
      {"tail_halves", {{"M", 7}, {"N", 67}}},
      {"tail_halves", {{"M", 6}, {"N", 1001}}},
      {"tail_halves", {{"M", 4}, {"N", 72}}},
      {"tail_bytes", {{"M", 6}, {"N", 83}}},
      {"tail_bytes", {{"M", 3}, {"N", 64}}},
      {"tail_words", {{"M", 6}, {"N", 70}}},
      {"tail_quads", {{"M", 24}, {"N", 13}}},
      {"tail_pairs", {{"M", 16}, {"N", 9}}},
  };
}

inline interp::HostTensor loadSaved(const std::string& dir, const std::string& name) {
  std::string error;
  auto t = interp::readNpy(dir + "/" + name + ".npy", &error);
  REQUIRE_MESSAGE(t, error);
  return *t;
}

// Every element of the output against the reference.
inline void checkCopyRegionOutputs(const CopyRegionCase& c, const std::string& dir) {
  auto dim = [&](const char* n) { return c.dims.at(n); };
  int64_t wrong = 0, checked = 0;
  auto expect = [&](double got, double want) {
    ++checked;
    if (got != want) ++wrong;
  };
  if (c.kernel == "heads") {
    const int64_t B = dim("B"), S = dim("S"), H = dim("H"), D = 32;
    interp::HostTensor K = loadSaved(dir, "K"), O = loadSaved(dir, "O");
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t s = 0; s < S; ++s)
          for (int64_t d = 0; d < D; ++d)
            expect(O.get(((b * H + h) * S + s) * D + d), K.get(((b * S + s) * H + h) * D + d));
  } else if (c.kernel == "rows3d") {
    const int64_t B = dim("B"), M = dim("M"), N = dim("N");
    interp::HostTensor X = loadSaved(dir, "X"), R = loadSaved(dir, "R");
    for (int64_t b = 0; b < B; ++b)
      for (int64_t n = 0; n < N; ++n) expect(R.get(b * N + n), X.get((b * M + 5) * N + n));
  } else if (c.kernel == "column") {
    const int64_t M = dim("M"), N = dim("N");
    interp::HostTensor A = loadSaved(dir, "A"), C = loadSaved(dir, "C");
    for (int64_t m = 0; m < M; ++m) expect(C.get(m), A.get(m * N + 3));
  } else if (c.kernel.rfind("tail_", 0) == 0) {
    const int64_t M = dim("M"), N = dim("N");
    const int64_t W = c.kernel == "tail_quads" ? 4 : c.kernel == "tail_pairs" ? 2 : 64;
    interp::HostTensor A = loadSaved(dir, "A"), O = loadSaved(dir, "O");
    for (int64_t m = 0; m < M; ++m)
      for (int64_t j = 0; j < W; ++j) expect(O.get(m * W + j), A.get(m * N + N - W + j));
  } else {
    REQUIRE(c.kernel == "slices");
    const int64_t M = dim("M"), N = dim("N");
    interp::HostTensor A = loadSaved(dir, "A"), O = loadSaved(dir, "O");
    for (int64_t m = 0; m < M; ++m)
      for (int64_t j = 0; j < 8; ++j) expect(O.get(m * 8 + j), A.get(m * N + 2 + j));
  }
  CHECK(checked > 0);
  CHECK_MESSAGE(wrong == 0, wrong << " of " << checked << " elements differ from the reference");
}

}  // namespace tlc::test
