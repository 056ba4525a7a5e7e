#include "compiler/interp/builtins.h"

#include <cmath>
#include <cstring>
#include <string>
#include <unordered_map>

#include "compiler/ir/float4.h"

namespace tlc::interp {

std::optional<BuiltinSignature> findInterpBuiltin(std::string_view name) {
  static const std::unordered_map<std::string_view, BuiltinSignature> table = {
      {"exp", {Builtin::Exp, 1}},         {"exp2", {Builtin::Exp2, 1}},
      {"exp10", {Builtin::Exp10, 1}},     {"expm1", {Builtin::Expm1, 1}},
      {"log", {Builtin::Log, 1}},         {"log2", {Builtin::Log2, 1}},
      {"log10", {Builtin::Log10, 1}},     {"log1p", {Builtin::Log1p, 1}},
      {"sqrt", {Builtin::Sqrt, 1}},       {"rsqrt", {Builtin::Rsqrt, 1}},
      {"abs", {Builtin::Abs, 1}},         {"fabs", {Builtin::Abs, 1}},
      {"sin", {Builtin::Sin, 1}},         {"cos", {Builtin::Cos, 1}},
      {"tan", {Builtin::Tan, 1}},         {"asin", {Builtin::Asin, 1}},
      {"acos", {Builtin::Acos, 1}},       {"atan", {Builtin::Atan, 1}},
      {"sinh", {Builtin::Sinh, 1}},       {"cosh", {Builtin::Cosh, 1}},
      {"tanh", {Builtin::Tanh, 1}},       {"erf", {Builtin::Erf, 1}},
      {"sigmoid", {Builtin::Sigmoid, 1}}, {"floor", {Builtin::Floor, 1}},
      {"ceil", {Builtin::Ceil, 1}},       {"round", {Builtin::Round, 1}},
      {"trunc", {Builtin::Trunc, 1}},     {"pow", {Builtin::Pow, 2}},
      {"atan2", {Builtin::Atan2, 2}},     {"fmod", {Builtin::Fmod, 2}},
      {"min", {Builtin::Min, 2}},         {"max", {Builtin::Max, 2}},
      {"clamp", {Builtin::Clamp, 3}},     {"fma", {Builtin::Fma, 3}},
      {"ceildiv", {Builtin::CeilDiv, 2}}, {"if_then_else", {Builtin::IfThenElse, 3}},
      {"infinity", {Builtin::Infinity, 0}}, {"ninf", {Builtin::NegInfinity, 0}},
      {"isnan", {Builtin::IsNan, 1}},     {"isinf", {Builtin::IsInf, 1}},
      {"isfinite", {Builtin::IsFinite, 1}}, {"cast", {Builtin::Cast, 1}},
      {"reinterpret", {Builtin::Reinterpret, 1}}, {"unpack_int4", {Builtin::UnpackInt4, 2}},
      {"unpack_uint4", {Builtin::UnpackUInt4, 2}}, {"unpack_fp4", {Builtin::UnpackFp4, 2}},
  };
  auto it = table.find(name);
  if (it == table.end()) return std::nullopt;
  return it->second;
}

namespace {

bool unsignedCompare(DType t) { return t == DType::UInt64; }

// Integer min/max/abs/clamp keep integer semantics when the call is integer-typed.
Value evalIntBuiltin(Builtin id, const Value* a, const DType* types, DType rt, bool* divByZero) {
  auto less = [&](int64_t x, int64_t y) {
    return unsignedCompare(types[0]) ? static_cast<uint64_t>(x) < static_cast<uint64_t>(y) : x < y;
  };
  int64_t r = 0;
  switch (id) {
    case Builtin::Abs: r = isSigned(types[0]) && a[0].i < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(a[0].i)) : a[0].i; break;
    case Builtin::Min: r = less(a[1].i, a[0].i) ? a[1].i : a[0].i; break;
    case Builtin::Max: r = less(a[0].i, a[1].i) ? a[1].i : a[0].i; break;
    case Builtin::Clamp: {
      r = a[0].i;
      if (less(r, a[1].i)) r = a[1].i;
      if (less(a[2].i, r)) r = a[2].i;
      break;
    }
    case Builtin::CeilDiv: {
      int64_t x = a[0].i, y = a[1].i;
      if (y == 0) {
        *divByZero = true;
        return intValue(0);
      }
      if (unsignedCompare(types[0])) {
        uint64_t ux = static_cast<uint64_t>(x), uy = static_cast<uint64_t>(y);
        r = static_cast<int64_t>(ux / uy + (ux % uy != 0));
      } else if (y == -1) {
        r = static_cast<int64_t>(0 - static_cast<uint64_t>(x));
      } else {
        // ceil(x / y) == -floor(-x / y)
        int64_t q = x / y;
        if (x % y != 0 && ((x < 0) == (y < 0))) ++q;
        r = q;
      }
      break;
    }
    default: break;
  }
  return intValue(wrapToIntDType(r, rt));
}

// The bits of a value of dtype `t` (not bool), in the low dtypeBits(t) bits.
uint64_t bitsOf(Value v, DType t) {
  switch (t) {
    case DType::Float16: return toFloat16(v.f);
    case DType::BFloat16: return toBFloat16(v.f);
    case DType::Float8E4M3: return toFloat8E4M3(v.f);
    case DType::Float8E5M2: return toFloat8E5M2(v.f);
    case DType::Float32: {
      float x = static_cast<float>(v.f);
      uint32_t u;
      std::memcpy(&u, &x, 4);
      return u;
    }
    case DType::Float64: {
      uint64_t u;
      std::memcpy(&u, &v.f, 8);
      return u;
    }
    default: return dtypeBits(t) == 64 ? static_cast<uint64_t>(v.i) : static_cast<uint64_t>(v.i) & ((uint64_t(1) << dtypeBits(t)) - 1);
  }
}

// The value of dtype `t` whose bits are `u`.
Value fromBits(uint64_t u, DType t) {
  switch (t) {
    case DType::Float16: return floatValue(fromFloat16(static_cast<uint16_t>(u)));
    case DType::BFloat16: return floatValue(fromBFloat16(static_cast<uint16_t>(u)));
    case DType::Float8E4M3: return floatValue(fromFloat8E4M3(static_cast<uint8_t>(u)));
    case DType::Float8E5M2: return floatValue(fromFloat8E5M2(static_cast<uint8_t>(u)));
    case DType::Float32: {
      uint32_t w = static_cast<uint32_t>(u);
      float x;
      std::memcpy(&x, &w, 4);
      return floatValue(x);
    }
    case DType::Float64: {
      double x;
      std::memcpy(&x, &u, 8);
      return floatValue(x);
    }
    default: return intValue(wrapToIntDType(static_cast<int64_t>(u), t));
  }
}

// Nibble `index mod (bits / 4)` of the integer `packed` of dtype `t`.
int64_t nibbleOf(Value packed, DType t, Value index) {
  uint64_t n = static_cast<uint64_t>(dtypeBits(t) / 4);
  uint64_t i = static_cast<uint64_t>(index.i) & (n - 1);
  return static_cast<int64_t>((bitsOf(packed, t) >> (4 * i)) & 0xF);
}

double nanPropagatingMin(double x, double y) {
  if (std::isnan(x) || std::isnan(y)) return NAN;
  return y < x ? y : x;
}
double nanPropagatingMax(double x, double y) {
  if (std::isnan(x) || std::isnan(y)) return NAN;
  return x < y ? y : x;
}

}  // namespace

Value evalBuiltin(Builtin id, const Value* args, const DType* types, int nargs, DType rt, bool* divByZero) {
  switch (id) {
    case Builtin::IsNan: return intValue(isFloat(types[0]) && std::isnan(args[0].f));
    case Builtin::IsInf: return intValue(isFloat(types[0]) && std::isinf(args[0].f));
    case Builtin::IsFinite: return intValue(!isFloat(types[0]) || std::isfinite(args[0].f));
    case Builtin::Cast: return castValue(args[0], types[0], rt);
    case Builtin::Reinterpret: return fromBits(bitsOf(args[0], types[0]), rt);
    case Builtin::UnpackUInt4: return castValue(intValue(nibbleOf(args[0], types[0], args[1])), DType::Int32, rt);
    case Builtin::UnpackInt4: {
      int64_t n = nibbleOf(args[0], types[0], args[1]);
      return castValue(intValue(n >= 8 ? n - 16 : n), DType::Int32, rt);
    }
    case Builtin::UnpackFp4: return castValue(floatValue(float4E2M1Value(static_cast<unsigned>(nibbleOf(args[0], types[0], args[1])))), DType::Float64, rt);
    default: break;
  }
  bool hasIntForm = id == Builtin::Abs || id == Builtin::Min || id == Builtin::Max || id == Builtin::Clamp ||
                    id == Builtin::CeilDiv;
  if (hasIntForm && !isFloat(rt)) {
    bool intOperands = true;
    for (int k = 0; k < nargs; ++k) intOperands = intOperands && !isFloat(types[k]);
    if (intOperands) return evalIntBuiltin(id, args, types, rt, divByZero);
  }
  double x[3] = {0, 0, 0};
  for (int k = 0; k < nargs && k < 3; ++k) x[k] = asDouble(args[k], types[k]);
  double r;
  switch (id) {
    case Builtin::Exp: r = std::exp(x[0]); break;
    case Builtin::Exp2: r = std::exp2(x[0]); break;
    case Builtin::Exp10: r = std::pow(10.0, x[0]); break;
    case Builtin::Expm1: r = std::expm1(x[0]); break;
    case Builtin::Log: r = std::log(x[0]); break;
    case Builtin::Log2: r = std::log2(x[0]); break;
    case Builtin::Log10: r = std::log10(x[0]); break;
    case Builtin::Log1p: r = std::log1p(x[0]); break;
    case Builtin::Sqrt: r = std::sqrt(x[0]); break;
    case Builtin::Rsqrt: r = 1.0 / std::sqrt(x[0]); break;
    case Builtin::Abs: r = std::fabs(x[0]); break;
    case Builtin::Sin: r = std::sin(x[0]); break;
    case Builtin::Cos: r = std::cos(x[0]); break;
    case Builtin::Tan: r = std::tan(x[0]); break;
    case Builtin::Asin: r = std::asin(x[0]); break;
    case Builtin::Acos: r = std::acos(x[0]); break;
    case Builtin::Atan: r = std::atan(x[0]); break;
    case Builtin::Sinh: r = std::sinh(x[0]); break;
    case Builtin::Cosh: r = std::cosh(x[0]); break;
    case Builtin::Tanh: r = std::tanh(x[0]); break;
    case Builtin::Erf: r = std::erf(x[0]); break;
    case Builtin::Sigmoid: r = 1.0 / (1.0 + std::exp(-x[0])); break;
    case Builtin::Floor: r = std::floor(x[0]); break;
    case Builtin::Ceil: r = std::ceil(x[0]); break;
    case Builtin::Round: r = std::nearbyint(x[0]); break;  // ties to even
    case Builtin::Trunc: r = std::trunc(x[0]); break;
    case Builtin::Pow: r = std::pow(x[0], x[1]); break;
    case Builtin::Atan2: r = std::atan2(x[0], x[1]); break;
    case Builtin::Fmod: r = std::fmod(x[0], x[1]); break;
    case Builtin::Min: r = nanPropagatingMin(x[0], x[1]); break;
    case Builtin::Max: r = nanPropagatingMax(x[0], x[1]); break;
    case Builtin::Clamp: r = nanPropagatingMin(nanPropagatingMax(x[0], x[1]), x[2]); break;
    case Builtin::Fma: r = std::fma(x[0], x[1], x[2]); break;
    case Builtin::CeilDiv: r = std::ceil(x[0] / x[1]); break;
    case Builtin::Infinity: r = INFINITY; break;
    case Builtin::NegInfinity: r = -INFINITY; break;
    default: r = NAN; break;
  }
  return castValue(floatValue(r), DType::Float64, rt);
}

}  // namespace tlc::interp
