// One parametrised encoder/decoder serves every narrow float format: a format
// is its exponent and mantissa widths plus how it spells overflow and NaN.
#include "compiler/interp/float_convert.h"

#include <cmath>
#include <cstring>

#include "compiler/support/diagnostics.h"

namespace tlc::interp {
namespace {

struct Format {
  int expBits;
  int manBits;
  bool hasInf;  // IEEE-style: all-ones exponent is inf/NaN; else only all-ones bits are NaN
};

constexpr Format kHalf{5, 10, true};
constexpr Format kBF16{8, 7, true};
constexpr Format kE4M3{4, 3, false};
constexpr Format kE5M2{5, 2, true};

uint64_t doubleBits(double v) {
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// Works on the double's bits: the 53-bit significand is shifted right to the
// target's precision with round-to-nearest-even on the bits shifted out.
template <Format f>
uint32_t encode(double v) {
  const uint64_t bits = doubleBits(v);
  const int totalBits = 1 + f.expBits + f.manBits;
  const uint32_t signBit = (bits >> 63) ? (1u << (totalBits - 1)) : 0u;
  const int bias = (1 << (f.expBits - 1)) - 1;
  const uint32_t expAllOnes = (1u << f.expBits) - 1;
  const uint32_t manMask = (1u << f.manBits) - 1;
  const uint32_t nanBits = signBit | (expAllOnes << f.manBits) | manMask;
  const uint32_t infBits = signBit | (expAllOnes << f.manBits);
  const int dexp = static_cast<int>((bits >> 52) & 0x7ff);
  const uint64_t dman = bits & ((uint64_t{1} << 52) - 1);
  if (dexp == 0x7ff) {
    if (dman == 0) return f.hasInf ? infBits : nanBits;
    if (!f.hasInf) return nanBits;
    // Keep the top payload bits of the double and force the quiet bit.
    uint32_t payload = static_cast<uint32_t>(dman >> (52 - f.manBits)) & manMask;
    payload |= 1u << (f.manBits - 1);
    return signBit | (expAllOnes << f.manBits) | payload;
  }
  // Double subnormals (and zero) are far below every format's smallest value.
  if (dexp == 0) return signBit;
  const int e = dexp - 1023;  // v = 1.m * 2^e
  const uint64_t sig = (uint64_t{1} << 52) | dman;
  const int emin = 1 - bias;
  // Shift that leaves the significand in units of the target's quantum.
  const int shift = 52 - f.manBits + (e < emin ? emin - e : 0);
  uint64_t r;
  if (shift >= 64) {
    r = 0;  // below half the smallest subnormal
  } else {
    r = sig >> shift;
    const uint64_t rem = sig & ((uint64_t{1} << shift) - 1);
    const uint64_t half = uint64_t{1} << (shift - 1);
    if (rem > half || (rem == half && (r & 1))) ++r;
  }
  // Far above the range: avoid forming a huge exponent field.
  if (e > static_cast<int>(expAllOnes) - bias + 1) return f.hasInf ? infBits : nanBits;
  uint64_t encoded;
  if (e < emin) {
    encoded = r;  // subnormal; r == 2^manBits carries into the smallest normal
  } else {
    encoded = (static_cast<uint64_t>(e + bias) << f.manBits) + (r - (uint64_t{1} << f.manBits));
  }
  if (f.hasInf) {
    if (encoded >= (static_cast<uint64_t>(expAllOnes) << f.manBits)) return infBits;
  } else {
    if (encoded >= ((static_cast<uint64_t>(expAllOnes) << f.manBits) | manMask)) return nanBits;
  }
  return signBit | static_cast<uint32_t>(encoded);
}

template <Format f>
double decode(uint32_t bits) {
  const int totalBits = 1 + f.expBits + f.manBits;
  const uint64_t sign = static_cast<uint64_t>((bits >> (totalBits - 1)) & 1u) << 63;
  const int bias = (1 << (f.expBits - 1)) - 1;
  const uint32_t expAllOnes = (1u << f.expBits) - 1;
  const uint32_t manMask = (1u << f.manBits) - 1;
  const uint32_t exp = (bits >> f.manBits) & expAllOnes;
  const uint64_t man = bits & manMask;
  uint64_t out;
  if ((f.hasInf && exp == expAllOnes) || (!f.hasInf && exp == expAllOnes && man == manMask)) {
    // inf, or NaN carrying its payload in the top mantissa bits (e4m3's one NaN becomes a quiet NaN).
    uint64_t payload = f.hasInf ? man << (52 - f.manBits) : uint64_t{1} << 51;
    out = sign | (uint64_t{0x7ff} << 52) | payload;
  } else if (exp == 0) {
    // Subnormal: man * 2^(1 - bias - manBits), exact in double.
    const uint64_t quantumBits = static_cast<uint64_t>(1 - bias - f.manBits + 1023) << 52;
    double quantum;
    std::memcpy(&quantum, &quantumBits, sizeof quantum);
    double mag = static_cast<double>(man) * quantum;
    return sign ? -mag : mag;
  } else {
    out = sign | (static_cast<uint64_t>(static_cast<int>(exp) - bias + 1023) << 52) | (man << (52 - f.manBits));
  }
  double d;
  std::memcpy(&d, &out, sizeof d);
  return d;
}

}  // namespace

uint16_t toFloat16(double v) { return static_cast<uint16_t>(encode<kHalf>(v)); }
double fromFloat16(uint16_t bits) { return decode<kHalf>(bits); }
uint16_t toBFloat16(double v) { return static_cast<uint16_t>(encode<kBF16>(v)); }
double fromBFloat16(uint16_t bits) { return decode<kBF16>(bits); }
uint8_t toFloat8E4M3(double v) { return static_cast<uint8_t>(encode<kE4M3>(v)); }
double fromFloat8E4M3(uint8_t bits) { return decode<kE4M3>(bits); }
uint8_t toFloat8E5M2(double v) { return static_cast<uint8_t>(encode<kE5M2>(v)); }
double fromFloat8E5M2(uint8_t bits) { return decode<kE5M2>(bits); }

double roundToFloatDType(double v, DType t) {
  switch (t) {
    case DType::Float64: return v;
    case DType::Float32: return static_cast<double>(static_cast<float>(v));
    case DType::Float16: return fromFloat16(toFloat16(v));
    case DType::BFloat16: return fromBFloat16(toBFloat16(v));
    case DType::Float8E4M3: return fromFloat8E4M3(toFloat8E4M3(v));
    case DType::Float8E5M2: return fromFloat8E5M2(toFloat8E5M2(v));
    default: TLC_ICE("roundToFloatDType on a non-float dtype");
  }
}

}  // namespace tlc::interp
