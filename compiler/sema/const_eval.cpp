#include "compiler/sema/const_eval.h"

#include <cmath>
#include <cstdio>
#include <map>

namespace tlc::sema {

using namespace ir;

bool isConstant(const Expr& e) { return as<IntImm>(e) || as<FloatImm>(e); }

std::optional<int64_t> constIntValue(const Expr& e) {
  if (auto* i = as<IntImm>(e)) return i->value;
  return std::nullopt;
}

std::optional<double> constFloatValue(const Expr& e) {
  if (auto* f = as<FloatImm>(e)) return f->value;
  if (auto* i = as<IntImm>(e)) return isSigned(e->dtype) || e->dtype == DType::Bool
                                          ? static_cast<double>(i->value)
                                          : static_cast<double>(static_cast<uint64_t>(i->value));
  return std::nullopt;
}

int64_t wrapToDType(int64_t v, DType t) {
  if (t == DType::Bool) return v != 0;
  int bits = dtypeBits(t);
  if (bits >= 64) return v;
  uint64_t mask = (uint64_t{1} << bits) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (isSigned(t) && (u >> (bits - 1)) & 1) u |= ~mask;
  return static_cast<int64_t>(u);
}

// Rounds a folded float to what its dtype can hold (float32 exactly; the
// narrower formats are rounded by the backends' conversions).
static double roundToDType(double v, DType t) {
  if (t == DType::Float32) return static_cast<double>(static_cast<float>(v));
  return v;
}

static int64_t floorDivSigned(int64_t a, int64_t b) {
  if (a == INT64_MIN && b == -1) return INT64_MIN;  // wraps
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

static std::optional<int64_t> foldInt(BinaryOp op, int64_t x, int64_t y, DType t) {
  bool sgn = isSigned(t) || t == DType::Bool;
  uint64_t ux = static_cast<uint64_t>(x), uy = static_cast<uint64_t>(y);
  switch (op) {
    case BinaryOp::Add: return static_cast<int64_t>(ux + uy);
    case BinaryOp::Sub: return static_cast<int64_t>(ux - uy);
    case BinaryOp::Mul: return static_cast<int64_t>(ux * uy);
    case BinaryOp::FloorDiv:
      if (y == 0) return std::nullopt;
      return sgn ? floorDivSigned(x, y) : static_cast<int64_t>(ux / uy);
    case BinaryOp::FloorMod:
      if (y == 0) return std::nullopt;
      if (!sgn) return static_cast<int64_t>(ux % uy);
      if (x == INT64_MIN && y == -1) return 0;
      return static_cast<int64_t>(ux - static_cast<uint64_t>(floorDivSigned(x, y)) * uy);
    case BinaryOp::Min: return sgn ? std::min(x, y) : static_cast<int64_t>(std::min(ux, uy));
    case BinaryOp::Max: return sgn ? std::max(x, y) : static_cast<int64_t>(std::max(ux, uy));
    case BinaryOp::Eq: return x == y;
    case BinaryOp::Ne: return x != y;
    case BinaryOp::Lt: return sgn ? x < y : ux < uy;
    case BinaryOp::Le: return sgn ? x <= y : ux <= uy;
    case BinaryOp::Gt: return sgn ? x > y : ux > uy;
    case BinaryOp::Ge: return sgn ? x >= y : ux >= uy;
    case BinaryOp::And: return (x != 0) && (y != 0);
    case BinaryOp::Or: return (x != 0) || (y != 0);
    case BinaryOp::BitAnd: return x & y;
    case BinaryOp::BitOr: return x | y;
    case BinaryOp::BitXor: return x ^ y;
    case BinaryOp::Shl:
      if (y < 0 || y >= dtypeBits(t)) return std::nullopt;
      return static_cast<int64_t>(ux << y);
    case BinaryOp::Shr:
      if (y < 0 || y >= dtypeBits(t)) return std::nullopt;
      return sgn ? (x >> y) : static_cast<int64_t>(ux >> y);
    case BinaryOp::Div: return std::nullopt;
  }
  return std::nullopt;
}

static std::optional<double> foldFloat(BinaryOp op, double x, double y) {
  switch (op) {
    case BinaryOp::Add: return x + y;
    case BinaryOp::Sub: return x - y;
    case BinaryOp::Mul: return x * y;
    case BinaryOp::Div: return x / y;
    case BinaryOp::Min: return std::fmin(x, y);
    case BinaryOp::Max: return std::fmax(x, y);
    case BinaryOp::Eq: return x == y;
    case BinaryOp::Ne: return x != y;
    case BinaryOp::Lt: return x < y;
    case BinaryOp::Le: return x <= y;
    case BinaryOp::Gt: return x > y;
    case BinaryOp::Ge: return x >= y;
    default: return std::nullopt;
  }
}

Expr foldBinary(BinaryOp op, Expr a, Expr b, SourceLoc loc) {
  DType t = a->dtype;
  bool boolResult = isComparison(op) || isLogical(op);
  if (auto x = constIntValue(a), y = constIntValue(b); x && y && !isFloat(t)) {
    if (auto r = foldInt(op, *x, *y, t)) return boolResult ? makeBool(*r != 0, loc) : makeInt(wrapToDType(*r, t), t, loc);
  }
  if (isFloat(t)) {
    auto* fa = as<FloatImm>(a);
    auto* fb = as<FloatImm>(b);
    if (fa && fb) {
      if (auto r = foldFloat(op, fa->value, fb->value))
        return boolResult ? makeBool(*r != 0, loc) : makeFloat(roundToDType(*r, t), t, loc);
    }
  }
  // Identities that keep index arithmetic readable; only where they are exact.
  if (!isFloat(t)) {
    auto x = constIntValue(a), y = constIntValue(b);
    switch (op) {
      case BinaryOp::Add:
        if (x && *x == 0) return b;
        if (y && *y == 0) return a;
        break;
      case BinaryOp::Sub:
        if (y && *y == 0) return a;
        break;
      case BinaryOp::Mul:
        if (x && *x == 1) return b;
        if (y && *y == 1) return a;
        break;
      case BinaryOp::FloorDiv:
        if (y && *y == 1) return a;
        break;
      default: break;
    }
  }
  return makeBinary(op, std::move(a), std::move(b), loc);
}

Expr foldUnary(UnaryOp op, Expr a, SourceLoc loc) {
  DType t = a->dtype;
  if (auto x = constIntValue(a); x && !isFloat(t)) {
    switch (op) {
      case UnaryOp::Neg: return makeInt(wrapToDType(static_cast<int64_t>(0 - static_cast<uint64_t>(*x)), t), t, loc);
      case UnaryOp::Not: return makeBool(*x == 0, loc);
      case UnaryOp::BitNot: return makeInt(wrapToDType(~*x, t), t, loc);
    }
  }
  if (auto* f = as<FloatImm>(a); f && op == UnaryOp::Neg) return makeFloat(-f->value, t, loc);
  return makeUnary(op, std::move(a), loc);
}

Expr foldCast(DType t, Expr v, SourceLoc loc) {
  if (v->dtype == t) return v;
  if (auto* i = as<IntImm>(v)) {
    if (t == DType::Bool) return makeBool(i->value != 0, loc);
    if (isFloat(t)) return makeFloat(roundToDType(*constFloatValue(v), t), t, loc);
    return makeInt(wrapToDType(i->value, t), t, loc);
  }
  if (auto* f = as<FloatImm>(v)) {
    if (isFloat(t)) return makeFloat(roundToDType(f->value, t), t, loc);
    if (t == DType::Bool) return makeBool(f->value != 0, loc);
    // Float to int truncates toward zero; out-of-range values are left to run time.
    double tv = std::trunc(f->value);
    if (std::isfinite(tv) && tv > -9.2e18 && tv < 9.2e18)
      return makeInt(wrapToDType(static_cast<int64_t>(tv), t), t, loc);
  }
  return makeCast(t, std::move(v), loc);
}

Expr foldSelect(Expr cond, Expr t, Expr f, SourceLoc loc) {
  if (auto c = constIntValue(cond)) return *c ? t : f;
  return makeSelect(std::move(cond), std::move(t), std::move(f), loc);
}

Expr foldMathCall(const std::string& callee, std::vector<Expr> args, DType t, SourceLoc loc) {
  bool allConst = isFloat(t);
  for (const Expr& a : args) allConst = allConst && as<FloatImm>(a);
  if (allConst) {
    double x = as<FloatImm>(args[0])->value;
    std::optional<double> r;
    if (callee == "exp") r = std::exp(x);
    else if (callee == "exp2") r = std::exp2(x);
    else if (callee == "log") r = std::log(x);
    else if (callee == "log2") r = std::log2(x);
    else if (callee == "sqrt") r = std::sqrt(x);
    else if (callee == "rsqrt") r = 1.0 / std::sqrt(x);
    else if (callee == "abs") r = std::fabs(x);
    else if (callee == "sin") r = std::sin(x);
    else if (callee == "cos") r = std::cos(x);
    else if (callee == "tanh") r = std::tanh(x);
    else if (callee == "asin") r = std::asin(x);
    else if (callee == "acos") r = std::acos(x);
    else if (callee == "atan") r = std::atan(x);
    else if (callee == "atan2" && args.size() == 2) r = std::atan2(x, as<FloatImm>(args[1])->value);
    else if (callee == "erf") r = std::erf(x);
    else if (callee == "sigmoid") r = 1.0 / (1.0 + std::exp(-x));
    else if (callee == "log1p") r = std::log1p(x);
    else if (callee == "expm1") r = std::expm1(x);
    else if (callee == "round") r = std::nearbyint(x);  // ties to even
    else if (callee == "floor") r = std::floor(x);
    else if (callee == "ceil") r = std::ceil(x);
    else if (callee == "pow" && args.size() == 2) r = std::pow(x, as<FloatImm>(args[1])->value);
    else if (callee == "fma" && args.size() == 3)
      r = std::fma(x, as<FloatImm>(args[1])->value, as<FloatImm>(args[2])->value);
    if (r) return makeFloat(roundToDType(*r, t), t, loc);
  }
  if (callee == "abs" && args.size() == 1 && !isFloat(t)) {
    if (auto x = constIntValue(args[0]))
      return makeInt(wrapToDType(*x < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(*x)) : *x, t), t, loc);
  }
  return makeCall(callee, std::move(args), t, loc);
}

// ---------------------------------------------------------------------------
// Symbolic comparison over linear forms: sum of coefficient * term + constant,
// where a term is any non-linear subexpression, identified by its text (and
// its variables' identities).

namespace {

struct Linear {
  std::map<std::string, int64_t> terms;
  int64_t constant = 0;
};

std::string termKey(const Expr& e);

void keyInto(const Expr& e, std::string& out) {
  if (auto* v = as<VarRef>(e)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "@%p", static_cast<const void*>(v->var.get()));
    out += v->var->name;
    out += buf;
    return;
  }
  if (auto* b = as<Binary>(e)) {
    out += '(';
    keyInto(b->a, out);
    out += binaryOpSpelling(b->op);
    keyInto(b->b, out);
    out += ')';
    return;
  }
  if (auto* c = as<Cast>(e)) {
    out += std::string("cast<") + std::string(dtypeName(c->dtype)) + ">(";
    keyInto(c->value, out);
    out += ')';
    return;
  }
  out += formatExpr(e);
}

std::string termKey(const Expr& e) {
  std::string s;
  keyInto(e, s);
  return s;
}

void addScaled(Linear& into, const Linear& x, int64_t scale) {
  into.constant += x.constant * scale;
  for (auto& [k, c] : x.terms) into.terms[k] += c * scale;
}

Linear linearize(const Expr& e) {
  Linear r;
  if (auto x = constIntValue(e)) {
    r.constant = *x;
    return r;
  }
  if (auto* c = as<Cast>(e); c && isInteger(c->dtype) && isInteger(c->value->dtype)) return linearize(c->value);
  if (auto* b = as<Binary>(e)) {
    switch (b->op) {
      case BinaryOp::Add:
      case BinaryOp::Sub: {
        Linear x = linearize(b->a), y = linearize(b->b);
        addScaled(r, x, 1);
        addScaled(r, y, b->op == BinaryOp::Add ? 1 : -1);
        return r;
      }
      case BinaryOp::Mul: {
        Linear x = linearize(b->a), y = linearize(b->b);
        if (x.terms.empty()) {
          addScaled(r, y, x.constant);
          return r;
        }
        if (y.terms.empty()) {
          addScaled(r, x, y.constant);
          return r;
        }
        break;
      }
      default: break;
    }
  }
  if (auto* u = as<Unary>(e); u && u->op == UnaryOp::Neg) {
    addScaled(r, linearize(u->a), -1);
    return r;
  }
  r.terms[termKey(e)] = 1;
  return r;
}

}  // namespace

Equality compareExtents(const Expr& a, const Expr& b) {
  auto d = constantDifference(a, b);
  if (!d) return Equality::Unknown;
  return *d == 0 ? Equality::Equal : Equality::Different;
}

std::optional<int64_t> constantDifference(const Expr& a, const Expr& b) {
  Linear d = linearize(a);
  addScaled(d, linearize(b), -1);
  for (auto& [k, c] : d.terms)
    if (c != 0) return std::nullopt;
  return d.constant;
}

bool provablyMultipleOf(const Expr& e, const Expr& m) {
  Linear x = linearize(e), y = linearize(m);
  std::erase_if(x.terms, [](const auto& t) { return t.second == 0; });
  std::erase_if(y.terms, [](const auto& t) { return t.second == 0; });
  if (x.terms.empty() && x.constant == 0) return true;
  if (y.terms.empty()) {
    if (y.constant == 0) return false;
    if (x.constant % y.constant != 0) return false;
    for (auto& [k, c] : x.terms)
      if (c % y.constant != 0) return false;
    return true;
  }
  // e = q * m for one integer q: q comes from any term of m, then every term and the constant must match.
  const auto& [key, cm] = *y.terms.begin();
  auto it = x.terms.find(key);
  if (it == x.terms.end() || it->second % cm != 0) return false;
  int64_t q = it->second / cm;
  addScaled(x, y, -q);
  for (auto& [k, c] : x.terms)
    if (c != 0) return false;
  return x.constant == 0;
}

// ---------------------------------------------------------------------------
// Formatting for messages

static int precedence(BinaryOp op) {
  switch (op) {
    case BinaryOp::Or: return 1;
    case BinaryOp::And: return 2;
    case BinaryOp::Eq: case BinaryOp::Ne: case BinaryOp::Lt: case BinaryOp::Le:
    case BinaryOp::Gt: case BinaryOp::Ge: return 3;
    case BinaryOp::BitOr: return 4;
    case BinaryOp::BitXor: return 5;
    case BinaryOp::BitAnd: return 6;
    case BinaryOp::Shl: case BinaryOp::Shr: return 7;
    case BinaryOp::Add: case BinaryOp::Sub: return 8;
    default: return 9;
  }
}

static void formatInto(const Expr& e, std::string& out, int outer) {
  if (auto* i = as<IntImm>(e)) {
    out += e->dtype == DType::Bool ? (i->value ? "True" : "False") : std::to_string(i->value);
  } else if (auto* f = as<FloatImm>(e)) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%g", f->value);
    out += buf;
  } else if (auto* v = as<VarRef>(e)) {
    out += v->var->name;
  } else if (auto* b = as<Binary>(e)) {
    if (b->op == BinaryOp::Min || b->op == BinaryOp::Max) {
      out += binaryOpSpelling(b->op);
      out += '(';
      formatInto(b->a, out, 0);
      out += ", ";
      formatInto(b->b, out, 0);
      out += ')';
      return;
    }
    int p = precedence(b->op);
    if (p < outer) out += '(';
    formatInto(b->a, out, p);
    out += ' ';
    out += binaryOpSpelling(b->op);
    out += ' ';
    formatInto(b->b, out, p + 1);
    if (p < outer) out += ')';
  } else if (auto* u = as<Unary>(e)) {
    out += unaryOpSpelling(u->op);
    if (u->op == UnaryOp::Not) out += ' ';
    formatInto(u->a, out, 10);
  } else if (auto* c = as<Cast>(e)) {
    out += "cast(";
    formatInto(c->value, out, 0);
    out += ", " + std::string(dtypeName(c->dtype)) + ")";
  } else if (auto* s = as<Select>(e)) {
    out += "if_then_else(";
    formatInto(s->cond, out, 0);
    out += ", ";
    formatInto(s->t, out, 0);
    out += ", ";
    formatInto(s->f, out, 0);
    out += ')';
  } else if (auto* c = as<Call>(e)) {
    out += c->callee + "(";
    for (size_t i = 0; i < c->args.size(); ++i) {
      if (i) out += ", ";
      formatInto(c->args[i], out, 0);
    }
    out += ')';
  } else if (auto* l = as<Load>(e)) {
    out += l->buffer->name + "[";
    for (size_t i = 0; i < l->indices.size(); ++i) {
      if (i) out += ", ";
      formatInto(l->indices[i], out, 0);
    }
    out += ']';
  } else {
    out += "?";
  }
}

std::string formatExpr(const Expr& e) {
  std::string s;
  formatInto(e, s, 0);
  return s;
}

std::string formatShape(const std::vector<Expr>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += shape[i] ? formatExpr(shape[i]) : std::string("?");
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

}  // namespace tlc::sema
