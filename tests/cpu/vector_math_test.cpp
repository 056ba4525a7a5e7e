// The CPU backend's own float32 math (compiler/backends/cpu/vector_math.h),
// run as compiled kernels (the vectorized loops users get), against the C
// library in double precision: the error in ulps of the float32 result stays
// within the documented bound over random bit patterns of every exponent,
// dense samples where the methods change range, and the edge cases (signed
// zeros, subnormals, infinities, NaN, overflow and underflow thresholds).
// The generated code of a T.Parallel loop over each function has vector
// operations and no call into libm.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>

#include "compiler/backends/cpu/cpu_backend.h"
#include "compiler/backends/cpu/vector_math.h"
#include "tests/cpu/cpu_test_util.h"

using namespace tlc;
using namespace tlc::test;

namespace {

std::string kernelApplying(const std::string& fn) {
  return "def apply[N](X: Tensor[(N,), float32], Y: Tensor[(N,), float32]):\n"
         "    with T.Kernel(T.ceildiv(N, 256), threads=128) as (bx):\n"
         "        for i in T.Parallel(256):\n"
         "            if bx * 256 + i < N:\n"
         "                Y[bx * 256 + i] = T." + fn + "(X[bx * 256 + i])\n";
}

// Compiles `source` (a kernel over tensors of N float32 elements, inputs
// first, the output last), runs it on `inputs` and returns the output.
std::vector<float> runKernel(const std::string& source, const std::vector<const std::vector<float>*>& inputs) {
  CpuCompiled c = compileTl(source);
  REQUIRE_MESSAGE(c.module, c.rendered());
  auto jit = driver::compileForCpu(*c.module, {}, *c.diags);
  REQUIRE_MESSAGE(jit, c.rendered());
  const ir::Func& f = c.module->funcs.at(0);
  size_t n = inputs.at(0)->size();
  auto args = driver::makeArguments(*f, {{"N", static_cast<int64_t>(n)}}, 1, *c.diags);
  REQUIRE(args);
  for (size_t i = 0; i < inputs.size(); ++i) std::memcpy(args->tensors[i]->data(), inputs[i]->data(), n * sizeof(float));
  cpu::CpuKernelFn kernel = jit->kernel(f->name);
  bool found = kernel != nullptr;
  REQUIRE(found);
  driver::callCpuKernel(kernel, *f, *args);
  std::vector<float> out(n);
  std::memcpy(out.data(), args->tensors[inputs.size()]->data(), n * sizeof(float));
  return out;
}

std::vector<float> runOnCpu(const std::string& fn, const std::vector<float>& xs) {
  return runKernel(kernelApplying(fn), {&xs});
}

float fromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// The distance from `got` to the exact `want`, in units of the float32 spacing at `want`.
double ulpError(float got, double want) {
  float w = static_cast<float>(want);
  double spacing = std::ldexp(1.0, std::max(std::ilogb(w == 0 ? std::numeric_limits<float>::min() : w), -126) - 23);
  return std::fabs(static_cast<double>(got) - want) / spacing;
}

// Edge cases, values every exponent of random bits, and dense samples of [lo, hi].
std::vector<float> inputs(std::initializer_list<float> extra, float lo, float hi) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> xs = {0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(),
                           std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min(),
                           std::numeric_limits<float>::min(), -std::numeric_limits<float>::min(),
                           std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(), 1.0f, -1.0f,
                           0.5f, -0.5f, 2.0f, -2.0f, 1e-30f, -1e-30f, 3e-39f, -3e-39f};
  for (float e : extra)
    for (float x = e, k = 0; k < 64; ++k) {
      xs.push_back(x);
      xs.push_back(-x);
      x = std::nextafter(x, inf);
    }
  std::mt19937 rng(11);
  for (int i = 0; i < 150000; ++i) xs.push_back(fromBits(static_cast<uint32_t>(rng())));
  std::uniform_real_distribution<float> dense(lo, hi);
  for (int i = 0; i < 150000; ++i) xs.push_back(dense(rng));
  return xs;
}

struct Case {
  const char* name;
  std::function<double(double)> reference;
  std::vector<float> xs;
};

}  // namespace

TEST_CASE("float32 math of the CPU backend stays within its documented error against libm") {
  const float ln2 = 0.693147182f;
  std::vector<Case> cases = {
      {"exp", [](double x) { return std::exp(x); }, inputs({88.7f, 88.72283f, -87.33f, -103.97f, ln2 / 2}, -110, 90)},
      {"exp2", [](double x) { return std::exp2(x); }, inputs({127.9f, 128.0f, -126.0f, -149.0f, 0.5f}, -155, 130)},
      {"expm1", [](double x) { return std::expm1(x); },
       inputs({88.7f, 88.72283f, 1e-7f, 0.3465f, 17.3f, 18.0f}, -20, 90)},
      {"log", [](double x) { return std::log(x); }, inputs({0.70710677f, 1.4142135f, 0.9999f, 1e-38f}, 0, 4)},
      {"log2", [](double x) { return std::log2(x); }, inputs({0.70710677f, 1.4142135f, 0.9999f}, 0, 4)},
      {"log1p", [](double x) { return std::log1p(x); }, inputs({1e-8f, 1e-4f, 0.41f, 0.99999f, 1e30f}, -1, 3)},
      {"tanh", [](double x) { return std::tanh(x); }, inputs({1e-6f, 0.5f, 0.55f, 9.0f, 9.1f}, -10, 10)},
      {"sigmoid", [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, inputs({20.0f, 87.0f, 88.8f, 104.0f}, -30, 30)},
      {"erf", [](double x) { return std::erf(x); }, inputs({0.999f, 1.0f, 3.9f, 4.0f, 1e-20f}, -5, 5)},
      {"atan", [](double x) { return std::atan(x); }, inputs({0.41421354f, 0.41421357f, 1.0f, 2.4142134f, 1e20f}, -4, 4)},
      {"asin", [](double x) { return std::asin(x); }, inputs({0.5f, 0.7071067f, 0.99999f, 1.0f, 1e-20f}, -1, 1)},
      {"acos", [](double x) { return std::acos(x); }, inputs({0.5f, 0.7071067f, 0.99999f, 1.0f, 1e-20f}, -1, 1)},
  };
  for (Case& c : cases) {
    std::string name = c.name;
    CAPTURE(name);
    std::vector<float> ys = runOnCpu(c.name, c.xs);
    double worst = 0;
    float worstX = 0;
    int64_t wrong = 0;
    for (size_t i = 0; i < c.xs.size(); ++i) {
      float x = c.xs[i], y = ys[i];
      double want = c.reference(x);
      float wantF = static_cast<float>(want);
      bool ok;
      if (std::isnan(want)) {
        ok = std::isnan(y);
      } else if (std::isinf(wantF) || wantF == 0) {
        // Exact at infinities; a zero keeps its sign, and a result rounding to
        // zero may be the smallest subnormal.
        ok = y == wantF ? std::signbit(y) == std::signbit(wantF) : ulpError(y, want) <= 1;
      } else {
        double e = ulpError(y, want);
        if (e > worst) worst = e, worstX = x;
        ok = e <= cpu::maxUlpError(c.name);
      }
      if (!ok && wrong++ < 5) MESSAGE(name, "(", x, ") = ", y, ", want ", want);
    }
    MESSAGE(name, ": max error ", worst, " ulp at x = ", worstX, " over ", c.xs.size(), " inputs");
    CHECK(wrong == 0);
  }
}

TEST_CASE("float32 atan2 of the CPU backend stays within its documented error against libm") {
  // Pairs: the signed zeros, infinities and NaN against each other and
  // against finite values, equal magnitudes, and random bits of every exponent.
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> specials = {0.0f, -0.0f, inf, -inf, nan, 1.0f, -1.0f, 3e-39f, -3e-39f, 2.5f, -2.5f, 1e30f};
  std::vector<float> ys, xs;
  for (float y : specials)
    for (float x : specials) ys.push_back(y), xs.push_back(x);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dense(-3, 3);
  for (int i = 0; i < 200000; ++i) {
    bool bits = i % 2 == 0;
    ys.push_back(bits ? fromBits(static_cast<uint32_t>(rng())) : dense(rng));
    xs.push_back(bits ? fromBits(static_cast<uint32_t>(rng())) : dense(rng));
  }
  std::vector<float> rs = runKernel(
      "def apply[N](Y: Tensor[(N,), float32], X: Tensor[(N,), float32], R: Tensor[(N,), float32]):\n"
      "    with T.Kernel(T.ceildiv(N, 256), threads=128) as (bx):\n"
      "        for i in T.Parallel(256):\n"
      "            if bx * 256 + i < N:\n"
      "                R[bx * 256 + i] = T.atan2(Y[bx * 256 + i], X[bx * 256 + i])\n",
      {&ys, &xs});
  double worst = 0;
  int64_t wrong = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    double want = std::atan2(static_cast<double>(ys[i]), static_cast<double>(xs[i]));
    float wantF = static_cast<float>(want);
    bool ok;
    if (std::isnan(want))
      ok = std::isnan(rs[i]);
    else if (wantF == 0)
      ok = rs[i] == 0 && std::signbit(rs[i]) == std::signbit(wantF);
    else {
      double e = ulpError(rs[i], want);
      worst = std::max(worst, e);
      ok = e <= cpu::maxUlpError("atan2");
    }
    if (!ok && wrong++ < 5) MESSAGE("atan2(", ys[i], ", ", xs[i], ") = ", rs[i], ", want ", want);
  }
  MESSAGE("atan2: max error ", worst, " ulp over ", xs.size(), " pairs");
  CHECK(wrong == 0);
}

TEST_CASE("a T.Parallel loop of float32 math is vector code with no libm call") {
  for (const char* fn : {"exp", "exp2", "expm1", "log", "log2", "log1p", "tanh", "sigmoid", "erf", "sqrt", "rsqrt",
                         "floor", "ceil", "round", "abs", "sin", "cos", "atan", "asin", "acos", "atan2"}) {
    std::string name = fn;
    CAPTURE(name);
    std::string call = name == "atan2" ? "T.atan2(X[bx * 256 + i], 0.5)" : "T." + name + "(X[bx * 256 + i])";
    CpuCompiled c = compileTl("def f(X: Tensor[(1024,), float32], Y: Tensor[(1024,), float32]):\n"
                              "    with T.Kernel(4, threads=128) as (bx):\n"
                              "        for i in T.Parallel(256):\n"
                              "            Y[bx * 256 + i] = " + call + "\n");
    REQUIRE_MESSAGE(c.module, c.rendered());
    std::string llvm = cpuLLVM(c, {}, /*optimized=*/true);
    REQUIRE_MESSAGE(!llvm.empty(), c.rendered());
    CHECK(llvm.find("x float>") != std::string::npos);
    if (name == "sin" || name == "cos") {
      // libmvec's 8-lane entry; the loop the vectorizer keeps for overlapping
      // X and Y calls the scalar function.
      CHECK(llvm.find("@_ZGVdN8v_" + name + "f") != std::string::npos);
      continue;
    }
    // No math library at all, scalar or vector: neither libm (`@tanhf(`), nor
    // libmvec (`@_ZGV...`), nor an LLVM intrinsic that lowers to a call. What
    // remains are instructions (fmuladd, rint, fabs, copysign, sqrt, ...).
    for (std::string callee : {"expf", "exp2f", "expm1f", "logf", "log2f", "log1pf", "tanhf", "erff", "atanf",
                               "asinf", "acosf", "atan2f", "_ZGV",
                               "llvm.exp.", "llvm.exp2.", "llvm.log.", "llvm.log2.", "llvm.pow.", "llvm.tanh."})
      CHECK_MESSAGE(llvm.find("@" + callee) == std::string::npos, "`@", callee, "` in the code");
  }
}
