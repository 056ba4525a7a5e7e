// Hand-written kernels on the CPU backend against the reference interpreter:
// every gemm transpose combination, gemm straight from global memory, split-K
// with atomics, reductions of every kind, casts and builtins.
#include <doctest/doctest.h>

#include "compiler/ir/printer.h"
#include "tests/cpu/cpu_test_util.h"

using namespace tlc;
using namespace tlc::test;

static void check(const std::string& src, const std::vector<Define>& defines,
                  const std::map<std::string, int64_t>& dims = {}) {
  CpuCompiled c = compileTl(src, defines);
  std::string what;
  for (const Define& d : defines) what += " -D " + d.name + "=" + d.value;
  CAPTURE(what);
  OracleComparison r = runAgainstOracle(c, dims);
  INFO(r.log);
  REQUIRE(r.compiled);
  CHECK(r.ran);
  CHECK(r.pass);
}

static const char* kGemmTransposed = R"(
def gemm_t[M, N, K, tA=False, tB=False, block_M=64, block_N=64, block_K=32, dtype=float32](
        A: Tensor[(M, K), dtype], B: Tensor[(K, N), dtype], AT: Tensor[(K, M), dtype], BT: Tensor[(N, K), dtype],
        C: Tensor[(M, N), float32]):
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_s = T.alloc_shared((block_M, block_K), dtype)
        AT_s = T.alloc_shared((block_K, block_M), dtype)
        B_s = T.alloc_shared((block_K, block_N), dtype)
        BT_s = T.alloc_shared((block_N, block_K), dtype)
        C_f = T.alloc_fragment((block_M, block_N), float32)
        T.clear(C_f)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
            if tA:
                T.copy(AT[k * block_K, by * block_M], AT_s)
            else:
                T.copy(A[by * block_M, k * block_K], A_s)
            if tB:
                T.copy(BT[bx * block_N, k * block_K], BT_s)
            else:
                T.copy(B[k * block_K, bx * block_N], B_s)
            if tA:
                if tB:
                    T.gemm(AT_s, BT_s, C_f, transpose_A=True, transpose_B=True)
                else:
                    T.gemm(AT_s, B_s, C_f, transpose_A=True)
            else:
                if tB:
                    T.gemm(A_s, BT_s, C_f, transpose_B=True)
                else:
                    T.gemm(A_s, B_s, C_f)
        T.copy(C_f, C[by * block_M, bx * block_N])
)";

TEST_CASE("gemm with every transpose combination, float32 and float16") {
  for (const char* dtype : {"float32", "float16"})
    for (const char* ta : {"False", "True"})
      for (const char* tb : {"False", "True"})
        // K = 75: 4 blocks of 16 k of a transposed B panel pass through
        // registers, 11 rows are packed one by one; N = 130: 4 full panels
        // of 32 columns and a masked one.
        check(kGemmTransposed,
              {{"M", "97"}, {"N", "130"}, {"K", "75"}, {"tA", ta}, {"tB", tb}, {"dtype", dtype}});
}

TEST_CASE("coarsened gemm loops: A read in place, whole-tile copies, per-step copies of the last group") {
  // block_K = 16 steps grouped 16 at a time (256 k): K = 700 is two whole
  // groups and a last group of 12 steps (the last one partial); K = 512 whole
  // groups only; K = 40 a single partial group. M and N are not multiples of
  // the tiles either.
  const char* src = R"(
def g[M, N, K, block_M=64, block_N=48, block_K=16, dtype=float32](
        A: Tensor[(M, K), dtype], B: Tensor[(K, N), dtype], C: Tensor[(M, N), float32]):
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_s = T.alloc_shared((block_M, block_K), dtype)
        B_s = T.alloc_shared((block_K, block_N), dtype)
        C_f = T.alloc_fragment((block_M, block_N), float32)
        T.clear(C_f)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
            T.copy(A[by * block_M, k * block_K], A_s)
            T.copy(B[k * block_K, bx * block_N], B_s)
            T.gemm(A_s, B_s, C_f)
        T.copy(C_f, C[by * block_M, bx * block_N])
)";
  for (const char* k : {"700", "512", "40"}) {
    check(src, {{"M", "97"}, {"N", "101"}, {"K", k}});
    check(src, {{"M", "70"}, {"N", "50"}, {"K", k}, {"dtype", "float16"}});
  }
  // Dynamic sizes: the gemm clamps M and K of A read in place at run time.
  check(src, {}, {{"M", 65}, {"N", 49}, {"K", 300}});
}

TEST_CASE("split-K gemm accumulating into global memory with atomic_add") {
  const char* src = R"(
def splitk[M, N, K, block_M=32, block_N=32, block_K=16, splits=4](
        A: Tensor[(M, K), float32], B: Tensor[(K, N), float32], C: Tensor[(M, N), float32]):
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), splits, threads=128) as (bx, by, bz):
        A_s = T.alloc_shared((block_M, block_K), float32)
        B_s = T.alloc_shared((block_K, block_N), float32)
        C_f = T.alloc_fragment((block_M, block_N), float32)
        T.clear(C_f)
        for k in T.serial(T.ceildiv(K, block_K * splits)):
            T.copy(A[by * block_M, (k * splits + bz) * block_K], A_s)
            T.copy(B[(k * splits + bz) * block_K, bx * block_N], B_s)
            T.gemm(A_s, B_s, C_f)
        for i, j in T.Parallel(block_M, block_N):
            if by * block_M + i < M and bx * block_N + j < N:
                T.atomic_add(C[by * block_M + i, bx * block_N + j], C_f[i, j])
)";
  // C starts random: the kernel adds A @ B to it, as the interpreter does.
  check(src, {{"M", "70"}, {"N", "45"}, {"K", "200"}});
}

TEST_CASE("row reductions of every kind, with and without clear") {
  const char* src = R"(
def reductions[M, N, block_M=16, dtype=float32](
        X: Tensor[(M, N), dtype], S: Tensor[(M,), float32], Mx: Tensor[(M,), float32], Mn: Tensor[(M,), float32],
        AS: Tensor[(M,), float32], AM: Tensor[(M,), float32]):
    with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
        X_f = T.alloc_fragment((block_M, N), float32)
        r = T.alloc_fragment((block_M,), float32)
        T.copy(X[bx * block_M, 0], X_f)
        T.reduce_sum(X_f, r, dim=1)
        T.copy(r, S[bx * block_M])
        T.reduce_max(X_f, r, dim=1)
        T.copy(r, Mx[bx * block_M])
        T.copy(Mn[bx * block_M], r)
        T.reduce_min(X_f, r, dim=1, clear=False)
        T.copy(r, Mn[bx * block_M])
        T.reduce_abssum(X_f, r, dim=1)
        T.copy(r, AS[bx * block_M])
        T.reduce_absmax(X_f, r, dim=1)
        T.copy(r, AM[bx * block_M])
)";
  check(src, {{"M", "50"}, {"N", "77"}});
  check(src, {{"M", "33"}, {"N", "64"}, {"dtype", "bfloat16"}});
}

TEST_CASE("column reduction (dim=0) and elementwise builtins") {
  const char* src = R"(
def colmath[M, N, block_N=32](X: Tensor[(M, N), float32], Y: Tensor[(M, N), float32], S: Tensor[(N,), float32]):
    with T.Kernel(T.ceildiv(N, block_N), threads=128) as bx:
        X_f = T.alloc_fragment((M, block_N), float32)
        s = T.alloc_fragment((block_N,), float32)
        T.copy(X[0, bx * block_N], X_f)
        T.reduce_sum(X_f, s, dim=0)
        T.copy(s, S[bx * block_N])
        for i, j in T.Parallel(M, block_N):
            X_f[i, j] = T.exp(X_f[i, j]) + T.sqrt(T.abs(X_f[i, j])) * T.tanh(X_f[i, j]) - T.max(X_f[i, j], 0.25)
        T.copy(X_f, Y[0, bx * block_N])
)";
  check(src, {{"M", "20"}, {"N", "100"}});
}

// The vector forms of cpu-lower-reduce: lanes of partial results along the
// last dimension (one vector of lanes, or four from N = 300; int32 and
// float32, with a remainder past the last whole
// chunk), a row of accumulators along an outer dimension of a 3-D tile
// (with clear=False), and a sub-region of a shared tile.
TEST_CASE("reductions in vector form: lanes along the last dimension, rows along an outer one") {
  const char* src = R"(
def vector_reductions[B, N, block_N=48](
        X: Tensor[(B, 6, N), float32], I: Tensor[(B, N), int32], RowSum: Tensor[(B, 6), float32],
        MidMax: Tensor[(B, N), float32], MidSum: Tensor[(B, N), float32], IntSum: Tensor[(B,), int32],
        Edge: Tensor[(B,), float32]):
    with T.Kernel(B, threads=64) as b:
        x = T.alloc_fragment((6, N), float32)
        rs = T.alloc_fragment((6,), float32)
        mm = T.alloc_fragment((N,), float32)
        ms = T.alloc_fragment((N,), float32)
        xi = T.alloc_fragment((1, N), int32)
        si = T.alloc_fragment((1,), int32)
        sh = T.alloc_shared((2, block_N), float32)
        e = T.alloc_fragment((1,), float32)
        T.copy(X[b, 0, 0], x)
        T.copy(I[b, 0], xi)
        T.reduce_sum(x, rs, dim=1)
        T.copy(rs, RowSum[b, 0])
        T.reduce_max(x, mm, dim=0)
        T.copy(mm, MidMax[b, 0])
        T.fill(ms, 0.5)
        T.reduce_sum(x, ms, dim=0, clear=False)
        T.copy(ms, MidSum[b, 0])
        T.reduce_sum(xi, si, dim=1)
        T.copy(si, IntSum[b])
        T.copy(X[b, 0, 0], sh)
        T.reduce_absmax(sh[1:2, 8:block_N], e, dim=1)
        T.copy(e, Edge[b])
)";
  for (const char* n : {"77", "32", "100", "300"}) check(src, {{"N", n}}, {{"B", 3}});
}

TEST_CASE("the lanes of a row reduction combine as a tree of vector loops") {
  // 300 float32: 4 chunks of 64 lanes, then 32, 16, 8 and 4 lanes combine
  // pairwise in vector loops, the last 2 and 1 in statements; the 44
  // elements past the chunks follow in order.
  const char* src = R"(
def rows[M, N=300](X: Tensor[(M, N), float32], S: Tensor[(M,), float32], Mx: Tensor[(M,), float32]):
    with T.Kernel(M, threads=32) as b:
        x = T.alloc_fragment((1, N), float32)
        s = T.alloc_fragment((1,), float32)
        m = T.alloc_fragment((1,), float32)
        T.copy(X[b, 0], x)
        T.reduce_sum(x, s, dim=1)
        T.reduce_max(x, m, dim=1)
        T.copy(s, S[b])
        T.copy(m, Mx[b])
)";
  CpuCompiled c = compileTl(src);
  REQUIRE(c.module);
  auto lowered = driver::lowerModuleForCpu(*c.module, {}, *c.diags);
  REQUIRE(lowered);
  std::string ir = ir::printModule(*lowered);
  INFO(ir);
  for (const char* w : {"+32)", "+16)", "+8)", "+4)"})
    CHECK(ir.find(std::string("in vectorized(0 : ") + w) != std::string::npos);
  CHECK(ir.find("s_part[1] = s_part[1] + s_part[3]") != std::string::npos);
  CHECK(ir.find("s_part[0] = s_part[0] + s_part[1]") != std::string::npos);
  CHECK(ir.find("in serial(0 : +64)") == std::string::npos);
  for (int64_t m : {1, 5}) {
    OracleComparison r = runAgainstOracle(c, {{"M", m}});
    INFO(r.log);
    CHECK(r.pass);
  }
}

// Reductions of many short rows (at least one vector of rows, a multiple of
// it): each row's lanes narrow to one vector, the rows' vectors are
// transposed and combined across the rows (cpu-lower-reduce,
// lowerAcrossRows). Every kind, clear=False, a float16 destination, rows of
// one and of four vectors of lanes, and a region of a larger tile.
TEST_CASE("reductions of many short rows combine across the rows") {
  const char* src = R"(
def short_rows[M, N](X: Tensor[(M, N), float32], H: Tensor[(M, N), float16], I: Tensor[(M, N), int32],
        S: Tensor[(M,), float32], Mx: Tensor[(M,), float32], Mn: Tensor[(M,), int32], A: Tensor[(M,), float16],
        Acc: Tensor[(M,), float32], Part: Tensor[(M,), float32]):
    with T.Kernel(T.ceildiv(M, 32), threads=128) as bx:
        x = T.alloc_fragment((32, N), float32)
        h = T.alloc_fragment((32, N), float16)
        i = T.alloc_fragment((32, N), int32)
        s = T.alloc_fragment((32,), float32)
        mx = T.alloc_fragment((32,), float32)
        mn = T.alloc_fragment((32,), int32)
        a = T.alloc_fragment((32,), float16)
        acc = T.alloc_fragment((32,), float32)
        part = T.alloc_fragment((16,), float32)
        T.copy(X[bx * 32, 0], x)
        T.copy(H[bx * 32, 0], h)
        T.copy(I[bx * 32, 0], i)
        T.reduce_sum(x, s, dim=1)
        T.reduce_max(x, mx, dim=1)
        T.reduce_min(i, mn, dim=1)
        T.reduce_absmax(h, a, dim=1)
        T.copy(Acc[bx * 32], acc)
        T.reduce_sum(x, acc, dim=1, clear=False)
        T.reduce_max(x[16:32, 0:N], part, dim=1)
        T.copy(s, S[bx * 32])
        T.copy(mx, Mx[bx * 32])
        T.copy(mn, Mn[bx * 32])
        T.copy(a, A[bx * 32])
        T.copy(acc, Acc[bx * 32])
        T.copy(part, Part[bx * 32])
)";
  for (const char* n : {"32", "64", "128"}) {
    CpuCompiled c = compileTl(src, {{"N", n}});
    REQUIRE_MESSAGE(c.module, c.rendered());
    auto lowered = driver::lowerModuleForCpu(*c.module, {}, *c.diags);
    REQUIRE(lowered);
    std::string ir = ir::printModule(*lowered);
    INFO(ir);
    CHECK(ir.find("mx_cols") != std::string::npos);
    CHECK(ir.find("part_cols") != std::string::npos);
    for (int64_t m : {32, 45}) {
      OracleComparison r = runAgainstOracle(c, {{"M", m}});
      INFO(r.log);
      CHECK(r.pass);
    }
  }
}
