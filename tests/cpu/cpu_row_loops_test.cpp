// Passes cpu-interchange-serial and cpu-vector-layouts
// (compiler/passes/cpu_interchange_serial.h, cpu_vector_layouts.h): checked
// on textual tile IR, for what they must leave alone, and numerically: row
// recurrences (a serial loop per iteration of a Parallel loop) on the CPU
// against the interpreter and against plain loops written here, at sizes the
// tiles do not divide.
#include <doctest/doctest.h>

#include <cmath>

#include "compiler/passes/cpu_interchange_serial.h"
#include "compiler/passes/cpu_vector_layouts.h"
#include "tests/cpu/cpu_test_util.h"
#include "tests/support/pass_text.h"

using namespace tlc;
using namespace tlc::test;

namespace {

void checkInterchange(const std::string& text) { testing::checkPassText(text, cpu::interchangeSerialLoops); }
void checkLayouts(const std::string& text) { testing::checkPassText(text, cpu::chooseVectorLayouts); }

}  // namespace

TEST_CASE("a serial loop in a vector loop moves out of it; the other statements get vector loops of their own") {
  checkInterchange(R"(
func @f(X: float32[8, 16], Y: float32[8, 16]) {
  kernel grid(1) threads(8) as (bx) {
    alloc acc: fragment float32[8]
    for i in vectorized(0 : +8) {
      acc[i] = 0.0
      for j in serial(0 : +16) {
        for k in serial(0 : +2) {
          acc[i] = acc[i] + X[i, j] * 0.5
        }
        Y[i, j] = acc[i]
      }
      Y[i, 0] = acc[i] * 2.0
    }
  }
}
// CHECK: for i in vectorized(0 : +8) {
// CHECK-NEXT: acc[i] = 0.0
// CHECK-NEXT: }
// CHECK-NEXT: for j in serial(0 : +16) {
// CHECK-NEXT: for k in serial(0 : +2) {
// CHECK-NEXT: for i_1 in vectorized(0 : +8) {
// CHECK-NEXT: acc[i_1] = acc[i_1] + X[i_1, j] * 0.5
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: for i_2 in vectorized(0 : +8) {
// CHECK-NEXT: Y[i_2, j] = acc[i_2]
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: for i_3 in vectorized(0 : +8) {
// CHECK-NEXT: Y[i_3, 0] = acc[i_3] * 2.0
)");
}

TEST_CASE("serial loops that break, depend on the vector variable or read memory in their bounds stay inside") {
  checkInterchange(R"(
func @f(X: float32[8, 16], N: int32[1], Y: float32[8, 16]) {
  kernel grid(1) threads(8) as (bx) {
    for i in vectorized(0 : +8) {
      for j in serial(0 : +16) {
        if X[i, j] > 0.0 {
          break
        }
        Y[i, j] = 1.0
      }
    }
    for i in vectorized(0 : +8) {
      for j in serial(0 : +i) {
        Y[i, j] = 2.0
      }
    }
    for i in vectorized(0 : +8) {
      for j in serial(0 : +N[0]) {
        Y[i, j] = 3.0
      }
    }
  }
}
// CHECK: for i in vectorized(0 : +8) {
// CHECK-NEXT: for j in serial(0 : +16) {
// CHECK: for i_1 in vectorized(0 : +8) {
// CHECK-NEXT: for j_1 in serial(0 : +i_1) {
// CHECK: for i_2 in vectorized(0 : +8) {
// CHECK-NEXT: for j_2 in serial(0 : +N[0]) {
)");
}

TEST_CASE("a vector loop whose body allocates a buffer per iteration is not distributed") {
  // The running sum `acc` is one variable per iteration of i: its statements
  // stay in one vector loop (distributed, its uses would leave its scope).
  checkInterchange(R"(
func @f(X: float32[64, 8], Y: float32[64]) {
  kernel grid(1) threads(64) as (bx) {
    for i in vectorized(0 : +64) {
      alloc acc: var float32[1]
      acc[0] = 0.0
      for k in serial(0 : +8) {
        acc[0] = acc[0] + X[i, k]
      }
      Y[i] = acc[0]
    }
  }
}
// CHECK: for i in vectorized(0 : +64) {
// CHECK-NEXT: alloc acc: var float32[1]
// CHECK-NEXT: acc[0] = 0.0
// CHECK-NEXT: for k in serial(0 : +8) {
// CHECK-NEXT: acc[0] = acc[0] + X[i, k]
// CHECK-NEXT: }
// CHECK-NEXT: Y[i] = acc[0]
)");
}

TEST_CASE("a tile read down its columns by the vector loops is stored transposed; copies do not vote") {
  checkLayouts(R"(
func @f(X: float32[64, 32], Y: float32[64, 32]) {
  kernel grid(1) threads(64) as (bx) {
    alloc s: shared float32[64, 32]
    alloc acc: fragment float32[64]
    for r in serial(0 : +64) {
      for c in vectorized(0 : +32) {
        s[r, c] = X[r, c]
      }
    }
    for j in serial(0 : +32) {
      for i in vectorized(0 : +64) {
        acc[i] = acc[i] + s[i, j]
        s[i, j] = acc[i]
      }
    }
    for r in serial(0 : +64) {
      for c in vectorized(0 : +32) {
        Y[r, c] = s[r, c]
      }
    }
  }
}
// CHECK: alloc s: shared float32[32, 64]
// CHECK-NEXT: alloc acc: fragment float32[64]
// CHECK: s[c, r] = X[r, c]
// CHECK: acc[i] = acc[i] + s[j, i]
// CHECK-NEXT: s[j, i] = acc[i]
// CHECK: Y[r_1, c_1] = s[c_1, r_1]
)");
}

TEST_CASE("buffers computed along their rows more than down their columns, or updated atomically, keep their layout") {
  checkLayouts(R"(
func @f(X: float32[64, 32], Y: float32[64, 32]) {
  kernel grid(1) threads(64) as (bx) {
    alloc s: shared float32[64, 32]
    alloc t: shared float32[64, 32]
    for r in serial(0 : +64) {
      for c in vectorized(0 : +32) {
        s[r, c] = X[r, c] * 2.0
        t[r, c] = X[r, c]
      }
    }
    for r in serial(0 : +64) {
      for c in vectorized(0 : +32) {
        s[r, c] = s[r, c] + 1.0
      }
    }
    for j in serial(0 : +32) {
      for i in vectorized(0 : +64) {
        Y[i, j] = s[i, j] + t[i, j]
      }
    }
    atomic_add(t[0, 0], 1.0)
  }
}
// CHECK: alloc s: shared float32[64, 32]
// CHECK-NEXT: alloc t: shared float32[64, 32]
)");
}

namespace {

// Row recurrences written as users write them: a serial walk along each row
// of a tile, one Parallel iteration per row.
const char* kRowLoops = R"(
def running[M, N, block_M=32, block_N=48](X: Tensor[(M, N), float32], S: Tensor[(M, N), float32],
                                          P: Tensor[(M, N), float32], Q: Tensor[(M,), float32]):
    with T.Kernel(T.ceildiv(M, block_M), threads=block_M) as bx:
        s = T.alloc_shared((block_M, block_N), float32)
        acc = T.alloc_fragment((block_M,), float32)
        big = T.alloc_fragment((block_M,), float32)
        T.clear(acc)
        T.fill(big, -T.infinity(float32))
        for k in T.serial(T.ceildiv(N, block_N)):
            T.copy(X[bx * block_M, k * block_N], s)
            for i in T.Parallel(block_M):
                for j in T.serial(block_N):
                    acc[i] += s[i, j]
                    big[i] = T.max(big[i], s[i, j])
                    s[i, j] = acc[i]
            T.copy(s, S[bx * block_M, k * block_N])
            for i in T.Parallel(block_M):
                for j in T.serial(block_N):
                    if bx * block_M + i < M and k * block_N + j < N:
                        P[bx * block_M + i, k * block_N + j] = big[i]
        T.copy(big, Q[bx * block_M])
)";

}  // namespace

TEST_CASE("row recurrences on the CPU agree with the interpreter and with plain loops") {
  // 32 x 48 tiles as written, and 128 x 64 ones, which overflow a quarter of
  // L1 and run 16 or 32 rows at a time (cpu-split-block-rows).
  for (auto [blockM, blockN] : {std::pair<int64_t, int64_t>{32, 48}, {128, 64}})
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{64, 96}, {37, 100}, {1, 7}, {300, 200}}) {
    CAPTURE(blockM);
    CpuCompiled c = compileTl(kRowLoops, {{"block_M", std::to_string(blockM)}, {"block_N", std::to_string(blockN)}});
    REQUIRE_MESSAGE(c.module, c.rendered());
    auto r = runAgainstOracle(c, {{"M", rows}, {"N", cols}}, 11, {}, [&](driver::RunArgs& args) {
      const auto& X = *args.tensors[0];
      const auto& S = *args.tensors[1];
      const auto& P = *args.tensors[2];
      const auto& Q = *args.tensors[3];
      int64_t tiles = (cols + blockN - 1) / blockN;
      for (int64_t i = 0; i < rows; ++i) {
        double sum = 0, best = -INFINITY;
        for (int64_t k = 0; k < tiles; ++k) {
          // The tile's columns past N read as zeros (the copy's fill).
          for (int64_t j = k * blockN; j < (k + 1) * blockN; ++j) {
            double x = j < cols ? X.get(i * cols + j) : 0.0;
            sum += x;
            best = std::max(best, x);
            if (j < cols) CHECK(std::fabs(S.get(i * cols + j) - sum) <= 1e-4 * (1 + std::fabs(sum)));
          }
          for (int64_t j = k * blockN; j < std::min(cols, (k + 1) * blockN); ++j) CHECK(P.get(i * cols + j) == float(best));
        }
        CHECK(Q.get(i) == float(best));
      }
    });
    CHECK_MESSAGE(r.pass, r.log);
  }
}

// A GEMV as TileLang users write it: a variable per thread, allocated in the
// Parallel loop, summing along its row in a serial loop.
TEST_CASE("a running sum in a variable allocated per Parallel iteration agrees with plain loops") {
  const char* gemv = R"(
def gemv[N, K, block_N=64](A: Tensor[(K,), float32], B: Tensor[(N, K), float32], C: Tensor[(N,), float32]):
    with T.Kernel(T.ceildiv(N, block_N), threads=block_N) as bn:
        for tn in T.Parallel(block_N):
            acc = T.alloc_var(float32, 0.0)
            for k in T.serial(K):
                if bn * block_N + tn < N:
                    acc += A[k] * B[bn * block_N + tn, k]
            if bn * block_N + tn < N:
                C[bn * block_N + tn] = acc
)";
  for (auto [n, k] : {std::pair<int64_t, int64_t>{100, 37}, {64, 8}, {1, 5}}) {
    CpuCompiled c = compileTl(gemv);
    REQUIRE_MESSAGE(c.module, c.rendered());
    auto r = runAgainstOracle(c, {{"N", n}, {"K", k}}, 5, {}, [&](driver::RunArgs& args) {
      const auto& A = *args.tensors[0];
      const auto& B = *args.tensors[1];
      const auto& C = *args.tensors[2];
      for (int64_t i = 0; i < n; ++i) {
        double sum = 0;
        for (int64_t j = 0; j < k; ++j) sum += double(A.get(j)) * B.get(i * k + j);
        CHECK(std::fabs(C.get(i) - sum) <= 1e-4 * (1 + std::fabs(sum)));
      }
    });
    CHECK_MESSAGE(r.pass, r.log);
  }
}
