// Shared buffers with disjoint lifetimes share bytes, and the accesses of the
// two are still ordered by barriers: the emulator's race checks and the
// interpreter's results agree, at sizes the tiles do and do not divide.
#include <doctest/doctest.h>

#include <sstream>

#include "compiler/backends/cuda/cuda_codegen.h"
#include "compiler/driver/emulate_target.h"
#include "compiler/sema/frontend.h"

using namespace tlc;
using namespace tlc::driver;

TEST_CASE("shared buffers of disjoint phases share memory and stay race-free") {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  std::string error;
  uint32_t file = sm.addFile(std::string(TLC_SOURCE_DIR) + "/tests/cuda_emu_examples/shared_reuse.tl", error);
  REQUIRE_MESSAGE(file != 0, error);
  auto module = compileSource(sm, diags, file, {});
  REQUIRE_MESSAGE(module, diags.renderAll());

  cuda::CudaOptions options;
  options.arch = "sm_80";
  options.lineDirectives = false;
  auto cu = cuda::generateCuda(*module, options, diags);
  REQUIRE_MESSAGE(cu, diags.renderAll());
  CHECK(cu->source.find("float* S1 = reinterpret_cast<float*>(tlc_smem + 0);") != std::string::npos);
  CHECK(cu->source.find("float* S2 = reinterpret_cast<float*>(tlc_smem + 0);") != std::string::npos);
  REQUIRE(cu->funcs.size() == 1);
  CHECK(cu->funcs[0].kernels.at(0).sharedBytes == 64 * 64 * 4);

  for (int64_t m : {64, 130, 1}) {
    CAPTURE(m);
    std::ostringstream out;
    RunSettings settings;
    settings.dims = {{"M", m}};
    settings.seed = 3;
    settings.check = true;
    settings.out = &out;
    int rc = runCudaEmulated(*module, settings, "sm_80", diags);
    std::string log = out.str() + diags.renderAll();
    INFO(log);
    CHECK(rc == 0);
  }
}
