// The pure builtin functions the interpreter evaluates (the `Call` node).
//
// Floating-point builtins compute in double from their operands' values and
// round the result to the call's dtype; integer forms (abs, min, max,
// ceildiv, ...) compute in int64 and wrap to the call's dtype. Calls to
// target intrinsics ("<target>.<name>") are not builtins: the interpreter
// runs target-independent IR only.
#pragma once

#include <optional>
#include <string_view>

#include "compiler/interp/value.h"

namespace tlc::interp {

enum class Builtin {
  Exp, Exp2, Exp10, Expm1, Log, Log2, Log10, Log1p, Sqrt, Rsqrt, Abs, Sin, Cos, Tan, Asin, Acos, Atan,
  Sinh, Cosh, Tanh, Erf, Sigmoid, Floor, Ceil, Round, Trunc, Pow, Atan2, Fmod, Min, Max, Clamp, Fma,
  CeilDiv, IfThenElse, Infinity, NegInfinity, IsNan, IsInf, IsFinite, Cast, Reinterpret, UnpackInt4, UnpackUInt4,
  UnpackFp4
};

struct BuiltinSignature {
  Builtin id;
  int arity;
};

// The builtin called `name`, or nullopt.
std::optional<BuiltinSignature> findInterpBuiltin(std::string_view name);

// Evaluates builtin `id` on already-evaluated operands. `argTypes[k]` is the
// dtype of args[k]; `resultType` is the call's dtype. IfThenElse is evaluated
// lazily by the caller and never reaches here. Sets `*divByZero` for an
// integer ceildiv by zero.
Value evalBuiltin(Builtin id, const Value* args, const DType* argTypes, int nargs, DType resultType,
                  bool* divByZero);

}  // namespace tlc::interp
