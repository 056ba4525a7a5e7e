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

uint32_t encode(double v, Format f) {
  const int totalBits = 1 + f.expBits + f.manBits;
  const uint32_t signBit = std::signbit(v) ? (1u << (totalBits - 1)) : 0u;
  const int bias = (1 << (f.expBits - 1)) - 1;
  const uint32_t expAllOnes = (1u << f.expBits) - 1;
  const uint32_t manMask = (1u << f.manBits) - 1;
  if (std::isnan(v)) {
    if (!f.hasInf) return signBit | (expAllOnes << f.manBits) | manMask;
    // Keep the top payload bits of the double and force the quiet bit.
    uint64_t payload = (doubleBits(v) >> (52 - f.manBits)) & manMask;
    payload |= 1u << (f.manBits - 1);
    return signBit | (expAllOnes << f.manBits) | static_cast<uint32_t>(payload);
  }
  const uint32_t nanBits = signBit | (expAllOnes << f.manBits) | manMask;
  const uint32_t infBits = signBit | (expAllOnes << f.manBits);
  double a = std::fabs(v);
  if (std::isinf(a)) return f.hasInf ? infBits : nanBits;
  if (a == 0) return signBit;
  // a = m * 2^e with m in [1, 2).
  int e = std::ilogb(a);
  const int emin = 1 - bias;
  int quantumExp = (e < emin ? emin : e) - f.manBits;
  double q = std::ldexp(a, -quantumExp);  // exact: a power-of-two scaling
  double r = std::floor(q);
  double frac = q - r;
  if (frac > 0.5 || (frac == 0.5 && std::fmod(r, 2.0) != 0)) r += 1;
  // Values far above the range are caught before the integer conversion.
  const int emaxField = f.hasInf ? static_cast<int>(expAllOnes) - 1 : static_cast<int>(expAllOnes);
  if (e > emaxField - bias + 1) return f.hasInf ? infBits : nanBits;
  uint64_t ri = static_cast<uint64_t>(r);
  uint64_t encoded;
  if (e < emin) {
    encoded = ri;  // subnormal; ri == 2^manBits carries into the smallest normal
  } else {
    encoded = (static_cast<uint64_t>(e + bias) << f.manBits) + (ri - (uint64_t{1} << f.manBits));
  }
  if (f.hasInf) {
    if (encoded >= (static_cast<uint64_t>(expAllOnes) << f.manBits)) return infBits;
  } else {
    if (encoded >= ((static_cast<uint64_t>(expAllOnes) << f.manBits) | manMask)) return nanBits;
  }
  return signBit | static_cast<uint32_t>(encoded);
}

double decode(uint32_t bits, Format f) {
  const int totalBits = 1 + f.expBits + f.manBits;
  const bool neg = (bits >> (totalBits - 1)) & 1u;
  const int bias = (1 << (f.expBits - 1)) - 1;
  const uint32_t expAllOnes = (1u << f.expBits) - 1;
  const uint32_t manMask = (1u << f.manBits) - 1;
  uint32_t exp = (bits >> f.manBits) & expAllOnes;
  uint32_t man = bits & manMask;
  double mag;
  if (f.hasInf && exp == expAllOnes) {
    if (man == 0) {
      mag = INFINITY;
    } else {
      // Carry the payload into the double's mantissa (top bits).
      uint64_t b = (uint64_t{0x7ff} << 52) | (static_cast<uint64_t>(man) << (52 - f.manBits));
      std::memcpy(&mag, &b, sizeof mag);
    }
  } else if (!f.hasInf && exp == expAllOnes && man == manMask) {
    mag = NAN;
  } else if (exp == 0) {
    mag = std::ldexp(static_cast<double>(man), 1 - bias - f.manBits);
  } else {
    mag = std::ldexp(static_cast<double>(man | (1u << f.manBits)), static_cast<int>(exp) - bias - f.manBits);
  }
  return neg ? -mag : mag;
}

}  // namespace

uint16_t toFloat16(double v) { return static_cast<uint16_t>(encode(v, kHalf)); }
double fromFloat16(uint16_t bits) { return decode(bits, kHalf); }
uint16_t toBFloat16(double v) { return static_cast<uint16_t>(encode(v, kBF16)); }
double fromBFloat16(uint16_t bits) { return decode(bits, kBF16); }
uint8_t toFloat8E4M3(double v) { return static_cast<uint8_t>(encode(v, kE4M3)); }
double fromFloat8E4M3(uint8_t bits) { return decode(bits, kE4M3); }
uint8_t toFloat8E5M2(double v) { return static_cast<uint8_t>(encode(v, kE5M2)); }
double fromFloat8E5M2(uint8_t bits) { return decode(bits, kE5M2); }

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
