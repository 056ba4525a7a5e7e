#include "compiler/passes/simplify.h"

#include "compiler/ir/loop_jumps.h"
#include "compiler/ir/module_rewrite.h"

#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <unordered_map>

#include "compiler/ir/equality.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/int_arith.h"
#include "compiler/ir/linear_form.h"
#include "compiler/ir/substitute.h"

namespace tlc::passes {

using namespace ir;

namespace {

// ------------------------------------------------------------ constants

int64_t wrap(uint64_t bits, DType t) { return wrapToDType(bits, t); }

bool isConst(const Expr& e) { return e->kind == ExprKind::IntImm || e->kind == ExprKind::FloatImm; }
bool isFloatConst(const Expr& e, double v) {
  auto* f = as<FloatImm>(e);
  return f && f->value == v && std::signbit(f->value) == std::signbit(v);
}
bool hasNativeFloat(DType t) { return t == DType::Float32 || t == DType::Float64; }

// A float constant as the target computes with it: rounded to float32 when that is its dtype.
double floatValue(const FloatImm* f) {
  return f->dtype == DType::Float32 ? static_cast<double>(static_cast<float>(f->value)) : f->value;
}
Expr makeFloatOf(double v, DType t, SourceLoc loc) {
  return makeFloat(t == DType::Float32 ? static_cast<double>(static_cast<float>(v)) : v, t, loc);
}

// Builtins (exp, sqrt, ...) are pure; target intrinsics ("<target>.<name>")
// may have effects.
bool hasIntrinsicCall(const Expr& e) {
  struct Finder : IRVisitor {
    bool found = false;
    void visitCall(const Call* c) override {
      found |= c->callee.find('.') != std::string::npos;
      IRVisitor::visitCall(c);
    }
  } f;
  f.visit(e);
  return f.found;
}
bool pure(const Expr& e) { return !hasIntrinsicCall(e); }

bool usesVar(const Stmt& s, const VarNode* v) {
  struct Finder : IRVisitor {
    const VarNode* var;
    bool found = false;
    void visitVarRef(const VarRef* r) override { found |= r->var.get() == var; }
    void visitAlloc(const AllocStmt* a) override {
      for (const Expr& d : a->buffer->shape) visit(d);
    }
  } f;
  f.var = v;
  f.visit(s);
  return f.found;
}

bool isEmpty(const Stmt& s) {
  auto* seq = as<SeqStmt>(s);
  return !s || (seq && seq->stmts.empty());
}
Stmt emptyStmt(SourceLoc loc) { return makeSeq({}, loc); }

template <class F>
std::optional<double> floatArith(BinaryOp op, F x, F y) {
  switch (op) {
    case BinaryOp::Add: return static_cast<double>(F(x + y));
    case BinaryOp::Sub: return static_cast<double>(F(x - y));
    case BinaryOp::Mul: return static_cast<double>(F(x * y));
    case BinaryOp::Div: return static_cast<double>(F(x / y));
    case BinaryOp::Min:
    case BinaryOp::Max:
      // NaN handling of min/max is target-defined: leave it to the target.
      if (std::isnan(x) || std::isnan(y)) return std::nullopt;
      return static_cast<double>(op == BinaryOp::Min ? std::min(x, y) : std::max(x, y));
    default: return std::nullopt;
  }
}

std::optional<bool> floatCompare(BinaryOp op, double x, double y) {
  switch (op) {
    case BinaryOp::Eq: return x == y;
    case BinaryOp::Ne: return x != y;
    case BinaryOp::Lt: return x < y;
    case BinaryOp::Le: return x <= y;
    case BinaryOp::Gt: return x > y;
    case BinaryOp::Ge: return x >= y;
    default: return std::nullopt;
  }
}

bool commutative(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add:
    case BinaryOp::Mul:
    case BinaryOp::Min:
    case BinaryOp::Max:
    case BinaryOp::Eq:
    case BinaryOp::Ne:
    case BinaryOp::BitAnd:
    case BinaryOp::BitOr:
    case BinaryOp::BitXor: return true;
    default: return false;
  }
}

// ------------------------------------------------------------ the pass

// Bounds of an index expression (int32/int64), from the ranges of the loop,
// block and let variables in scope. Index arithmetic is assumed not to
// overflow. A missing bound is unbounded.
struct Interval {
  std::optional<int64_t> lo, hi;
};

std::optional<int64_t> addBound(std::optional<int64_t> x, std::optional<int64_t> y) {
  int64_t r = 0;
  if (!x || !y || __builtin_add_overflow(*x, *y, &r)) return std::nullopt;
  return r;
}
std::optional<int64_t> subBound(std::optional<int64_t> x, std::optional<int64_t> y) {
  int64_t r = 0;
  if (!x || !y || __builtin_sub_overflow(*x, *y, &r)) return std::nullopt;
  return r;
}
std::optional<int64_t> mulBound(std::optional<int64_t> x, int64_t c) {
  int64_t r = 0;
  if (!x || __builtin_mul_overflow(*x, c, &r)) return std::nullopt;
  return r;
}
std::optional<int64_t> floorDivBound(std::optional<int64_t> x, int64_t c) {
  if (!x) return std::nullopt;
  return foldIntBinary(BinaryOp::FloorDiv, *x, c, DType::Int64);
}
std::optional<int64_t> minBound(std::optional<int64_t> x, std::optional<int64_t> y) {
  if (!x || !y) return std::nullopt;
  return std::min(*x, *y);
}
std::optional<int64_t> maxBound(std::optional<int64_t> x, std::optional<int64_t> y) {
  if (!x || !y) return std::nullopt;
  return std::max(*x, *y);
}
bool isIndexType(DType t) { return t == DType::Int32 || t == DType::Int64; }

class Simplifier : public IRMutator {
 public:
  Expr fold(BinaryOp op, Expr a, Expr b, DType type, SourceLoc loc) {
    DType t = a->dtype;
    int64_t x = 0, y = 0;
    bool ca = constInt(a, &x), cb = constInt(b, &y);
    bool intLike = isInteger(t) || t == DType::Bool;
    if (ca && cb && intLike) {
      if (auto r = foldIntBinary(op, x, y, t)) return makeInt(*r, type, loc);
    }
    auto *fa = as<FloatImm>(a), *fb = as<FloatImm>(b);
    // Narrow floats are left alone: their literals hold doubles that the
    // target rounds, and folding would need that rounding.
    if (fa && fb && hasNativeFloat(t)) {
      if (auto c = floatCompare(op, floatValue(fa), floatValue(fb))) return makeBool(*c, loc);
      auto r = t == DType::Float32 ? floatArith<float>(op, float(fa->value), float(fb->value))
                                   : floatArith<double>(op, fa->value, fb->value);
      if (r) return makeFloatOf(*r, t, loc);
    }
    if (isInteger(t)) {
      // Constants go right so the rules below see them there.
      if (ca && !cb && commutative(op)) {
        std::swap(a, b);
        std::swap(x, y);
        std::swap(ca, cb);
      }
      if (Expr r = intIdentity(op, a, b, cb, y, type, loc)) return r;
    } else if (isFloat(t)) {
      if ((op == BinaryOp::Mul && isFloatConst(b, 1.0)) || (op == BinaryOp::Div && isFloatConst(b, 1.0)) ||
          (op == BinaryOp::Sub && isFloatConst(b, 0.0)) || (op == BinaryOp::Add && isFloatConst(b, -0.0)))
        return a;
      if ((op == BinaryOp::Mul && isFloatConst(a, 1.0)) || (op == BinaryOp::Add && isFloatConst(a, -0.0))) return b;
    } else if (t == DType::Bool) {
      if (Expr r = boolIdentity(op, a, b)) return r;
    }
    if (isIndexType(t)) {
      if (Expr r = rangeRule(op, a, b, loc)) return r;
    }
    return std::make_shared<const Binary>(op, a, b, type, loc);
  }

  // `v` lies in [min, min + extent) from now on.
  void assume(const Var& v, const Expr& min, const Expr& extent) {
    Interval m = bounds(min), e = bounds(extent);
    ranges_[v.get()] = {m.lo, subBound(addBound(m.hi, e.hi), 1)};
  }

  Interval bounds(const Expr& e) const {
    int64_t v = 0;
    if (constInt(e, &v)) return {v, v};
    if (!isIndexType(e->dtype)) return {};
    if (auto* r = as<VarRef>(e)) {
      auto it = ranges_.find(r->var.get());
      return it == ranges_.end() ? Interval{} : it->second;
    }
    auto* b = as<Binary>(e);
    if (!b) return {};
    Interval x = bounds(b->a), y = bounds(b->b);
    int64_t c = 0;
    bool cb = constInt(b->b, &c);
    switch (b->op) {
      case BinaryOp::Add: return {addBound(x.lo, y.lo), addBound(x.hi, y.hi)};
      case BinaryOp::Sub: return {subBound(x.lo, y.hi), subBound(x.hi, y.lo)};
      case BinaryOp::Mul:
        if (!cb) return {};
        return c >= 0 ? Interval{mulBound(x.lo, c), mulBound(x.hi, c)} : Interval{mulBound(x.hi, c), mulBound(x.lo, c)};
      case BinaryOp::FloorDiv:
        if (!cb || c <= 0) return {};
        return {floorDivBound(x.lo, c), floorDivBound(x.hi, c)};
      case BinaryOp::FloorMod:
        if (!cb || c <= 0) return {};
        if (x.lo && x.hi && *x.lo >= 0 && *x.hi < c) return x;
        return {0, c - 1};
      case BinaryOp::Min: {
        // The smaller of the two: below both lower bounds, below either upper bound.
        std::optional<int64_t> hi = x.hi && y.hi ? std::min(*x.hi, *y.hi) : (x.hi ? x.hi : y.hi);
        return {minBound(x.lo, y.lo), hi};
      }
      case BinaryOp::Max: {
        std::optional<int64_t> lo = x.lo && y.lo ? std::max(*x.lo, *y.lo) : (x.lo ? x.lo : y.lo);
        return {lo, maxBound(x.hi, y.hi)};
      }
      default: return {};
    }
  }

 protected:
  Expr mutateBinary(const Binary* n, const Expr& self) override {
    Expr a = mutate(n->a), b = mutate(n->b);
    Expr r = fold(n->op, a, b, n->dtype, n->loc);
    if (auto* rb = as<Binary>(r); rb && rb->op == n->op && rb->a == n->a && rb->b == n->b) return self;
    return r;
  }

  Expr mutateUnary(const Unary* n, const Expr& self) override {
    Expr a = mutate(n->a);
    int64_t x = 0;
    if (n->op == UnaryOp::Neg) {
      if (constInt(a, &x) && isInteger(a->dtype)) return makeInt(wrap(0 - uint64_t(x), a->dtype), n->dtype, n->loc);
      if (auto* f = as<FloatImm>(a)) return makeFloat(-f->value, f->dtype, n->loc);
      if (auto* u = as<Unary>(a); u && u->op == UnaryOp::Neg) return u->a;
    } else if (n->op == UnaryOp::BitNot) {
      if (constInt(a, &x) && isInteger(a->dtype)) return makeInt(wrap(~uint64_t(x), a->dtype), n->dtype, n->loc);
      if (auto* u = as<Unary>(a); u && u->op == UnaryOp::BitNot) return u->a;
    } else {
      if (constInt(a, &x) && a->dtype == DType::Bool) return makeBool(x == 0, n->loc);
      if (auto* u = as<Unary>(a); u && u->op == UnaryOp::Not) return u->a;
      // not (a < b) == a >= b holds for integers (floats have NaN).
      if (auto* b = as<Binary>(a); b && isComparison(b->op) && isInteger(b->a->dtype)) {
        static const std::pair<BinaryOp, BinaryOp> inverse[] = {{BinaryOp::Eq, BinaryOp::Ne}, {BinaryOp::Ne, BinaryOp::Eq},
                                                                {BinaryOp::Lt, BinaryOp::Ge}, {BinaryOp::Le, BinaryOp::Gt},
                                                                {BinaryOp::Gt, BinaryOp::Le}, {BinaryOp::Ge, BinaryOp::Lt}};
        for (auto [from, to] : inverse)
          if (b->op == from) return std::make_shared<const Binary>(to, b->a, b->b, DType::Bool, n->loc);
      }
    }
    if (a == n->a) return self;
    return std::make_shared<const Unary>(n->op, a, n->dtype, n->loc);
  }

  Expr mutateCast(const Cast* n, const Expr& self) override {
    Expr v = mutate(n->value);
    DType to = n->dtype, from = v->dtype;
    if (to == from) return v;
    int64_t x = 0;
    if (constInt(v, &x)) {
      if (to == DType::Bool) return makeBool(x != 0, n->loc);
      if (isInteger(to)) return makeInt(wrap(uint64_t(x), to), to, n->loc);
      if (hasNativeFloat(to)) {
        double d = from == DType::UInt64 ? static_cast<double>(static_cast<uint64_t>(x)) : static_cast<double>(x);
        if (to == DType::Float32)
          d = from == DType::UInt64 ? double(float(static_cast<uint64_t>(x))) : double(float(x));
        return makeFloat(d, to, n->loc);
      }
    }
    if (auto* f = as<FloatImm>(v); f && hasNativeFloat(from)) {
      double d = floatValue(f);
      if (to == DType::Bool) return makeBool(d != 0, n->loc);
      if (hasNativeFloat(to)) return makeFloatOf(d, to, n->loc);
      if (isInteger(to) && std::isfinite(d)) {
        double tr = std::trunc(d);
        int bits = dtypeBits(to);
        double lo = isSigned(to) ? -std::ldexp(1.0, bits - 1) : 0.0;
        double hi = isSigned(to) ? std::ldexp(1.0, bits - 1) : std::ldexp(1.0, bits);
        if (tr >= lo && tr < hi) {
          uint64_t bitsOut = tr < 0 ? uint64_t(int64_t(tr)) : uint64_t(tr);
          return makeInt(wrap(bitsOut, to), to, n->loc);
        }
      }
    }
    if (v == n->value) return self;
    return std::make_shared<const Cast>(to, v, n->loc);
  }

  Expr mutateSelect(const Select* n, const Expr& self) override {
    Expr c = mutate(n->cond), t = mutate(n->t), f = mutate(n->f);
    int64_t x = 0;
    if (constInt(c, &x)) return x ? t : f;
    if (structurallyEqual(t, f) && pure(c)) return t;
    if (c == n->cond && t == n->t && f == n->f) return self;
    return std::make_shared<const Select>(c, t, f, n->loc);
  }

  Stmt mutateIf(const IfStmt* n, const Stmt& self) override {
    Expr c = mutate(n->cond);
    int64_t x = 0;
    if (constInt(c, &x)) {
      if (x) return mutate(n->thenBody);
      return n->elseBody ? mutate(n->elseBody) : emptyStmt(n->loc);
    }
    Stmt t = mutate(n->thenBody), e = mutate(n->elseBody);
    if (e && isEmpty(e)) e = nullptr;
    if (isEmpty(t) && !e && pure(c)) return emptyStmt(n->loc);
    if (c == n->cond && t == n->thenBody && e == n->elseBody) return self;
    return std::make_shared<const IfStmt>(c, t, e, n->loc, n->likely);
  }

  Stmt mutateFor(const ForStmt* n, const Stmt& self) override {
    Expr mn = mutate(n->min), ext = mutate(n->extent);
    int64_t e = 0;
    if (constInt(ext, &e) && e <= 0 && pure(mn)) return emptyStmt(n->loc);
    // A one-trip loop becomes its body, unless the body breaks out of or
    // continues the loop (the jump would then target an outer loop).
    if (constInt(ext, &e) && e == 1 && n->forKind != ForKind::Pipelined && !jumpsOutOf(n->body))
      return mutate(substitute(n->body, n->var, mn));
    Stmt body;
    {
      // Inside the body the variable is in [min, min + extent - 1].
      Interval m = bounds(mn), e = bounds(ext);
      RangeScope scope(*this, n->var, {m.lo, subBound(addBound(m.hi, e.hi), 1)});
      body = mutate(n->body);
    }
    if (isEmpty(body) && pure(mn) && pure(ext)) return emptyStmt(n->loc);
    if (mn == n->min && ext == n->extent && body == n->body) return self;
    auto f = std::make_shared<ForStmt>(n->var, mn, ext, n->forKind, body, n->loc);
    f->copyLoopAttributes(*n);
    return f;
  }

  Stmt mutateLet(const LetStmt* n, const Stmt& self) override {
    Expr v = mutate(n->value);
    if (isConst(v) || v->kind == ExprKind::VarRef) return mutate(substitute(n->body, n->var, v));
    Stmt body;
    {
      RangeScope scope(*this, n->var, n->var->dtype == v->dtype ? bounds(v) : Interval{});
      body = mutate(n->body);
    }
    if (pure(v) && !usesVar(body, n->var.get())) return body;
    if (v == n->value && body == n->body) return self;
    return std::make_shared<const LetStmt>(n->var, v, body, n->loc);
  }

  Stmt mutateKernel(const KernelStmt* n, const Stmt& self) override {
    std::vector<Expr> grid;
    bool changed = mutateExprs(n->grid, grid);
    std::vector<std::unique_ptr<RangeScope>> scopes;
    // Block index i ranges over [0, grid[i] - 1].
    for (size_t i = 0; i < n->blockVars.size() && i < grid.size(); ++i)
      scopes.push_back(std::make_unique<RangeScope>(*this, n->blockVars[i],
                                                    Interval{0, subBound(bounds(grid[i]).hi, 1)}));
    Stmt body = mutate(n->body);
    scopes.clear();
    if (!changed && body == n->body) return self;
    return std::make_shared<const KernelStmt>(grid, n->blockVars, n->threads, body, n->loc, n->swizzle);
  }

  Stmt mutateEvaluate(const EvaluateStmt* n, const Stmt& self) override {
    Expr v = mutate(n->value);
    if (pure(v)) return emptyStmt(n->loc);
    if (v == n->value) return self;
    return std::make_shared<const EvaluateStmt>(v, n->loc);
  }

  Stmt mutateCopy(const CopyStmt* n, const Stmt& self) override {
    Stmt s = IRMutator::mutateCopy(n, self);
    auto* c = as<CopyStmt>(s);
    return emptyRegion(c->dst) || emptyRegion(c->src) ? emptyStmt(n->loc) : s;
  }

  Stmt mutateFill(const FillStmt* n, const Stmt& self) override {
    Stmt s = IRMutator::mutateFill(n, self);
    auto* f = as<FillStmt>(s);
    return emptyRegion(f->dst) && pure(f->value) ? emptyStmt(n->loc) : s;
  }

 private:
  static bool emptyRegion(const Region& r) {
    for (const Range& rg : r.ranges) {
      int64_t e = 0;
      if (constInt(rg.extent, &e) && e <= 0) return true;
    }
    return false;
  }

  // Comparisons decided by bounds, and min/max whose winner is known.
  Expr rangeRule(BinaryOp op, const Expr& a, const Expr& b, SourceLoc loc) {
    Interval x = bounds(a), y = bounds(b);
    auto lt = [](std::optional<int64_t> p, std::optional<int64_t> q) { return p && q && *p < *q; };
    auto le = [](std::optional<int64_t> p, std::optional<int64_t> q) { return p && q && *p <= *q; };
    switch (op) {
      case BinaryOp::Lt:
        if (lt(x.hi, y.lo)) return makeBool(true, loc);
        if (le(y.hi, x.lo)) return makeBool(false, loc);
        break;
      case BinaryOp::Le:
        if (le(x.hi, y.lo)) return makeBool(true, loc);
        if (lt(y.hi, x.lo)) return makeBool(false, loc);
        break;
      case BinaryOp::Gt:
        if (lt(y.hi, x.lo)) return makeBool(true, loc);
        if (le(x.hi, y.lo)) return makeBool(false, loc);
        break;
      case BinaryOp::Ge:
        if (le(y.hi, x.lo)) return makeBool(true, loc);
        if (lt(x.hi, y.lo)) return makeBool(false, loc);
        break;
      case BinaryOp::Eq:
      case BinaryOp::Ne:
        if (lt(x.hi, y.lo) || lt(y.hi, x.lo)) return makeBool(op == BinaryOp::Ne, loc);
        break;
      case BinaryOp::FloorDiv:
      case BinaryOp::FloorMod: {
        // 0 <= a < c: floordiv(a, c) == 0 and a % c == a.
        int64_t c = 0;
        if (constInt(b, &c) && c > 0 && x.lo && *x.lo >= 0 && lt(x.hi, c)) {
          if (op == BinaryOp::FloorMod) return a;
          if (pure(a)) return makeInt(0, a->dtype, loc);
        }
        if (c > 0)
          if (Expr r = dropSmallAddend(op, a, b, c, loc)) return r;
        break;
      }
      case BinaryOp::Min:
        if (pure(a) && pure(b)) {
          if (le(x.hi, y.lo)) return a;
          if (le(y.hi, x.lo)) return b;
        }
        break;
      case BinaryOp::Max:
        if (pure(a) && pure(b)) {
          if (le(y.hi, x.lo)) return a;
          if (le(x.hi, y.lo)) return b;
        }
        break;
      default: break;
    }
    if (int64_t c = 0; isComparison(op) && constInt(b, &c))
      if (Expr r = dropSmallCompared(op, a, c, loc)) return r;
    return nullptr;
  }

  // The terms of a sum (a + b + ...), left to right.
  static void addTerms(const Expr& e, std::vector<Expr>* out) {
    if (auto* b = as<Binary>(e); b && b->op == BinaryOp::Add && isIndexType(e->dtype)) {
      addTerms(b->a, out);
      addTerms(b->b, out);
      return;
    }
    out->push_back(e);
  }

  // A sum `a` split as p + z with p a multiple of m = gcd(p's known
  // multiple, c) > 1 and 0 <= z < m: the term z and the rest p (built from
  // the other terms in order). False when no term splits off that way.
  bool splitSmallTerm(const Expr& a, int64_t c, Expr* p, Expr* z) {
    std::vector<Expr> terms;
    addTerms(a, &terms);
    if (terms.size() < 2) return false;
    for (size_t k = 0; k < terms.size(); ++k) {
      Interval zr = bounds(terms[k]);
      if (!zr.lo || !zr.hi || *zr.lo < 0) continue;
      Expr rest;
      for (size_t o = 0; o < terms.size(); ++o)
        if (o != k) rest = rest ? std::make_shared<const Binary>(BinaryOp::Add, rest, terms[o], a->dtype, a->loc) : terms[o];
      int64_t g = std::gcd(knownMultiple(rest), c);
      if (g <= 1 || *zr.hi >= g) continue;
      *p = rest;
      *z = terms[k];
      return true;
    }
    return false;
  }

  // floordiv(p + z, c) == floordiv(p, c) and floormod(p + z, c) ==
  // floormod(p, c) + z when p is a multiple of m = gcd(p's factor, c) and
  // 0 <= z < m: floormod(p, c) is a multiple of m at most c - m, so adding
  // z cannot reach the next multiple of c (`floordiv(k * 64 + j, 128)` with
  // j in [0, 64) is floordiv(k * 64, 128): the group of a 64-wide tile; the
  // lane l in [0, 8) of a run starting at k * 32 + j * 8 leaves
  // floordiv(k * 32 + j * 8 + l, 384) at floordiv(k * 32 + j * 8, 384)).
  Expr dropSmallAddend(BinaryOp op, const Expr& a, const Expr& b, int64_t c, SourceLoc loc) {
    Expr p, z;
    if (!splitSmallTerm(a, c, &p, &z)) return nullptr;
    if (op == BinaryOp::FloorDiv && !pure(z)) return nullptr;
    Expr q = fold(op, p, b, a->dtype, loc);
    return op == BinaryOp::FloorDiv ? q : fold(BinaryOp::Add, q, z, a->dtype, loc);
  }

  // p + z < c == p < c and p + z >= c == p >= c when p and c are multiples
  // of m and 0 <= z < m (p < c means p <= c - m, so p + z < c); <= and >
  // compare with c + 1 the same way (p + z <= c is p + z < c + 1).
  Expr dropSmallCompared(BinaryOp op, const Expr& a, int64_t c, SourceLoc loc) {
    bool strictForm = op == BinaryOp::Lt || op == BinaryOp::Ge;
    if (!strictForm && op != BinaryOp::Le && op != BinaryOp::Gt) return nullptr;
    if (c <= 0 || c == std::numeric_limits<int64_t>::max()) return nullptr;
    int64_t bound = strictForm ? c : c + 1;
    Expr p, z;
    if (!splitSmallTerm(a, bound, &p, &z) || !pure(z)) return nullptr;
    return fold(op, p, makeInt(c, a->dtype, loc), DType::Bool, loc);
  }

  std::unordered_map<const VarNode*, Interval> ranges_;

  // Records a variable's range for the extent of a scope.
  struct RangeScope {
    Simplifier& s;
    const VarNode* var;
    std::optional<Interval> saved;
    RangeScope(Simplifier& simplifier, const Var& v, Interval r) : s(simplifier), var(v.get()) {
      auto it = s.ranges_.find(var);
      if (it != s.ranges_.end()) saved = it->second;
      s.ranges_[var] = r;
    }
    ~RangeScope() {
      if (saved) s.ranges_[var] = *saved;
      else s.ranges_.erase(var);
    }
  };

  // Integer rules with any constant already on the right (`cb`, value `y`).
  Expr intIdentity(BinaryOp op, const Expr& a, const Expr& b, bool cb, int64_t y, DType type, SourceLoc loc) {
    DType t = a->dtype;
    auto constant = [&](int64_t v) { return makeInt(wrap(uint64_t(v), t), t, loc); };
    bool same = structurallyEqual(a, b) && pure(a);
    switch (op) {
      case BinaryOp::Add:
      case BinaryOp::Sub: {
        if (cb && y == 0) return a;
        if (op == BinaryOp::Sub && same) return constant(0);
        if (!cb) break;
        // (x + c1) +/- c2 and (x - c1) +/- c2 become x + c.
        auto* inner = as<Binary>(a);
        int64_t c1 = 0;
        if (inner && (inner->op == BinaryOp::Add || inner->op == BinaryOp::Sub) && constInt(inner->b, &c1)) {
          uint64_t k = inner->op == BinaryOp::Add ? uint64_t(c1) : 0 - uint64_t(c1);
          k = op == BinaryOp::Add ? k + uint64_t(y) : k - uint64_t(y);
          return fold(BinaryOp::Add, inner->a, constant(int64_t(k)), type, loc);
        }
        // x + (-c) prints better as x - c.
        int64_t yv = wrap(uint64_t(y), t);
        if (op == BinaryOp::Add && isSigned(t) && yv < 0 && wrap(0 - uint64_t(yv), t) > 0)
          return std::make_shared<const Binary>(BinaryOp::Sub, a, constant(-yv), type, loc);
        break;
      }
      case BinaryOp::Mul: {
        if (cb && y == 1) return a;
        if (cb && y == 0 && pure(a)) return constant(0);
        auto* inner = as<Binary>(a);
        int64_t c1 = 0;
        if (cb && inner && inner->op == BinaryOp::Mul && constInt(inner->b, &c1))
          return fold(BinaryOp::Mul, inner->a, constant(int64_t(uint64_t(c1) * uint64_t(y))), type, loc);
        break;
      }
      case BinaryOp::FloorDiv:
      case BinaryOp::FloorMod: {
        if (cb && y == 1) return op == BinaryOp::FloorDiv ? a : (pure(a) ? constant(0) : nullptr);
        auto* inner = as<Binary>(a);
        int64_t c1 = 0;
        if (cb && y > 0 && isSigned(t) && inner && inner->op == BinaryOp::Mul && constInt(inner->b, &c1) &&
            c1 % y == 0) {
          if (op == BinaryOp::FloorMod) return pure(a) ? constant(0) : nullptr;
          return fold(BinaryOp::Mul, inner->a, constant(c1 / y), type, loc);
        }
        break;
      }
      case BinaryOp::Min:
      case BinaryOp::Max:
        if (same) return a;
        break;
      case BinaryOp::Eq:
      case BinaryOp::Le:
      case BinaryOp::Ge:
        if (same) return makeBool(true, loc);
        break;
      case BinaryOp::Ne:
      case BinaryOp::Lt:
      case BinaryOp::Gt:
        if (same) return makeBool(false, loc);
        break;
      default: break;
    }
    return nullptr;
  }

  Expr boolIdentity(BinaryOp op, const Expr& a, const Expr& b) {
    int64_t x = 0;
    for (int side = 0; side < 2; ++side) {
      const Expr& c = side == 0 ? a : b;
      const Expr& other = side == 0 ? b : a;
      if (!constInt(c, &x)) continue;
      if (op == BinaryOp::And) {
        if (x) return other;
        if (pure(other)) return c;
      }
      if (op == BinaryOp::Or) {
        if (!x) return other;
        if (pure(other)) return c;
      }
    }
    if ((op == BinaryOp::And || op == BinaryOp::Or) && structurallyEqual(a, b) && pure(a)) return a;
    return nullptr;
  }
};

}  // namespace

Expr simplifyExpr(const Expr& e) {
  Simplifier s;
  return s.mutate(e);
}

Expr simplifyExpr(const Expr& e, const std::vector<VarRange>& ranges) {
  Simplifier s;
  for (auto& r : ranges) s.assume(r.var, r.min, r.extent);
  return s.mutate(e);
}

Stmt simplifyStmt(const Stmt& st) {
  Simplifier s;
  return s.mutate(st);
}

Stmt simplifyStmt(const Stmt& st, const std::vector<VarRange>& ranges) {
  Simplifier s;
  for (auto& r : ranges) s.assume(r.var, r.min, r.extent);
  return s.mutate(st);
}

Module simplify(const Module& m) {
  return rewriteBodies(m, [](const PrimFunc& f) { return simplifyStmt(f.body); });
}

}  // namespace tlc::passes
