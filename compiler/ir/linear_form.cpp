#include "compiler/ir/linear_form.h"

#include <algorithm>
#include <numeric>

#include "compiler/ir/equality.h"
#include "compiler/ir/functor.h"

namespace tlc::ir {

namespace {

void addTerm(LinearForm& f, const Expr& term, int64_t coeff) {
  if (coeff == 0) return;
  for (auto it = f.terms.begin(); it != f.terms.end(); ++it)
    if (structurallyEqual(it->first, term)) {
      it->second += coeff;
      if (it->second == 0) f.terms.erase(it);
      return;
    }
  f.terms.push_back({term, coeff});
}

void collect(const Expr& e, int64_t scale, LinearForm& f) {
  int64_t c;
  if (constInt(e, &c)) {
    f.constant += scale * c;
    return;
  }
  if (auto* u = as<Unary>(e); u && u->op == UnaryOp::Neg && isInteger(e->dtype)) {
    collect(u->a, -scale, f);
    return;
  }
  if (auto* b = as<Binary>(e); b && isInteger(e->dtype) && b->a->dtype == e->dtype && b->b->dtype == e->dtype) {
    switch (b->op) {
      case BinaryOp::Add:
        collect(b->a, scale, f);
        collect(b->b, scale, f);
        return;
      case BinaryOp::Sub:
        collect(b->a, scale, f);
        collect(b->b, -scale, f);
        return;
      case BinaryOp::Mul:
        if (constInt(b->b, &c)) return collect(b->a, scale * c, f);
        if (constInt(b->a, &c)) return collect(b->b, scale * c, f);
        break;
      default: break;
    }
  }
  addTerm(f, e, scale);
}

}  // namespace

LinearForm linearForm(const Expr& e) {
  LinearForm f;
  collect(e, 1, f);
  return f;
}

std::optional<int64_t> coefficientOf(const Expr& e, const VarNode* v) {
  struct Uses : IRVisitor {
    const VarNode* v;
    bool found = false;
    void visitVarRef(const VarRef* r) override { found = found || r->var.get() == v; }
  };
  int64_t coeff = 0;
  for (const auto& [term, c] : linearForm(e).terms) {
    if (auto* r = as<VarRef>(term); r && r->var.get() == v) {
      coeff = c;
      continue;
    }
    Uses uses;
    uses.v = v;
    uses.visit(term);
    if (uses.found) return std::nullopt;
  }
  return coeff;
}

std::optional<int64_t> constantDifference(const Expr& a, const Expr& b) {
  LinearForm f;
  collect(a, 1, f);
  collect(b, -1, f);
  if (!f.terms.empty()) return std::nullopt;
  return f.constant;
}

int64_t knownMultiple(const Expr& e) {
  constexpr int64_t kCap = int64_t(1) << 40;
  int64_t v = 0;
  if (constInt(e, &v)) return v == 0 ? kCap : std::min<int64_t>(v < 0 ? -v : v, kCap);
  if (auto* c = as<Cast>(e)) {
    // The value is kept: a wider type, and a sign extension or a zero one.
    DType from = c->value->dtype, to = e->dtype;
    bool keeps = isInteger(from) && isInteger(to) && dtypeBits(to) > dtypeBits(from) && (isSigned(to) || !isSigned(from));
    return keeps || (from == to) ? knownMultiple(c->value) : 1;
  }
  auto* b = as<Binary>(e);
  if (!b) return 1;
  int64_t c = 0;
  switch (b->op) {
    case BinaryOp::Mul: {
      if (!constInt(b->b, &c) || c == 0) return 1;
      int64_t f = std::min<int64_t>(c < 0 ? -c : c, kCap), m = knownMultiple(b->a);
      return m > kCap / f ? kCap : m * f;  // both at most 2^40: saturate instead of overflowing
    }
    case BinaryOp::Add:
    case BinaryOp::Sub: return std::gcd(knownMultiple(b->a), knownMultiple(b->b));
    case BinaryOp::FloorMod:
      if (!constInt(b->b, &c) || c <= 0) return 1;
      return std::gcd(knownMultiple(b->a), c);
    default: return 1;
  }
}

}  // namespace tlc::ir
