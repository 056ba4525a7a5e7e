// Shared buffers with disjoint lifetimes share bytes, and the accesses of the
// two are still ordered by barriers: the emulator's race checks and the
// interpreter's results agree, at sizes the tiles do and do not divide.
#include <doctest/doctest.h>

#include "compiler/backends/cuda/cuda_codegen.h"
#include "tests/cuda_emu_examples/emulate_util.h"

using namespace tlc;

TEST_CASE("shared buffers of disjoint phases share memory and stay race-free") {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  ir::Module module = test::compileTreeFile("tests/cuda_emu_examples/shared_reuse.tl", sm, diags);

  cuda::CudaOptions options;
  options.arch = "sm_80";
  options.lineDirectives = false;
  auto cu = cuda::generateCuda(module, options, diags);
  REQUIRE_MESSAGE(cu, diags.renderAll());
  CHECK(cu->source.find("float* S1 = reinterpret_cast<float*>(tlc_smem + 0);") != std::string::npos);
  CHECK(cu->source.find("float* S2 = reinterpret_cast<float*>(tlc_smem + 0);") != std::string::npos);
  REQUIRE(cu->funcs.size() == 1);
  // S1's rows are padded by one word: its transposed reads then hit 32 banks.
  CHECK(cu->funcs[0].kernels.at(0).sharedBytes == 64 * 65 * 4);

  for (int64_t m : {64, 130, 1}) {
    CAPTURE(m);
    std::string log;
    int rc = test::runEmulatedCheck(module, diags, {{"M", m}}, 3, &log);
    INFO(log);
    CHECK(rc == 0);
  }
}
