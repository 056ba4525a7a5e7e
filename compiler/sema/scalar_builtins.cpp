// Calls of scalar builtins: ceildiv, math functions, fma, max/min/clamp, the
// isnan family, if_then_else, infinity, min_value/max_value, cast (and
// TileLang's `T.Cast(dtype, x)`), TileLang's `T.dynamic` and `T.target`. Math
// functions that only make sense on floats (exp, log, sqrt, ...) accept
// integer literals (converted to float32) but reject integer variables,
// which must be converted explicitly.
#include <cctype>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include "compiler/ir/int_arith.h"
#include "compiler/sema/const_eval.h"
#include "compiler/sema/sema.h"

namespace tlc::sema {

namespace {

// The largest (or lowest) finite value of `t`.
ir::Expr extremeValue(DType t, bool largest, SourceLoc loc) {
  if (isFloat(t)) {
    double m = 0;
    switch (t) {
      case DType::Float16: m = 65504.0; break;
      case DType::BFloat16: m = 0x1.fep127; break;
      case DType::Float32: m = std::numeric_limits<float>::max(); break;
      case DType::Float8E4M3: m = 448.0; break;
      case DType::Float8E5M2: m = 57344.0; break;
      default: m = std::numeric_limits<double>::max(); break;
    }
    return ir::makeFloat(largest ? m : -m, t, loc);
  }
  int bits = dtypeBits(t);
  if (!isSigned(t)) return ir::makeInt(largest ? ir::wrapToDType(~uint64_t(0), t) : 0, t, loc);
  uint64_t high = (uint64_t(1) << (bits - 1)) - 1;
  return ir::makeInt(ir::wrapToDType(largest ? high : ~high, t), t, loc);
}

// A dtype, or a string naming one (`"float32"`).
bool isDTypeValue(const Value& v) {
  return v.kind == ValueKind::DType || (v.kind == ValueKind::String && parseDTypeSpelling(v.str));
}

}  // namespace

// `x` as a float operand of `name`: integer literals become float32, other
// integers are an error.
ir::Expr Sema::floatOperand(const Value& v, ir::Expr x, const std::string& name) {
  if (isFloat(x->dtype)) return x;
  if (!v.weak) {
    report(DiagKind::TypeMismatch, v.loc,
           "`" + name + "` needs a floating-point argument, but this is " + std::string(dtypeName(x->dtype)) +
               "; convert it with `T.cast(x, float32)`");
    return nullptr;
  }
  return foldCast(DType::Float32, x, v.loc);
}

Value Sema::minMax(BuiltinId id, const Value& a, const Value& c, const std::string& name, SourceLoc loc) {
  ir::Expr x = expectScalar(a, "an argument of `" + name + "`");
  ir::Expr y = expectScalar(c, "an argument of `" + name + "`");
  if (!x || !y) return Value::error(loc);
  DType t;
  bool weak;
  if (!unify(a, c, x, y, t, weak, loc)) return Value::error(loc);
  if (t == DType::Bool) {
    report(DiagKind::TypeMismatch, loc, "`" + name + "` needs numbers, but the arguments are bool");
    return Value::error(loc);
  }
  return Value::ofExpr(foldBinary(id == BuiltinId::Max ? ir::BinaryOp::Max : ir::BinaryOp::Min, x, y, loc), loc, weak);
}

// The math functions built from others, in the argument's float type:
// log10(x) = log(x) / ln(10), exp10(x) = exp2(x log2(10)), tan = sin / cos,
// sinh and cosh from expm1 (exact near 0), trunc rounds toward zero.
Value Sema::composedMath(const BuiltinInfo& b, const Value& a, SourceLoc loc) {
  std::string name = std::string("T.") + b.name;
  ir::Expr x = expectScalar(a, "the argument of `" + name + "`");
  if (!x || !(x = floatOperand(a, x, name))) return Value::error(loc);
  DType t = x->dtype;
  auto call = [&](const char* f, ir::Expr y) { return foldMathCall(f, {std::move(y)}, t, loc); };
  auto c = [&](double v) { return ir::makeFloat(v, t, loc); };
  auto op = [&](ir::BinaryOp o, ir::Expr p, ir::Expr q) { return foldBinary(o, std::move(p), std::move(q), loc); };
  ir::Expr r;
  switch (b.id) {
    case BuiltinId::Log10: r = op(ir::BinaryOp::Mul, call("log", x), c(1.0 / std::log(10.0))); break;
    case BuiltinId::Exp10: r = call("exp2", op(ir::BinaryOp::Mul, x, c(std::log2(10.0)))); break;
    case BuiltinId::Tan: r = op(ir::BinaryOp::Div, call("sin", x), call("cos", x)); break;
    case BuiltinId::Sinh:
    case BuiltinId::Cosh: {
      // (expm1(x) -/+ expm1(-x)) / 2 (+ 1 for cosh).
      ir::Expr p = call("expm1", x), m = call("expm1", op(ir::BinaryOp::Sub, c(0.0), x));
      r = b.id == BuiltinId::Sinh ? op(ir::BinaryOp::Mul, op(ir::BinaryOp::Sub, p, m), c(0.5))
                                  : op(ir::BinaryOp::Add, op(ir::BinaryOp::Mul, op(ir::BinaryOp::Add, p, m), c(0.5)), c(1.0));
      break;
    }
    default:  // Trunc
      r = foldSelect(op(ir::BinaryOp::Lt, x, c(0.0)), call("ceil", x), call("floor", x), loc);
      break;
  }
  return Value::ofExpr(r, loc, a.weak && isConstant(r));
}

Value Sema::callScalarBuiltin(const BuiltinInfo& b, const ast::Expr& call) {
  std::string name = std::string("T.") + b.name;
  CallArgs args;
  if (!matchArgs(call, name, b.params, b.required, b.variadic, args)) return Value::error(call.loc);
  SourceLoc loc = call.loc;
  auto arg = [&](int i) { return eval(*args.slots[i]); };

  switch (b.id) {
    case BuiltinId::CeilDiv: {
      Value a = arg(0), d = arg(1);
      ir::Expr x = expectInt(a, "the dividend of `T.ceildiv`");
      ir::Expr y = expectInt(d, "the divisor of `T.ceildiv`");
      if (!x || !y) return Value::error(loc);
      DType t;
      bool weak;
      if (!unify(a, d, x, y, t, weak, loc)) return Value::error(loc);
      auto c = constIntValue(y);
      if (c && *c == 0) {
        report(DiagKind::DivisionByZero, d.loc, "`T.ceildiv` by zero");
        return Value::error(loc);
      }
      // Constants fold exactly (the quotient of the widest integers, not
      // through the sum `x + y - 1`, which may overflow when the quotient fits).
      if (auto cx = constIntValue(x); cx && c && (isSigned(t) || (*cx >= 0 && *c >= 0))) {
        ir::CheckedInt q = ir::checkedIntBinary(ir::BinaryOp::FloorDiv, -*cx, *c, DType::Int64);
        if (*cx != INT64_MIN && q.value && *q.value != INT64_MIN) {
          int64_t r = -*q.value;
          if (ir::fitsDType(r, t)) return Value::ofExpr(ir::makeInt(r, t, loc), loc, weak);
          if (weak && isSigned(t)) return Value::ofExpr(ir::makeInt(r, DType::Int64, loc), loc, weak);
        }
        report(DiagKind::IntegerOverflow, loc,
               "`T.ceildiv(" + std::to_string(*cx) + ", " + std::to_string(*c) + ")` overflows " +
                   std::string(dtypeName(t)) + ": compile-time integer arithmetic does not wrap");
        return Value::error(loc);
      }
      ir::Expr one = ir::makeInt(1, t, loc);
      ir::Expr num = foldBinary(ir::BinaryOp::Add, x, foldBinary(ir::BinaryOp::Sub, y, one, loc), loc);
      return Value::ofExpr(foldBinary(ir::BinaryOp::FloorDiv, num, y, loc), loc, weak);
    }
    case BuiltinId::Exp: case BuiltinId::Exp2: case BuiltinId::Expm1: case BuiltinId::Log:
    case BuiltinId::Log2: case BuiltinId::Log1p: case BuiltinId::Sqrt: case BuiltinId::Rsqrt:
    case BuiltinId::Sin: case BuiltinId::Cos: case BuiltinId::Tanh: case BuiltinId::Erf:
    case BuiltinId::Asin: case BuiltinId::Acos: case BuiltinId::Atan: case BuiltinId::Sigmoid: case BuiltinId::Floor: case BuiltinId::Ceil: case BuiltinId::Round: {
      Value a = arg(0);
      ir::Expr x = expectScalar(a, "the argument of `" + name + "`");
      if (!x || !(x = floatOperand(a, x, name))) return Value::error(loc);
      ir::Expr r = foldMathCall(b.name, {x}, x->dtype, loc);
      return Value::ofExpr(r, loc, a.weak && isConstant(r));
    }
    case BuiltinId::Atan2: {
      // The angle of the point (x, y): both operands float, literals adapting to the other's type.
      Value vy = arg(0), vx = arg(1);
      ir::Expr y = expectScalar(vy, "an argument of `T.atan2`");
      ir::Expr x = expectScalar(vx, "an argument of `T.atan2`");
      if (!y || !x || !(y = floatOperand(vy, y, name)) || !(x = floatOperand(vx, x, name))) return Value::error(loc);
      DType t;
      bool weak;
      if (!unify(vy, vx, y, x, t, weak, loc)) return Value::error(loc);
      ir::Expr r = foldMathCall("atan2", {y, x}, t, loc);
      return Value::ofExpr(r, loc, weak && isConstant(r));
    }
    case BuiltinId::Fma: {
      Value va = arg(0), vb = arg(1), vc = arg(2);
      ir::Expr x = expectScalar(va, "an argument of `T.fma`");
      ir::Expr y = expectScalar(vb, "an argument of `T.fma`");
      ir::Expr z = expectScalar(vc, "an argument of `T.fma`");
      if (!x || !y || !z) return Value::error(loc);
      for (auto [v, e] : {std::pair{&va, &x}, {&vb, &y}, {&vc, &z}})
        if (!(*e = floatOperand(*v, *e, name))) return Value::error(loc);
      // Literals adapt to the other operands' type; values are promoted.
      std::optional<DType> strong;
      DType all = promote(promote(x->dtype, y->dtype), z->dtype);
      for (auto [v, e] : {std::pair{&va, &x}, {&vb, &y}, {&vc, &z}})
        if (!v->weak) strong = strong ? promote(*strong, (*e)->dtype) : (*e)->dtype;
      DType t = strong ? *strong : all;
      bool weak = va.weak && vb.weak && vc.weak;
      ir::Expr r = foldMathCall("fma", {foldCast(t, x, va.loc), foldCast(t, y, vb.loc), foldCast(t, z, vc.loc)}, t, loc);
      return Value::ofExpr(r, loc, weak && isConstant(r));
    }
    case BuiltinId::Clamp: {
      // min(max(x, lo), hi) in the promoted type; NaN in any operand gives NaN.
      Value x = arg(0), lo = arg(1), hi = arg(2);
      Value low = minMax(BuiltinId::Max, x, lo, name, loc);
      if (low.isError()) return low;
      return minMax(BuiltinId::Min, low, hi, name, loc);
    }
    case BuiltinId::IsNan: case BuiltinId::IsInf: case BuiltinId::IsFinite: {
      Value a = arg(0);
      ir::Expr x = expectScalar(a, "the argument of `" + name + "`");
      if (!x) return Value::error(loc);
      if (x->dtype == DType::Bool) {
        report(DiagKind::TypeMismatch, a.loc, "`" + name + "` needs a number, but this is bool");
        return Value::error(loc);
      }
      // Integers are never NaN or infinite.
      if (!isFloat(x->dtype)) return Value::ofExpr(ir::makeBool(b.id == BuiltinId::IsFinite, loc), loc);
      if (auto* f = ir::as<ir::FloatImm>(x)) {
        double v = f->value;
        bool r = b.id == BuiltinId::IsNan ? std::isnan(v) : b.id == BuiltinId::IsInf ? std::isinf(v) : std::isfinite(v);
        return Value::ofExpr(ir::makeBool(r, loc), loc);
      }
      return Value::ofExpr(ir::makeCall(b.name, {x}, DType::Bool, loc), loc);
    }
    case BuiltinId::Abs: {
      Value a = arg(0);
      ir::Expr x = expectScalar(a, "the argument of `T.abs`");
      if (!x) return Value::error(loc);
      if (x->dtype == DType::Bool) {
        report(DiagKind::TypeMismatch, a.loc, "`T.abs` needs a number, but this is bool");
        return Value::error(loc);
      }
      ir::Expr r = foldMathCall("abs", {x}, x->dtype, loc);
      return Value::ofExpr(r, loc, a.weak && isConstant(r));
    }
    case BuiltinId::Pow: return binary(ast::BinaryOp::Pow, arg(0), arg(1), loc);
    case BuiltinId::Max:
    case BuiltinId::Min: return minMax(b.id, arg(0), arg(1), name, loc);
    case BuiltinId::IfThenElse: {
      Value c = arg(0);
      ir::Expr guard = c.isExpr() ? c.expr : nullptr;
      Value t = guard ? underCondition(guard, false, [&] { return arg(1); }) : arg(1);
      Value f = guard ? underCondition(guard, true, [&] { return arg(2); }) : arg(2);
      ir::Expr cond = expectBool(c, "the condition of `T.if_then_else`");
      ir::Expr x = expectScalar(t, "the value of `T.if_then_else`");
      ir::Expr y = expectScalar(f, "the value of `T.if_then_else`");
      if (!cond || !x || !y) return Value::error(loc);
      DType dt;
      bool weak;
      if (!unify(t, f, x, y, dt, weak, loc)) return Value::error(loc);
      return Value::ofExpr(foldSelect(cond, x, y, loc), loc, weak && isConstant(cond));
    }
    case BuiltinId::Infinity: {
      auto t = evalDType(*args.slots[0], "the dtype of `T.infinity`");
      if (!t) return Value::error(loc);
      if (!isFloat(*t)) {
        report(DiagKind::BadDType, args.slots[0]->loc,
               "`T.infinity` needs a floating-point dtype, but this is " + std::string(dtypeName(*t)));
        return Value::error(loc);
      }
      return Value::ofExpr(ir::makeFloat(std::numeric_limits<double>::infinity(), *t, loc), loc);
    }
    case BuiltinId::MinValue:
    case BuiltinId::MaxValue: {
      auto t = evalDType(*args.slots[0], "the dtype of `" + name + "`");
      if (!t) return Value::error(loc);
      if (*t == DType::Bool) {
        report(DiagKind::BadDType, args.slots[0]->loc, "`" + name + "` needs a numeric dtype, but this is bool");
        return Value::error(loc);
      }
      return Value::ofExpr(extremeValue(*t, b.id == BuiltinId::MaxValue, loc), loc);
    }
    case BuiltinId::Reinterpret:
    case BuiltinId::UnpackInt4:
    case BuiltinId::UnpackUInt4:
    case BuiltinId::UnpackFp4: return callPackedBuiltin(b, call, args);
    case BuiltinId::Cast:
    case BuiltinId::CastDTypeFirst: {
      bool dtypeFirst = b.id == BuiltinId::CastDTypeFirst;
      const ast::Expr& valueArg = *args.slots[dtypeFirst ? 1 : 0];
      const ast::Expr& dtypeArg = *args.slots[dtypeFirst ? 0 : 1];
      Value v = eval(valueArg);
      if (v.isError()) return v;
      if (isDTypeValue(v)) {
        report(DiagKind::TypeMismatch, loc,
               "the arguments of `" + name + "` are swapped: " +
                   (dtypeFirst ? "TileLang's `T.Cast` takes the dtype first, `T.Cast(\"float32\", x)`"
                               : "`T.cast` takes the value first, `T.cast(x, \"float32\")`; TileLang's "
                                 "`T.Cast(\"float32\", x)` takes the dtype first"));
        return Value::error(loc);
      }
      ir::Expr x = expectScalar(v, "the value of `" + name + "`");
      auto t = evalDType(dtypeArg, "the dtype of `" + name + "`");
      if (!x || !t) return Value::error(loc);
      return Value::ofExpr(foldCast(*t, x, loc), loc);
    }
    case BuiltinId::Dynamic: return dynamicDimensions(*args.slots[0], args.slots[1], loc);
    case BuiltinId::Target: return targetTest(*args.slots[0], loc);
    case BuiltinId::DataTypeOf: {
      auto t = evalDType(*args.slots[0], "the argument of `DataType`");
      if (!t) return Value::error(loc);
      return Value::ofDType(*t, loc);
    }
    case BuiltinId::GetThreadBinding:
    case BuiltinId::GetThreadBindings:
    case BuiltinId::GetBlockBinding:
    case BuiltinId::GetBlockBindings: return binding(b, call, args);
    case BuiltinId::FloorDivFn: return binary(ast::BinaryOp::FloorDiv, arg(0), arg(1), loc);
    case BuiltinId::FloorModFn: return binary(ast::BinaryOp::Mod, arg(0), arg(1), loc);
    case BuiltinId::BitwiseAnd: return binary(ast::BinaryOp::BitAnd, arg(0), arg(1), loc);
    case BuiltinId::BitwiseOr: return binary(ast::BinaryOp::BitOr, arg(0), arg(1), loc);
    case BuiltinId::BitwiseXor: return binary(ast::BinaryOp::BitXor, arg(0), arg(1), loc);
    case BuiltinId::ShiftLeft: return binary(ast::BinaryOp::Shl, arg(0), arg(1), loc);
    case BuiltinId::ShiftRight: return binary(ast::BinaryOp::Shr, arg(0), arg(1), loc);
    case BuiltinId::BitwiseNot: return unary(ast::UnaryOp::Invert, arg(0), loc);
    case BuiltinId::Log10: case BuiltinId::Exp10: case BuiltinId::Tan: case BuiltinId::Sinh:
    case BuiltinId::Cosh: case BuiltinId::Trunc: return composedMath(b, arg(0), loc);
    default: break;
  }
  report(DiagKind::MisusedBuiltin, loc, "`" + name + "` has no value");
  return Value::error(loc);
}

// `T.target("hip")`: a compile-time bool, True when the module is compiled
// for a target of that kind (cuda, hip, cpu, interp) or of that architecture
// (sm_90a, gfx942, ...: the part of the target after the colon). With no
// target (`tlc check`) it is False. Kernels choose target-specific defaults
// with it: `block_M=64 if T.target("hip") else 128`.
Value Sema::targetTest(const ast::Expr& nameExpr, SourceLoc loc) {
  Value name = eval(nameExpr);
  if (name.isError()) return name;
  if (name.kind != ValueKind::String) {
    report(DiagKind::TypeMismatch, nameExpr.loc,
           "`T.target` takes a target kind or architecture as a string, `T.target(\"hip\")`, but this is " +
               describeValue(name));
    return Value::error(loc);
  }
  const std::string& want = name.str;
  static const char* const kinds[] = {"cuda", "hip", "cpu", "interp"};
  bool isKind = false;
  for (const char* k : kinds) isKind = isKind || want == k;
  // sm_ or gfx and letters or digits after it.
  auto isArch = [](const std::string& s) {
    if (s.size() <= 3 || (s.rfind("sm_", 0) != 0 && s.rfind("gfx", 0) != 0)) return false;
    for (size_t i = 3; i < s.size(); ++i)
      if (!std::isalnum(static_cast<unsigned char>(s[i]))) return false;
    return true;
  };
  if (!isKind && !isArch(want)) {
    report(DiagKind::OutOfRange, nameExpr.loc,
           "`T.target(\"" + want + "\")` names no target: give a kind (\"cuda\", \"hip\", \"cpu\", \"interp\") or an "
           "architecture (\"sm_90a\", \"gfx942\", ...)");
    return Value::error(loc);
  }
  size_t colon = target_.find(':');
  std::string kind = target_.substr(0, colon);
  std::string arch = colon == std::string::npos ? "" : target_.substr(colon + 1);
  bool holds = !target_.empty() && (isKind ? kind == want : arch == want);
  return Value::ofExpr(ir::makeBool(holds, loc), loc);
}

}  // namespace tlc::sema
