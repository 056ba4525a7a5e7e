// Exhaustive checks of the narrow float conversions against their definitions.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "compiler/interp/float_convert.h"

using namespace tlc;
using namespace tlc::interp;

namespace {

bool isNanHalf(uint16_t b) { return (b & 0x7c00) == 0x7c00 && (b & 0x3ff) != 0; }
bool isNanBF16(uint16_t b) { return (b & 0x7f80) == 0x7f80 && (b & 0x7f) != 0; }
bool isNanE5M2(uint8_t b) { return (b & 0x7c) == 0x7c && (b & 0x3) != 0; }
bool isNanE4M3(uint8_t b) { return (b & 0x7f) == 0x7f; }

// Round-to-nearest-even checked independently: of all finite encodings,
// pick the nearest value (ties to the even mantissa).
template <class Decode>
uint32_t bruteForceNearest(double v, int patterns, Decode decode, bool (*isNan)(uint32_t)) {
  uint32_t best = 0;
  double bestErr = INFINITY;
  for (int p = 0; p < patterns; ++p) {
    double d = decode(static_cast<uint32_t>(p));
    if (isNan(static_cast<uint32_t>(p)) || std::isinf(d)) continue;
    if (std::signbit(d) != std::signbit(v)) continue;
    double err = std::fabs(d - v);
    if (err < bestErr || (err == bestErr && (p & 1) == 0 && (best & 1) == 1)) {
      bestErr = err;
      best = static_cast<uint32_t>(p);
    }
  }
  return best;
}

}  // namespace

TEST_CASE("float16: every bit pattern decodes and encodes back to itself") {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    auto bits = static_cast<uint16_t>(b);
    double v = fromFloat16(bits);
    if (isNanHalf(bits)) {
      CHECK(std::isnan(v));
      uint16_t back = toFloat16(v);
      CHECK(isNanHalf(back));
      CHECK((back & 0x8000) == (bits & 0x8000));
      if (bits & 0x200) CHECK(back == bits);  // quiet NaNs keep their payload
    } else {
      CHECK_MESSAGE(toFloat16(v) == bits, "pattern " << b);
    }
  }
}

TEST_CASE("float16: known values") {
  CHECK(toFloat16(1.0) == 0x3c00);
  CHECK(toFloat16(-2.0) == 0xc000);
  CHECK(toFloat16(65504.0) == 0x7bff);
  CHECK(toFloat16(65520.0) == 0x7c00);   // rounds past the largest finite value
  CHECK(toFloat16(65519.99) == 0x7bff);
  CHECK(toFloat16(INFINITY) == 0x7c00);
  CHECK(toFloat16(-INFINITY) == 0xfc00);
  CHECK(fromFloat16(0x0001) == std::ldexp(1.0, -24));  // smallest subnormal
  CHECK(fromFloat16(0x0400) == std::ldexp(1.0, -14));  // smallest normal
  CHECK(toFloat16(std::ldexp(1.0, -25)) == 0x0000);    // tie between 0 and the smallest subnormal -> even (0)
  CHECK(toFloat16(std::ldexp(1.5, -25)) == 0x0001);
  CHECK(toFloat16(std::ldexp(3.0, -25)) == 0x0002);    // tie 1 vs 2 -> even (2)
  CHECK(toFloat16(1.0 + std::ldexp(1.0, -11)) == 0x3c00);  // tie -> even
  CHECK(toFloat16(1.0 + 3 * std::ldexp(1.0, -11)) == 0x3c02);
  CHECK(toFloat16(-0.0) == 0x8000);
  CHECK(toFloat16(0.1) == 0x2e66);
  CHECK(halfToFloat(floatToHalf(3.140625f)) == 3.140625f);
}

TEST_CASE("float16: rounding of values between the representable ones matches a brute-force nearest search") {
  auto decode = [](uint32_t p) { return fromFloat16(static_cast<uint16_t>(p)); };
  auto nanp = [](uint32_t p) { return isNanHalf(static_cast<uint16_t>(p)); };
  // Midpoints and quarter points between consecutive positive values, and a spread of magnitudes.
  for (uint32_t b = 0; b < 0x7bff; b += 61) {
    double lo = fromFloat16(static_cast<uint16_t>(b)), hi = fromFloat16(static_cast<uint16_t>(b + 1));
    for (double t : {0.25, 0.5, 0.75}) {
      double v = lo + (hi - lo) * t;
      CHECK_MESSAGE(toFloat16(v) == bruteForceNearest(v, 0x7c00, decode, nanp), "value " << v);
    }
  }
}

TEST_CASE("bfloat16: every bit pattern round-trips and rounding is to nearest even") {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    auto bits = static_cast<uint16_t>(b);
    double v = fromBFloat16(bits);
    // bfloat16 is the top half of a float32.
    uint32_t f32 = b << 16;
    float f;
    std::memcpy(&f, &f32, 4);
    if (isNanBF16(bits)) {
      CHECK(std::isnan(v));
      CHECK(isNanBF16(toBFloat16(v)));
    } else {
      CHECK(v == static_cast<double>(f));
      CHECK(toBFloat16(v) == bits);
    }
  }
  CHECK(toBFloat16(1.0) == 0x3f80);
  CHECK(toBFloat16(1.0 + std::ldexp(1.0, -8)) == 0x3f80);      // tie -> even
  CHECK(toBFloat16(1.0 + 3 * std::ldexp(1.0, -8)) == 0x3f82);  // tie -> even
  CHECK(toBFloat16(3.0e38) == 0x7f62);
  CHECK(toBFloat16(3.4e38) == 0x7f80);  // overflow -> inf
  CHECK(fromBFloat16(0x0001) == std::ldexp(1.0, -133));
}

TEST_CASE("float8_e4m3: every pattern round-trips, max 448, no infinity") {
  for (uint32_t b = 0; b < 0x100; ++b) {
    auto bits = static_cast<uint8_t>(b);
    double v = fromFloat8E4M3(bits);
    if (isNanE4M3(bits)) {
      CHECK(std::isnan(v));
      CHECK(isNanE4M3(toFloat8E4M3(v)));
    } else {
      CHECK(std::isfinite(v));
      CHECK_MESSAGE(toFloat8E4M3(v) == bits, "pattern " << b);
    }
  }
  CHECK(fromFloat8E4M3(0x7e) == 448.0);
  CHECK(fromFloat8E4M3(0x08) == std::ldexp(1.0, -6));  // smallest normal
  CHECK(fromFloat8E4M3(0x01) == std::ldexp(1.0, -9));  // smallest subnormal
  CHECK(fromFloat8E4M3(0x38) == 1.0);
  CHECK(toFloat8E4M3(464.0) == 0x7e);  // tie between 448 and (nonexistent) 480 -> even 448
  CHECK(toFloat8E4M3(470.0) == 0x7f);  // rounds past the maximum -> NaN
  CHECK(toFloat8E4M3(INFINITY) == 0x7f);
  CHECK(toFloat8E4M3(-INFINITY) == 0xff);
  CHECK(toFloat8E4M3(NAN) == 0x7f);
  CHECK(toFloat8E4M3(-1.0) == 0xb8);
  CHECK(toFloat8E4M3(1.0625) == 0x38);  // tie -> even
  CHECK(toFloat8E4M3(1.1875) == 0x3a);  // tie -> even
}

TEST_CASE("float8_e5m2: every pattern round-trips, IEEE infinities") {
  for (uint32_t b = 0; b < 0x100; ++b) {
    auto bits = static_cast<uint8_t>(b);
    double v = fromFloat8E5M2(bits);
    if (isNanE5M2(bits)) {
      CHECK(std::isnan(v));
      CHECK(isNanE5M2(toFloat8E5M2(v)));
    } else {
      CHECK_MESSAGE(toFloat8E5M2(v) == bits, "pattern " << b);
    }
  }
  CHECK(fromFloat8E5M2(0x7b) == 57344.0);
  CHECK(fromFloat8E5M2(0x7c) == INFINITY);
  CHECK(toFloat8E5M2(61440.0) == 0x7c);  // tie past the maximum -> inf
  CHECK(toFloat8E5M2(60000.0) == 0x7b);
  CHECK(fromFloat8E5M2(0x01) == std::ldexp(1.0, -16));
  CHECK(toFloat8E5M2(1.0) == 0x3c);
  // e5m2 is the top byte of float16 for values it holds exactly.
  for (uint32_t b = 0; b < 0x100; ++b) {
    auto bits = static_cast<uint8_t>(b);
    if (isNanE5M2(bits)) continue;
    CHECK(fromFloat16(static_cast<uint16_t>(b << 8)) == fromFloat8E5M2(bits));
  }
}

TEST_CASE("8-bit formats round to the nearest value, ties to even, against brute force") {
  auto d4 = [](uint32_t p) { return fromFloat8E4M3(static_cast<uint8_t>(p)); };
  auto n4 = [](uint32_t p) { return isNanE4M3(static_cast<uint8_t>(p)); };
  auto d5 = [](uint32_t p) { return fromFloat8E5M2(static_cast<uint8_t>(p)); };
  auto n5 = [](uint32_t p) { return isNanE5M2(static_cast<uint8_t>(p)); };
  for (double v = -440.0; v <= 440.0; v += 0.37) CHECK(toFloat8E4M3(v) == bruteForceNearest(v, 256, d4, n4));
  for (double v = -0.02; v <= 0.02; v += 0.0001) CHECK(toFloat8E4M3(v) == bruteForceNearest(v, 256, d4, n4));
  for (double v = -50000.0; v <= 50000.0; v += 91.3) CHECK(toFloat8E5M2(v) == bruteForceNearest(v, 256, d5, n5));
}

TEST_CASE("roundToFloatDType rounds to each float dtype") {
  CHECK(roundToFloatDType(0.1, DType::Float64) == 0.1);
  CHECK(roundToFloatDType(0.1, DType::Float32) == static_cast<double>(0.1f));
  CHECK(roundToFloatDType(0.1, DType::Float16) == fromFloat16(0x2e66));
  CHECK(std::isnan(roundToFloatDType(1000.0, DType::Float8E4M3)));
  CHECK(roundToFloatDType(1000.0, DType::Float8E5M2) == 1024.0);
  CHECK(roundToFloatDType(1.0 + 1.0 / 256, DType::BFloat16) == 1.0);
}

#if defined(__FLT16_MAX__)
TEST_CASE("float16 encoding agrees with the compiler's own double -> _Float16 conversion") {
  // An independent reference: the C++ compiler's conversion (libgcc / hardware).
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state;
  };
  for (int n = 0; n < 2000000; ++n) {
    uint64_t r = next();
    // Random sign and mantissa; exponents around float16's range (2^-30 .. 2^20).
    int e = static_cast<int>((r >> 8) % 51) - 30;
    double v = std::ldexp(1.0 + static_cast<double>(next() >> 12) * 0x1.0p-52, e);
    if (r & 1) v = -v;
    _Float16 h = static_cast<_Float16>(v);
    uint16_t want;
    std::memcpy(&want, &h, 2);
    REQUIRE_MESSAGE(toFloat16(v) == want, "value " << v);
  }
}
#endif

TEST_CASE("bfloat16 encoding of float32 values agrees with the bit-trick rounding of the float32 pattern") {
  uint64_t state = 777;
  for (int n = 0; n < 2000000; ++n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t f32 = static_cast<uint32_t>(state >> 32);
    if ((f32 & 0x7f800000u) == 0x7f800000u) continue;  // inf / NaN
    float f;
    std::memcpy(&f, &f32, 4);
    uint32_t rounded = f32 + 0x7fffu + ((f32 >> 16) & 1u);
    uint16_t want = static_cast<uint16_t>(rounded >> 16);
    REQUIRE_MESSAGE(toBFloat16(f) == want, "pattern " << f32);
  }
}
