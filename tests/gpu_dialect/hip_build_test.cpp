// The HIP dialect of the GPU emitter and the HIP build: target names, the
// HIP C of every example (no NVIDIA-only instruction, the HIP helper
// header), and every example compiled to a code object for gfx90a (hiprtc)
// and gfx942 (clang-19) whose ELF header names that arch. The builds skip,
// saying why, when the compiler is not installed (scripts/install-deps.sh).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "compiler/backends/cuda/cuda_codegen.h"
#include "compiler/backends/hip/hip_compile.h"
#include "compiler/sema/frontend.h"
#include "tests/gpu_dialect/example_kernels.h"

using namespace tlc;
namespace fs = std::filesystem;

namespace {

std::string emittedHip(const std::string& path, const std::string& arch, bool lineDirectives = false,
                       const std::vector<Define>& more = {}) {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  std::string error;
  uint32_t file = sm.addFile(std::string(TLC_SOURCE_DIR) + "/" + path, error);
  REQUIRE_MESSAGE(file != 0, error);
  // Compiled for the HIP target: the examples' defaults choose AMD tiles
  // with `T.target("hip")` where the CUDA ones do not fit 64 KB of LDS.
  auto module = compileSource(sm, diags, file, more, nullptr, "", "hip:" + arch);
  REQUIRE_MESSAGE(module, diags.renderAll());
  cuda::CudaOptions options = hip::hipOptions(arch);
  options.lineDirectives = lineDirectives;
  auto src = cuda::generateCuda(*module, options, diags);
  REQUIRE_MESSAGE(src, diags.renderAll());
  return src->source;
}

// The disassembly of HIP C built for `arch`, or "" (said on stderr) where
// this machine cannot disassemble it.
std::string disassembled(const std::string& src, const hip::HipArch& arch) {
  hip::HipBuildResult built = hip::compileHip(src, arch);
  REQUIRE_MESSAGE(built.ok, built.error);
  std::string text, error;
  if (!hip::disassembleHsaco(built.binary, arch, &text, &error)) std::cerr << "skipping the disassembly: " << error << "\n";
  return text;
}

}  // namespace

TEST_CASE("hip targets name the supported AMD architectures") {
  std::string arch;
  CHECK(hip::parseHipTarget("hip:gfx942", &arch));
  CHECK(arch == "gfx942");
  CHECK(hip::parseHipTarget("gfx90a", &arch));
  CHECK(arch == "gfx90a");
  CHECK_FALSE(hip::parseHipTarget("cuda:sm_90a", &arch));
  CHECK(hip::findHipArch("gfx90a"));
  CHECK(hip::findHipArch("gfx942"));
  CHECK_FALSE(hip::findHipArch("gfx1234"));
  cuda::CudaOptions o = hip::hipOptions("gfx942");
  CHECK(o.language == cuda::GpuLanguage::Hip);
  CHECK(o.dialect().warpSize == 64);
  CHECK(o.tensorCores);  // the mma register layout, filled by multiply-adds
  CHECK_FALSE(o.dialect().nvidiaTensorCores);
  CHECK_FALSE(o.asyncCopy);
  CHECK(o.maxSharedBytes == 64 * 1024);
}

TEST_CASE("the HIP C of every example uses the HIP helpers and no NVIDIA-only instruction") {
  for (const std::string& path : test::exampleKernels())
    for (const char* arch : {"gfx90a", "gfx942"}) {
      INFO(path << " for " << arch);
      std::string src = emittedHip(path, arch);
      CHECK(src.find("#include \"tlc_hip.h\"") != std::string::npos);
      CHECK(src.find("tlc_cuda.h") == std::string::npos);
      for (const char* nvidia : {"cp_async", "ldmatrix", "tlc::mma_", "wgmma", "mbar_", "tma_", "__nv_", "fence_registers", "to_tf32"})
        CHECK_MESSAGE(src.find(nvidia) == std::string::npos, "the HIP C uses " << nvidia);
    }
}

TEST_CASE("tiles too large for an AMD workgroup are refused with a located error") {
  // Flash attention's CUDA tiles (compiled for no target, `T.target("hip")`
  // is False) overflow the LDS: reported at the kernel and at the buffers.
  SourceManager sm;
  DiagnosticEngine diags(sm);
  std::string error;
  uint32_t file = sm.addFile(std::string(TLC_SOURCE_DIR) + "/examples/flash_attention/mha_fwd_bhsd.tl", error);
  REQUIRE_MESSAGE(file != 0, error);
  auto module = compileSource(sm, diags, file, {});
  REQUIRE_MESSAGE(module, diags.renderAll());
  auto src = cuda::generateCuda(*module, hip::hipOptions("gfx942"), diags);
  CHECK_FALSE(src);
  std::string text = diags.renderAll();
  CHECK(text.find("cuda-shared-memory-overflow") != std::string::npos);
  CHECK(text.find("mha_fwd_bhsd.tl:30:5") != std::string::npos);
  CHECK(text.find("`Q_s`: 32768 bytes") != std::string::npos);
}

TEST_CASE("the HIP helper header keeps no inline PTX") {
  const std::string& h = hip::hipHelperHeader();
  CHECK(h.find("@CUDA_HELPERS@") == std::string::npos);
  CHECK(h.find("@EMU_FLOAT@") == std::string::npos);
  CHECK(h.find("asm volatile") == std::string::npos);
  CHECK(h.find("group_allreduce") != std::string::npos);
}

TEST_CASE("every example builds to a code object for gfx90a and gfx942") {
  for (const char* archName : {"gfx90a", "gfx942"}) {
    const hip::HipArch* arch = hip::findHipArch(archName);
    REQUIRE(arch);
    std::string why;
    if (!hip::hipCompilerAvailable(*arch, &why)) {
      std::cerr << "skipping the " << archName << " builds: " << why << "\n";
      continue;
    }
    for (const std::string& path : test::exampleKernels()) {
      INFO(path << " for " << archName);
      hip::HipBuildResult built = hip::compileHip(emittedHip(path, archName, /*lineDirectives=*/true), *arch);
      REQUIRE_MESSAGE(built.ok, built.error);
      CHECK(hip::hsacoArch(built.binary) == archName);
    }
  }
}

TEST_CASE("an AMDGPU code object's arch is read from its ELF header") {
  CHECK(hip::hsacoArch("") == "");
  CHECK(hip::hsacoArch(std::string(64, '\0')) == "");
  std::string elf(64, '\0');
  elf.replace(0, 5, "\x7f" "ELF\x02");
  elf[18] = (char)224;
  elf[48] = 0x4c;
  CHECK(hip::hsacoArch(elf) == "gfx942");
  elf[48] = 0x3f;
  CHECK(hip::hsacoArch(elf) == "gfx90a");
}

// The MFMA helpers of tlc_hip.h compile to the matrix-core instructions
// (T.gemm's lowering uses them: the gemm example's disassembly is checked in
// tests/driver/hip_target_cli_test.cpp).
TEST_CASE("the MFMA helpers compile to v_mfma instructions on gfx942 and gfx90a, int8 and float8 ones included") {
  const char* kernel = R"(#include "tlc_hip.h"
extern "C" __global__ void __launch_bounds__(64) mfma_f16(const __half* A, const __half* B, float* D) {
  const int l = threadIdx.x;
  float d[16] = {};
  tlc::mfma_32x32x8_f16(d, A + 4 * l, B + 4 * l);
  for (int r = 0; r < 16; ++r) D[16 * l + r] = d[r];
}
extern "C" __global__ void __launch_bounds__(64) mfma_bf16(const tlc_bfloat16* A, const tlc_bfloat16* B, float* D) {
  const int l = threadIdx.x;
  float d[4] = {};
  tlc::mfma_16x16x16_bf16(d, A + 4 * l, B + 4 * l);
  for (int r = 0; r < 4; ++r) D[4 * l + r] = d[r];
}
extern "C" __global__ void __launch_bounds__(64) mfma_i8(const tlc::i8* A, const tlc::i8* B, int* D) {
  const int l = threadIdx.x;
  int d[16] = {}, e[4] = {};
#if defined(__gfx90a__)
  tlc::mfma_32x32x8_i8(d, A + 4 * l, B + 4 * l);
  tlc::mfma_16x16x16_i8(e, A + 4 * l, B + 4 * l);
#else
  tlc::mfma_32x32x16_i8(d, A + 8 * l, B + 8 * l);
  tlc::mfma_16x16x32_i8(e, A + 8 * l, B + 8 * l);
#endif
  for (int r = 0; r < 16; ++r) D[16 * l + r] = d[r] + e[r % 4];
}
extern "C" __global__ void __launch_bounds__(64) mfma_f32(const float* A, const float* B, float* D) {
  const int l = threadIdx.x;
  float d[16] = {}, e[4] = {};
  tlc::mfma_32x32x2_f32(d, A + l, B + l);
  tlc::mfma_16x16x4_f32(e, A + l, B + l);
  for (int r = 0; r < 16; ++r) D[16 * l + r] = d[r] + e[r % 4];
}
#if defined(__gfx942__)
extern "C" __global__ void __launch_bounds__(64) mfma_fp8(const tlc_fp8_e4m3* A, const tlc_fp8_e5m2* B, float* D) {
  const int l = threadIdx.x;
  float d[16] = {}, e[4] = {};
  tlc::mfma_32x32x16_e4m3(d, A + 8 * l, A + 8 * l);
  tlc::mfma_16x16x32_e4m3(e, A + 8 * l, A + 8 * l);
  tlc::mfma_32x32x16_e5m2(d, B + 8 * l, B + 8 * l);
  tlc::mfma_16x16x32_e5m2(e, B + 8 * l, B + 8 * l);
  for (int r = 0; r < 16; ++r) D[16 * l + r] = d[r] + e[r % 4];
}
#endif
)";
  for (const char* archName : {"gfx942", "gfx90a"}) {
    const hip::HipArch* arch = hip::findHipArch(archName);
    std::string why;
    if (!hip::hipCompilerAvailable(*arch, &why)) {
      std::cerr << "skipping the " << archName << " MFMA build: " << why << "\n";
      continue;
    }
    INFO(archName);
    const std::string text = disassembled(kernel, *arch);
    if (text.empty()) continue;
    CHECK(text.find("v_mfma_f32_32x32x8") != std::string::npos);
    CHECK(text.find("v_mfma_f32_16x16x16") != std::string::npos);
    // int8: gfx90a's 4-element forms, gfx942's 8-element ones.
    const bool gfx942 = std::string(archName) == "gfx942";
    CHECK(text.find(gfx942 ? "v_mfma_i32_32x32x16_i8" : "v_mfma_i32_32x32x8i8") != std::string::npos);
    CHECK(text.find(gfx942 ? "v_mfma_i32_16x16x32_i8" : "v_mfma_i32_16x16x16i8") != std::string::npos);
    CHECK(text.find(gfx942 ? "v_mfma_f32_32x32x2_f32" : "v_mfma_f32_32x32x2f32") != std::string::npos);
    CHECK(text.find(gfx942 ? "v_mfma_f32_16x16x4_f32" : "v_mfma_f32_16x16x4f32") != std::string::npos);
    // float8: gfx942 only.
    for (const char* fp8 : {"v_mfma_f32_32x32x16_fp8_fp8", "v_mfma_f32_16x16x32_fp8_fp8", "v_mfma_f32_32x32x16_bf8_bf8",
                            "v_mfma_f32_16x16x32_bf8_bf8"})
      CHECK((text.find(fp8) != std::string::npos) == gfx942);
  }
}

// T.gemm on float8 runs on gfx942's float8 MFMAs (e4m3 as fp8, e5m2 as bf8);
// gfx90a, which has none, keeps the multiply-add fallback.
// The issue's acceptance of the AMD code: the gemm example's code object
// multiplies on the matrix cores and reads LDS 128 bits at a time (the
// accumulator's staging tile on its way out), and a row reduction's short
// steps are DPP moves.
TEST_CASE("the gemm example has v_mfma and 128-bit LDS loads, the softmax example DPP row steps") {
  for (const char* archName : {"gfx942", "gfx90a"}) {
    const hip::HipArch* arch = hip::findHipArch(archName);
    std::string why;
    if (!hip::hipCompilerAvailable(*arch, &why)) {
      std::cerr << "skipping the " << archName << " example builds: " << why << "\n";
      continue;
    }
    INFO(archName);
    const std::string gemm = disassembled(emittedHip("examples/gemm/gemm.tl", archName), *arch);
    if (!gemm.empty()) {
      CHECK(gemm.find("v_mfma_f32_32x32x8") != std::string::npos);
      CHECK(gemm.find("ds_read_b128") != std::string::npos);
    }
    const std::string softmax = disassembled(emittedHip("examples/softmax/softmax.tl", archName), *arch);
    if (!softmax.empty()) {
      for (const char* dpp : {"quad_perm:[1,0,3,2]", "quad_perm:[2,3,0,1]", "row_half_mirror", "row_mirror"})
        CHECK_MESSAGE(softmax.find(dpp) != std::string::npos, dpp);
    }
  }
}

TEST_CASE("the float8 gemm example runs on v_mfma_f32_32x32x16_fp8_fp8 / _bf8_bf8 on gfx942 only") {
  const std::string path = "examples/gemm_fp8/gemm_fp8.tl";
  CHECK(emittedHip(path, "gfx90a").find("tlc::mfma_") == std::string::npos);
  for (const char* type : {"float8_e4m3", "float8_e5m2"}) {
    INFO(type);
    const bool e4m3 = std::string(type) == "float8_e4m3";
    const std::string src = emittedHip(path, "gfx942", false, {{"in_dtype", type}});
    CHECK(src.find(e4m3 ? "tlc::mfma_32x32x16_e4m3(" : "tlc::mfma_32x32x16_e5m2(") != std::string::npos);
    const hip::HipArch* arch = hip::findHipArch("gfx942");
    std::string why;
    if (!hip::hipCompilerAvailable(*arch, &why)) {
      std::cerr << "skipping the gfx942 float8 build: " << why << "\n";
      continue;
    }
    const std::string text = disassembled(src, *arch);
    if (text.empty()) continue;
    CHECK(text.find(e4m3 ? "v_mfma_f32_32x32x16_fp8_fp8" : "v_mfma_f32_32x32x16_bf8_bf8") != std::string::npos);
  }
}
