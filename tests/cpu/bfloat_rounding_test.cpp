// float32 and float64 -> bfloat16 conversions on the CPU, bit for bit against
// the interpreter's rounding (round to nearest even, straight from the
// double): ties, values next to ties, subnormals, overflow, infinities and
// NaNs, and random bit patterns over every exponent. The CPU backend rounds
// in integer arithmetic (x86 without AVX-512 BF16 has no instruction for it),
// and a double goes through float rounded to odd, which this checks.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "compiler/interp/float_convert.h"
#include "tests/cpu/cpu_test_util.h"

using namespace tlc;
using namespace tlc::test;

static const char* kCasts = R"(
def casts[N](X32: Tensor[(N,), float32], X64: Tensor[(N,), float64],
             Y32: Tensor[(N,), bfloat16], Y64: Tensor[(N,), bfloat16]):
    with T.Kernel(T.ceildiv(N, 256), threads=128) as (bx):
        for i in T.Parallel(256):
            if bx * 256 + i < N:
                Y32[bx * 256 + i] = T.cast(X32[bx * 256 + i], bfloat16)
                Y64[bx * 256 + i] = T.cast(X64[bx * 256 + i], bfloat16)
)";

static float floatFromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

static double doubleFromBits(uint64_t u) {
  double d;
  std::memcpy(&d, &u, sizeof d);
  return d;
}

TEST_CASE("float32 and float64 to bfloat16 round to nearest even, bit for bit with the interpreter") {
  std::vector<float> f32;
  std::vector<double> f64;
  const float specials[] = {0.0f, -0.0f, 1.0f, -1.0f, std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                            -std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::max(),
                            std::numeric_limits<float>::lowest(), std::numeric_limits<float>::denorm_min(),
                            std::numeric_limits<float>::min()};
  for (float s : specials) {
    f32.push_back(s);
    f64.push_back(s);
  }
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; ++i) {
    uint32_t u = static_cast<uint32_t>(rng());
    // Every fourth value sits on, or one unit beside, a bfloat16 tie.
    if (i % 4 == 1) u = (u & 0xffff0000u) | 0x8000u;
    if (i % 4 == 2) u = (u & 0xffff0000u) | (0x8000u + ((i & 8) ? 1u : 0xffffffffu));
    f32.push_back(floatFromBits(u));
    // Doubles: just above or below a bfloat16 tie by less than a float's
    // unit (where rounding to float first would make a false tie), next to
    // the float range's ends, and random ones of moderate size.
    double d;
    if (i % 4 == 1) {
      d = static_cast<double>(floatFromBits((u & 0xffff0000u) | 0x8000u)) * ((i & 8) ? 1 + 0x1p-40 : 1 - 0x1p-40);
    } else if (i % 4 == 2) {
      int exponent = (i & 16) ? 120 + static_cast<int>(rng() % 10) : -155 + static_cast<int>(rng() % 32);
      d = std::ldexp(1.0 + static_cast<double>(rng() >> 12) * 0x1p-52, exponent) * ((i & 32) ? -1 : 1);
    } else {
      d = doubleFromBits((rng() & 0x800fffffffffffffull) | (uint64_t(1023 - 30 + rng() % 60) << 52));
    }
    f64.push_back(d);
  }
  const int64_t n = static_cast<int64_t>(f32.size());

  CpuCompiled c = compileTl(kCasts);
  REQUIRE_MESSAGE(c.module, c.rendered());
  auto jit = driver::compileForCpu(*c.module, {}, *c.diags);
  REQUIRE_MESSAGE(jit, c.rendered());
  const ir::Func& f = c.module->funcs.at(0);
  auto args = driver::makeArguments(*f, {{"N", n}}, 1, *c.diags);
  REQUIRE(args);
  std::memcpy(args->tensors[0]->data(), f32.data(), f32.size() * sizeof(float));
  std::memcpy(args->tensors[1]->data(), f64.data(), f64.size() * sizeof(double));
  cpu::CpuKernelFn fn = jit->kernel(f->name);
  bool found = fn != nullptr;
  REQUIRE(found);
  driver::callCpuKernel(fn, *f, *args);

  auto bits = [&](int t, int64_t i) {
    uint16_t b;
    std::memcpy(&b, static_cast<const uint16_t*>(args->tensors[t]->data()) + i, sizeof b);
    return b;
  };
  int64_t wrong32 = 0, wrong64 = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint16_t want32 = interp::toBFloat16(f32[i]);
    uint16_t want64 = interp::toBFloat16(f64[i]);
    if (bits(2, i) != want32 && wrong32++ < 5)
      MESSAGE("float32 ", f32[i], ": got ", unsigned(bits(2, i)), " want ", unsigned(want32));
    if (bits(3, i) != want64 && wrong64++ < 5)
      MESSAGE("float64 ", f64[i], ": got ", unsigned(bits(3, i)), " want ", unsigned(want64));
  }
  CHECK(wrong32 == 0);
  CHECK(wrong64 == 0);
}
