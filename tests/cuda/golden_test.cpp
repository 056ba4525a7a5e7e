// Golden tests of the emitted CUDA C: each tests/cuda/golden/<name>.tl is
// compiled for sm_80 and its CUDA C (as `tlc emit --stage=cuda` prints it,
// without #line directives) must equal tests/cuda/golden/<name>.cu. After an
// intended change of the emitter, regenerate the files with
//   TLC_UPDATE_GOLDEN=1 build/tests/tlc_cuda_tests -tc="*golden*"
// and review the diff.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/backends/cuda/cuda_codegen.h"
#include "compiler/sema/frontend.h"

using namespace tlc;
namespace fs = std::filesystem;

namespace {

std::string readText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The first differing line of two texts, for the failure message.
std::string firstDifference(const std::string& want, const std::string& got) {
  std::istringstream a(want), b(got);
  std::string la, lb;
  for (int line = 1;; ++line) {
    bool ea = !std::getline(a, la), eb = !std::getline(b, lb);
    if (ea && eb) return "";
    if (ea || eb || la != lb)
      return "line " + std::to_string(line) + ":\n  expected: " + (ea ? "<end>" : la) + "\n  emitted:  " + (eb ? "<end>" : lb);
  }
}

}  // namespace

TEST_CASE("the emitted CUDA C of the golden kernels is unchanged") {
  fs::path dir = fs::path(TLC_SOURCE_DIR) / "tests" / "cuda" / "golden";
  std::vector<fs::path> sources;
  for (auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".tl") sources.push_back(e.path());
  std::sort(sources.begin(), sources.end());
  REQUIRE(!sources.empty());
  bool update = std::getenv("TLC_UPDATE_GOLDEN") != nullptr;
  for (const fs::path& tl : sources) {
    INFO("golden kernel: " << tl.filename().string());
    SourceManager sm;
    DiagnosticEngine diags(sm);
    uint32_t file = sm.addBuffer(tl.filename().string(), readText(tl));
    auto module = compileSource(sm, diags, file, {});
    REQUIRE_MESSAGE(module, diags.renderAll());
    cuda::CudaOptions options;
    options.arch = "sm_80";
    options.lineDirectives = false;
    auto cu = cuda::generateCuda(*module, options, diags);
    REQUIRE_MESSAGE(cu, diags.renderAll());
    fs::path expected = fs::path(tl).replace_extension(".cu");
    if (update) {
      std::ofstream(expected, std::ios::binary) << cu->source;
      continue;
    }
    REQUIRE_MESSAGE(fs::exists(expected), "missing " << expected.string() << " (run with TLC_UPDATE_GOLDEN=1)");
    std::string want = readText(expected);
    CHECK_MESSAGE(want == cu->source, "the CUDA C differs from " << expected.filename().string() << " at "
                                                                   << firstDifference(want, cu->source));
  }
}
