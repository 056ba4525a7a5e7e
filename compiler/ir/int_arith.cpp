#include "compiler/ir/int_arith.h"

#include <cmath>
#include <limits>

namespace tlc::ir {

int64_t wrapToDType(uint64_t bits, DType t) {
  if (t == DType::Bool) return bits ? 1 : 0;
  int w = dtypeBits(t);
  if (w >= 64) return static_cast<int64_t>(bits);
  uint64_t mask = (uint64_t(1) << w) - 1;
  bits &= mask;
  if (isSigned(t) && (bits >> (w - 1)) & 1) bits |= ~mask;
  return static_cast<int64_t>(bits);
}

static std::optional<int64_t> floorDivSigned(int64_t a, int64_t b) {
  if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1)) return std::nullopt;
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

std::optional<int64_t> foldIntBinary(BinaryOp op, int64_t x, int64_t y, DType t) {
  bool sgn = isSigned(t);
  uint64_t ux = static_cast<uint64_t>(x), uy = static_cast<uint64_t>(y);
  auto less = [&](int64_t a, int64_t b) { return sgn ? a < b : uint64_t(a) < uint64_t(b); };
  switch (op) {
    case BinaryOp::Add: return wrapToDType(ux + uy, t);
    case BinaryOp::Sub: return wrapToDType(ux - uy, t);
    case BinaryOp::Mul: return wrapToDType(ux * uy, t);
    case BinaryOp::FloorDiv:
      if (y == 0) return std::nullopt;
      if (!sgn) return wrapToDType(ux / uy, t);
      if (auto q = floorDivSigned(x, y)) return wrapToDType(uint64_t(*q), t);
      return std::nullopt;
    case BinaryOp::FloorMod:
      if (y == 0) return std::nullopt;
      if (!sgn) return wrapToDType(ux % uy, t);
      if (auto q = floorDivSigned(x, y)) return wrapToDType(ux - uint64_t(*q) * uy, t);
      return std::nullopt;
    case BinaryOp::Min: return less(y, x) ? y : x;
    case BinaryOp::Max: return less(x, y) ? y : x;
    case BinaryOp::Eq: return x == y;
    case BinaryOp::Ne: return x != y;
    case BinaryOp::Lt: return less(x, y);
    case BinaryOp::Le: return !less(y, x);
    case BinaryOp::Gt: return less(y, x);
    case BinaryOp::Ge: return !less(x, y);
    case BinaryOp::And: return (x != 0) && (y != 0);
    case BinaryOp::Or: return (x != 0) || (y != 0);
    case BinaryOp::BitAnd: return wrapToDType(ux & uy, t);
    case BinaryOp::BitOr: return wrapToDType(ux | uy, t);
    case BinaryOp::BitXor: return wrapToDType(ux ^ uy, t);
    case BinaryOp::Shl:
      if (y < 0 || y >= dtypeBits(t)) return std::nullopt;
      return wrapToDType(ux << y, t);
    case BinaryOp::Shr:
      if (y < 0 || y >= dtypeBits(t)) return std::nullopt;
      // Values are kept sign- or zero-extended, so a 64-bit shift matches the dtype's.
      return sgn ? wrapToDType(uint64_t(x >> y), t) : wrapToDType(ux >> y, t);
    case BinaryOp::Div: return std::nullopt;
  }
  return std::nullopt;
}

namespace {

using Wide = __int128;

bool fitsWide(Wide v, DType t) {
  if (t == DType::Bool) return v == 0 || v == 1;
  int w = dtypeBits(t);
  if (isSigned(t)) return v >= -(Wide(1) << (w - 1)) && v < (Wide(1) << (w - 1));
  return v >= 0 && v < (Wide(1) << w);
}

Wide floorDivWide(Wide a, Wide b) {
  Wide q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

}  // namespace

bool fitsDType(int64_t v, DType t) { return fitsWide(Wide(v), t); }

CheckedInt checkedIntBinary(BinaryOp op, int64_t x, int64_t y, DType t) {
  // Unsigned 64-bit values are stored as their bit patterns.
  auto wide = [&](int64_t v) { return isSigned(t) ? Wide(v) : Wide(static_cast<uint64_t>(v)); };
  Wide a = wide(x), b = wide(y), exact;
  switch (op) {
    case BinaryOp::Add: exact = a + b; break;
    case BinaryOp::Sub: exact = a - b; break;
    case BinaryOp::Mul: exact = a * b; break;
    case BinaryOp::FloorDiv:
      if (b == 0) return {};
      exact = floorDivWide(a, b);
      break;
    case BinaryOp::FloorMod:
      if (b == 0) return {};
      exact = a - floorDivWide(a, b) * b;
      break;
    case BinaryOp::Shl:
      if (y < 0 || y >= dtypeBits(t)) return {};
      exact = a * (Wide(1) << y);
      break;
    default: return {foldIntBinary(op, x, y, t), false};
  }
  if (!fitsWide(exact, t)) return {std::nullopt, true};
  return {wrapToDType(static_cast<uint64_t>(exact), t), false};
}

std::optional<int64_t> evalConstInt(const Expr& e) {
  if (!e || !(isInteger(e->dtype) || e->dtype == DType::Bool)) return std::nullopt;
  switch (e->kind) {
    case ExprKind::IntImm: return as<IntImm>(e)->value;
    case ExprKind::Binary: {
      auto* b = as<Binary>(e);
      if (!b->a || b->a->dtype != (b->b ? b->b->dtype : b->a->dtype)) return std::nullopt;
      auto x = evalConstInt(b->a), y = evalConstInt(b->b);
      if (!x || !y) return std::nullopt;
      return foldIntBinary(b->op, *x, *y, b->a->dtype);
    }
    case ExprKind::Unary: {
      auto* u = as<Unary>(e);
      auto x = evalConstInt(u->a);
      if (!x) return std::nullopt;
      switch (u->op) {
        case UnaryOp::Neg: return wrapToDType(0 - uint64_t(*x), e->dtype);
        case UnaryOp::BitNot: return wrapToDType(~uint64_t(*x), e->dtype);
        case UnaryOp::Not: return *x == 0;
      }
      return std::nullopt;
    }
    case ExprKind::Cast: {
      // A float literal converts by truncation when the result fits.
      if (auto* f = as<FloatImm>(as<Cast>(e)->value); f && isInteger(e->dtype)) {
        double v = f->dtype == DType::Float32 ? double(float(f->value)) : f->value;
        if (f->dtype != DType::Float32 && f->dtype != DType::Float64) return std::nullopt;
        if (!(std::trunc(v) >= -9.2e18 && std::trunc(v) <= 9.2e18)) return std::nullopt;
        int64_t i = static_cast<int64_t>(std::trunc(v));
        if (wrapToDType(uint64_t(i), e->dtype) != i) return std::nullopt;
        return i;
      }
      auto x = evalConstInt(as<Cast>(e)->value);
      if (!x) return std::nullopt;
      return wrapToDType(uint64_t(*x), e->dtype);
    }
    case ExprKind::Select: {
      auto* s = as<Select>(e);
      auto c = evalConstInt(s->cond);
      if (!c) return std::nullopt;
      return evalConstInt(*c ? s->t : s->f);
    }
    default: return std::nullopt;
  }
}

}  // namespace tlc::ir
