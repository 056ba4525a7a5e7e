// Prefetches of the next block's reads, compiler/backends/cpu/next_block_prefetch.h:
// kernels whose blocks each read their own part of a tensor prefetch it for
// the next block; kernels whose blocks share the tiles they read (gemm),
// kernels that read the same tile in every block do not; blocks that read
// more than 256 KiB of a tensor (the lines would leave L2 before the next
// block runs) prefetch the next step of their serial loop instead.
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

// Each block walks a strip of `steps` tiles of 32 x 256 float16 (16 KiB each).
const char* kStrip = R"(
def strip_sum[M, N, steps](X: Tensor[(M, N), float16], out: Tensor[(N,), float32]):
    with T.Kernel(T.ceildiv(N, 256), T.ceildiv(M, 32 * steps), threads=128) as (bx, by):
        x = T.alloc_fragment((32, 256), float32)
        acc = T.alloc_fragment((256,), float32)
        T.clear(acc)
        for k in T.serial(steps):
            T.copy(X[(by * steps + k) * 32, bx * 256], x)
            for i, j in T.Parallel(32, 256):
                acc[j] += x[i, j]
        for j in T.Parallel(256):
            if bx * 256 + j < N:
                T.atomic_add(out[bx * 256 + j], acc[j])
)";

}  // namespace

TEST_CASE("a block that reads more than fits in L2 prefetches its next step's tile instead of the next block's") {
  // 4 steps: 64 KiB per block, prefetched for the next block; 64 steps:
  // 1 MiB, prefetched one step of k ahead (16 KiB), chosen at run time.
  CpuCompiled small = compileTl(kStrip, {{"M", "4096"}, {"N", "1024"}, {"steps", "4"}});
  CHECK(prefetches(assembly(small)));
  CpuCompiled tall = compileTl(kStrip, {{"M", "4096"}, {"N", "1024"}, {"steps", "64"}});
  CHECK(prefetches(assembly(tall)));
  OracleComparison r = runAgainstOracle(tall);
  INFO(r.log);
  CHECK(r.pass);
}

TEST_CASE("blocks reading their own tiles prefetch the next block's tiles into L2") {
  CpuCompiled add = compileTlFile(example("elementwise_add/add.tl"), {{"M", "256"}, {"N", "512"}, {"dtype", "float32"}});
  std::string text = assembly(add);
  CHECK(prefetches(text));
}

TEST_CASE("a row reduction reading its rows in chunks prefetches the next block's rows before the chunks") {
  // The zoo's row maximum: cpu-lower-reduce walks each row of a 4 x 1024
  // tile in 16 chunks of 64 lanes, reading X in place (cpu-inline-producers);
  // the chunk loop's 1024 elements are prefetched for the next block.
  CpuCompiled rows = compileTlFile(std::string(TLC_SOURCE_DIR) + "/bench/zoo/row_max.tl");
  CHECK(prefetches(assembly(rows)));
  OracleComparison r = runAgainstOracle(rows, {{"M", 9}, {"N", 3000}});
  INFO(r.log);
  CHECK(r.pass);
}

TEST_CASE("tiles shared by several blocks are not prefetched") {
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
