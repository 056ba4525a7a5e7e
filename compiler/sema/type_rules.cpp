// Operators and conversions: the dtype rules of the language.
//
// Binary arithmetic converts both operands to one dtype: a literal (or a
// compile-time number, which behaves like a Python number) adapts to the
// other operand's dtype; otherwise `promote` decides (floats win, wider wins).
// `/` is true division and needs a float operand (integers use `//`); `//`
// and `%` are floor division and modulo on integers. Comparisons give bool;
// `and`/`or`/`not` take bools. Everything folds when its operands are constants.
#include "compiler/ir/int_arith.h"
#include "compiler/sema/const_eval.h"
#include "compiler/sema/sema.h"

namespace tlc::sema {

static ir::BinaryOp toIR(ast::BinaryOp op) {
  switch (op) {
    case ast::BinaryOp::Add: return ir::BinaryOp::Add;
    case ast::BinaryOp::Sub: return ir::BinaryOp::Sub;
    case ast::BinaryOp::Mul: return ir::BinaryOp::Mul;
    case ast::BinaryOp::Div: return ir::BinaryOp::Div;
    case ast::BinaryOp::FloorDiv: return ir::BinaryOp::FloorDiv;
    case ast::BinaryOp::Mod: return ir::BinaryOp::FloorMod;
    case ast::BinaryOp::Pow: return ir::BinaryOp::Mul;  // handled separately
    case ast::BinaryOp::Eq: return ir::BinaryOp::Eq;
    case ast::BinaryOp::Ne: return ir::BinaryOp::Ne;
    case ast::BinaryOp::Lt: return ir::BinaryOp::Lt;
    case ast::BinaryOp::Le: return ir::BinaryOp::Le;
    case ast::BinaryOp::Gt: return ir::BinaryOp::Gt;
    case ast::BinaryOp::Ge: return ir::BinaryOp::Ge;
    case ast::BinaryOp::And: return ir::BinaryOp::And;
    case ast::BinaryOp::Or: return ir::BinaryOp::Or;
    case ast::BinaryOp::BitAnd: return ir::BinaryOp::BitAnd;
    case ast::BinaryOp::BitOr: return ir::BinaryOp::BitOr;
    case ast::BinaryOp::BitXor: return ir::BinaryOp::BitXor;
    case ast::BinaryOp::Shl: return ir::BinaryOp::Shl;
    case ast::BinaryOp::Shr: return ir::BinaryOp::Shr;
  }
  return ir::BinaryOp::Add;
}

static std::string spell(ast::BinaryOp op) { return std::string("`") + ast::binaryOpSpelling(op) + "`"; }

ir::Expr Sema::convert(const Value& v, DType t, SourceLoc loc) { return foldCast(t, v.expr, loc); }

ir::Expr Sema::expectScalar(const Value& v, const std::string& what) {
  if (v.isExpr()) return v.expr;
  if (!v.isError()) {
    std::string hint = v.kind == ValueKind::Buffer ? " (index it: `" + v.buffer->name + "[i, ...]`)" : "";
    report(DiagKind::TypeMismatch, v.loc, what + " must be a scalar, but this is " + describeValue(v) + hint);
  }
  return nullptr;
}

ir::Expr Sema::expectInt(const Value& v, const std::string& what) {
  ir::Expr e = expectScalar(v, what);
  if (!e) return nullptr;
  if (!isInteger(e->dtype)) {
    report(DiagKind::TypeMismatch, v.loc,
           what + " must be an integer, but this is " + std::string(dtypeName(e->dtype)) +
               (isFloat(e->dtype) ? " (convert with `T.cast(x, int32)`)" : ""));
    return nullptr;
  }
  return e;
}

ir::Expr Sema::expectBool(const Value& v, const std::string& what) {
  ir::Expr e = expectScalar(v, what);
  if (!e) return nullptr;
  if (e->dtype != DType::Bool) {
    report(DiagKind::TypeMismatch, v.loc,
           what + " must be bool, but this is " + std::string(dtypeName(e->dtype)) + "; compare explicitly, e.g. `x != 0`");
    return nullptr;
  }
  return e;
}

// The condition of an `if` or a `... if ... else ...`: a bool, or, as in
// Python, a compile-time integer (nonzero is true: `if trans:` on a
// parameter given as 0 or 1).
ir::Expr Sema::expectCondition(const Value& v, const std::string& what) {
  if (v.isExpr() && v.expr && isInteger(v.expr->dtype))
    if (auto c = constIntValue(v.expr)) return ir::makeBool(*c != 0, v.loc);
  return expectBool(v, what);
}

std::optional<int64_t> Sema::constInt(const ast::Expr& e, const std::string& what) {
  Value v = eval(e);
  ir::Expr x = expectInt(v, what);
  if (!x) return std::nullopt;
  if (auto c = constIntValue(x)) return *c;
  report(DiagKind::NotCompileTimeConstant, e.loc,
         what + " must be a compile-time constant, but `" + formatExpr(x) + "` is only known at run time");
  return std::nullopt;
}

std::optional<bool> Sema::constBool(const ast::Expr& e, const std::string& what) {
  Value v = eval(e);
  ir::Expr x = expectScalar(v, what);
  if (!x) return std::nullopt;
  if (isFloat(x->dtype)) {
    report(DiagKind::TypeMismatch, e.loc, what + " must be True or False");
    return std::nullopt;
  }
  if (auto c = constIntValue(x)) return *c != 0;
  report(DiagKind::NotCompileTimeConstant, e.loc,
         what + " must be a compile-time constant, but `" + formatExpr(x) + "` is only known at run time");
  return std::nullopt;
}

std::optional<DType> Sema::evalDType(const ast::Expr& e, const std::string& what) {
  Value v = eval(e);
  switch (v.kind) {
    case ValueKind::DType: return v.dtype;
    case ValueKind::Error: return std::nullopt;
    case ValueKind::String:
      if (auto t = parseDTypeSpelling(v.str)) return *t;
      report(DiagKind::BadDType, e.loc, "unknown dtype \"" + v.str + "\"; dtypes are " + kDTypeSpellings);
      return std::nullopt;
    case ValueKind::Expr:
      if (auto* r = ir::as<ir::VarRef>(v.expr)) {
        auto it = symbolic_.find(r->var.get());
        if (it != symbolic_.end()) {
          it->second.reported = true;
          report(DiagKind::UnboundCompileParam, e.loc,
                 "compile-time parameter `" + it->second.name + "` has no value, but " + what +
                     " needs a dtype: bind it with `-D " + it->second.name + "=float16` or give it a default")
              .note(it->second.loc, "`" + it->second.name + "` declared here");
          return std::nullopt;
        }
      }
      [[fallthrough]];
    default:
      report(DiagKind::BadDType, e.loc, what + " must be a dtype such as `float16`, but this is " + describeValue(v));
      return std::nullopt;
  }
}

bool Sema::unify(const Value& a, const Value& b, ir::Expr& x, ir::Expr& y, DType& t, bool& weak, SourceLoc loc) {
  DType ta = a.expr->dtype, tb = b.expr->dtype;
  auto adapt = [](DType weakT, DType other) {
    if (other == DType::Bool) return weakT;
    if (isFloat(weakT) && !isFloat(other)) return DType::Float32;
    return other;
  };
  if (a.weak && b.weak) {
    t = promote(ta, tb);
    weak = true;
  } else if (a.weak) {
    t = adapt(ta, tb);
    weak = false;
  } else if (b.weak) {
    t = adapt(tb, ta);
    weak = false;
  } else {
    t = promote(ta, tb);
    weak = false;
  }
  for (const Value* v : {&a, &b}) {
    auto c = constIntValue(v->expr);
    if (!v->weak || !c || !isInteger(t) || !isInteger(v->expr->dtype) || ir::fitsDType(*c, t)) continue;
    report(DiagKind::IntegerOverflow, v->loc.known() ? v->loc : loc,
           "the constant " + std::to_string(*c) + " does not fit in " + std::string(dtypeName(t)) +
               ", the type of the other operand");
    return false;
  }
  x = foldCast(t, a.expr, a.expr->loc.known() ? a.expr->loc : loc);
  y = foldCast(t, b.expr, b.expr->loc.known() ? b.expr->loc : loc);
  return true;
}

std::optional<Value> Sema::overflowingConstant(ir::BinaryOp op, const ir::Expr& x, const ir::Expr& y, DType t,
                                               bool weak, SourceLoc loc) {
  auto cx = constIntValue(x), cy = constIntValue(y);
  if (!cx || !cy || !isInteger(t) || !ir::checkedIntBinary(op, *cx, *cy, t).overflow) return std::nullopt;
  if (weak && t != DType::Int64 && isSigned(t)) {
    ir::CheckedInt wide = ir::checkedIntBinary(op, *cx, *cy, DType::Int64);
    if (!wide.overflow && wide.value) return Value::ofExpr(ir::makeInt(*wide.value, DType::Int64, loc), loc, true);
  }
  DType widest = weak && isSigned(t) ? DType::Int64 : t;
  report(DiagKind::IntegerOverflow, loc,
         "`" + formatExpr(ir::makeBinary(op, x, y, loc)) + "` overflows " + std::string(dtypeName(widest)) +
             ": compile-time integer arithmetic does not wrap");
  return Value::error(loc);
}

bool Sema::checkInt32Extent(int64_t c, SourceLoc loc, const std::string& what) {
  if (ir::fitsDType(c, DType::Int32)) return true;
  report(DiagKind::OutOfRange, loc,
         what + " " + std::to_string(c) + " is out of range: extents are int32, at most 2147483647");
  return false;
}

// Integer power of constants (exp >= 0); nullopt when the exact result lies outside `t`.
static std::optional<int64_t> ipow(int64_t base, int64_t exp, DType t) {
  if (base == 0 || base == 1) return exp == 0 ? 1 : base;
  if (base == -1) return exp % 2 ? -1 : 1;
  int64_t r = 1;
  for (; exp > 0; --exp) {  // |base| >= 2: overflows within 64 steps
    ir::CheckedInt m = ir::checkedIntBinary(ir::BinaryOp::Mul, r, base, t);
    if (m.overflow || !m.value) return std::nullopt;
    r = *m.value;
  }
  return r;
}

Value Sema::binary(ast::BinaryOp op, const Value& a, const Value& b, SourceLoc loc) {
  if (a.isError() || b.isError()) return Value::error(loc);
  // Dtypes and strings compare at compile time (`dtype == "float16"`, a
  // string naming a dtype equal to that dtype: `"float"` is float32).
  auto asDType = [](const Value& v) -> std::optional<DType> {
    if (v.kind == ValueKind::DType) return v.dtype;
    if (v.kind == ValueKind::String) return parseDTypeSpelling(v.str);
    return std::nullopt;
  };
  bool textual = (a.kind == ValueKind::DType || a.kind == ValueKind::String) &&
                 (b.kind == ValueKind::DType || b.kind == ValueKind::String);
  if ((op == ast::BinaryOp::Eq || op == ast::BinaryOp::Ne) && textual) {
    std::optional<DType> da = asDType(a), db = asDType(b);
    bool eq = da && db ? *da == *db : a.kind == ValueKind::String && b.kind == ValueKind::String && a.str == b.str;
    return Value::ofExpr(ir::makeBool(op == ast::BinaryOp::Eq ? eq : !eq, loc), loc);
  }
  // `shape[:-1] + [d]`: tuples (and lists) concatenate.
  if (op == ast::BinaryOp::Add && a.kind == ValueKind::Tuple && b.kind == ValueKind::Tuple) {
    Value t = a;
    t.loc = loc;
    t.elems.insert(t.elems.end(), b.elems.begin(), b.elems.end());
    return t;
  }
  // `x is None` / `x == None` (a factory's `scale=None` default): only None equals None.
  if ((op == ast::BinaryOp::Eq || op == ast::BinaryOp::Ne) &&
      (a.kind == ValueKind::None || b.kind == ValueKind::None)) {
    bool eq = a.kind == b.kind;
    return Value::ofExpr(ir::makeBool(op == ast::BinaryOp::Eq ? eq : !eq, loc), loc);
  }
  for (const Value* v : {&a, &b}) {
    if (!v->isExpr()) {
      std::string hint = v->kind == ValueKind::Buffer ? " (index it: `" + v->buffer->name + "[i, ...]`)" : "";
      report(DiagKind::TypeMismatch, v->loc,
             "the operands of " + spell(op) + " must be scalars, but this is " + describeValue(*v) + hint);
      return Value::error(loc);
    }
  }
  DType ta = a.expr->dtype, tb = b.expr->dtype;
  if (op == ast::BinaryOp::Div && !isFloat(ta) && !isFloat(tb)) {
    report(DiagKind::DivisionOfIntegers, loc,
           "`/` is true division and needs a float operand, but both operands are integers (" +
               std::string(dtypeName(ta)) + ", " + std::string(dtypeName(tb)) +
               "); use `//` for floor division or convert an operand with `T.cast`");
    return Value::error(loc);
  }
  ir::Expr x, y;
  DType t;
  bool weak;
  if (!unify(a, b, x, y, t, weak, loc)) return Value::error(loc);
  auto typeError = [&](const std::string& need) {
    report(DiagKind::TypeMismatch, loc,
           spell(op) + " needs " + need + ", but the operands are " + std::string(dtypeName(ta)) + " and " +
               std::string(dtypeName(tb)));
    return Value::error(loc);
  };
  switch (op) {
    case ast::BinaryOp::Add:
    case ast::BinaryOp::Sub:
    case ast::BinaryOp::Mul:
    case ast::BinaryOp::Div:
      if (t == DType::Bool) return typeError("numbers");
      break;
    case ast::BinaryOp::FloorDiv:
    case ast::BinaryOp::Mod:
      if (!isInteger(t)) return typeError(std::string("integer operands") + (isFloat(t) ? " (use `/` for floats)" : ""));
      if (auto c = constIntValue(y); c && *c == 0) {
        report(DiagKind::DivisionByZero, b.loc, spell(op) + " by zero");
        return Value::error(loc);
      }
      break;
    case ast::BinaryOp::Pow: {
      if (t == DType::Bool) return typeError("numbers");
      if (isFloat(t)) return Value::ofExpr(foldMathCall("pow", {x, y}, t, loc), loc, weak && isConstant(x) && isConstant(y));
      auto cx = constIntValue(x), cy = constIntValue(y);
      if (!cx || !cy || *cy < 0)
        return typeError("constant integer operands with a non-negative exponent (convert to a float type for "
                         "runtime powers)");
      if (auto p = ipow(*cx, *cy, t)) return Value::ofExpr(ir::makeInt(*p, t, loc), loc, weak);
      if (weak && isSigned(t))
        if (auto p = ipow(*cx, *cy, DType::Int64)) return Value::ofExpr(ir::makeInt(*p, DType::Int64, loc), loc, weak);
      report(DiagKind::IntegerOverflow, loc,
             "`" + std::to_string(*cx) + " ** " + std::to_string(*cy) + "` overflows " +
                 std::string(dtypeName(weak && isSigned(t) ? DType::Int64 : t)) +
                 ": compile-time integer arithmetic does not wrap");
      return Value::error(loc);
    }
    case ast::BinaryOp::Eq:
    case ast::BinaryOp::Ne:
    case ast::BinaryOp::Lt:
    case ast::BinaryOp::Le:
    case ast::BinaryOp::Gt:
    case ast::BinaryOp::Ge:
      return Value::ofExpr(foldBinary(toIR(op), x, y, loc), loc);
    case ast::BinaryOp::And:
    case ast::BinaryOp::Or:
      if (t != DType::Bool) return typeError("bool operands (compare explicitly, e.g. `x != 0`)");
      return Value::ofExpr(foldBinary(toIR(op), x, y, loc), loc);
    case ast::BinaryOp::BitAnd:
    case ast::BinaryOp::BitOr:
    case ast::BinaryOp::BitXor:
      if (isFloat(t)) return typeError("integer or bool operands");
      break;
    case ast::BinaryOp::Shl:
    case ast::BinaryOp::Shr:
      if (!isInteger(t)) return typeError("integer operands");
      if (auto c = constIntValue(y); c && (*c < 0 || *c >= dtypeBits(t))) {
        report(DiagKind::TypeMismatch, b.loc,
               "shift amount " + std::to_string(*c) + " is out of range for " + std::string(dtypeName(t)));
        return Value::error(loc);
      }
      break;
  }
  if (auto v = overflowingConstant(toIR(op), x, y, t, weak, loc)) return *v;
  return Value::ofExpr(foldBinary(toIR(op), x, y, loc), loc, weak);
}

Value Sema::unary(ast::UnaryOp op, const Value& a, SourceLoc loc) {
  if (a.isError()) return a;
  ir::Expr x = expectScalar(a, std::string("the operand of `") + ast::unaryOpSpelling(op) + "`");
  if (!x) return Value::error(loc);
  DType t = x->dtype;
  switch (op) {
    case ast::UnaryOp::Pos:
      if (t == DType::Bool) break;
      return Value::ofExpr(x, loc, a.weak);
    case ast::UnaryOp::Neg:
      if (t == DType::Bool) break;
      return Value::ofExpr(foldUnary(ir::UnaryOp::Neg, x, loc), loc, a.weak);
    case ast::UnaryOp::Not:
      if (t != DType::Bool) {
        report(DiagKind::TypeMismatch, loc,
               "`not` needs a bool operand, but this is " + std::string(dtypeName(t)) + "; compare explicitly, e.g. `x == 0`");
        return Value::error(loc);
      }
      return Value::ofExpr(foldUnary(ir::UnaryOp::Not, x, loc), loc);
    case ast::UnaryOp::Invert:
      if (!isInteger(t)) break;
      return Value::ofExpr(foldUnary(ir::UnaryOp::BitNot, x, loc), loc, a.weak);
    case ast::UnaryOp::Star:
      report(DiagKind::UnsupportedSyntax, loc, "`*x` unpacks a tuple only inside a list display: `[*shape[:-1], d]`");
      return Value::error(loc);
  }
  report(DiagKind::TypeMismatch, loc,
         std::string("`") + ast::unaryOpSpelling(op) + "` does not apply to " + std::string(dtypeName(t)));
  return Value::error(loc);
}

}  // namespace tlc::sema
