// NaN tests of float16 data widened to float32 on the CPU: float max / min
// (NaN when either operand is NaN), the math functions' NaN paths and
// `T.isnan`, each with vector code. The NaN test is an integer test on the
// bits: a floating comparison of the widened value with itself is narrowed by
// LLVM to a float16 comparison, which targets without AVX512-FP16 scalarize
// (a row max ran 8x slower, a SiLU 3.6x).
#include <doctest/doctest.h>

#include <cmath>

#include "compiler/backends/cpu/cpu_backend.h"
#include "tests/cpu/cpu_test_util.h"

using namespace tlc;
using namespace tlc::test;

namespace {

const char* kRowMax = R"(
def row_max[M, N](X: Tensor[(M, N), float16], out: Tensor[(M,), float16], lo: Tensor[(M,), float16]):
    with T.Kernel(T.ceildiv(M, 4), threads=128) as bx:
        x = T.alloc_fragment((4, 256), float32)
        m = T.alloc_fragment((4,), float32)
        n = T.alloc_fragment((4,), float32)
        T.fill(m, -T.infinity(float32))
        T.fill(n, T.infinity(float32))
        for k in T.serial(T.ceildiv(N, 256)):
            T.copy(X[bx * 4, k * 256], x)
            for i, j in T.Parallel(4, 256):
                x[i, j] = T.if_then_else(k * 256 + j < N, x[i, j], -T.infinity(float32))
            T.reduce_max(x, m, dim=1, clear=False)
            for i, j in T.Parallel(4, 256):
                x[i, j] = T.if_then_else(k * 256 + j < N, x[i, j], T.infinity(float32))
            T.reduce_min(x, n, dim=1, clear=False)
        T.copy(m, out[bx * 4])
        T.copy(n, lo[bx * 4])
)";

const char* kMath = R"(
def act[M, N](X: Tensor[(M, N), float16], Y: Tensor[(M, N), float16], F: Tensor[(M, N), int32]):
    with T.Kernel(T.ceildiv(N, 256), T.ceildiv(M, 4), threads=128) as (bx, by):
        x = T.alloc_fragment((4, 256), float32)
        T.copy(X[by * 4, bx * 256], x)
        for i, j in T.Parallel(4, 256):
            v = x[i, j]
            x[i, j] = v / (1.0 + T.exp(-v)) + T.tanh(v) + T.sigmoid(v) + T.log(T.abs(v) + 1.0) + T.erf(v)
        T.copy(x, Y[by * 4, bx * 256])
        for i, j in T.Parallel(4, 256):
            if by * 4 + i < M and bx * 256 + j < N:
                F[by * 4 + i, bx * 256 + j] = T.if_then_else(T.isnan(X[by * 4 + i, bx * 256 + j]), 1, 0)
)";

// The LLVM IR of `source` for AVX-512 without FP16 arithmetic.
std::string znver4IR(CpuCompiled& c) {
  cpu::CpuOptions o;
  o.cpu = "znver4";
  o.features = "+avx512f";
  std::string ir = cpuLLVM(c, o, true);
  INFO(c.rendered());
  REQUIRE(!ir.empty());
  return ir;
}

// The kernel `source` has vector float32 code (`expected` in its IR) and no
// float16 comparison of the kinds in `half`, and agrees with the interpreter.
void checkNoHalfCompares(const char* source, const char* expected, std::initializer_list<const char*> half) {
  CpuCompiled c = compileTl(source);
  REQUIRE(c.module);
  std::string ir = znver4IR(c);
  CHECK(ir.find(expected) != std::string::npos);
  for (const char* h : half) {
    INFO(h);
    CHECK(ir.find(h) == std::string::npos);
  }
  for (int64_t n : {256, 300, 1000}) {
    OracleComparison r = runAgainstOracle(c, {{"M", 7}, {"N", n}});
    INFO(r.log);
    CHECK(r.pass);
  }
}

}  // namespace

TEST_CASE("math functions and isnan of float16 data test NaNs on the bits, in vectors") {
  checkNoHalfCompares(kMath, "<16 x float>",
                      {"fcmp uno half", "fcmp uno <16 x half>", "fcmp uno <32 x half>", "fcmp uno <8 x half>"});
}

TEST_CASE("max and min of float16 data widened to float32 compare as float32 vectors") {
  checkNoHalfCompares(kRowMax, "fcmp",
                      {"fcmp uno half", "fcmp uno <16 x half>", "fcmp uno <32 x half>", "fcmp une <16 x half>"});
}

// Row maxima, minima and largest magnitudes with NaNs planted in some rows
// (0 / 0 at one column of every third row, in the lanes' chunks or the
// tail), of float16, bfloat16, float32 and float64 data; rows of 300 and 512
// (a tail after the chunks, none) and 64 rows of 64 (the lanes combined
// across rows): NaN rows give NaN, the others their extreme.
TEST_CASE("float max, min and absmax reductions give NaN for a row holding one, in every lowering") {
  const char* kNanRows = R"(
def nan_rows[M, W, R, dtype](X: Tensor[(M, W), dtype], hi: Tensor[(M,), dtype], lo: Tensor[(M,), dtype],
                              mag: Tensor[(M,), dtype]):
    with T.Kernel(T.ceildiv(M, R), threads=128) as bx:
        x = T.alloc_fragment((R, W), dtype)
        a = T.alloc_fragment((R,), dtype)
        b = T.alloc_fragment((R,), dtype)
        c = T.alloc_fragment((R,), dtype)
        T.copy(X[bx * R, 0], x)
        for i, j in T.Parallel(R, W):
            r = bx * R + i
            z = x[i, j] - x[i, j]
            x[i, j] = T.if_then_else(r % 3 == 0 and j == (r * 37) % W, z / z, x[i, j])
        T.reduce_max(x, a, dim=1)
        T.reduce_min(x, b, dim=1)
        T.reduce_absmax(x, c, dim=1)
        T.copy(a, hi[bx * R])
        T.copy(b, lo[bx * R])
        T.copy(c, mag[bx * R])
)";
  for (const char* dtype : {"float16", "bfloat16", "float32", "float64"})
    for (auto [w, rows] : std::vector<std::pair<const char*, const char*>>{{"300", "4"}, {"512", "4"}, {"64", "64"}}) {
      CAPTURE(dtype);
      CAPTURE(w);
      CpuCompiled c = compileTl(kNanRows, {{"dtype", dtype}, {"W", w}, {"R", rows}});
      REQUIRE(c.module);
      bool sawNan = false, sawNumber = false;
      OracleComparison r = runAgainstOracle(c, {{"M", 128}}, 1, {}, [&](driver::RunArgs& args) {
        for (int k : {1, 2, 3}) {
          const auto& t = *args.tensors[k];
          for (int64_t i = 0; i < 128; ++i) {
            double v = t.get(i);
            (std::isnan(v) ? sawNan : sawNumber) = true;
            CHECK(std::isnan(v) == (i % 3 == 0));
          }
        }
      });
      INFO(r.log);
      CHECK(r.pass);
      CHECK(sawNan);
      CHECK(sawNumber);
    }
}
