// Pipelined loops with element-wise producer copies (tests/cuda_emu_examples/
// split_copies.tl): a column of 2-byte scales is loaded into registers where
// the copy stands and stored into its stage after the iteration's work
// (docs/cuda-backend.md, "Element-wise producer copies"), and signed 4-bit
// weights are converted two at a time from their byte. Both agree with the
// interpreter in the emulator at sizes the tiles do not divide, on sm_80
// and sm_90a, in float16 and bfloat16.
#include <doctest/doctest.h>

#include "tests/cuda_emu_examples/emulate_util.h"

using namespace tlc;

TEST_CASE("element-wise producer copies are split around the iteration and agree with the interpreter") {
  // float16 with two stages (the producer threads' stores one iteration
  // behind leave no stage of slack), bfloat16 with three, float16 with five
  // (the producer threads' stores three iterations behind).
  for (const auto& [dtype, stages] : std::vector<std::pair<std::string, std::string>>{
           {"float16", "2"}, {"bfloat16", "3"}, {"float16", "5"}}) {
    SourceManager sm;
    DiagnosticEngine diags{sm};
    ir::Module module = test::compileTreeFile("tests/cuda_emu_examples/split_copies.tl", sm, diags,
                                              {{"dtype", dtype}, {"stages", stages}});
    for (const std::string arch : {"sm_80", "sm_90a"}) {
      CAPTURE(dtype);
      CAPTURE(arch);
      std::string src = test::pipelinedModuleSource(module, arch, diags);
      // cp.async pipelines (sm_80; sm_90a's versions without TMA): the
      // prologue loads every stage's scales before storing any; the main
      // loop keeps one iteration's in registers (two per thread for 256 rows
      // on 128 threads).
      std::string pro = "deferred_pro[" + std::to_string(std::stoi(stages) - 1) + "]";
      CHECK(src.find(pro + "[1];") != std::string::npos);
      CHECK(src.find(pro + "[2];") != std::string::npos);
      CHECK(src.find("S_s[(e") != std::string::npos);
      // sm_90a: the producer threads store a stage's scales stages - 2
      // iterations later (at least one), after their wait for that
      // iteration's stage, and arrive then; a lag of several iterations
      // unrolls their loop by it.
      if (arch == "sm_90a") {
        CHECK(src.find("tlc::mbar_arrive(&tlc_full[prev_stage]);") != std::string::npos);
        int lag = std::max(std::stoi(stages) - 2, 1);
        CHECK((src.find("iter_first += " + std::to_string(lag) + ")") != std::string::npos) == (lag > 1));
        if (lag > 1) CHECK(src.find("tlc::mbar_arrive(&tlc_full[prev_stage_" + std::to_string(lag - 1) + "]);") != std::string::npos);
      }
      std::string pairType = dtype == "float16" ? "__half" : "__nv_bfloat16";
      CHECK(src.find("tlc::unpack_int4_pair<" + pairType + ">(") != std::string::npos);
      for (const auto& [func, dims] : std::vector<std::pair<std::string, std::map<std::string, int64_t>>>{
               {"int4_gemm", {{"M", 70}, {"N", 100}, {"K", 200}}},
               {"int4_gemm", {{"M", 5}, {"N", 64}, {"K", 64}}},
               {"row_scaled_sum", {{"M", 300}, {"K", 100}}},
               {"row_scaled_sum", {{"M", 17}, {"K", 32}}}}) {
        CAPTURE(func);
        std::string log;
        int rc = test::runEmulatedCheck(module, diags, dims, 5, &log, func, arch);
        INFO(log);
        CHECK(rc == 0);
      }
    }
  }
}
