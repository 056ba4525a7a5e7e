// Pass cpu-group-blocks (compiler/passes/cpu_group_blocks.h): 2 x 2 gemm
// blocks run jammed and share the operand tiles they copy alike. Checked on
// textual tile IR, for the kernels it must leave alone, and numerically
// against the interpreter (grids of odd extent, block-dependent lets and
// epilogues, dynamic shapes).
#include <doctest/doctest.h>

#include "compiler/passes/cpu_group_blocks.h"
#include "tests/cpu/cpu_test_util.h"
#include "tests/support/pass_text.h"

using namespace tlc;
using namespace tlc::test;

namespace {

ir::Module group(const ir::Module& m) { return cpu::groupBlocks(m, cpu::GroupLimits{1, 1 << 20}); }

void checkText(const std::string& text) { testing::checkPassText(text, group); }

}  // namespace

TEST_CASE("a gemm grid of unknown extent runs 2 x 4 blocks jammed, sharing one A tile per row and one B tile per column") {
  checkText(R"(
func @gemm[M, N, K](A: float32[M, K], B: float32[K, N], C: float32[M, N]) {
  kernel grid(floordiv(N + 127, 128), floordiv(M + 127, 128)) threads(128) as (bx, by) {
    alloc A_s: shared float32[128, 32]
    alloc B_s: shared float32[32, 128]
    alloc C_f: fragment float32[128, 128]
    fill(C_f, 0.0)
    for k in serial(0 : +floordiv(K + 31, 32)) {
      copy(A[by * 128 : +128, k * 32 : +32], A_s)
      copy(B[k * 32 : +32, bx * 128 : +128], B_s)
      gemm(A_s, B_s, C_f)
    }
    copy(C_f, C[by * 128 : +128, bx * 128 : +128])
  }
}
// Eight blocks, two along x and four along y; A tiles per grid row, B tiles
// per column, an accumulator per block.
// CHECK: kernel grid(floordiv(floordiv(N + 127, 128) + 1, 2), floordiv(floordiv(M + 127, 128) + 3, 4))
// CHECK-NEXT: alloc A_s: shared float32[128, 32]
// CHECK-NEXT: alloc A_s_g2: shared float32[128, 32]
// CHECK-NEXT: alloc A_s_g4: shared float32[128, 32]
// CHECK-NEXT: alloc A_s_g6: shared float32[128, 32]
// CHECK-NEXT: alloc B_s: shared float32[32, 128]
// CHECK-NEXT: alloc B_s_g1: shared float32[32, 128]
// CHECK-NEXT: alloc C_f: fragment float32[128, 128]
// CHECK: alloc C_f_g7: fragment float32[128, 128]
// CHECK-NEXT: fill(C_f, 0.0)
// CHECK-NEXT: if bx * 2 + 1 < floordiv(N + 127, 128) {
// CHECK-NEXT: fill(C_f_g1, 0.0)
// CHECK: for k in serial(0 : +floordiv(K + 31, 32)) {
// CHECK-NEXT: copy(A[by * 4 * 128 : +128, k * 32 : +32], A_s)
// CHECK-NEXT: if by * 4 + 1 < floordiv(M + 127, 128) {
// CHECK-NEXT: copy(A[(by * 4 + 1) * 128 : +128, k * 32 : +32], A_s_g2)
// CHECK: copy(A[(by * 4 + 3) * 128 : +128, k * 32 : +32], A_s_g6)
// CHECK: copy(B[k * 32 : +32, bx * 2 * 128 : +128], B_s)
// CHECK-NEXT: if bx * 2 + 1 < floordiv(N + 127, 128) {
// CHECK-NEXT: copy(B[k * 32 : +32, (bx * 2 + 1) * 128 : +128], B_s_g1)
// CHECK: gemm(A_s, B_s, C_f)
// CHECK: gemm(A_s, B_s_g1, C_f_g1)
// CHECK: gemm(A_s_g2, B_s, C_f_g2)
// CHECK: if bx * 2 + 1 < floordiv(N + 127, 128) and by * 4 + 3 < floordiv(M + 127, 128) {
// CHECK-NEXT: gemm(A_s_g6, B_s_g1, C_f_g7)
// CHECK: copy(C_f_g7, C[(by * 4 + 3) * 128 : +128, (bx * 2 + 1) * 128 : +128])
)");
}

TEST_CASE("block-dependent lets bind one variable per block; a loop with block-dependent bounds runs per block") {
  checkText(R"(
func @f[M, N](A: float32[M, 64], B: float32[64, N], O: int32[N], C: float32[M, N]) {
  kernel grid(2, 2) threads(128) as (bx, by) {
    alloc A_s: shared float32[32, 64]
    alloc B_s: shared float32[64, 32]
    alloc C_f: fragment float32[32, 32]
    let base = bx * 32
    copy(A[by * 32 : +32, 0 : +64], A_s)
    copy(B[0 : +64, base : +32], B_s)
    gemm(A_s, B_s, C_f, clear_accum=true)
    for t in serial(0 : +bx) {
      gemm(A_s, B_s, C_f)
    }
    copy(C_f, C[by * 32 : +32, base : +32])
  }
}
// CHECK: kernel grid(1, 1)
// CHECK: let base: int32 = bx * 2 * 32
// CHECK-NEXT: let base_g1: int32 = (bx * 2 + 1) * 32
// CHECK-NEXT: let base_g2: int32 = bx * 2 * 32
// CHECK-NEXT: let base_g3: int32 = (bx * 2 + 1) * 32
// CHECK: copy(B[0 : +64, base_g1 : +32], B_s_g1)
// CHECK: for t in serial(0 : +bx * 2) {
// CHECK: for t_1 in serial(0 : +bx * 2 + 1) {
// CHECK: copy(C_f_g3, C[(by * 2 + 1) * 32 : +32, base_g3 : +32])
)");
}

TEST_CASE("kernels without a shared gemm operand, with too large a group, or with a block-dependent load are left alone") {
  const char* elementwise = R"(
func @add(A: float32[256, 256], C: float32[256, 256]) {
  kernel grid(2, 2) threads(128) as (bx, by) {
    alloc T_: fragment float32[128, 128]
    copy(A[by * 128 : +128, bx * 128 : +128], T_)
    copy(T_, C[by * 128 : +128, bx * 128 : +128])
  }
}
)";
  // Tiles of A and B that depend on both block indices are not shared.
  const char* unshared = R"(
func @g(A: float32[512, 64], B: float32[64, 512], C: float32[256, 256]) {
  kernel grid(2, 2) threads(128) as (bx, by) {
    alloc A_s: shared float32[128, 64]
    alloc B_s: shared float32[64, 128]
    alloc C_f: fragment float32[128, 128]
    copy(A[(by + bx) * 128 : +128, 0 : +64], A_s)
    copy(B[0 : +64, (bx + by) * 128 : +128], B_s)
    gemm(A_s, B_s, C_f, clear_accum=true)
    copy(C_f, C[by * 128 : +128, bx * 128 : +128])
  }
}
)";
  // Accumulators of 512 KiB: even two blocks pass the group's 1 MiB.
  const char* large = R"(
func @g(A: float32[512, 64], B: float32[64, 1024], C: float32[512, 1024]) {
  kernel grid(2, 2) threads(128) as (bx, by) {
    alloc A_s: shared float32[256, 64]
    alloc B_s: shared float32[64, 512]
    alloc C_f: fragment float32[256, 512]
    copy(A[by * 256 : +256, 0 : +64], A_s)
    copy(B[0 : +64, bx * 512 : +512], B_s)
    gemm(A_s, B_s, C_f, clear_accum=true)
    copy(C_f, C[by * 256 : +256, bx * 512 : +512])
  }
}
)";
  // A block past the grid's end would read offsets[bx] out of bounds.
  const char* indirect = R"(
func @g(A: float32[256, 64], B: float32[64, 256], O: int32[3], C: float32[256, 256]) {
  kernel grid(3, 2) threads(128) as (bx, by) {
    alloc A_s: shared float32[128, 64]
    alloc B_s: shared float32[64, 64]
    alloc C_f: fragment float32[128, 64]
    let col = O[bx]
    copy(A[by * 128 : +128, 0 : +64], A_s)
    copy(B[0 : +64, col : +64], B_s)
    gemm(A_s, B_s, C_f, clear_accum=true)
    copy(C_f, C[by * 128 : +128, col : +64])
  }
}
)";
  for (const char* text : {elementwise, unshared, large, indirect}) {
    std::string printed = testing::runPassOnText(text, group);
    INFO(printed);
    CHECK(printed.find("kernel grid(1") == std::string::npos);
    CHECK(printed.find("_g1") == std::string::npos);
  }
}

TEST_CASE("grouped gemm blocks agree with the interpreter: odd grids, dynamic shapes, epilogues that use the block") {
  const char* src = R"(
def gemm_epilogue[M, N, K, bM=32, bN=32, bK=16](A: Tensor[(M, K), float32], B: Tensor[(K, N), float32],
                                               bias: Tensor[(N,), float32], C: Tensor[(M, N), float32]):
    with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=128) as (bx, by):
        A_s = T.alloc_shared((bM, bK), float32)
        B_s = T.alloc_shared((bK, bN), float32)
        C_f = T.alloc_fragment((bM, bN), float32)
        T.clear(C_f)
        for k in T.Pipelined(T.ceildiv(K, bK), num_stages=2):
            T.copy(A[by * bM, k * bK], A_s)
            T.copy(B[k * bK, bx * bN], B_s)
            T.gemm(A_s, B_s, C_f)
        for i, j in T.Parallel(bM, bN):
            if bx * bN + j < N:
                C_f[i, j] = C_f[i, j] + bias[bx * bN + j] * (by + 1)
        T.copy(C_f, C[by * bM, bx * bN])
)";
  CpuCompiled c = compileTl(src);
  REQUIRE(c.module);
  auto lowered = driver::lowerModuleForCpu(*c.module, {}, *c.diags);
  REQUIRE(lowered);
  CHECK(ir::printModule(*lowered).find("C_f_g3") != std::string::npos);
  // Grids of 1 x 1, 3 x 5 (odd both ways) and 4 x 2 blocks.
  for (auto dims : std::vector<std::map<std::string, int64_t>>{
           {{"M", 7}, {"N", 5}, {"K", 3}}, {{"M", 129}, {"N", 77}, {"K", 50}}, {{"M", 64}, {"N", 128}, {"K", 33}}}) {
    OracleComparison r = runAgainstOracle(c, dims);
    INFO(r.log);
    CHECK(r.pass);
  }
}

// Block-sparse gemms, as TileLang users write them: whether a block runs a
// step is read from its own copy of a mask (a local buffer, a var). The
// condition depends on the block, so each block of a group keeps its own.
TEST_CASE("conditions and bounds read from a block's own buffers run per block and agree with the interpreter") {
  const char* src = R"(
def block_sparse[M, N, K=64, bM=32, bN=32, bK=16](A: Tensor[(M, K), float32], B: Tensor[(K, N), float32],
                                                  Mask: Tensor[(T.ceildiv(M, bM), T.ceildiv(K, bK)), int32],
                                               Steps: Tensor[(T.ceildiv(N, bN),), int32], C: Tensor[(M, N), float32]):
    with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=128) as (bx, by):
        A_s = T.alloc_shared((bM, bK), float32)
        B_s = T.alloc_shared((bK, bN), float32)
        C_f = T.alloc_fragment((bM, bN), float32)
        m = T.alloc_local((T.ceildiv(K, bK),), int32)
        n = T.alloc_var(int32)
        for k in T.serial(T.ceildiv(K, bK)):
            m[k] = Mask[by, k]
        n = Steps[bx]
        T.clear(C_f)
        for k in T.serial(T.min(n, T.ceildiv(K, bK))):
            if m[k] != 0:
                T.copy(A[by * bM, k * bK], A_s)
                T.copy(B[k * bK, bx * bN], B_s)
                T.gemm(A_s, B_s, C_f)
        T.copy(C_f, C[by * bM, bx * bN])
)";
  CpuCompiled c = compileTl(src);
  REQUIRE(c.module);
  for (auto dims : std::vector<std::map<std::string, int64_t>>{{{"M", 100}, {"N", 70}}, {{"M", 64}, {"N", 128}}}) {
    OracleComparison r = runAgainstOracle(c, dims, 7, {}, {}, {{"Mask", {0, 2}}, {"Steps", {0, 5}}});
    INFO(r.log);
    CHECK(r.pass);
  }
}
