// Exact conversions between double and the narrow float formats of the
// language: float16 (IEEE binary16), bfloat16, float8_e4m3 (the "fn" variant)
// and float8_e5m2.
//
// Guarantees:
// - Encoding rounds to nearest, ties to even, directly from the double value
//   (no intermediate float32 rounding), with subnormals.
// - float16, bfloat16 and float8_e5m2 follow IEEE rules: values that round
//   past the largest finite number become +-inf; inf stays inf.
// - float8_e4m3 has no infinity: its largest finite value is 448, and any
//   value that rounds past it (including +-inf) becomes NaN (0x7f / 0xff).
//   This is the non-saturating convention of PyTorch's float8_e4m3fn.
// - NaN stays NaN: the sign and the top payload bits are kept and the quiet
//   bit is set, so decoding then encoding returns every quiet NaN unchanged.
// - Decoding is exact (every value of these formats is a double).
#pragma once

#include <cstdint>

#include "compiler/ir/dtype.h"

namespace tlc::interp {

uint16_t toFloat16(double v);
double fromFloat16(uint16_t bits);
uint16_t toBFloat16(double v);
double fromBFloat16(uint16_t bits);
uint8_t toFloat8E4M3(double v);
double fromFloat8E4M3(uint8_t bits);
uint8_t toFloat8E5M2(double v);
double fromFloat8E5M2(uint8_t bits);

// float overloads for callers that hold float32 values.
inline uint16_t floatToHalf(float v) { return toFloat16(v); }
inline float halfToFloat(uint16_t bits) { return static_cast<float>(fromFloat16(bits)); }

// The value of `v` rounded to the float dtype `t` (round to nearest even;
// float64 returns v unchanged). `t` must be a float dtype.
double roundToFloatDType(double v, DType t);

}  // namespace tlc::interp
