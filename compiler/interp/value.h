// Scalar values inside the interpreter and the conversions between dtypes.
//
// A Value is untyped storage; its meaning comes from the dtype of the
// expression that produced it:
// - integers and bool: `i`, already wrapped to the dtype's width (two's
//   complement; unsigned values zero-extended, uint64 held as its bits);
// - floats: `f`, a double holding a value exactly representable in the dtype
//   (every float result is rounded to its dtype right after it is computed).
#pragma once

#include <cstdint>

#include "compiler/interp/float_convert.h"
#include "compiler/interp/host_tensor.h"
#include "compiler/ir/dtype.h"

namespace tlc::interp {

union Value {
  int64_t i;
  double f;
};

inline Value intValue(int64_t v) {
  Value r;
  r.i = v;
  return r;
}
inline Value floatValue(double v) {
  Value r;
  r.f = v;
  return r;
}

inline double roundFloat(double v, DType t) {
  if (t == DType::Float32) return static_cast<double>(static_cast<float>(v));
  if (t == DType::Float64) return v;
  return roundToFloatDType(v, t);
}

// The numeric value as a double (for float math on integer operands).
inline double asDouble(Value v, DType t) { return isFloat(t) ? v.f : intToDouble(v.i, t); }

// A condition's truth (bool and integers: non-zero; floats: != 0).
inline bool truthy(Value v, DType t) { return isFloat(t) ? v.f != 0 : v.i != 0; }

// Cast semantics (the language's `cast` and every implicit conversion):
// float -> float rounds to nearest even; int -> float rounds; float -> int
// truncates toward zero and saturates (NaN gives 0); int -> int wraps;
// anything -> bool is `!= 0`.
inline Value castValue(Value v, DType from, DType to) {
  if (from == to) return v;
  if (isFloat(to)) return floatValue(roundFloat(asDouble(v, from), to));
  if (isFloat(from)) {
    if (to == DType::Bool) return intValue(v.f != 0);
    return intValue(floatToIntDType(v.f, to));
  }
  if (to == DType::Bool) return intValue(v.i != 0);
  return intValue(wrapToIntDType(v.i, to));
}

inline Value readElement(const HostTensor& t, int64_t flat) {
  return isFloat(t.dtype) ? floatValue(t.get(flat)) : intValue(t.getInt(flat));
}
inline void writeElement(HostTensor& t, int64_t flat, Value v) {
  if (isFloat(t.dtype)) {
    t.set(flat, v.f);
  } else {
    t.setInt(flat, v.i);
  }
}

}  // namespace tlc::interp
