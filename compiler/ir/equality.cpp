#include "compiler/ir/equality.h"

#include <cstring>

namespace tlc::ir {

bool structurallyEqual(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!structurallyEqual(a[i], b[i])) return false;
  return true;
}

bool structurallyEqual(const Expr& a, const Expr& b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind || a->dtype != b->dtype) return false;
  switch (a->kind) {
    case ExprKind::IntImm: return as<IntImm>(a)->value == as<IntImm>(b)->value;
    case ExprKind::FloatImm: {
      // Bitwise, so that 0.0 and -0.0 differ and a NaN equals itself.
      double x = as<FloatImm>(a)->value, y = as<FloatImm>(b)->value;
      return std::memcmp(&x, &y, sizeof x) == 0;
    }
    case ExprKind::VarRef: return as<VarRef>(a)->var == as<VarRef>(b)->var;
    case ExprKind::Binary: {
      auto *x = as<Binary>(a), *y = as<Binary>(b);
      return x->op == y->op && structurallyEqual(x->a, y->a) && structurallyEqual(x->b, y->b);
    }
    case ExprKind::Unary: {
      auto *x = as<Unary>(a), *y = as<Unary>(b);
      return x->op == y->op && structurallyEqual(x->a, y->a);
    }
    case ExprKind::Cast: return structurallyEqual(as<Cast>(a)->value, as<Cast>(b)->value);
    case ExprKind::Select: {
      auto *x = as<Select>(a), *y = as<Select>(b);
      return structurallyEqual(x->cond, y->cond) && structurallyEqual(x->t, y->t) && structurallyEqual(x->f, y->f);
    }
    case ExprKind::Call: {
      auto *x = as<Call>(a), *y = as<Call>(b);
      return x->callee == y->callee && structurallyEqual(x->args, y->args);
    }
    case ExprKind::Load: {
      auto *x = as<Load>(a), *y = as<Load>(b);
      return x->buffer == y->buffer && structurallyEqual(x->indices, y->indices);
    }
  }
  return false;
}

}  // namespace tlc::ir
