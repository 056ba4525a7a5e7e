// T.use_swizzle reorders the blocks of a 2-D grid: under the emulator, every
// (bx, by) must still run exactly once, including grids whose rows the
// panel size does not divide (a shorter last group) and panels taller than
// the grid.
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
  for (const char* func : {"panel_2_30", "panel_int32_max", "panel_int64_max", "panel_3"}) {
    CAPTURE(func);
    std::string log;
    int rc = test::runEmulatedCheck(module, diags, {}, 1, &log, func);
    INFO(log);
    CHECK(rc == 0);
  }
}
