// The math builtins and break/continue on the CPU: each kernel's outputs
// against plain C++ loops over the C library written here, and (through
// --check) against the interpreter on the same inputs.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>

#include "compiler/driver/run_common.h"
#include "tests/cpu/cpu_test_util.h"

using namespace tlc;
using namespace tlc::test;

namespace {

using Reference = std::function<void(driver::RunArgs&)>;

// Runs the module's kernel on the CPU with --check (the interpreter on a
// copy of the inputs) and hands the CPU's results to `check`.
bool runAndCheck(CpuCompiled& c, const std::map<std::string, int64_t>& dims, const Reference& check) {
  REQUIRE_MESSAGE(c.module, c.rendered());
  OracleComparison r = runAgainstOracle(c, dims, 3, {}, check);
  INFO(r.log);
  REQUIRE(r.compiled);
  CHECK(r.pass);
  return r.pass;
}

std::string treeFile(const std::string& rel) { return std::string(TLC_SOURCE_DIR) + "/" + rel; }

bool close(double got, double want, double rtol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= rtol * std::fabs(want) + 1e-30;
}

}  // namespace

TEST_CASE("math builtins on the CPU agree with the C library") {
  CpuCompiled c = compileTlFile(treeFile("tests/cuda_emu_examples/math_builtins.tl"));
  const int64_t n = 300;
  runAndCheck(c, {{"N", n}}, [&](driver::RunArgs& a) {
    const interp::HostTensor &X = *a.tensors[0], &D = *a.tensors[2], &Y = *a.tensors[3], &YD = *a.tensors[5],
                             &F = *a.tensors[6], &L = *a.tensors[7];
    int wrong = 0;
    for (int64_t k = 0; k < n; ++k) {
      float x = static_cast<float>(X.get(k));
      float w = x * 12.0f, p = std::fabs(x) * 8.0f + 0.001f;
      double want[22] = {std::exp(w), std::exp2(w), std::expm1(x * 0.5f), std::log(p), std::log2(p),
                         std::log1p(x * 0.99f), std::tanh(w * 0.5f), std::erf(x * 4.0f),
                         1 / (1 + std::exp(-static_cast<double>(w))), std::sqrt(p), 1 / std::sqrt(p), std::sin(w),
                         std::cos(w), std::floor(w), std::ceil(w), std::nearbyint(w), std::fma(x, 3.0f, -0.5f),
                         std::fmin(std::fmax(w, -2.5), 4.0), std::pow(p, x), std::fmax(x, 0.25f) + std::fmin(x, -0.25f),
                         x < 0 ? -1.0 : std::log(x), static_cast<double>(std::fmin(std::fmax(k - 64, -10), 10))};
      for (int r = 0; r < 22; ++r)
        if (!close(Y.get(r * n + k), want[r], 1e-5) && wrong++ < 8)
          MESSAGE("row ", r, " at x = ", x, ": ", Y.get(r * n + k), " want ", want[r]);
      double d = D.get(k);
      double wantD[4] = {std::tanh(d * 6.0), std::erf(d * 3.0), std::log1p(d * 0.5), std::fma(d, d, -0.25)};
      for (int r = 0; r < 4; ++r)
        if (!close(YD.get(r * n + k), wantD[r], 1e-13) && wrong++ < 8)
          MESSAGE("float64 row ", r, " at d = ", d, ": ", YD.get(r * n + k), " want ", wantD[r]);
      int64_t flags[4] = {x < 0, std::isinf(static_cast<float>(std::exp(static_cast<double>(w * 10.0f)))), x > 0,
                          0};
      for (int r = 0; r < 4; ++r) CHECK(F.getInt(r * n + k) == flags[r]);
    }
    CHECK(wrong == 0);
    double limits[6] = {65504.0, -128.0, 2147483647.0, 3.4028234663852886e38, -3.3895313892515355e38, 65535.0};
    for (int i = 0; i < 6; ++i) CHECK(L.get(i) == limits[i]);
  });
}

TEST_CASE("break and continue on the CPU leave and restart their serial loop") {
  CpuCompiled c = compileTlFile(treeFile("tests/cuda_emu_examples/loop_jumps.tl"));
  for (int64_t m : {8, 21}) {
    CAPTURE(m);
    runAndCheck(c, {{"M", m}}, [&](driver::RunArgs& a) {
      const interp::HostTensor &A = *a.tensors[0], &S = *a.tensors[1], &C = *a.tensors[2], &B = *a.tensors[3],
                               &P = *a.tensors[4];
      for (int64_t row = 0; row < m; ++row) {
        float s = 0;
        int count = 0;
        for (int j = 0; j < 16; ++j) {
          float v = static_cast<float>(A.get(row * 16 + j));
          if (v < 0) continue;
          if (v > 0.8f) break;
          s += v;
          ++count;
        }
        int last = -1;
        for (int j = 15; j >= 0; j -= 2)
          if (A.get(row * 16 + j) > 0.5) {
            last = j;
            break;
          }
        float pSum = 0;
        for (int j = 0; j < 16; ++j)
          if (j % 3 != 0) pSum += static_cast<float>(A.get(row * 16 + j));
        CHECK(S.get(row) == doctest::Approx(s).epsilon(1e-6));
        CHECK(C.getInt(row) == count);
        CHECK(B.getInt(row) == last);
        CHECK(P.get(row) == doctest::Approx(pSum).epsilon(1e-6));
      }
    });
  }
}
