#include "compiler/interp/shape_eval.h"

#include <algorithm>

#include "compiler/interp/host_tensor.h"

namespace tlc::interp {

using namespace tlc::ir;

namespace {

int64_t floorDivInt(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

}  // namespace

std::optional<int64_t> evalShapeExpr(const Expr& e, const VarValues& vars, std::string* why) {
  auto fail = [&](std::string msg) -> std::optional<int64_t> {
    if (why) *why = std::move(msg);
    return std::nullopt;
  };
  if (!e) return fail("missing expression");
  switch (e->kind) {
    case ExprKind::IntImm: return static_cast<const IntImm*>(e.get())->value;
    case ExprKind::VarRef: {
      const Var& v = static_cast<const VarRef*>(e.get())->var;
      auto it = vars.find(v.get());
      if (it == vars.end()) return fail("`" + v->name + "` has no value");
      return it->second;
    }
    case ExprKind::Cast: {
      auto v = evalShapeExpr(static_cast<const Cast*>(e.get())->value, vars, why);
      if (!v) return v;
      if (isFloat(e->dtype)) return fail("a float-typed dimension");
      return wrapToIntDType(*v, e->dtype);
    }
    case ExprKind::Binary: {
      auto* b = static_cast<const Binary*>(e.get());
      auto x = evalShapeExpr(b->a, vars, why);
      if (!x) return x;
      auto y = evalShapeExpr(b->b, vars, why);
      if (!y) return y;
      switch (b->op) {
        case BinaryOp::Add: return *x + *y;
        case BinaryOp::Sub: return *x - *y;
        case BinaryOp::Mul: return *x * *y;
        case BinaryOp::FloorDiv:
        case BinaryOp::FloorMod:
          if (*y == 0) return fail("division by zero");
          return b->op == BinaryOp::FloorDiv ? floorDivInt(*x, *y) : *x - floorDivInt(*x, *y) * *y;
        case BinaryOp::Min: return std::min(*x, *y);
        case BinaryOp::Max: return std::max(*x, *y);
        default: return fail(std::string("operator `") + binaryOpSpelling(b->op) + "` in a dimension");
      }
    }
    case ExprKind::Call: {
      auto* c = static_cast<const Call*>(e.get());
      if (c->args.size() != 2 || (c->callee != "ceildiv" && c->callee != "min" && c->callee != "max"))
        return fail("a call of `" + c->callee + "` in a dimension");
      auto x = evalShapeExpr(c->args[0], vars, why);
      if (!x) return x;
      auto y = evalShapeExpr(c->args[1], vars, why);
      if (!y) return y;
      if (c->callee == "min") return std::min(*x, *y);
      if (c->callee == "max") return std::max(*x, *y);
      if (*y == 0) return fail("division by zero");
      return -floorDivInt(-*x, *y);
    }
    default: return fail(std::string("a ") + exprKindName(e->kind) + " expression in a dimension");
  }
}

}  // namespace tlc::interp
