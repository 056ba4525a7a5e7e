// The math builtins, break/continue and vector accesses of Parallel nests
// through the CUDA emulator (the CUDA C of the CUDA backend, compiled for
// the host), against the interpreter.
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

// Parallel nests over global and shared memory with vector accesses
// (cuda_vector_loops.h), at sizes the runs and tiles do not divide and with
// rows that are not 16-byte aligned (the element-wise paths); and a row
// reduction of a register tile into shared memory.
TEST_CASE("Parallel nests with vector accesses agree with the interpreter in the emulator") {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  ir::Module module = test::compileTreeFile("tests/cuda_emu_examples/vector_nests.tl", sm, diags);
  struct Run {
    const char* func;
    std::map<std::string, int64_t> dims;
  };
  const std::vector<Run> runs = {
      {"gather", {{"T_", 7}, {"V", 5}, {"D", 200}}},     {"gather", {{"T_", 8}, {"V", 9}, {"D", 67}}},
      {"gather_add", {{"T_", 13}, {"V", 9}, {"D", 300}}}, {"gather_add", {{"T_", 17}, {"V", 6}, {"D", 130}}},
      {"scale_bias", {{"M", 9}, {"N", 100}}},            {"scale_bias", {{"M", 6}, {"N", 37}}},
      {"inplace_transpose", {{"M", 13}, {"N", 40}}},     {"inplace_transpose", {{"M", 13}, {"N", 33}}},
      {"shared_square", {{"M", 10}, {"N", 130}}},        {"shared_square", {{"M", 9}, {"N", 67}}},
      {"bytes_map", {{"M", 5}, {"N", 64}}},              {"bytes_map", {{"M", 5}, {"N", 50}}},
      {"row_sums_shared", {{"M", 10}, {"N", 200}}},
  };
  for (const Run& r : runs)
    for (const char* arch : {"sm_80", "sm_90a"}) {
      CAPTURE(r.func);
      CAPTURE(arch);
      std::string log;
      int rc = test::runEmulatedCheck(module, diags, r.dims, 11, &log, r.func, arch);
      INFO(log);
      CHECK(rc == 0);
    }
}
