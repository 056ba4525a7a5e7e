// The shape of the CPU backend's vector loops: cpu-guards-to-bounds
// (compiler/passes/cpu_guards_to_bounds.h) and the vector width of loops that
// widen float16 tiles (compiler/backends/cpu/vector_width.h), transposing
// nests through registers (compiler/backends/cpu/tile_transpose.h), and the
// lanes of row reductions (cpu-lower-reduce) kept in registers.
#include <doctest/doctest.h>

#include "compiler/backends/cpu/cpu_backend.h"
#include "compiler/ir/functor.h"
#include "tests/cpu/cpu_test_util.h"

using namespace tlc;
using namespace tlc::test;

namespace {

// A row gather written as users write it: a guard on the row and the column,
// the row's index read inside it.
const char* kGather = R"(
def gather[M, R, N, block_M=8, block_N=256](
        X: Tensor[(R, N), float32], index: Tensor[(M,), int32], Y: Tensor[(M, N), float32]):
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
        for i, j in T.Parallel(block_M, block_N):
            r = by * block_M + i
            c = bx * block_N + j
            if r < M and c < N:
                src = T.max(T.min(index[r], R - 1), 0)
                Y[r, c] = X[src, c]
)";

// Guards that must partly stay: a part reading memory after a part that
// depends on the column (it may only run where that part holds), lower
// bounds (`>=`, `>`) and `<=`, and a guard reading memory before the bounds.
const char* kMixedGuards = R"(
def mixed[M, N, block_N=64](X: Tensor[(M, N), float32], F: Tensor[(M,), int32], Y: Tensor[(M, N), float32]):
    with T.Kernel(T.ceildiv(N, block_N), M, threads=64) as (bx, r):
        for j in T.Parallel(block_N):
            c = bx * block_N + j
            if F[r] > 0 and c >= 3 and c <= N - 1 and X[r, c] > 0.0:
                Y[r, c] = X[r, c] * 2.0
        for j in T.Parallel(block_N):
            c = bx * block_N + j
            if 5 < c and c < N and r < M:
                Y[r, c] = Y[r, c] + 1.0
)";

struct VectorLoops : ir::IRVisitor {
  int loops = 0, ifsInside = 0, loadsOf = 0;
  std::string buffer;
  int depth = 0;
  void visitFor(const ir::ForStmt* f) override {
    bool vec = f->forKind == ir::ForKind::Vectorized;
    loops += vec;
    depth += vec;
    ir::IRVisitor::visitFor(f);
    depth -= vec;
  }
  void visitIf(const ir::IfStmt* s) override {
    ifsInside += depth > 0;
    ir::IRVisitor::visitIf(s);
  }
  void visitLoad(const ir::Load* l) override {
    loadsOf += depth > 0 && l->buffer->name == buffer;
    ir::IRVisitor::visitLoad(l);
  }
};

std::optional<ir::Module> lowered(CpuCompiled& c) {
  REQUIRE(c.module);
  auto m = driver::lowerModuleForCpu(*c.module, {}, *c.diags);
  INFO(c.rendered());
  REQUIRE(m);
  return m;
}

VectorLoops census(const ir::Module& m, const char* buffer) {
  VectorLoops v;
  v.buffer = buffer;
  v.visit(m.funcs[0]->body);
  return v;
}

void checkAgainstOracle(CpuCompiled& c, const std::vector<std::map<std::string, int64_t>>& sizes) {
  for (const auto& dims : sizes) {
    OracleComparison r = runAgainstOracle(c, dims);
    INFO(r.log);
    CHECK(r.pass);
  }
}

}  // namespace

TEST_CASE("the guard of a row gather becomes loop bounds; the row's index is read before the loop") {
  CpuCompiled c = compileTl(kGather);
  auto m = lowered(c);
  VectorLoops v = census(*m, "index");
  // Two versions of the loop (cpu-version-guards): whole tiles, and edges.
  CHECK(v.loops == 2);
  CHECK(v.ifsInside == 0);
  CHECK(v.loadsOf == 0);
  // Contiguous vector loads and stores: no gather, no masked access.
  std::string ir = cpu::emitLLVMText(*m, {}, true);
  CHECK(ir.find("masked.gather") == std::string::npos);
  CHECK(ir.find("masked.load") == std::string::npos);
  checkAgainstOracle(c, {{{"M", 37}, {"R", 50}, {"N", 300}}, {{"M", 16}, {"R", 3}, {"N", 256}}});
}

TEST_CASE("guard parts that read memory after a column-dependent part stay in the loop") {
  CpuCompiled c = compileTl(kMixedGuards);
  auto m = lowered(c);
  VectorLoops v = census(*m, "F");
  // Each nest in two versions (cpu-version-guards): whole tiles, and edges.
  CHECK(v.loops == 4);
  CHECK(v.ifsInside == 2);  // `X[r, c] > 0` only, in each version of the first nest
  CHECK(v.loadsOf == 0);    // `F[r] > 0` comes first: it moves out
  checkAgainstOracle(c, {{{"M", 5}, {"N", 130}}, {{"M", 3}, {"N", 4}}, {{"M", 2}, {"N", 64}}});
}

TEST_CASE("a loop widening float16 to float32 fills a vector register of float32") {
  CpuCompiled c = compileTlFile(std::string(TLC_SOURCE_DIR) + "/bench/zoo/gelu.tl");
  auto m = lowered(c);
  cpu::CpuOptions avx2;
  avx2.cpu = "x86-64-v3";  // 256-bit vectors: 8 float32 lanes
  std::string ir = cpu::emitLLVMText(*m, avx2, true);
  CHECK(ir.find("fpext <8 x half>") != std::string::npos);
  CHECK(ir.find("fpext <4 x half>") == std::string::npos);
}

TEST_CASE("a transposing nest moves square blocks through registers, for every element size") {
  const char* src = R"(
def tr[M, N, block=32, dtype=float16](A: Tensor[(M, N), dtype], B: Tensor[(N, M), dtype]):
    with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=128) as (bx, by):
        tile = T.alloc_shared((block, block), dtype)
        out = T.alloc_fragment((block, block), dtype)
        T.copy(A[by * block, bx * block], tile)
        for i, j in T.Parallel(block, block):
            out[i, j] = tile[j, i]
        T.copy(out, B[bx * block, by * block])
)";
  for (const char* dt : {"float16", "float32", "int8", "float64", "bfloat16"}) {
    CpuCompiled c = compileTl(src, {{"dtype", dt}});
    auto m = lowered(c);
    INFO(dt);
    CHECK(cpu::emitLLVMText(*m, {}, false).find("shufflevector") != std::string::npos);
    checkAgainstOracle(c, {{{"M", 64}, {"N", 96}}, {{"M", 45}, {"N", 70}}});
  }
}

// A row reduction's partial results are combined pairwise; its last levels
// are statements, so that LLVM keeps the lane array in registers (no alloca
// is left for it): a float max over rows of 64 (one vector of 16 lanes) and
// of 4096 (four vectors), an int32 min, and a row of 20 (a remainder).
TEST_CASE("the lanes of a row reduction stay in registers") {
  CpuCompiled c = compileTl(R"(
def rows[M, N](X: Tensor[(M, N), float32], I: Tensor[(M, N), int32], W: Tensor[(M, 4096), float32],
        S: Tensor[(M, 20), float32], Mx: Tensor[(M,), float32], Mn: Tensor[(M,), int32],
        Wm: Tensor[(M,), float32], Ss: Tensor[(M,), float32]):
    with T.Kernel(T.ceildiv(M, 16), threads=128) as bx:
        x = T.alloc_fragment((16, N), float32)
        i = T.alloc_fragment((16, N), int32)
        w = T.alloc_fragment((2, 4096), float32)
        s = T.alloc_fragment((16, 20), float32)
        mx = T.alloc_fragment((16,), float32)
        mn = T.alloc_fragment((16,), int32)
        wm = T.alloc_fragment((2,), float32)
        ss = T.alloc_fragment((16,), float32)
        T.copy(X[bx * 16, 0], x)
        T.copy(I[bx * 16, 0], i)
        T.copy(W[bx * 2, 0], w)
        T.copy(S[bx * 16, 0], s)
        T.reduce_max(x, mx, dim=1)
        T.reduce_min(i, mn, dim=1)
        T.reduce_max(w, wm, dim=1)
        T.reduce_sum(s, ss, dim=1)
        T.copy(mx, Mx[bx * 16])
        T.copy(mn, Mn[bx * 16])
        T.copy(wm, Wm[bx * 2])
        T.copy(ss, Ss[bx * 16])
)",
                            {{"N", "64"}});
  auto m = lowered(c);
  std::string ir = cpu::emitLLVMText(*m, {}, true);
  CHECK(ir.find("_part = alloca") == std::string::npos);
  checkAgainstOracle(c, {{{"M", 37}}, {{"M", 16}}});
}
