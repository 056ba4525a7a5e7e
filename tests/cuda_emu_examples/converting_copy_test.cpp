// A converting vector copy repeated in straight-line code (per-thread
// offsets computed before the loop) declares its staging arrays once per
// chunk: each in a scope of its own, so the CUDA compiles and agrees with the
// interpreter.
#include <doctest/doctest.h>

#include "tests/cuda_emu_examples/emulate_util.h"

using namespace tlc;

TEST_CASE("converting copies of whole tiles compile and agree with the interpreter") {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  ir::Module module = test::compileTreeFile("tests/cuda_emu_examples/converting_copy.tl", sm, diags);
  for (int64_t n : {48, 64, 130}) {
    CAPTURE(n);
    std::string log;
    int rc = test::runEmulatedCheck(module, diags, {{"M", 16}, {"N", n}}, 39, &log);
    INFO(log);
    CHECK(rc == 0);
  }
}
