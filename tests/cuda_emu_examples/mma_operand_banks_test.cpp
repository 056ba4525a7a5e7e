// Shared operand tiles of the mma.sync gemms that read 4 bytes per lane
// (int8, float8, tf32): the tiles take the 16-byte-chunk swizzle, and 8-bit
// operands whose 4 bytes of a register lie along a row are one word load
// (tlc::load_word) instead of four byte loads. The emulator's count of
// shared-memory wavefronts at 128^3 stays near its conflict-free count
// (before: 18432 against 5632 for int8 NT, 29184 against 10240 for float32
// NN). A Parallel nest over a swizzled tile moves 16-byte runs. The staging
// tile of a float16 result with 64-byte rows is padded against the pair
// stores' conflicts.
#include <doctest/doctest.h>

#include "compiler/backends/cuda/cuda_codegen.h"
#include "compiler/driver/emulate_target.h"
#include "tests/cuda_emu_examples/emulate_util.h"

using namespace tlc;

namespace {

const char* kFile = "tests/cuda_emu_examples/mfma/gemm_variants.tl";

// Runs `func` of `file` at 128^3 in the emulator for `arch` with --check; the shared-memory totals.
test::SharedTraffic run(const char* file, const char* func, const char* arch) {
  return test::sharedTraffic(test::emulatedAt128(file, func, arch));
}

}  // namespace

TEST_CASE("int8, float8 and tf32 mma.sync operand tiles are read near the conflict-free count") {
  struct Case {
    const char* func;
    const char* arch;
    double slack;  // wavefronts allowed over the conflict-free count
  };
  // float32 NN: B (not transposed) is read across k, 4 rows of 8 words: 2-way.
  for (const Case& c : {Case{"gemm_i8_nt", "sm_80", 1.25}, Case{"gemm_fp8_nt", "sm_89", 1.25},
                        Case{"gemm_i8_nn", "sm_80", 1.6}, Case{"gemm_f32", "sm_80", 1.5},
                        Case{"gemm_f32_nt", "sm_80", 1.15}}) {
    CAPTURE(c.func);
    CAPTURE(c.arch);
    test::SharedTraffic t = run(kFile, c.func, c.arch);
    CAPTURE(t.wavefronts);
    CAPTURE(t.ideal);
    CHECK(double(t.wavefronts) <= c.slack * double(t.ideal));
  }
}

TEST_CASE("8-bit operands along k are loaded a word at a time") {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  ir::Module module = test::compileTreeFile(kFile, sm, diags);
  cuda::CudaOptions options;
  options.arch = "sm_80";
  auto cu = cuda::generateCuda(module, options, diags);
  REQUIRE_MESSAGE(cu, diags.renderAll());
  size_t nt = cu->source.find("gemm_i8_nt_kernel0("), nn = cu->source.find("gemm_i8_nn_kernel0(");
  REQUIRE(nt != std::string::npos);
  REQUIRE(nn != std::string::npos);
  std::string ntBody = cu->source.substr(nt, cu->source.find("\n}\n", nt) - nt);
  std::string nnBody = cu->source.substr(nn, cu->source.find("\n}\n", nn) - nn);
  CHECK(ntBody.find("tlc::load_word(&") != std::string::npos);
  CHECK(ntBody.find("pack4_bytes") == std::string::npos);
  // NN: A along k (words), B across k (bytes of four rows).
  CHECK(nnBody.find("tlc::load_word(&") != std::string::npos);
  CHECK(nnBody.find("pack4_bytes") != std::string::npos);
}

TEST_CASE("a Parallel nest over a swizzled operand tile moves 16-byte runs") {
  const char* file = "tests/cuda_emu_examples/swizzled_nest.tl";
  SourceManager sm;
  DiagnosticEngine diags{sm};
  ir::Module module = test::compileTreeFile(file, sm, diags);
  cuda::CudaOptions options;
  options.arch = "sm_80";
  auto cu = cuda::generateCuda(module, options, diags);
  REQUIRE_MESSAGE(cu, diags.renderAll());
  CHECK(cu->source.find("tlc::copy_vec<__half, 8>(vld_A_s") != std::string::npos);
  test::SharedTraffic t = run(file, "scaled_gemm", "sm_80");
  CHECK(double(t.wavefronts) <= 1.1 * double(t.ideal));
}

TEST_CASE("result tiles are staged through rows padded against the pair stores' bank conflicts") {
  // Before: 9984 wavefronts against 8448 conflict-free (float16, 64-byte
  // rows, unpadded), and 4096 against 3584 (float32, 16-byte pad).
  for (const char* func : {"narrow", "wide_f32"}) {
    CAPTURE(func);
    test::SharedTraffic t = run("tests/cuda_emu_examples/narrow_epilogue.tl", func, "sm_80");
    CHECK(double(t.wavefronts) <= 1.05 * double(t.ideal));
  }
}
