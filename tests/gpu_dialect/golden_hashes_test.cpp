// The CUDA C of every kernel file under examples/ must stay byte-identical
// while the GPU emitter is shared with other dialects (gpu_dialect.h): the
// SHA-256 of what `generateCuda` emits (without #line directives) for sm_80
// and sm_90a is compared with tests/gpu_dialect/cuda_golden_hashes.txt, one
// `<example path> <arch> <hash>` line each. After an intended change of the
// CUDA output, regenerate the file with
//   TLC_UPDATE_GOLDEN=1 build/tests/tlc_gpu_dialect_tests -tc="*byte-identical*"
// and review which kernels changed.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "compiler/backends/cuda/cuda_codegen.h"
#include "compiler/sema/frontend.h"
#include "compiler/support/sha256.h"
#include "tests/gpu_dialect/example_kernels.h"

using namespace tlc;
namespace fs = std::filesystem;

namespace {

std::string emittedCuda(const std::string& path, const std::string& arch) {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  std::string error;
  uint32_t file = sm.addFile(std::string(TLC_SOURCE_DIR) + "/" + path, error);
  REQUIRE_MESSAGE(file != 0, error);
  // Compiled for the target, as `tlc build` does: defaults may follow it (`T.target`).
  auto module = compileSource(sm, diags, file, {}, nullptr, "", "cuda:" + arch);
  REQUIRE_MESSAGE(module, diags.renderAll());
  cuda::CudaOptions options;
  options.arch = arch;
  options.lineDirectives = false;
  auto cu = cuda::generateCuda(*module, options, diags);
  REQUIRE_MESSAGE(cu, diags.renderAll());
  return cu->source;
}

}  // namespace

TEST_CASE("the CUDA C of every example is byte-identical to the recorded hashes") {
  fs::path table = fs::path(TLC_SOURCE_DIR) / "tests" / "gpu_dialect" / "cuda_golden_hashes.txt";
  const bool update = std::getenv("TLC_UPDATE_GOLDEN") != nullptr;
  std::map<std::string, std::string> recorded;
  {
    std::ifstream in(table);
    std::string path, arch, hash;
    while (in >> path >> arch >> hash) recorded[path + " " + arch] = hash;
  }
  std::ostringstream fresh;
  std::vector<std::string> kernels = test::exampleKernels();
  REQUIRE(kernels.size() >= 10);
  for (const std::string& path : kernels)
    for (const char* arch : {"sm_80", "sm_90a"}) {
      std::string key = path + " " + arch;
      std::string hash = sha256Hex(emittedCuda(path, arch));
      fresh << key << " " << hash << "\n";
      if (update) continue;
      INFO("example: " << key);
      REQUIRE_MESSAGE(recorded.count(key), "no recorded hash (run with TLC_UPDATE_GOLDEN=1)");
      CHECK_MESSAGE(recorded[key] == hash, "the CUDA C changed");
    }
  if (update) std::ofstream(table, std::ios::binary) << fresh.str();
}
