// Barriers between the iterations of serial loops over shared tiles
// (loop_barriers.tl): where the end of an iteration meets the start of the
// next, the iteration ends with a barrier; where barriers inside the body
// already order them, it has none. The emulator's race checks and the
// interpreter's results agree, on sm_80 and sm_90a.
#include <doctest/doctest.h>

#include "compiler/backends/cuda/cuda_codegen.h"
#include "tests/cuda_emu_examples/emulate_util.h"

using namespace tlc;

namespace {

// The CUDA C of the loop of `func` in loop_barriers.tl: from its header to the end of the kernel.
std::string loopOf(const std::string& func) {
  cuda::CudaOptions options;
  options.arch = "sm_80";
  options.lineDirectives = false;
  const std::string cu = test::emittedSource("tests/cuda_emu_examples/loop_barriers.tl", options);
  size_t kernel = cu.find(" " + func + "_kernel0(");
  REQUIRE(kernel != std::string::npos);
  size_t loop = cu.find("for (int t = 0;", kernel);
  REQUIRE(loop != std::string::npos);
  return cu.substr(loop, cu.find("\n}\n", loop) - loop);
}

using test::count;

}  // namespace

TEST_CASE("an iteration whose last reads meet the next one's first writes ends with a barrier") {
  std::string loop = loopOf("tail_meets_head");
  INFO(loop);
  // One before the transposed reads, one at the end of the iteration.
  CHECK(count(loop, "__syncthreads") == 2);
  size_t reads = loop.find("S[");
  CHECK(loop.rfind("__syncthreads") > loop.rfind("S["));
  CHECK(loop.find("__syncthreads") < loop.find("* 2.0f", reads));
}

TEST_CASE("an iteration whose body's barriers order it against the next has none of its own") {
  std::string loop = loopOf("two_tiles");
  INFO(loop);
  CHECK(count(loop, "__syncthreads") == 2);
  CHECK(loop.rfind("__syncthreads") < loop.rfind("S2["));
}

TEST_CASE("serial loops over shared tiles run race-free and match the interpreter") {
  for (const char* arch : {"sm_80", "sm_90a"})
    for (const char* func : {"tail_meets_head", "two_tiles"})
      for (int64_t m : {96, 70, 1}) {
        CAPTURE(arch);
        CAPTURE(func);
        CAPTURE(m);
        SourceManager sm;
        DiagnosticEngine diags{sm};
        ir::Module module = test::compileTreeFile("tests/cuda_emu_examples/loop_barriers.tl", sm, diags);
        std::string log;
        int rc = test::runEmulatedCheck(module, diags, {{"M", m}}, 5, &log, func, arch);
        INFO(log);
        CHECK(rc == 0);
      }
}
