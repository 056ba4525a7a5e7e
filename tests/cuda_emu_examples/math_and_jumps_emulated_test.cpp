// The math builtins and break/continue through the CUDA emulator (the CUDA C
// of the CUDA backend, compiled for the host), against the interpreter.
#include <doctest/doctest.h>

#include "tests/cuda_emu_examples/emulate_util.h"

using namespace tlc;

TEST_CASE("every math builtin agrees with the interpreter in the emulator") {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  ir::Module module = test::compileTreeFile("tests/cuda_emu_examples/math_builtins.tl", sm, diags);
  std::string log;
  int rc = test::runEmulatedCheck(module, diags, {{"N", 300}}, 5, &log);
  INFO(log);
  CHECK(rc == 0);
}

TEST_CASE("break and continue in serial loops agree with the interpreter in the emulator") {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  ir::Module module = test::compileTreeFile("tests/cuda_emu_examples/loop_jumps.tl", sm, diags);
  for (int64_t m : {8, 21}) {
    CAPTURE(m);
    std::string log;
    int rc = test::runEmulatedCheck(module, diags, {{"M", m}}, 17, &log);
    INFO(log);
    CHECK(rc == 0);
  }
}
