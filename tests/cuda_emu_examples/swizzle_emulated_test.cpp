// T.use_swizzle reorders the blocks of a 2-D grid (of each (x, y) plane of
// a 3-D one): under the emulator, every (bx, by[, bz]) must still run
// exactly once, including grids whose rows the panel size does not divide
// (a shorter last group) and panels taller than the grid.
#include <doctest/doctest.h>

#include "tests/cuda_emu_examples/emulate_util.h"

using namespace tlc;

TEST_CASE("a swizzled gemm grid covers every block once") {
  // gemm_small: 32 x 32 tiles, T.use_swizzle(4).
  for (auto dims : std::vector<std::map<std::string, int64_t>>{
           {{"M", 200}, {"N", 136}, {"K", 40}},   // 7 x 5 blocks: groups of 4 and 3 rows
           {{"M", 64}, {"N", 300}, {"K", 32}},    // 2 x 10 blocks: one group, shorter than the panel
           {{"M", 288}, {"N", 32}, {"K", 16}}}) {  // 9 x 1 blocks
    CAPTURE(dims.at("M"));
    CAPTURE(dims.at("N"));
    SourceManager sm;
    DiagnosticEngine diags{sm};
    ir::Module module = test::compileTreeFile("tests/cuda/golden/gemm_small.tl", sm, diags);
    std::string log;
    int rc = test::runEmulatedCheck(module, diags, dims, 5, &log);
    INFO(log);
    CHECK(rc == 0);
  }
}

TEST_CASE("swizzle panels far taller than the grid neither divide by zero nor write out of bounds") {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  ir::Module module = test::compileTreeFile("tests/cuda_emu_examples/swizzle_panels.tl", sm, diags);
  for (const char* func : {"panel_2_30", "panel_int32_max", "panel_int64_max", "panel_3", "panel_2_3d"}) {
    CAPTURE(func);
    std::string log;
    int rc = test::runEmulatedCheck(module, diags, {}, 1, &log, func);
    INFO(log);
    CHECK(rc == 0);
  }
}

TEST_CASE("a swizzled 3-D grid covers every block once, per tile and in the sm_90a persistent loop") {
  // 3 x 3 x 3 tiles (3 rows in panels of 2) that the tiles do not divide; on
  // sm_90a, K = 136 takes the persistent TMA mainloop; so does K = 130 (rows
  // of 260 bytes), its operands staged into padded rows, and without staging
  // it takes the version without TMA, a block per tile.
  SourceManager sm;
  DiagnosticEngine diags{sm};
  ir::Module module = test::compileTreeFile("tests/cuda_emu_examples/batched_gemm_swizzle.tl", sm, diags);
  struct Run {
    const char* arch;
    bool staging;
  };
  for (int64_t K : {136, 130})
    for (Run run : {Run{"sm_80", true}, Run{"sm_90a", true}, Run{"sm_90a", false}}) {
      if (!run.staging && K == 136) continue;
      CAPTURE(run.arch);
      CAPTURE(run.staging);
      CAPTURE(K);
      driver::EmulateOptions options;
      options.stageTma = run.staging;
      std::string log;
      int rc = test::runEmulatedCheck(module, diags, {{"Bt", 3}, {"M", 300}, {"N", 600}, {"K", K}}, 5, &log, "",
                                      run.arch, options);
      INFO(log);
      CHECK(rc == 0);
      if (std::string(run.arch) == "sm_90a") {
        CHECK((log.find("without TMA") != std::string::npos) == (K == 130 && !run.staging));
        CHECK((log.find("padded") != std::string::npos) == (K == 130 && run.staging));
      }
    }
}
