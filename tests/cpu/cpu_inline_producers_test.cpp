// Passes cpu-hoist-fast-paths and cpu-inline-producers
// (compiler/passes/cpu_hoist_fast_paths.h, cpu_inline_producers.h): checked
// on textual tile IR, for what they must leave alone, and numerically against
// the interpreter and against references computed here.
#include <doctest/doctest.h>

#include <cmath>

#include "compiler/passes/cpu_hoist_fast_paths.h"
#include "compiler/passes/cpu_inline_producers.h"
#include "tests/cpu/cpu_test_util.h"
#include "tests/support/pass_text.h"

using namespace tlc;
using namespace tlc::test;

namespace {

ir::Module applyPass(const ir::Module& m, bool hoist) { return hoist ? cpu::hoistFastPaths(m) : cpu::inlineProducers(m); }

void checkText(const std::string& text, bool hoist = false) {
  testing::checkPassText(text, [&](const ir::Module& m) { return applyPass(m, hoist); });
}

}  // namespace

TEST_CASE("the likely tests of a list combine in front of it when a fast branch shares a buffer") {
  checkText(R"(
func @f[M](X: float32[M, 64], Y: float32[M, 64]) {
  kernel grid(floordiv(M + 7, 8)) threads(128) as (bx) {
    alloc x: fragment float32[8, 64]
    if [likely] bx * 8 + 8 <= M {
      for i in parallel(0 : +8) {
        for j in parallel(0 : +64) {
          x[i, j] = X[bx * 8 + i, j]
        }
      }
    } else {
      for i in parallel(0 : +8) {
        for j in parallel(0 : +64) {
          x[i, j] = select(bx * 8 + i < M, X[min(bx * 8 + i, M - 1), j], 0.0)
        }
      }
    }
    for i in parallel(0 : +8) {
      for j in parallel(0 : +64) {
        x[i, j] = x[i, j] * 2.0
      }
    }
  }
}
// CHECK: alloc x: fragment float32[8, 64]
// CHECK-NEXT: if [likely] bx * 8 + 8 <= M {
// CHECK-NEXT: for i in parallel(0 : +8) {
// CHECK-NEXT: for j in parallel(0 : +64) {
// CHECK-NEXT: x[i, j] = X[bx * 8 + i, j]
// CHECK: * 2.0
// CHECK: } else {
// CHECK-NEXT: if [likely] bx * 8 + 8 <= M {
// CHECK: select(bx * 8 +
// CHECK: * 2.0
)",
            /*hoist=*/true);
}

TEST_CASE("a likely test alone in its list, or one that reads memory, stays where it is") {
  checkText(R"(
func @f[M](X: float32[M], Y: float32[M], Z: float32[M]) {
  kernel grid(floordiv(M + 7, 8)) threads(128) as (bx) {
    if [likely] bx * 8 + 8 <= M {
      for i in parallel(0 : +8) {
        Y[bx * 8 + i] = X[bx * 8 + i]
      }
    } else {
      for i in parallel(0 : +8) {
        Y[min(bx * 8 + i, M - 1)] = 0.0
      }
    }
    for i in parallel(0 : +8) {
      Z[min(bx * 8 + i, M - 1)] = 1.0
    }
  }
}
// CHECK: kernel
// CHECK-NEXT: if [likely] bx * 8 + 8 <= M {
// CHECK-NEXT: for i in parallel(0 : +8) {
// CHECK-NEXT: Y[bx * 8 + i] = X[bx * 8 + i]
)",
            /*hoist=*/true);
}

TEST_CASE("a copy in, an elementwise loop in place and the copy out become one loop") {
  checkText(R"(
func @f[M](X: float16[M, 64], B: float32[64], Y: float16[M, 64]) {
  kernel grid(floordiv(M + 7, 8)) threads(128) as (bx) {
    alloc x: fragment float32[8, 64]
    alloc b: fragment float32[64]
    for i in parallel(0 : +8) {
      for j in parallel(0 : +64) {
        x[i, j] = cast<float32>(X[bx * 8 + i, j])
      }
    }
    for j in parallel(0 : +64) {
      b[j] = B[j]
    }
    for i in parallel(0 : +8) {
      for j in parallel(0 : +64) {
        x[i, j] = @exp(x[i, j]) + b[j]
      }
    }
    for i in parallel(0 : +8) {
      for j in parallel(0 : +64) {
        Y[bx * 8 + i, j] = cast<float16>(x[i, j])
      }
    }
  }
}
// CHECK: kernel
// CHECK-NEXT: for i in parallel(0 : +8) {
// CHECK-NEXT: for j in parallel(0 : +64) {
// CHECK-NEXT: Y[bx * 8 + i, j] = cast<float16>(@exp(cast<float32>(X[bx * 8 + i, j])) + B[j])
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
)");
}

TEST_CASE("a copy followed by a reduction reads the tensor in the reduction's loops") {
  checkText(R"(
func @f[M](X: float32[M, 256], out: float32[M]) {
  kernel grid(floordiv(M + 3, 4)) threads(128) as (bx) {
    alloc x: fragment float32[4, 256]
    alloc acc: local float32[64]
    for i in parallel(0 : +4) {
      for j in parallel(0 : +256) {
        x[i, j] = select(bx * 4 + i < M, X[min(bx * 4 + i, M - 1), j], 0.0)
      }
    }
    for r in serial(0 : +4) {
      for l in parallel(0 : +64) {
        acc[l] = 0.0
      }
      for c in serial(0 : +4) {
        for l in parallel(0 : +64) {
          acc[l] = acc[l] + x[r, c * 64 + l]
        }
      }
      if bx * 4 + r < M {
        out[bx * 4 + r] = acc[0]
      }
    }
  }
}
// CHECK: alloc acc: local float32[64]
// CHECK-NEXT: for r in serial(0 : +4) {
// CHECK: acc[l_1] = acc[l_1] + select(bx * 4 + r < M, X[min(bx * 4 + r, M - 1), c * 64 + l_1], 0.0)
)");
}

TEST_CASE("a nest storing two fragments splits; a read under a select binds the value in a let") {
  checkText(R"(
func @f(X: float32[4, 64], R: float32[4, 64], out: float32[4], H: float32[4, 64]) {
  kernel grid(1) threads(128) as (bx) {
    alloc x: fragment float32[4, 64]
    alloc sq: fragment float32[4, 64]
    for i in parallel(0 : +4) {
      for j in parallel(0 : +64) {
        x[i, j] = X[i, j]
      }
    }
    for i in parallel(0 : +4) {
      for j in parallel(0 : +64) {
        x[i, j] = x[i, j] + R[i, j]
        sq[i, j] = select(j < 60, x[i, j] * x[i, j], 0.0)
      }
    }
    for i in parallel(0 : +4) {
      for j in parallel(0 : +64) {
        H[i, j] = x[i, j]
      }
    }
    for i in serial(0 : +4) {
      for j in serial(0 : +64) {
        out[i] = out[i] + sq[i, j]
      }
    }
  }
}
// The sum x + R is stored to H and read, squared, by the reduction; the
// square sits in a select, so its operand is bound first.
// CHECK: kernel
// CHECK-NEXT: for i in parallel(0 : +4) {
// CHECK-NEXT: for j in parallel(0 : +64) {
// CHECK-NEXT: H[i, j] = X[i, j] + R[i, j]
// CHECK: for i_1 in serial(0 : +4) {
// CHECK-NEXT: for j_1 in serial(0 : +64) {
// CHECK-NEXT: let x_v: float32 = X[i_1, j_1] + R[i_1, j_1]
// CHECK-NEXT: out[i_1] = out[i_1] + select(j_1 < 60, x_v * x_v, 0.0)
)");
}

TEST_CASE("producers stay when inlining would gather, recompute, read a changed input or lose a live value") {
  // Read transposed: the copy stays staged.
  checkText(R"(
func @t(X: float32[64, 64], Y: float32[64, 64]) {
  kernel grid(1) threads(128) as (bx) {
    alloc s: shared float32[64, 64]
    for i in parallel(0 : +64) {
      for j in parallel(0 : +64) {
        s[i, j] = X[i, j]
      }
    }
    for i in parallel(0 : +64) {
      for j in parallel(0 : +64) {
        Y[i, j] = s[j, i]
      }
    }
  }
}
// CHECK: alloc s: shared float32[64, 64]
// CHECK: s[i, j] = X[i, j]
// CHECK: Y[i_1, j_1] = s[j_1, i_1]
)");
  // A transposing copy between two tiles, read along the rows it writes:
  // inlined, the reader would gather (the copy is a transpose through
  // registers, tile_transpose.h).
  checkText(R"(
func @c(X: float32[16, 16], Y: float32[16]) {
  kernel grid(1) threads(128) as (bx) {
    alloc p: local float32[16, 16]
    alloc q: local float32[16, 16]
    for i in serial(0 : +16) {
      for j in vectorized(0 : +16) {
        p[i, j] = X[i, j] * 2.0
      }
    }
    for k in serial(0 : +16) {
      for i in vectorized(0 : +16) {
        q[k, i] = p[i, k]
      }
    }
    for k in serial(0 : +16) {
      for i in vectorized(0 : +16) {
        Y[i] = Y[i] + q[k, i]
      }
    }
  }
}
// CHECK: q[k, i_1] = p[i_1, k]
// CHECK: Y[i_2] = Y[i_2] + q[k_1, i_2]
)");
  // Read by a copy, the same producer folds into it: the copy becomes the
  // transposing nest.
  checkText(R"(
func @d(X: float32[16, 16], Y: float32[16, 16]) {
  kernel grid(1) threads(128) as (bx) {
    alloc p: local float32[16, 16]
    alloc q: local float32[16, 16]
    for i in serial(0 : +16) {
      for j in vectorized(0 : +16) {
        p[i, j] = X[i, j] * 2.0
      }
    }
    for k in serial(0 : +16) {
      for i in vectorized(0 : +16) {
        q[k, i] = p[i, k]
      }
    }
    for k in serial(0 : +16) {
      for i in vectorized(0 : +16) {
        Y[k, i] = q[k, i]
      }
    }
  }
}
// CHECK: Y[k, i_1] = p[i_1, k]
)");
  // An expensive value read twice, and one read in a loop that does not index it.
  checkText(R"(
func @r(X: float32[64], Y: float32[64], Z: float32[64, 64]) {
  kernel grid(1) threads(128) as (bx) {
    alloc e: fragment float32[64]
    alloc f: fragment float32[64]
    for j in parallel(0 : +64) {
      e[j] = @exp(X[j])
    }
    for j in parallel(0 : +64) {
      f[j] = @exp(X[j]) * 2.0
    }
    for j in parallel(0 : +64) {
      Y[j] = e[j] + e[63 - j]
    }
    for i in parallel(0 : +64) {
      for j in parallel(0 : +64) {
        Z[i, j] = f[j]
      }
    }
  }
}
// CHECK: e[j] = @exp(X[j])
// CHECK: f[j_1] = @exp(X[j_1]) * 2.0
// CHECK: Y[j_2] = e[j_2] + e[63 - j_2]
// CHECK: Z[i, j_3] = f[j_3]
)");
  // The input changes between the producer and the read.
  checkText(R"(
func @w(X: float32[64], Y: float32[64]) {
  kernel grid(1) threads(128) as (bx) {
    alloc x: fragment float32[64]
    for j in parallel(0 : +64) {
      x[j] = X[j]
    }
    for j in parallel(0 : +64) {
      X[j] = 0.0
    }
    for j in parallel(0 : +64) {
      Y[j] = x[j]
    }
  }
}
// CHECK: x[j] = X[j]
// CHECK: X[j_1] = 0.0
// CHECK: Y[j_2] = x[j_2]
)");
  // Read again after the loop that produces it, and at the start of the next iteration.
  checkText(R"(
func @l[K](X: float32[K, 64], Y: float32[64]) {
  kernel grid(1) threads(128) as (bx) {
    alloc x: fragment float32[64]
    alloc y: fragment float32[64]
    for k in serial(0 : +K) {
      for j in parallel(0 : +64) {
        Y[j] = y[j]
      }
      for j in parallel(0 : +64) {
        x[j] = X[k, j]
      }
      for j in parallel(0 : +64) {
        y[j] = X[k, j] * 2.0
      }
      for j in parallel(0 : +64) {
        Y[j] = Y[j] + x[j]
      }
    }
    for j in parallel(0 : +64) {
      Y[j] = x[j]
    }
  }
}
// CHECK: x[j_1] = X[k, j_1]
// CHECK: y[j_2] = X[k, j_2] * 2.0
)");
}

TEST_CASE("a producer inside a loop folds into its readers when the next iteration overwrites it first") {
  checkText(R"(
func @l[K](X: float32[K, 64], Y: float32[64]) {
  kernel grid(1) threads(128) as (bx) {
    alloc x: fragment float32[64]
    for k in serial(0 : +K) {
      for j in parallel(0 : +64) {
        x[j] = X[k, j]
      }
      for j in parallel(0 : +64) {
        Y[j] = Y[j] + x[j]
      }
    }
  }
}
// CHECK: for k in serial(0 : +K) {
// CHECK-NEXT: for j in parallel(0 : +64) {
// CHECK-NEXT: Y[j] = Y[j] + X[k, j]
)");
}

TEST_CASE("fused CPU kernels agree with the interpreter and with references computed here") {
  // Copy in, elementwise, a row reduction, a normalization and a copy out, at
  // sizes the tiles do not divide; the CPU's fast and masked paths both run.
  const char* src = R"(
def norm[M, N, block_M=4, block_N=64](X: Tensor[(M, N), float16], S: Tensor[(N,), float32],
                                      Y: Tensor[(M, N), float16], R: Tensor[(M,), float32]):
    with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
        x = T.alloc_fragment((block_M, block_N), float32)
        s = T.alloc_fragment((block_N,), float32)
        m = T.alloc_fragment((block_M,), float32)
        T.copy(X[bx * block_M, 0], x)
        T.copy(S[0], s)
        for i, j in T.Parallel(block_M, block_N):
            x[i, j] = x[i, j] * s[j]
        T.reduce_max(x, m, dim=1)
        for i, j in T.Parallel(block_M, block_N):
            x[i, j] = T.exp(x[i, j] - m[i])
        T.copy(x, Y[bx * block_M, 0])
        T.copy(m, R[bx * block_M])
)";
  // Two fragments stored by one nest, and a mask before a row maximum.
  const char* residual = R"(
def residual[M, N, block_M=4, block_N=64](X: Tensor[(M, N), float16], R: Tensor[(M, N), float16],
                                          H: Tensor[(M, N), float16], Q: Tensor[(M,), float32]):
    with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
        x = T.alloc_fragment((block_M, block_N), float32)
        r = T.alloc_fragment((block_M, block_N), float32)
        sq = T.alloc_fragment((block_M, block_N), float32)
        m = T.alloc_fragment((block_M,), float32)
        T.fill(m, -T.infinity(float32))
        for k in T.serial(T.ceildiv(N, block_N)):
            T.copy(X[bx * block_M, k * block_N], x)
            T.copy(R[bx * block_M, k * block_N], r)
            for i, j in T.Parallel(block_M, block_N):
                x[i, j] = x[i, j] + r[i, j]
                sq[i, j] = T.if_then_else(k * block_N + j < N, x[i, j] * x[i, j], -T.infinity(float32))
            T.copy(x, H[bx * block_M, k * block_N])
            T.reduce_max(sq, m, dim=1, clear=False)
        T.copy(m, Q[bx * block_M])
)";
  for (int64_t rows : {4, 13}) {
    CpuCompiled c = compileTl(residual);
    REQUIRE_MESSAGE(c.module, c.rendered());
    auto r = runAgainstOracle(c, {{"M", rows}, {"N", 150}}, 3, {}, [&](driver::RunArgs& args) {
      const auto& X = *args.tensors[0];
      const auto& R = *args.tensors[1];
      const auto& Q = *args.tensors[3];
      for (int64_t i = 0; i < rows; ++i) {
        double best = -INFINITY;
        for (int64_t j = 0; j < 150; ++j) {
          double v = X.get(i * 150 + j) + R.get(i * 150 + j);
          best = std::max(best, v * v);
        }
        CHECK(std::fabs(Q.get(i) - best) <= 1e-5 * std::fabs(best) + 1e-6);
      }
    });
    CHECK_MESSAGE(r.pass, r.log);
  }
  for (int64_t rows : {4, 13}) {
    CpuCompiled c = compileTl(src);
    REQUIRE_MESSAGE(c.module, c.rendered());
    auto r = runAgainstOracle(c, {{"M", rows}, {"N", 64}}, 7, {}, [&](driver::RunArgs& args) {
      // Independent reference: plain loops over the same inputs.
      const auto& X = *args.tensors[0];
      const auto& S = *args.tensors[1];
      const auto& R = *args.tensors[3];
      for (int64_t i = 0; i < rows; ++i) {
        double best = -INFINITY;
        for (int64_t j = 0; j < 64; ++j) best = std::max(best, X.get(i * 64 + j) * S.get(j));
        CHECK(std::fabs(R.get(i) - best) <= 1e-5 * std::fabs(best) + 1e-6);
      }
    });
    CHECK_MESSAGE(r.pass, r.log);
  }
}
