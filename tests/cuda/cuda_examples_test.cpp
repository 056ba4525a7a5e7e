// Every example compiles to CUDA C and through NVRTC for sm_80 and sm_90a;
// the gemm's PTX uses the tensor-core path (mma.sync, ldmatrix, cp.async).
#include <doctest/doctest.h>

#include <map>

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

// The gemm's Pipelined loop is [copy, copy, gemm]: it takes the prefetching
// mainloop, whose operand fragments are double-buffered in registers and
// whose single barrier per stage sits before the last k-step's mma.
TEST_CASE("the gemm example's pipelined loop prefetches operand fragments") {
  std::string errors;
  auto cu = generate(std::string(TLC_SOURCE_DIR) + "/examples/gemm/gemm.tl", "sm_80", &errors);
  INFO(errors);
  REQUIRE(cu);
  const std::string& src = cu->source;
  INFO(src);
  CHECK(src.find("unsigned a_frag[2][4][4];") != std::string::npos);
  CHECK(src.find("unsigned b_frag[2][8][2];") != std::string::npos);
  size_t loop = src.find("for (int iter = 0;");
  REQUIRE(loop != std::string::npos);
  size_t loopEnd = src.find("tlc::cp_async_wait<0>();", loop);
  REQUIRE(loopEnd != std::string::npos);
  std::string body = src.substr(loop, loopEnd - loop);
  size_t barriers = 0;
  for (size_t p = body.find("__syncthreads();"); p != std::string::npos; p = body.find("__syncthreads();", p + 1))
    ++barriers;
  CHECK(barriers == 1);
  // The barrier (after the next iteration's wait) precedes the next stage's
  // first fragment load and the last k-step's mma.
  size_t sync = body.find("__syncthreads();");
  CHECK(body.rfind("tlc::cp_async_wait<1>();", sync) != std::string::npos);
  CHECK(body.find("stage_next", sync) != std::string::npos);
  CHECK(body.find("tlc::mma_m16n8k16_f16", body.find("stage_next", sync)) != std::string::npos);
}

// The low-bit, fp8 and convolution examples multiply on the tensor cores:
// the low-bit and convolution gemms (float16 operands) on mma.sync k16 on
// sm_80 and wgmma k16 on sm_90a (their default tiles give each warp 16
// accumulator rows), the fp8 gemms on the float8 instructions (mma.sync k32
// on sm_89, wgmma k32 on sm_90a; sm_80 has none; the low-bit gemms' dequantized
// weights are wgmma's A operand from registers); the dequantizing gemms
// read their nibbles through the helpers of tlc_cuda.h (the exponent-bias
// conversions to float16).
TEST_CASE("the low-bit, fp8 and convolution examples run their gemms on the tensor cores") {
  struct Expect {
    const char* file;
    const char* helper;  // a device helper the kernel calls, or null
    std::map<std::string, const char*> mma;  // per arch, the tensor-core helper (null: none)
  };
  const std::map<std::string, const char*> f16 = {{"sm_80", "tlc::mma_m16n8k16_f16"},
                                                  {"sm_90a", "tlc::wgmma_m64n128k16"}};
  // The dequantized weights are the A operand from registers (wgmma's RS form).
  const std::map<std::string, const char*> f16RegisterA = {{"sm_80", "tlc::mma_m16n8k16_f16"},
                                                           {"sm_90a", "tlc::wgmma_rs_m64n128k16"}};
  const std::map<std::string, const char*> f8 = {
      {"sm_80", nullptr}, {"sm_89", "tlc::mma_m16n8k32_e4m3("}, {"sm_90a", "tlc::wgmma_f8_m64n128k32<0>("}};
  for (const Expect& e : {Expect{"dequantize_gemm/w4a16_gemm.tl", "tlc::unpack_uint4<__half>(", f16RegisterA},
                          Expect{"dequantize_gemm/fp4_gemm.tl", "tlc::unpack_fp4<float>(", f16RegisterA},
                          Expect{"gemm_fp8/gemm_fp8.tl", nullptr, f8},
                          Expect{"gemm_fp8/gemm_fp8_blockscale.tl", nullptr, f8},
                          Expect{"convolution/conv2d_nhwc.tl", nullptr, f16}}) {
    for (auto [arch, mma] : e.mma) {
      CAPTURE(e.file);
      CAPTURE(arch);
      std::string errors;
      auto cu = generate(std::string(TLC_SOURCE_DIR) + "/examples/" + e.file, arch, &errors);
      INFO(errors);
      REQUIRE(cu);
      const std::string& src = cu->source;
      if (mma) CHECK(src.find(mma) != std::string::npos);
      else CHECK(src.find("tlc::mma_") == std::string::npos);
      if (e.helper) CHECK(src.find(e.helper) != std::string::npos);
    }
  }
}
