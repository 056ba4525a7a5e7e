// Language features compiled by the front end and run by the interpreter,
// each checked against a reference computed here.
#include <doctest/doctest.h>

#include <cmath>

#include "compiler/driver/run_common.h"
#include "compiler/ir/printer.h"
#include "compiler/sema/frontend.h"

using namespace tlc;
using namespace tlc::driver;
using interp::HostTensor;

namespace {

struct Program {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  std::optional<ir::Module> module;

  Program(const std::string& source, const std::vector<Define>& defines = {}) {
    uint32_t file = sm.addBuffer("test.tl", source);
    module = compileSource(sm, diags, file, defines);
    INFO(diags.renderAll());
    REQUIRE(module);
  }
  RunArgs run(const std::map<std::string, int64_t>& dims, bool expectClean = true) {
    const ir::PrimFunc& f = *module->funcs.front();
    std::optional<RunArgs> args = makeArguments(f, dims, 3, diags);
    INFO(diags.renderAll());
    REQUIRE(args);
    bool ok = runOracle(f, *args, diags);
    INFO(diags.renderAll() << "\n" << ir::printModule(*module));
    REQUIRE(ok);
    if (expectClean) CHECK(diags.diagnostics().empty());
    return std::move(*args);
  }
};

}  // namespace

TEST_CASE("gemm with transposed operands written in .tl") {
  Program p(R"(
def gemm_nt[M, N, K, bm=32, bn=32, bk=16](
        A: Tensor[(K, M), float32], B: Tensor[(N, K), float32], C: Tensor[(M, N), float32]):
    with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
        A_s = T.alloc_shared((bk, bm), float32)
        B_s = T.alloc_shared((bn, bk), float32)
        C_f = T.alloc_fragment((bm, bn), float32)
        T.clear(C_f)
        for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
            T.copy(A[k * bk, by * bm], A_s)
            T.copy(B[bx * bn, k * bk], B_s)
            T.gemm(A_s, B_s, C_f, transpose_A=True, transpose_B=True)
        T.copy(C_f, C[by * bm, bx * bn])
)");
  const int64_t M = 45, N = 38, K = 29;
  RunArgs a = p.run({{"M", M}, {"N", N}, {"K", K}});
  const HostTensor &A = *a.tensors[0], &B = *a.tensors[1], &C = *a.tensors[2];
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) s += A.get(k * M + i) * B.get(j * K + k);
      CHECK(C.get(i * N + j) == doctest::Approx(s).epsilon(1e-5));
    }
}

TEST_CASE("alloc_var accumulators, serial loops and if/else") {
  Program p(R"(
def dot_rows[M, N](X: Tensor[(M, N), float32], out: Tensor[(M,), float32]):
    with T.Kernel(M, threads=1) as bx:
        acc = T.alloc_var(float32, 0)
        for j in T.serial(N):
            if X[bx, j] > 0:
                acc = acc + X[bx, j]
            else:
                acc = acc - X[bx, j] * 2.0
        out[bx] = acc
)");
  const int64_t M = 7, N = 33;
  RunArgs a = p.run({{"M", M}, {"N", N}});
  for (int64_t i = 0; i < M; ++i) {
    float acc = 0;
    for (int64_t j = 0; j < N; ++j) {
      float x = static_cast<float>(a.tensors[0]->get(i * N + j));
      acc = x > 0 ? acc + x : acc - x * 2.0f;
    }
    CHECK(a.tensors[1]->get(i) == acc);
  }
}

TEST_CASE("atomic_add from every block into a global total") {
  Program p(R"(
def total[N, bn=16](X: Tensor[(N,), float32], out: Tensor[(1,), float32]):
    with T.Kernel(T.ceildiv(N, bn), threads=32) as bx:
        for i in T.serial(bn):
            if bx * bn + i < N:
                T.atomic_add(out[0], X[bx * bn + i])
)");
  const int64_t N = 100;
  std::optional<RunArgs> a = makeArguments(*p.module->funcs.front(), {{"N", N}}, 5, p.diags);
  REQUIRE(a);
  double want = a->tensors[1]->get(0);  // out starts with its random value; every element is added
  for (int64_t i = 0; i < N; ++i) want += a->tensors[0]->get(i);
  REQUIRE(runOracle(*p.module->funcs.front(), *a, p.diags));
  CHECK(p.diags.diagnostics().empty());
  CHECK(a->tensors[1]->get(0) == doctest::Approx(want).epsilon(1e-5));
}

TEST_CASE("row max, min and absmax reductions with clear=False over several tiles") {
  Program p(R"(
def row_stats[M, N, bm=8, bn=16](X: Tensor[(M, N), float32], mx: Tensor[(M,), float32],
                                 mn: Tensor[(M,), float32], amx: Tensor[(M,), float32]):
    with T.Kernel(T.ceildiv(M, bm), threads=32) as bx:
        X_f = T.alloc_fragment((bm, bn), float32)
        a = T.alloc_fragment((bm,), float32)
        b = T.alloc_fragment((bm,), float32)
        c = T.alloc_fragment((bm,), float32)
        T.fill(a, -T.infinity(float32))
        T.fill(b, T.infinity(float32))
        T.clear(c)
        for k in T.serial(T.ceildiv(N, bn)):
            T.copy(X[bx * bm, k * bn], X_f)
            for i, j in T.Parallel(bm, bn):
                X_f[i, j] = T.if_then_else(k * bn + j < N, X_f[i, j], X_f[i, 0])
            T.reduce_max(X_f, a, dim=1, clear=False)
            T.reduce_min(X_f, b, dim=1, clear=False)
            T.reduce_absmax(X_f, c, dim=1, clear=False)
        T.copy(a, mx[bx * bm])
        T.copy(b, mn[bx * bm])
        T.copy(c, amx[bx * bm])
)");
  const int64_t M = 20, N = 50;
  RunArgs a = p.run({{"M", M}, {"N", N}});
  for (int64_t i = 0; i < M; ++i) {
    double mx = -INFINITY, mn = INFINITY, amx = 0;
    for (int64_t j = 0; j < N; ++j) {
      double x = a.tensors[0]->get(i * N + j);
      mx = std::max(mx, x);
      mn = std::min(mn, x);
      amx = std::max(amx, std::fabs(x));
    }
    CHECK(a.tensors[1]->get(i) == mx);
    CHECK(a.tensors[2]->get(i) == mn);
    CHECK(a.tensors[3]->get(i) == amx);
  }
}

TEST_CASE("reductions without dim reduce the last dimension, as in TileLang; a 1-D tile reduces to one element") {
  Program p(R"(
def last_axis[G, R](X: Tensor[(G, R, R), float32], S: Tensor[(G, R), float32], total: Tensor[(1,), float32]):
    with T.Kernel(1, threads=64) as bx:
        x = T.alloc_fragment((G, R, R), float32)
        s = T.alloc_fragment((G, R), float32)
        row = T.alloc_fragment((R,), float32)
        t = T.alloc_fragment((1,), float32)
        T.copy(X, x)
        T.reduce_sum(x, s)
        for j in T.Parallel(R):
            row[j] = x[G - 1, R - 1, j]
        T.reduce_max(row, t)
        T.copy(s, S)
        T.copy(t, total)
)",
            {{"G", "3"}, {"R", "5"}});
  RunArgs a = p.run({});
  const HostTensor &X = *a.tensors[0], &S = *a.tensors[1], &T = *a.tensors[2];
  for (int64_t g = 0; g < 3; ++g)
    for (int64_t i = 0; i < 5; ++i) {
      double sum = 0;
      for (int64_t j = 0; j < 5; ++j) sum += X.get((g * 5 + i) * 5 + j);
      CHECK(std::fabs(S.get(g * 5 + i) - sum) <= 1e-5 * (1 + std::fabs(sum)));
    }
  double mx = -INFINITY;
  for (int64_t j = 0; j < 5; ++j) mx = std::max(mx, X.get((2 * 5 + 4) * 5 + j));
  CHECK(T.get(0) == mx);
}

TEST_CASE("a factory's value computed from a dynamic dimension names its expression in tensor shapes") {
  Program p(R"(
import tilelang.language as T

def half_rows(M, N=8):
    half = M // 2

    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Y: T.Tensor((half, N), "float32")):
        with T.Kernel(T.ceildiv(half, 4), threads=32) as bx:
            for i, j in T.Parallel(4, N):
                if bx * 4 + i < half:
                    Y[bx * 4 + i, j] = X[2 * (bx * 4 + i), j]

    return main
)");
  RunArgs a = p.run({{"M", 11}});
  const HostTensor &X = *a.tensors[0], &Y = *a.tensors[1];
  REQUIRE(Y.shape == std::vector<int64_t>{5, 8});
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 8; ++j) CHECK(Y.get(i * 8 + j) == X.get(2 * i * 8 + j));
}

TEST_CASE("an else branch and the arms of a conditional see the loop ranges their side of the condition bounds") {
  // The rotate-half of RoPE: each index is in bounds under its own side of
  // `j < 32` (the static bounds check narrows j in both arms).
  Program p(R"(
def rotate[M](X: Tensor[(M, 64), float32], Y: Tensor[(M, 64), float32], Z: Tensor[(M, 64), float32],
              W: Tensor[(M, 64), float32]):
    with T.Kernel(T.ceildiv(M, 8), threads=64) as bx:
        for i, j in T.Parallel(8, 64):
            r = T.min(bx * 8 + i, M - 1)
            if j < 32:
                Y[r, j] = -X[r, j + 32]
            else:
                Y[r, j] = X[r, j - 32]
            Z[r, j] = X[r, j + 32] if j < 32 else X[r, j - 32]
            W[r, j] = T.if_then_else(not (j >= 32), X[r, j + 32], X[r, j - 32])
)");
  RunArgs a = p.run({{"M", 13}});
  const HostTensor &X = *a.tensors[0], &Y = *a.tensors[1], &Z = *a.tensors[2], &W = *a.tensors[3];
  for (int64_t r = 0; r < 13; ++r)
    for (int64_t j = 0; j < 64; ++j) {
      double other = X.get(r * 64 + (j < 32 ? j + 32 : j - 32));
      CHECK(Y.get(r * 64 + j) == (j < 32 ? -other : other));
      CHECK(Z.get(r * 64 + j) == other);
      CHECK(W.get(r * 64 + j) == other);
    }
}

TEST_CASE("integer kernels: floor division and modulo of negative values, int8 wrap-around") {
  Program p(R"(
def ints[N](X: Tensor[(N,), int32], Q: Tensor[(N,), int32], R: Tensor[(N,), int32], W: Tensor[(N,), int8]):
    with T.Kernel(1, threads=32) as bx:
        for i in T.Parallel(N):
            Q[i] = X[i] // 3
            R[i] = X[i] % 3
            W[i] = T.cast(X[i] * 40, int8)
)");
  const int64_t N = 17;
  RunArgs a = p.run({{"N", N}});
  for (int64_t i = 0; i < N; ++i) {
    int64_t x = a.tensors[0]->getInt(i);
    int64_t q = x >= 0 ? x / 3 : -((-x + 2) / 3);
    CHECK(a.tensors[1]->getInt(i) == q);
    CHECK(a.tensors[2]->getInt(i) == x - 3 * q);
    CHECK(a.tensors[3]->getInt(i) == static_cast<int8_t>(x * 40));
  }
}
