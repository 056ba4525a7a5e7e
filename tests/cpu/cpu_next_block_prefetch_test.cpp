// Prefetches of the next block's reads, compiler/backends/cpu/next_block_prefetch.h:
// kernels whose blocks each read their own part of a tensor prefetch it for
// the next block; kernels whose blocks share the tiles they read (gemm) and
// kernels that read the same tile in every block do not.
#include <doctest/doctest.h>

#include "compiler/backends/cpu/cpu_backend.h"
#include "tests/cpu/cpu_test_util.h"

using namespace tlc;
using namespace tlc::test;

namespace {

std::string example(const std::string& rel) { return std::string(TLC_SOURCE_DIR) + "/examples/" + rel; }

std::string assembly(CpuCompiled& c) {
  REQUIRE(c.module);
  auto lowered = driver::lowerModuleForCpu(*c.module, {}, *c.diags);
  INFO(c.rendered());
  REQUIRE(lowered);
  return cpu::emitAssembly(*lowered, {});
}

bool prefetches(const std::string& text) { return text.find("prefetcht1") != std::string::npos; }

// Every block adds the same bias tile: the bias is read by all blocks.
const char* kSharedTile = R"(
def add_bias[M, N, block_M=32, block_N=64](A: Tensor[(M, N), float32], bias: Tensor[(block_M, block_N), float32],
                                           C: Tensor[(M, N), float32]):
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_f = T.alloc_fragment((block_M, block_N), float32)
        b_f = T.alloc_fragment((block_M, block_N), float32)
        T.copy(bias[0, 0], b_f)
        for i, j in T.Parallel(block_M, block_N):
            C[by * block_M + i, bx * block_N + j] = b_f[i, j]
)";

}  // namespace

TEST_CASE("blocks reading their own tiles prefetch the next block's tiles into L2") {
  CpuCompiled add = compileTlFile(example("elementwise_add/add.tl"), {{"M", "256"}, {"N", "512"}, {"dtype", "float32"}});
  std::string text = assembly(add);
  CHECK(prefetches(text));
  CpuCompiled rows = compileTlFile(example("row_reduce/row_sum.tl"), {{"M", "256"}, {"N", "512"}});
  CHECK(prefetches(assembly(rows)));
}

TEST_CASE("tiles shared by several blocks are not prefetched") {
  // K = 256 is one step of the coarsened gemm loop: no next step's tiles to
  // prefetch either (cpu_prefetch_next_tiles.h).
  CpuCompiled gemm = compileTlFile(example("gemm/gemm.tl"),
                                   {{"M", "256"}, {"N", "256"}, {"K", "256"}, {"dtype", "float32"}});
  CHECK_FALSE(prefetches(assembly(gemm)));
  CpuCompiled bias = compileTl(kSharedTile, {{"M", "256"}, {"N", "512"}});
  CHECK_FALSE(prefetches(assembly(bias)));
}

TEST_CASE("kernels that prefetch still agree with the interpreter, at sizes the tiles do not divide") {
  for (auto dims : {std::vector<Define>{{"M", "100"}, {"N", "300"}, {"dtype", "float32"}},
                    std::vector<Define>{{"M", "33"}, {"N", "65"}}}) {
    CpuCompiled c = compileTlFile(example("elementwise_add/add.tl"), dims);
    OracleComparison r = runAgainstOracle(c);
    INFO(r.log);
    CHECK(r.pass);
  }
  CpuCompiled rows = compileTlFile(example("row_reduce/row_sum.tl"), {{"M", "70"}, {"N", "300"}});
  OracleComparison r = runAgainstOracle(rows);
  INFO(r.log);
  CHECK(r.pass);
}
