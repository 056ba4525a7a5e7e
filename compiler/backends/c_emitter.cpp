#include "compiler/backends/c_emitter.h"

#include <cmath>
#include <cstdio>

#include "compiler/backends/c_names.h"
#include "compiler/support/diagnostics.h"

namespace tlc::backend {

using namespace ir;

CEmitter::CEmitter() { reserveName("floorf"); }


std::string CEmitter::fresh(const std::string& hint) {
  const std::string& base = hint;
  std::string name = base;
  for (int k = 1; used_.count(name); ++k) name = base + "_" + std::to_string(k);
  used_.insert(name);
  return name;
}

std::string CEmitter::nameOf(const void* node, const std::string& userName) {
  auto it = names_.find(node);
  if (it != names_.end()) return it->second;
  std::string n = fresh(cName(userName));
  names_[node] = n;
  return n;
}

bool CEmitter::isLowPrecisionFloat(DType t) const {
  return t == DType::Float16 || t == DType::BFloat16 || t == DType::Float8E4M3 || t == DType::Float8E5M2;
}

bool CEmitter::isNonNegative(const Expr& e) const {
  if (auto* i = as<IntImm>(e)) return i->value >= 0;
  if (auto* v = as<VarRef>(e)) return nonNeg_.count(v->var.get()) > 0 || !isSigned(v->var->dtype);
  if (auto* c = as<Cast>(e)) return isInteger(c->dtype) && isInteger(c->value->dtype) && isNonNegative(c->value);
  if (auto* b = as<Binary>(e)) {
    switch (b->op) {
      case BinaryOp::Add:
      case BinaryOp::Mul:
      case BinaryOp::FloorDiv:
      case BinaryOp::Min:
      case BinaryOp::BitAnd:
      case BinaryOp::BitOr:
      case BinaryOp::BitXor:
      case BinaryOp::Shr:
        return isNonNegative(b->a) && isNonNegative(b->b);
      case BinaryOp::Max: return isNonNegative(b->a) || isNonNegative(b->b);
      case BinaryOp::FloorMod: return isNonNegative(b->b);
      default: return false;
    }
  }
  return false;
}

// Floor division and modulo by 2^k are an arithmetic shift and a mask for
// every two's-complement value, negative ones included; the C operators `/`
// and `%` would make the compiler emit sign fix-ups for signed operands.
int CEmitter::powerOfTwoShift(const Expr& divisor) const {
  auto* i = as<IntImm>(divisor);
  if (!i || !isInteger(i->dtype) || i->value <= 0 || (i->value & (i->value - 1))) return -1;
  int shift = 0;
  while (((int64_t)1 << shift) < i->value) ++shift;
  return shift;
}

// `x / y` or `x % y` for operands known to be non-negative, computed in the
// unsigned type of the same width: cheaper than signed division by a constant.
std::string CEmitter::unsignedDivMod(DType t, const std::string& x, const char* op, const std::string& y) const {
  if (!isSigned(t) || dtypeBits(t) < 32) return "(" + x + " " + op + " " + y + ")";
  std::string u = dtypeBits(t) == 64 ? "unsigned long long" : "unsigned";
  return "((" + typeName(t) + ")((" + u + ")(" + x + ") " + op + " (" + u + ")(" + y + ")))";
}

std::string CEmitter::literal(const Expr& e) const {
  if (auto* i = as<IntImm>(e)) {
    if (i->dtype == DType::Bool) return i->value ? "true" : "false";
    std::string v = std::to_string(i->value);
    if (i->dtype == DType::Int64) return v + "ll";
    if (i->dtype == DType::UInt64) return v + "ull";
    if (i->dtype == DType::UInt32) return v + "u";
    if (i->dtype == DType::Int32) {
      if (i->value == INT32_MIN) return "(-2147483647 - 1)";
      return v;
    }
    return "((" + typeName(i->dtype) + ")" + v + ")";
  }
  auto* f = as<FloatImm>(e);
  TLC_CHECK(f, "literal of a non-constant");
  double v = f->value;
  std::string num;
  DType t = f->dtype;
  std::string ns = helperNamespace();
  if (std::isnan(v)) return ns + "cvt<" + typeName(t) + ">(__int_as_float(0x7fc00000))";
  if (std::isinf(v)) return ns + (v > 0 ? "inf<" : "ninf<") + typeName(t) + ">()";
  char buf[64];
  if (t == DType::Float64) {
    std::snprintf(buf, sizeof buf, "%.17g", v);
    num = buf;
    if (num.find_first_of(".e") == std::string::npos) num += ".0";
    return num;
  }
  std::snprintf(buf, sizeof buf, "%.9g", v);
  num = buf;
  if (num.find_first_of(".e") == std::string::npos) num += ".0";
  num += "f";
  if (t == DType::Float32) return num;
  return ns + "cvt<" + typeName(t) + ">(" + num + ")";
}

std::string CEmitter::cast(DType to, DType from, const std::string& value) const {
  if (to == from) return value;
  if (to == DType::Bool) {
    if (isLowPrecisionFloat(from)) return "(" + helperNamespace() + "f(" + value + ") != 0.0f)";
    return "((" + value + ") != 0)";
  }
  return helperNamespace() + "cvt<" + typeName(to) + ">(" + value + ")";
}

std::string CEmitter::expr(const Expr& e) {
  switch (e->kind) {
    case ExprKind::IntImm:
    case ExprKind::FloatImm: return literal(e);
    case ExprKind::VarRef: return varName(as<VarRef>(e)->var);
    case ExprKind::Load: return loadExpr(as<Load>(e));
    case ExprKind::Call: return callExpr(as<Call>(e));
    case ExprKind::Cast: {
      auto* c = as<Cast>(e);
      // Widening a non-negative int32 zero-extends: cheaper than a sign extension.
      if (c->dtype == DType::Int64 && c->value->dtype == DType::Int32 && isNonNegative(c->value))
        return "((long long)(unsigned)(" + expr(c->value) + "))";
      return cast(c->dtype, c->value->dtype, expr(c->value));
    }
    case ExprKind::Select: {
      auto* s = as<Select>(e);
      return "(" + expr(s->cond) + " ? " + expr(s->t) + " : " + expr(s->f) + ")";
    }
    case ExprKind::Unary: {
      auto* u = as<Unary>(e);
      std::string a = expr(u->a);
      switch (u->op) {
        case UnaryOp::Neg:
          if (isLowPrecisionFloat(u->dtype)) return cast(u->dtype, DType::Float32, "(-" + helperNamespace() + "f(" + a + "))");
          if (isInteger(u->dtype) && dtypeBits(u->dtype) < 32) return "((" + typeName(u->dtype) + ")(-" + a + "))";
          return "(-" + a + ")";
        case UnaryOp::Not: return "(!" + a + ")";
        case UnaryOp::BitNot: return "((" + typeName(u->dtype) + ")(~" + a + "))";
      }
      break;
    }
    case ExprKind::Binary: {
      auto* b = as<Binary>(e);
      DType ot = b->a->dtype;
      std::string x = expr(b->a), y = expr(b->b);
      std::string ns = helperNamespace();
      bool low = isLowPrecisionFloat(ot);
      // +, -, * of two 16-bit floats: one native operation (see below).
      if ((ot == DType::Float16 || ot == DType::BFloat16) && b->dtype == ot) {
        if (b->op == BinaryOp::Add) return ns + "hadd(" + x + ", " + y + ")";
        if (b->op == BinaryOp::Sub) return ns + "hsub(" + x + ", " + y + ")";
        if (b->op == BinaryOp::Mul) return ns + "hmul(" + x + ", " + y + ")";
      }
      if (low && (b->op == BinaryOp::Add || b->op == BinaryOp::Sub || b->op == BinaryOp::Mul || b->op == BinaryOp::Div ||
                  isComparison(b->op) || b->op == BinaryOp::FloorDiv || b->op == BinaryOp::FloorMod)) {
        x = ns + "f(" + x + ")";
        y = ns + "f(" + y + ")";
      }
      auto wrap = [&](const std::string& s) {
        if (low) return cast(b->dtype, DType::Float32, s);
        if (isInteger(b->dtype) && dtypeBits(b->dtype) < 32) return "((" + typeName(b->dtype) + ")" + s + ")";
        return s;
      };
      switch (b->op) {
        case BinaryOp::Add: return wrap("(" + x + " + " + y + ")");
        case BinaryOp::Sub: return wrap("(" + x + " - " + y + ")");
        case BinaryOp::Mul: return wrap("(" + x + " * " + y + ")");
        case BinaryOp::Div: return wrap("(" + x + " / " + y + ")");
        case BinaryOp::FloorDiv:
          if (isFloat(ot)) return wrap("floorf(" + x + " / " + y + ")");
          if (int shift = powerOfTwoShift(b->b); shift >= 0) return "(" + x + " >> " + std::to_string(shift) + ")";
          if (isNonNegative(b->a) && isNonNegative(b->b)) return unsignedDivMod(ot, x, "/", y);
          return ns + "floordiv<" + typeName(ot) + ">(" + x + ", " + y + ")";
        case BinaryOp::FloorMod:
          if (isFloat(ot)) return wrap("(" + x + " - floorf(" + x + " / " + y + ") * " + y + ")");
          if (int shift = powerOfTwoShift(b->b); shift >= 0) return "(" + x + " & " + literal(makeInt(((int64_t)1 << shift) - 1, ot)) + ")";
          if (isNonNegative(b->a) && isNonNegative(b->b)) return unsignedDivMod(ot, x, "%", y);
          return ns + "floormod<" + typeName(ot) + ">(" + x + ", " + y + ")";
        case BinaryOp::Min: return ns + "min<" + typeName(ot) + ">(" + x + ", " + y + ")";
        case BinaryOp::Max: return ns + "max<" + typeName(ot) + ">(" + x + ", " + y + ")";
        case BinaryOp::And: return "(" + x + " && " + y + ")";
        case BinaryOp::Or: return "(" + x + " || " + y + ")";
        default: return wrap("(" + x + " " + binaryOpSpelling(b->op) + " " + y + ")");
      }
    }
  }
  TLC_ICE("unhandled expression kind in the C emitter");
}

std::string CEmitter::callExpr(const Call* c) {
  std::string ns = helperNamespace();
  const std::string& n = c->callee;
  auto arg = [&](size_t i) { return expr(c->args.at(i)); };
  if (n == "if_then_else") return "(" + arg(0) + " ? " + arg(1) + " : " + arg(2) + ")";
  if (n == "infinity") return ns + "inf<" + typeName(c->dtype) + ">()";
  if (n == "ninf") return ns + "ninf<" + typeName(c->dtype) + ">()";
  if (n == "cast") return cast(c->dtype, c->args.at(0)->dtype, arg(0));
  if (n == "reinterpret") return ns + "reinterpret<" + typeName(c->dtype) + ">(" + arg(0) + ")";
  if (n == "unpack_int4" || n == "unpack_uint4" || n == "unpack_fp4")
    return ns + n + "<" + typeName(c->dtype) + ">(" + arg(0) + ", (int)(" + arg(1) + "))";
  if (n == "ceildiv") {
    if (isNonNegative(c->args[0]) && isNonNegative(c->args[1]))
      return "((" + arg(0) + " + " + arg(1) + " - 1) / " + arg(1) + ")";
    return ns + "ceildiv<" + typeName(c->dtype) + ">(" + arg(0) + ", " + arg(1) + ")";
  }
  std::string args;
  for (size_t i = 0; i < c->args.size(); ++i) {
    std::string a = arg(i);
    // Builtins take operands of the call's dtype.
    if (c->args[i]->dtype != c->dtype && n != "isnan" && n != "isinf" && n != "isfinite")
      a = cast(c->dtype, c->args[i]->dtype, a);
    args += (i ? ", " : "") + a;
  }
  // The callee is spelled through cName too: a .tir callee may be any quoted text.
  std::string callee = n == "fabs" ? "abs" : cName(n);
  if (callee == "min" || callee == "max" || callee == "clamp") return ns + callee + "<" + typeName(c->dtype) + ">(" + args + ")";
  return ns + callee + "(" + args + ")";
}

void CEmitter::line(const std::string& s) {
  if (lineSources_ && loc_.known() && lineSources_->hasFile(loc_.file))
    out_ << lineDirective((int)loc_.line, lineSources_->name(loc_.file)) << "\n";
  out_ << std::string(indent_ * 2, ' ') << s << "\n";
}
void CEmitter::open(const std::string& head) {
  line(head.empty() ? "{" : head + " {");
  ++indent_;
}
void CEmitter::close(const std::string& tail) {
  --indent_;
  line(tail);
}

}  // namespace tlc::backend
