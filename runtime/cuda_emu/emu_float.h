// Bit-exact conversions between float and the narrow formats CUDA kernels use
// (binary16, bfloat16, tf32, float8 e4m3 / e5m2), shared by the host prelude
// (compiled into the emulated kernel) and the emulator's instruction set, so
// both sides round identically.
//
// Encoding from float rounds to nearest, ties to even (as __float2half_rn,
// __float2bfloat16_rn and cvt.rn.satfinite-free cvt do); NaN stays NaN.
// e4m3 (the "fn" variant) has no infinity: values past 448 become NaN, which
// is what cvt.rn.e4m3x2.f32 without .satfinite produces. Header-only C++.
#ifndef TLC_CUDA_EMU_FLOAT_H
#define TLC_CUDA_EMU_FLOAT_H

#include <stdint.h>
#include <string.h>

namespace tlc_emu_float {

inline uint32_t floatBits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
inline float bitsFloat(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

// Generic encoder: float -> (sign, exponent bits, mantissa bits) format with
// IEEE-like semantics. expBits/manBits describe the target; `hasInf` false
// means the all-ones exponent still holds finite values except the all-ones
// mantissa (the e4m3 "fn" convention) and overflow yields NaN.
inline uint32_t encodeSmall(float f, int expBits, int manBits, bool hasInf) {
  uint32_t u = floatBits(f);
  uint32_t sign = (u >> 31) << (expBits + manBits);
  uint32_t absu = u & 0x7fffffffu;
  const int bias = (1 << (expBits - 1)) - 1;
  const uint32_t expMax = (1u << expBits) - 1;
  const uint32_t nanCode = hasInf ? ((expMax << manBits) | (1u << (manBits - 1)))
                                  : ((expMax << manBits) | ((1u << manBits) - 1));
  if (absu > 0x7f800000u) {  // NaN: keep top payload bits, set quiet bit
    uint32_t payload = (absu & 0x7fffffu) >> (23 - manBits);
    if (hasInf) return sign | (expMax << manBits) | payload | (1u << (manBits - 1));
    return sign | nanCode;
  }
  if (absu == 0x7f800000u) return hasInf ? (sign | (expMax << manBits)) : (sign | nanCode);
  // Largest finite magnitude of the target, as (exp, man).
  const uint32_t maxFiniteCode = hasInf ? (((expMax - 1) << manBits) | ((1u << manBits) - 1))
                                        : ((expMax << manBits) | ((1u << manBits) - 2));
  int e = (int)(absu >> 23) - 127;  // unbiased exponent of the float
  uint32_t mant = absu & 0x7fffffu;
  if ((absu >> 23) == 0) {  // float subnormal: far below any target subnormal here
    e = -126;
  } else {
    mant |= 0x800000u;  // implicit bit
  }
  // Target exponent and the number of float mantissa bits to drop.
  int te = e + bias;
  int shift;
  if (te >= 1) {
    shift = 23 - manBits;
  } else {  // subnormal in the target
    shift = 23 - manBits + (1 - te);
    te = 0;
  }
  uint32_t code;
  if (shift > 31) {
    code = 0;
  } else {
    uint32_t kept = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (kept & 1))) kept++;
    if (te == 0) {
      code = kept;  // may carry into the exponent field: that is correct
    } else {
      // kept includes the implicit bit; a rounding carry moves into the
      // exponent field, which is the correct result.
      code = ((uint32_t)te << manBits) + (kept - (1u << manBits));
    }
  }
  if (code > maxFiniteCode) return hasInf ? (sign | (expMax << manBits)) : (sign | nanCode);
  return sign | code;
}

inline float decodeSmall(uint32_t code, int expBits, int manBits, bool hasInf) {
  uint32_t sign = (code >> (expBits + manBits)) & 1;
  uint32_t ex = (code >> manBits) & ((1u << expBits) - 1);
  uint32_t man = code & ((1u << manBits) - 1);
  const int bias = (1 << (expBits - 1)) - 1;
  const uint32_t expMax = (1u << expBits) - 1;
  uint32_t out;
  if (ex == expMax && (hasInf || man == (1u << manBits) - 1)) {
    if (hasInf && man == 0)
      out = 0x7f800000u;
    else
      out = 0x7fc00000u | (man << (23 - manBits));
  } else if (ex == 0) {
    if (man == 0) {
      out = 0;
    } else {  // subnormal: normalize
      int e = 1 - bias;
      while (!(man & (1u << manBits))) {
        man <<= 1;
        e--;
      }
      man &= (1u << manBits) - 1;
      out = ((uint32_t)(e + 127) << 23) | (man << (23 - manBits));
    }
  } else {
    out = ((uint32_t)((int)ex - bias + 127) << 23) | (man << (23 - manBits));
  }
  return bitsFloat(out | (sign << 31));
}

inline uint16_t floatToHalf(float f) { return (uint16_t)encodeSmall(f, 5, 10, true); }
inline float halfToFloat(uint16_t h) { return decodeSmall(h, 5, 10, true); }

inline uint16_t floatToBf16(float f) {
  uint32_t u = floatBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
  uint32_t lsb = (u >> 16) & 1;
  u += 0x7fffu + lsb;
  return (uint16_t)(u >> 16);
}
inline float bf16ToFloat(uint16_t b) { return bitsFloat((uint32_t)b << 16); }

inline uint8_t floatToE4M3(float f) { return (uint8_t)encodeSmall(f, 4, 3, false); }
inline float e4m3ToFloat(uint8_t b) { return decodeSmall(b, 4, 3, false); }
inline uint8_t floatToE5M2(float f) { return (uint8_t)encodeSmall(f, 5, 2, true); }
inline float e5m2ToFloat(uint8_t b) { return decodeSmall(b, 5, 2, true); }

// The FNUZ float8 formats that AMD CDNA3's float8 MFMAs read: e4m3fnuz
// ("fp8", bias 8) and e5m2fnuz ("bf8", bias 16). No infinities, no negative
// zero: 0x80 is the only NaN, and the all-ones exponent holds finite values.
inline float decodeFnuz(uint8_t code, int expBits, int manBits) {
  if (code == 0x80) return bitsFloat(0x7fc00000u);
  const uint32_t sign = (uint32_t)(code >> 7) << 31;
  const uint32_t ex = (code >> manBits) & ((1u << expBits) - 1), man = code & ((1u << manBits) - 1);
  const int bias = 1 << (expBits - 1);
  if (ex == 0)  // subnormal (or zero): man * 2^(1 - bias - manBits), exact in float
    return bitsFloat(floatBits((float)man * bitsFloat((uint32_t)(127 + 1 - bias - manBits) << 23)) | sign);
  return bitsFloat(sign | (uint32_t)((int)ex - bias + 127) << 23 | man << (23 - manBits));
}
inline float e4m3fnuzToFloat(uint8_t b) { return decodeFnuz(b, 4, 3); }
inline float e5m2fnuzToFloat(uint8_t b) { return decodeFnuz(b, 5, 2); }

// Eight OCP float8 bytes (e4m3 for expBits 4, e5m2 for 5) as FNUZ bytes of
// half their values. The FNUZ bias is one more than the OCP one, so the same
// bits of every finite value, subnormals included, read as FNUZ are that
// value halved; two bytes need changing: OCP -0 (0x80, FNUZ's NaN) becomes
// +0, and OCP NaN (and e5m2's infinities, which FNUZ lacks) becomes 0x80,
// NaN. A product of two converted operands is a quarter of the product of
// the originals.
inline uint64_t ocpToFnuzHalf(uint64_t w, int expBits) {
  const uint64_t ones = 0x0101010101010101ull, high = ones * 0x80, low7 = w & ~high;
  // Per byte: the low 7 bits at or above the first NaN (e4m3: 0x7f) or
  // infinity (e5m2: 0x7c) code; the low 7 bits nonzero. No carry crosses a byte.
  const uint64_t special = ((low7 + ones * (expBits == 4 ? 0x01 : 0x04)) & high);
  const uint64_t negZero = w & high & ~((low7 + ones * 0x7f) & high);
  uint64_t clear = special | negZero;
  clear |= clear - (clear >> 7);  // 0x80 -> 0xff in each marked byte
  return (w & ~clear) | special;
}

// The value an mma.sync with .tf32 operands sees in a 32-bit register: the
// low 13 mantissa bits are ignored.
inline float tf32Operand(uint32_t bits) { return bitsFloat(bits & 0xffffe000u); }
// cvt.rna.tf32.f32: round to nearest, ties away from zero, to 10 mantissa bits.
inline uint32_t floatToTf32(float f) {
  uint32_t u = floatBits(f);
  if ((u & 0x7fffffffu) >= 0x7f800000u) return u;
  u += 0x1000u;
  return u & 0xffffe000u;
}

}  // namespace tlc_emu_float

#endif
