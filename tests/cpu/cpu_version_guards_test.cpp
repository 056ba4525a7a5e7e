// Pass cpu-version-guards (compiler/passes/cpu_version_guards.h): checked on
// textual tile IR for what it versions and what it leaves alone, on the
// generated code of a guarded transpose, and numerically against the
// interpreter at sizes the tiles do not divide.
#include <doctest/doctest.h>

#include "compiler/backends/cpu/cpu_backend.h"
#include "compiler/passes/cpu_version_guards.h"
#include "tests/cpu/cpu_test_util.h"
#include "tests/support/pass_text.h"

using namespace tlc;
using namespace tlc::test;

namespace {

void checkText(const std::string& text) { testing::checkPassText(text, cpu::versionGuardedNests); }

// A batched transpose written with a guarded Parallel nest (bench/zoo/permute_3d.tl).
const char* kPermute = R"(
def permute_3d[B, M, N, block_M=32, block_N=64, dtype=float32](
        X: Tensor[(B, M, N), dtype], Y: Tensor[(B, N, M), dtype]):
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), B, threads=128) as (bx, by, b):
        s = T.alloc_shared((block_M, block_N), dtype)
        T.copy(X[b, by * block_M, bx * block_N], s)
        for j, i in T.Parallel(block_N, block_M):
            if bx * block_N + j < N and by * block_M + i < M:
                Y[b, bx * block_N + j, by * block_M + i] = s[i, j]
)";

}  // namespace

TEST_CASE("a guarded Parallel nest gets a likely version without the bounds its range decides") {
  checkText(R"(
func @f[M, N](X: float32[M, N], F: int32[M], Y: float32[M, N]) {
  kernel grid(floordiv(N + 63, 64), floordiv(M + 7, 8)) threads(128) as (bx, by) {
    for i in parallel(0 : +8) {
      for j in parallel(0 : +64) {
        let r = by * 8 + i
        if r < M and 0 <= bx * 64 + j and bx * 64 + j < N and F[r] > 0 {
          Y[r, bx * 64 + j] = X[r, bx * 64 + j]
        }
      }
    }
  }
}
// CHECK: if [likely] by * 8 + 7 < M and 0 <= bx * 64 + 0 and bx * 64 + 63 < N {
// CHECK-NEXT: for i in parallel(0 : +8) {
// CHECK-NEXT: for j in parallel(0 : +64) {
// CHECK-NEXT: let r: int32 = by * 8 + i
// The part that reads memory stays in the fast version.
// CHECK-NEXT: if F[r] > 0 {
// CHECK: } else {
// CHECK-NEXT: for i_1 in parallel(0 : +8) {
// CHECK: if r_1 < M and 0 <= bx * 64 + j_1 and bx * 64 + j_1 < N and F[r_1] > 0 {
)");
}

TEST_CASE("nests whose guard no range decides, with variable ranges, or with an else, are left alone") {
  checkText(R"(
func @f[M, N](X: float32[M, N], Y: float32[M, N]) {
  kernel grid(floordiv(N + 63, 64), M) threads(128) as (bx, r) {
    for j in parallel(0 : +64) {
      if X[r, j] > 0.0 and j < floordiv(N, M) {
        Y[r, j] = 1.0
      }
    }
    for j in parallel(0 : +N) {
      if j + 1 < N {
        Y[r, j] = 2.0
      }
    }
    for j in parallel(0 : +64) {
      if bx * 64 + j < N {
        Y[r, bx * 64 + j] = 3.0
      } else {
        Y[r, 0] = 4.0
      }
    }
    for i in parallel(0 : +8) {
      for j in parallel(0 : +8) {
        if i + j < N {
          Y[r, i] = 5.0
        }
      }
    }
  }
}
// CHECK-NOT: if [likely]
)");
}

TEST_CASE("a guarded transpose becomes a transpose through registers in its fast version, and stays exact") {
  for (const char* dt : {"float32", "float16"}) {
    CAPTURE(dt);
    CpuCompiled c = compileTl(kPermute, {{"dtype", dt}});
    REQUIRE(c.module);
    cpu::CpuOptions avx512;
    avx512.cpu = "znver4";
    std::string ir = cpuLLVM(c, avx512, false);
    INFO(c.rendered());
    REQUIRE(!ir.empty());
    // The register transpose's shuffles of whole rows (16 lanes of float32,
    // 2 x 16 of float16 side by side).
    CHECK((ir.find("shufflevector <16 x float>") != std::string::npos ||
           ir.find("shufflevector <32 x half>") != std::string::npos));
    for (auto dims : std::vector<std::map<std::string, int64_t>>{
             {{"B", 2}, {"M", 64}, {"N", 128}}, {{"B", 3}, {"M", 45}, {"N", 100}}, {{"B", 1}, {"M", 7}, {"N", 5}}}) {
      OracleComparison r = runAgainstOracle(c, dims);
      INFO(r.log);
      CHECK(r.pass);
    }
  }
}
