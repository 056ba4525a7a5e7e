// Block-level local buffers as per-iteration scratch (private_locals.tl,
// compiler/backends/cuda/cuda_private_locals.h): registers of each thread
// where every iteration writes them whole before reading them, shared memory
// where a value leaves the iteration; race-free and equal to the
// interpreter on sm_80, sm_90a and gfx942.
#include <doctest/doctest.h>

#include "compiler/backends/cuda/cuda_codegen.h"
#include "tests/cuda_emu_examples/emulate_util.h"

using namespace tlc;

TEST_CASE("scratch locals of Parallel iterations live in each thread's registers") {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  ir::Module module = test::compileTreeFile("tests/cuda_emu_examples/private_locals.tl", sm, diags);
  cuda::CudaOptions options;
  options.arch = "sm_80";
  auto cu = cuda::generateCuda(module, options, diags);
  REQUIRE_MESSAGE(cu, diags.renderAll());
  const std::string& src = cu->source;
  CHECK(src.find("float c_1[1];") != std::string::npos);
  CHECK(src.find("float c_1[4];") != std::string::npos);
  // The value read after the loop is the block's: in shared memory.
  CHECK(src.find("float* first") != std::string::npos);
}

TEST_CASE("scratch locals and shared values agree with the interpreter") {
  for (const char* arch : {"sm_80", "sm_90a", "gfx942"})
    for (const char* func : {"scratch", "table", "shared_value"})
      for (int64_t n : {256, 1000, 1}) {
        CAPTURE(arch);
        CAPTURE(func);
        CAPTURE(n);
        SourceManager sm;
        DiagnosticEngine diags{sm};
        ir::Module module = test::compileTreeFile("tests/cuda_emu_examples/private_locals.tl", sm, diags);
        std::string log;
        int rc = test::runEmulatedCheck(module, diags, {{"N", n}}, 5, &log, func, arch);
        INFO(log);
        CHECK(rc == 0);
      }
}
