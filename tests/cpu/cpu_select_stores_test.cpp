// Pass cpu-select-stores (compiler/passes/cpu_select_stores.h): checked on
// textual tile IR for what it rewrites and what it leaves alone, and on the
// generated code of a top-k's masking loop: no scatter of -inf.
#include <doctest/doctest.h>

#include <sstream>

#include "compiler/passes/cpu_select_stores.h"
#include "tests/cpu/cpu_test_util.h"
#include "tests/support/pass_text.h"

using namespace tlc;
using namespace tlc::test;

TEST_CASE("a vector loop's guarded store into block-local memory becomes a store of a select") {
  testing::checkPassText(R"(
func @f(A: int32[4], Y: float32[4, 64]) {
  kernel grid(1) threads(64) as (b) {
    alloc x: local float32[4, 64]
    alloc h: local float16[4, 64]
    for i in serial(0 : +4) {
      for j in vectorized(0 : +64) {
        if j == A[i] {
          x[i, j] = -inf
        }
        if j < 9 {
          h[i, j] = cast<float16>(x[i, j])
        }
      }
    }
    for i in serial(0 : +4) {
      for j in vectorized(0 : +64) {
        if j < 32 {
          Y[i, j] = x[i, j]
        }
        if j == A[i] {
          x[i, A[i]] = 0.0
        }
        if j > 2 {
          x[i, 3] = 1.0
        }
      }
      for j in vectorized(0 : +65) {
        if j < 64 {
          x[i, j] = 2.0
        }
      }
      for j in serial(0 : +64) {
        if j == A[i] {
          x[i, j] = 3.0
        }
      }
    }
  }
}
// CHECK: x[i, j] = select(j == A[i], -inf, x[i, j])
// CHECK-NEXT: h[i, j] = select(j < 9, cast<float16>(x[i, j]), h[i, j])
// Global memory, an index that is not a loop variable, a store no index of
// which is the vector loop's, a range past the buffer, a serial loop: kept.
// CHECK: if j_1 < 32 {
// CHECK: if j_1 == A[i_1] {
// CHECK: if j_1 > 2 {
// CHECK: if j_2 < 64 {
// CHECK: if j_3 == A[i_1] {
)",
                         cpu::selectGuardedStores);
}

TEST_CASE("the zoo's top-k masks the element it took without a scatter, and matches the interpreter") {
  CpuCompiled c = compileTlFile(std::string(TLC_SOURCE_DIR) + "/bench/zoo/topk.tl", {{"N", "64"}});
  REQUIRE_MESSAGE(c.module, c.rendered());
  std::string ir = cpuLLVM(c, {}, /*optimized=*/true);
  REQUIRE_MESSAGE(!ir.empty(), c.rendered());
  // (The outputs' columns are written by scatters: values[row, t] for 64 rows.)
  CHECK(ir.find("masked.scatter.v16f32.v16p0(<16 x float> <float 0xFFF0000000000000") == std::string::npos);
  // The masking store is a blend of -inf into a vector of the row.
  bool blend = false;
  std::istringstream lines(ir);
  for (std::string line; std::getline(lines, line);)
    blend = blend || (line.find("select <16 x i1>") != std::string::npos &&
                      line.find("<16 x float> <float 0xFFF0000000000000") != std::string::npos);
  CHECK(blend);
  OracleComparison r = runAgainstOracle(c, {{"M", 150}});
  INFO(r.log);
  CHECK(r.pass);
}
