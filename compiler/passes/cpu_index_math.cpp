#include "compiler/passes/cpu_index_math.h"

namespace tlc::cpu {

using namespace ir;

std::vector<Expr> rowMajorStrides(const Buffer& b) {
  std::vector<Expr> strides(b->shape.size());
  Expr s = makeInt(1, DType::Int64);
  for (size_t d = b->shape.size(); d-- > 0;) {
    strides[d] = s;
    s = mul(s, toI64(b->shape[d]));
  }
  return strides;
}

bool sameExpr(const Expr& a, const Expr& b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind || a->dtype != b->dtype) return false;
  switch (a->kind) {
    case ExprKind::IntImm: return as<IntImm>(a)->value == as<IntImm>(b)->value;
    case ExprKind::FloatImm: return as<FloatImm>(a)->value == as<FloatImm>(b)->value;
    case ExprKind::VarRef: return as<VarRef>(a)->var == as<VarRef>(b)->var;
    case ExprKind::Binary: {
      auto *x = as<Binary>(a), *y = as<Binary>(b);
      return x->op == y->op && sameExpr(x->a, y->a) && sameExpr(x->b, y->b);
    }
    case ExprKind::Unary: {
      auto *x = as<Unary>(a), *y = as<Unary>(b);
      return x->op == y->op && sameExpr(x->a, y->a);
    }
    case ExprKind::Cast: return sameExpr(as<Cast>(a)->value, as<Cast>(b)->value);
    default: return false;
  }
}

Expr toI64(const Expr& e) {
  if (e->dtype == DType::Int64) return e;
  int64_t v;
  if (constInt(e, &v)) return makeInt(v, DType::Int64);
  return makeCast(DType::Int64, e);
}

static void unifyInts(Expr& a, Expr& b) {
  if (a->dtype == b->dtype) return;
  DType t = promote(a->dtype, b->dtype);
  int64_t v;
  a = constInt(a, &v) ? makeInt(v, t) : makeCast(t, a);
  b = constInt(b, &v) ? makeInt(v, t) : makeCast(t, b);
}

Expr foldLe(Expr a, Expr b) {
  unifyInts(a, b);
  int64_t x, y;
  if (constInt(a, &x) && constInt(b, &y)) return makeBool(x <= y);
  if (sameExpr(a, b)) return makeBool(true);
  return makeBinary(BinaryOp::Le, a, b);
}

Expr foldGe(Expr a, Expr b) { return foldLe(std::move(b), std::move(a)); }

bool isTrue(const Expr& cond) {
  int64_t v;
  return constInt(cond, &v) && v != 0;
}

ValidSpan validSpan(const Range& r, const Expr& shape) {
  Expr zero = makeInt(0, r.min->dtype);
  Expr lo = maxExpr(zero, sub(zero, r.min));
  Expr hi = maxExpr(lo, minExpr(r.extent, sub(shape, r.min)));
  return {lo, hi};
}

Expr inBounds(const Expr& index, const Expr& shape) {
  Expr zero = makeInt(0, index->dtype);
  Expr lower = foldGe(index, zero);
  // index < shape  <=>  index + 1 <= shape
  Expr upper = foldLe(add(index, makeInt(1, index->dtype)), shape);
  return logicalAnd(lower, upper);
}

Expr regionInBounds(const Region& r) {
  Expr cond = makeBool(true);
  for (size_t d = 0; d < r.ranges.size(); ++d) {
    const Range& rg = r.ranges[d];
    Expr zero = makeInt(0, rg.min->dtype);
    cond = logicalAnd(cond, foldGe(rg.min, zero));
    cond = logicalAnd(cond, foldLe(add(rg.min, rg.extent), r.buffer->shape[d]));
  }
  return cond;
}

Expr clampIndex(const Expr& index, const Expr& shape) {
  Expr zero = makeInt(0, index->dtype);
  Expr last = sub(shape, makeInt(1, shape->dtype));
  return maxExpr(zero, minExpr(index, last));
}

Expr validExtent(const Range& r, const Expr& shape) {
  Expr zero = makeInt(0, r.min->dtype);
  return maxExpr(zero, minExpr(r.extent, sub(shape, r.min)));
}

}  // namespace tlc::cpu
