// Every example compiles to CUDA C and through NVRTC for sm_80 and sm_90a;
// the gemm's PTX uses the tensor-core path (mma.sync, ldmatrix, cp.async).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/backends/cuda/cuda_codegen.h"
#include "compiler/backends/cuda/nvrtc.h"
#include "compiler/sema/frontend.h"

using namespace tlc;

namespace {

std::vector<std::string> exampleFiles() {
  std::vector<std::string> files;
  for (auto& e : std::filesystem::recursive_directory_iterator(std::string(TLC_SOURCE_DIR) + "/examples"))
    if (e.path().extension() == ".tl") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

std::optional<cuda::CudaModule> generate(const std::string& path, const std::string& arch, std::string* errors) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  uint32_t file = sources.addBuffer(path, text.str());
  auto module = compileSource(sources, diags, file, {});
  if (!module) {
    *errors = diags.renderAll();
    return std::nullopt;
  }
  cuda::CudaOptions options;
  options.arch = arch;
  auto cu = cuda::generateCuda(*module, options, diags);
  if (!cu) *errors = diags.renderAll();
  return cu;
}

}  // namespace

TEST_CASE("every example compiles through NVRTC for sm_80 and sm_90a") {
  std::string why;
  if (!cuda::nvrtcAvailable(&why)) {
    MESSAGE("skipped: " << why);
    return;
  }
  auto files = exampleFiles();
  REQUIRE(!files.empty());
  for (auto& path : files) {
    for (std::string arch : {"sm_80", "sm_90a"}) {
      CAPTURE(path);
      CAPTURE(arch);
      std::string errors;
      auto cu = generate(path, arch, &errors);
      INFO(errors);
      REQUIRE(cu);
      auto result = cuda::compileWithNvrtc(cu->source, arch, false);
      INFO(result.error);
      INFO(cu->source);
      CHECK(result.ok);
      CHECK(result.binary.size() > 0);
    }
  }
}

TEST_CASE("the gemm example uses cp.async, ldmatrix and mma.sync") {
  std::string why;
  if (!cuda::nvrtcAvailable(&why)) {
    MESSAGE("skipped: " << why);
    return;
  }
  std::string errors;
  auto cu = generate(std::string(TLC_SOURCE_DIR) + "/examples/gemm/gemm.tl", "sm_80", &errors);
  INFO(errors);
  REQUIRE(cu);
  auto ptx = cuda::compileWithNvrtc(cu->source, "sm_80", true);
  INFO(ptx.error);
  REQUIRE(ptx.ok);
  CHECK(ptx.binary.find("mma.sync.aligned.m16n8k16") != std::string::npos);
  CHECK(ptx.binary.find("ldmatrix.sync.aligned") != std::string::npos);
  CHECK(ptx.binary.find("cp.async") != std::string::npos);
}
