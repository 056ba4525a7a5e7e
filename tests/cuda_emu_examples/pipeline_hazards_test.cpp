// Loops whose tiles must not load ahead (pipeline_hazards.tl): a tile read
// after the loop, and a copy from a tensor the loop writes. Serial loops
// (which the CUDA backend pipelines where it can) and T.Pipelined loops
// agree with the interpreter on sm_80, sm_90a and gfx942, at trip counts
// that are and are not multiples of the stage count.
#include <doctest/doctest.h>

#include "tests/cuda_emu_examples/emulate_util.h"

using namespace tlc;

TEST_CASE("tiles read after a loop and tensors the loop writes are not loaded ahead") {
  for (const char* arch : {"sm_80", "sm_90a", "gfx942"})
    for (const char* func : {"after_serial", "after_pipelined", "carried"})
      for (int64_t nt : {4, 5, 6}) {
        CAPTURE(arch);
        CAPTURE(func);
        CAPTURE(nt);
        SourceManager sm;
        DiagnosticEngine diags{sm};
        ir::Module module = test::compileTreeFile("tests/cuda_emu_examples/pipeline_hazards.tl", sm, diags);
        std::string log;
        int rc = test::runEmulatedCheck(module, diags, {{"NT", nt}}, 3, &log, func, arch);
        INFO(log);
        CHECK(rc == 0);
      }
}
