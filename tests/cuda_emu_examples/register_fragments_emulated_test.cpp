// Kernels whose fragments live in registers with an inferred row-group
// layout (and ones that fall back to shared memory), run through the CUDA
// emulator at sizes the tiles do not divide: no finding from the emulator,
// results equal to the interpreter's.
#include <doctest/doctest.h>

#include <algorithm>

#include "tests/cuda_emu_examples/emulate_util.h"

using namespace tlc;

namespace {

int runFile(const std::string& path, const std::map<std::string, int64_t>& dims, std::string* log) {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  ir::Module module = test::compileTreeFile("tests/cuda_emu_examples/register_fragments/" + path, sm, diags);
  return test::runEmulatedCheck(module, diags, dims, 11, log);
}

// Each kernel of `funcs` in `path` on sm_80 and sm_90a, at two sizes of
// (M, N, K) (K left out for kernels that do not take it).
void checkGemmKernels(const std::string& path, const std::vector<std::string>& funcs,
                      const std::vector<std::string>& withoutK = {}) {
  for (const char* arch : {"sm_80", "sm_90a"}) {
    for (const std::string& func : funcs) {
      for (auto dims : std::vector<std::map<std::string, int64_t>>{{{"M", 70}, {"N", 45}, {"K", 100}},
                                                                   {{"M", 3}, {"N", 8}, {"K", 64}}}) {
        if (std::find(withoutK.begin(), withoutK.end(), func) != withoutK.end()) dims.erase("K");
        SourceManager sm;
        DiagnosticEngine diags{sm};
        ir::Module module = test::compileTreeFile("tests/cuda_emu_examples/register_fragments/" + path, sm, diags);
        std::string log;
        CAPTURE(arch);
        CAPTURE(func);
        CAPTURE(dims.at("M"));
        int rc = test::runEmulatedCheck(module, diags, dims, 11, &log, func, arch);
        INFO(log);
        CHECK(rc == 0);
      }
    }
  }
}

}  // namespace

TEST_CASE("register fragments: tiles, row and column vectors, reductions, copies in and out") {
  for (auto dims : std::vector<std::map<std::string, int64_t>>{{{"M", 77}, {"N", 300}}, {{"M", 64}, {"N", 7}}, {{"M", 5}, {"N", 64}}}) {
    std::string log;
    CAPTURE(dims.at("M"));
    int rc = runFile("row_stats.tl", dims, &log);
    INFO(log);
    CHECK(rc == 0);
  }
}

TEST_CASE("register fragments filled from and written back to shared memory") {
  for (int64_t m : {77, 16, 3}) {
    std::string log;
    int rc = runFile("shared_tile.tl", {{"M", m}}, &log);
    INFO(log);
    CHECK(rc == 0);
  }
}

TEST_CASE("fragments with transposed or scalar accesses fall back to shared memory and stay correct") {
  for (int64_t m : {77, 64, 5}) {
    std::string log;
    int rc = runFile("transposed.tl", {{"M", m}}, &log);
    INFO(log);
    CHECK(rc == 0);
  }
}

TEST_CASE("rows spread over several warps reduce through shared memory and stay correct") {
  for (auto dims : std::vector<std::map<std::string, int64_t>>{{{"M", 77}, {"N", 300}}, {{"M", 5}, {"N", 1030}}, {{"M", 2}, {"N", 512}}}) {
    std::string log;
    CAPTURE(dims.at("M"));
    int rc = runFile("wide_rows.tl", dims, &log);
    INFO(log);
    CHECK(rc == 0);
  }
}

TEST_CASE("sm_90a: gemms outside a mainloop on wgmma in place (panel-layout tiles) and on mma.sync agree with the interpreter") {
  for (const char* func : {"inplace", "two_slices", "split_columns", "split_2x2", "loop_reduce"}) {
    for (auto dims : std::vector<std::map<std::string, int64_t>>{{{"M", 100}, {"N", 70}}, {{"M", 64}, {"N", 64}}}) {
      SourceManager sm;
      DiagnosticEngine diags{sm};
      ir::Module module = test::compileTreeFile("tests/cuda_emu_examples/wgmma_in_place.tl", sm, diags);
      std::string log;
      CAPTURE(func);
      int rc = test::runEmulatedCheck(module, diags, dims, 11, &log, func, "sm_90a");
      INFO(log);
      CHECK(rc == 0);
    }
  }
}

// Column reductions in registers, with tile shapes that give rows of several
// lanes (xor shuffles across rows) and of several warps (shared memory
// across warps), and atomics from a nest over a replicated column vector
// (one replica adds).
TEST_CASE("register fragments: column reductions and writes from one replica") {
  // Default tiles: 16 threads per row; 4 x 256 on 256 threads: rows of two warps.
  for (auto defines : std::vector<std::vector<Define>>{
           {}, {{"block_M", "4"}, {"block_N", "256"}, {"threads", "256"}}}) {
    SourceManager sm;
    DiagnosticEngine diags{sm};
    ir::Module module =
        test::compileTreeFile("tests/cuda_emu_examples/register_fragments/column_sums.tl", sm, diags, defines);
    for (auto dims : std::vector<std::map<std::string, int64_t>>{{{"M", 77}, {"N", 300}}, {{"M", 5}, {"N", 128}}}) {
      std::string log;
      CAPTURE(defines.size());
      CAPTURE(dims.at("M"));
      int rc = test::runEmulatedCheck(module, diags, dims, 11, &log);
      INFO(log);
      CHECK(rc == 0);
    }
  }
}

// Accumulating reductions whose combine across threads waits until after
// their loop, from starting values other than the identity, with rows of one
// warp (default tiles) and of two (2 x 512 on 128 threads).
TEST_CASE("register fragments: accumulating reductions combined after their loop") {
  for (auto defines : std::vector<std::vector<Define>>{{}, {{"block_M", "2"}, {"block_N", "512"}}}) {
    SourceManager sm;
    DiagnosticEngine diags{sm};
    ir::Module module =
        test::compileTreeFile("tests/cuda_emu_examples/register_fragments/deferred_reductions.tl", sm, diags, defines);
    for (auto dims : std::vector<std::map<std::string, int64_t>>{{{"M", 37}, {"N", 700}}, {{"M", 8}, {"N", 128}}}) {
      std::string log;
      CAPTURE(defines.size());
      CAPTURE(dims.at("N"));
      int rc = test::runEmulatedCheck(module, diags, dims, 11, &log);
      INFO(log);
      CHECK(rc == 0);
    }
  }
}

// A global -> register tile copy first in a pipelined loop's body is loaded
// one iteration ahead beside the shared stages; a tile a Parallel loop fills
// is a gemm's A operand in registers (mma.sync on sm_80, wgmma's RS form on
// sm_90a). K and the tiles' edges are not multiples of the tiles.
TEST_CASE("register operand tiles: prefetched in pipelined loops, filled by Parallel loops for gemms") {
  checkGemmKernels("operand_tiles.tl", {"streamed", "scaled_operand"});
}

// 8-bit and float32 A operands in registers: float8 (wgmma's RS form on
// sm_90a), tf32 (RS on sm_90a, mma.sync m16n8k8 on sm_80) and int8 (mma.sync
// k32), each tile filled by a Parallel loop in its element type's A-operand
// layout. K and the tiles' edges are not multiples of the tiles.
TEST_CASE("register A operands of 8-bit and tf32 gemms") {
  checkGemmKernels("narrow_operands.tl", {"f8_operand", "tf32_operand", "s8_operand"});
}

// Column reductions of gemm accumulators in registers: mma.sync's 4 x 2
// warps, two warpgroups over the rows or (numbered by column) splitting the
// columns on wgmma, MFMA wavefronts on CDNA. Sizes the tiles do not divide.
TEST_CASE("column reductions of gemm accumulators stay in registers") {
  for (const char* arch : {"sm_80", "sm_90a", "gfx942", "gfx90a"})
    for (const char* func : {"gemm_column_sums", "split_column_max"}) {
      CAPTURE(arch);
      CAPTURE(func);
      SourceManager sm;
      DiagnosticEngine diags{sm};
      ir::Module module =
          test::compileTreeFile("tests/cuda_emu_examples/register_fragments/accumulator_columns.tl", sm, diags);
      std::string log;
      std::map<std::string, int64_t> dims{{"M", 150}, {"N", 300}};
      if (std::string(func) == "gemm_column_sums") dims["K"] = 70;
      int rc = test::runEmulatedCheck(module, diags, dims, 11, &log, func, arch);
      INFO(log);
      CHECK(rc == 0);
      const bool hip = std::string(arch).rfind("gfx", 0) == 0;
      cuda::CudaOptions options = hip ? hip::hipOptions(arch) : cuda::CudaOptions{};
      if (!hip) options.arch = arch;
      auto src = cuda::generateCuda(module, options, diags);
      REQUIRE(src);
      CHECK(src->source.find("`C_f`: registers") != std::string::npos);
      CHECK(src->source.find("`C_f`: shared") == std::string::npos);
    }
}

// Float16 / bfloat16 arithmetic in register nests, computed two lanes at a
// time: a row-group tile with lets and per-row operands, and an int4
// operand tile of a gemm unpacked in pairs. Sizes the tiles do not divide.
TEST_CASE("register nests of 16-bit float arithmetic in lane pairs") {
  checkGemmKernels("paired_lanes.tl", {"affine_rows", "int4_operand", "int4_operand_bf16"}, {"affine_rows"});
}

// wgmma kept in flight across statements on sm_90a: two score gemms into one
// accumulator back to back, the output gemm in flight through a row sum, and
// its shared A operand written again only after every warpgroup's wait (the
// emulator reports a write to an operand of a wgmma in flight). Sizes the
// tiles do not divide.
TEST_CASE("wgmmas kept in flight across statements agree with the interpreter and overwrite no operand") {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  ir::Module module = test::compileTreeFile("tests/cuda_emu_examples/register_fragments/inflight_wgmma.tl", sm, diags);
  std::string log;
  int rc = test::runEmulatedCheck(module, diags, {{"M", 150}, {"S", 300}}, 11, &log, "inflight_wgmma", "sm_90a");
  INFO(log);
  CHECK(rc == 0);
  cuda::CudaOptions options;
  options.arch = "sm_90a";
  auto src = cuda::generateCuda(module, options, diags);
  REQUIRE(src);
  // One wait for the two score gemms and one for the output gemm, each past statements that run beside them.
  size_t n = 0;
  for (size_t at = src->source.find("tlc::wgmma_wait<0>();"); at != std::string::npos;
       at = src->source.find("tlc::wgmma_wait<0>();", at + 1))
    ++n;
  CHECK(n == 2);
}
