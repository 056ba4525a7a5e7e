// Kernels with layout annotations (tests/cuda_emu_examples/annotated_layouts/,
// run under the emulator there) compile through NVRTC for sm_80 and sm_90a;
// a gemm whose shared operands are annotated still takes the tensor-core
// path, with ldmatrix and cp.async addressing each operand through its
// annotated layout.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/backends/cuda/nvrtc.h"
#include "tests/cuda/emit_util.h"

using namespace tlc;
namespace fs = std::filesystem;

namespace {

std::string annotatedSource(const std::string& name) {
  std::ifstream in(fs::path(TLC_SOURCE_DIR) / "tests" / "cuda_emu_examples" / "annotated_layouts" / name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The generated lines that contain every one of `parts`.
std::vector<std::string> linesWith(const std::string& source, const std::vector<std::string>& parts) {
  std::vector<std::string> out;
  std::istringstream in(source);
  for (std::string line; std::getline(in, line);)
    if (std::all_of(parts.begin(), parts.end(), [&](const std::string& p) { return line.find(p) != std::string::npos; }))
      out.push_back(line);
  return out;
}

}  // namespace

TEST_CASE("annotated kernels compile through NVRTC for sm_80 and sm_90a") {
  std::string why;
  if (!cuda::nvrtcAvailable(&why)) {
    MESSAGE("skipped: " << why);
    return;
  }
  for (const char* name : {"gemm_operands.tl", "row_groups.tl", "shared_fallback.tl"}) {
    for (std::string arch : {"sm_80", "sm_90a"}) {
      std::string source = test::emitCudaFor(annotatedSource(name), arch);
      CAPTURE(std::string(name));
      CAPTURE(arch);
      auto result = cuda::compileWithNvrtc(source, arch, false);
      INFO(result.error);
      CHECK(result.ok);
      CHECK(result.binary.size() > 0);
    }
  }
}

TEST_CASE("a gemm with a row-major and a swizzled annotated operand keeps ldmatrix, cp.async and mma.sync") {
  std::string all = test::emitCudaFor(annotatedSource("gemm_operands.tl"));
  std::string source = all.substr(0, all.find("__global__", all.find("__global__") + 1));  // the first kernel
  INFO(source);
  // A_s is row-major: its ldmatrix row addresses and cp.async destinations
  // have no XOR; B_s and the staging tile C_s are swizzled.
  auto aLoads = linesWith(source, {"ldmatrix", "&A_s["});
  auto bLoads = linesWith(source, {"ldmatrix", "&B_s["});
  REQUIRE(!aLoads.empty());
  REQUIRE(!bLoads.empty());
  for (auto& l : aLoads) CHECK(l.find('^') == std::string::npos);
  for (auto& l : bLoads) CHECK(l.find('^') != std::string::npos);
  CHECK(!linesWith(source, {"tlc::cp_async16"}).empty());
  CHECK(!linesWith(source, {"* dst_base = A_s"}).empty());
  CHECK(!linesWith(source, {"C_s[", "^"}).empty());
  std::string why;
  if (!cuda::nvrtcAvailable(&why)) {
    MESSAGE("PTX not checked: " << why);
    return;
  }
  auto ptx = cuda::compileWithNvrtc(all, "sm_80", true);
  INFO(ptx.error);
  REQUIRE(ptx.ok);
  CHECK(ptx.binary.find("mma.sync.aligned.m16n8k16") != std::string::npos);
  CHECK(ptx.binary.find("ldmatrix.sync.aligned") != std::string::npos);
  CHECK(ptx.binary.find("cp.async") != std::string::npos);
}
