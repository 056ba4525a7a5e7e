#include "compiler/ir/dtype.h"
#include "compiler/ir/float4.h"

#include <cmath>

namespace tlc {

std::string_view dtypeName(DType t) {
  switch (t) {
#define X(Name, Spelling, Bits) \
  case DType::Name:             \
    return Spelling;
    TLC_DTYPES(X)
#undef X
  }
  return "?";
}

std::optional<DType> parseDType(std::string_view name) {
#define X(Name, Spelling, Bits) \
  if (name == Spelling) return DType::Name;
  TLC_DTYPES(X)
#undef X
  return std::nullopt;
}

int dtypeBits(DType t) {
  switch (t) {
#define X(Name, Spelling, Bits) \
  case DType::Name:             \
    return Bits;
    TLC_DTYPES(X)
#undef X
  }
  return 0;
}

bool isFloat(DType t) {
  switch (t) {
    case DType::Float16:
    case DType::BFloat16:
    case DType::Float32:
    case DType::Float64:
    case DType::Float8E4M3:
    case DType::Float8E5M2:
      return true;
    default:
      return false;
  }
}

bool isInteger(DType t) { return !isFloat(t) && t != DType::Bool; }

bool isSigned(DType t) {
  switch (t) {
    case DType::Int8:
    case DType::Int16:
    case DType::Int32:
    case DType::Int64:
      return true;
    default:
      return isFloat(t);
  }
}

static int floatRank(DType t) {
  switch (t) {
    case DType::Float8E4M3:
    case DType::Float8E5M2: return 1;
    case DType::Float16: return 2;
    case DType::BFloat16: return 3;
    case DType::Float32: return 4;
    case DType::Float64: return 5;
    default: return 0;
  }
}

DType promote(DType a, DType b) {
  if (a == b) return a;
  if (isFloat(a) || isFloat(b)) {
    // float16 with bfloat16 has no exact common narrow type: use float32.
    if ((a == DType::Float16 && b == DType::BFloat16) || (a == DType::BFloat16 && b == DType::Float16))
      return DType::Float32;
    return floatRank(a) >= floatRank(b) ? a : b;
  }
  if (a == DType::Bool) return b;
  if (b == DType::Bool) return a;
  int ba = dtypeBits(a), bb = dtypeBits(b);
  if (ba != bb) return ba > bb ? a : b;
  return isSigned(a) ? a : b;
}

double float4E2M1Value(unsigned code) {
  unsigned e = (code >> 1) & 3, m = code & 1;
  double mag = e == 0 ? 0.5 * m : std::ldexp(1.0 + 0.5 * m, static_cast<int>(e) - 1);
  return (code & 8) ? -mag : mag;
}

}  // namespace tlc
