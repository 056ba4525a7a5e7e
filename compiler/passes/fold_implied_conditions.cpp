#include "compiler/passes/fold_implied_conditions.h"

#include <map>
#include <optional>

#include "compiler/ir/functor.h"
#include "compiler/ir/module_rewrite.h"

namespace tlc::passes {

using namespace ir;

namespace {

bool isIndex(DType t) { return t == DType::Int32 || t == DType::Int64; }

// sum of coeff * var + constant; `ok` false when the expression is not of
// that form (a load, a product of variables, a division...).
struct Linear {
  std::map<const VarNode*, int64_t> terms;
  int64_t constant = 0;
  bool ok = true;

  Linear& add(const Linear& o, int64_t scale) {
    ok = ok && o.ok;
    constant += scale * o.constant;
    for (auto& [v, c] : o.terms)
      if ((terms[v] += scale * c) == 0) terms.erase(v);
    return *this;
  }
};

// An inclusive range of a variable, either end possibly unknown.
struct Bounds {
  std::optional<int64_t> lo, hi;
};

// Bounds that hold for `v` throughout the code being rewritten (an entry
// exists for each variable in scope that has one), the lets of index type
// in scope (substituted when linearizing), and the facts `F <= 0`.
class Folder : public IRMutator {
 protected:
  Stmt mutateKernel(const KernelStmt* n, const Stmt& self) override {
    size_t facts = facts_.size();
    for (size_t d = 0; d < n->blockVars.size() && d < n->grid.size(); ++d) {
      const VarNode* v = n->blockVars[d].get();
      bounds_[v].lo = 0;
      int64_t g = 0;
      if (constInt(n->grid[d], &g)) bounds_[v].hi = g - 1;
      // bx - grid + 1 <= 0
      Linear f = linear(n->grid[d]);
      if (f.ok) facts_.push_back(Linear{{{v, 1}}, 1}.add(f, -1));
    }
    Stmt s = IRMutator::mutateKernel(n, self);
    facts_.resize(facts);
    for (const Var& v : n->blockVars) bounds_.erase(v.get());
    return s;
  }

  Stmt mutateFor(const ForStmt* n, const Stmt& self) override {
    size_t facts = facts_.size();
    const VarNode* v = n->var.get();
    if (isIndex(v->dtype)) {
      int64_t lo = 0, ext = 0;
      bool constLo = constInt(n->min, &lo), constExt = constInt(n->extent, &ext);
      if (constLo) bounds_[v].lo = lo;
      if (constLo && constExt) bounds_[v].hi = lo + ext - 1;
      Linear mn = linear(n->min), end = linear(n->min);
      end.add(linear(n->extent), 1);
      if (mn.ok) facts_.push_back(Linear{}.add(mn, 1).add(Linear{{{v, 1}}, 0}, -1));  // min - v <= 0
      if (end.ok) facts_.push_back(Linear{{{v, 1}}, 1}.add(end, -1));                  // v + 1 - end <= 0
    }
    Stmt s = IRMutator::mutateFor(n, self);
    facts_.resize(facts);
    bounds_.erase(v);
    return s;
  }

  Stmt mutateLet(const LetStmt* n, const Stmt& self) override {
    Expr value = mutate(n->value);
    if (isIndex(n->var->dtype)) lets_[n->var.get()] = value;
    Stmt body = mutate(n->body);
    lets_.erase(n->var.get());
    if (value == n->value && body == n->body) return self;
    return std::make_shared<const LetStmt>(n->var, value, body, n->loc);
  }

  Stmt mutateIf(const IfStmt* n, const Stmt& self) override {
    Expr c = mutate(n->cond);
    if (auto* b = as<IntImm>(c); b && c->dtype == DType::Bool) {
      Stmt taken = b->value ? n->thenBody : n->elseBody;
      return taken ? mutate(taken) : makeSeq({}, n->loc);
    }
    size_t facts = facts_.size();
    addFacts(c);
    Stmt t = mutate(n->thenBody);
    facts_.resize(facts);
    Stmt e = n->elseBody ? mutate(n->elseBody) : nullptr;
    if (c == n->cond && t == n->thenBody && e == n->elseBody) return self;
    return std::make_shared<const IfStmt>(c, t, e, n->loc, n->likely);
  }

  Expr mutateBinary(const Binary* n, const Expr& self) override {
    Expr e = IRMutator::mutateBinary(n, self);
    auto* b = as<Binary>(e);
    if (!b) return e;
    if (isLogical(b->op)) {
      bool isAnd = b->op == BinaryOp::And;
      for (int side = 0; side < 2; ++side) {
        const Expr& x = side ? b->b : b->a;
        const Expr& other = side ? b->a : b->b;
        if (auto* k = as<IntImm>(x)) return (k->value != 0) == isAnd ? other : makeBool(!isAnd, b->loc);
      }
      return e;
    }
    if (std::optional<bool> v = decide(b)) return makeBool(*v, b->loc);
    return e;
  }

  Expr mutateSelect(const Select* n, const Expr& self) override {
    Expr e = IRMutator::mutateSelect(n, self);
    auto* s = as<Select>(e);
    if (auto* k = s ? as<IntImm>(s->cond) : nullptr) return k->value ? s->t : s->f;
    return e;
  }

 private:
  Linear linear(const Expr& e) const {
    if (!e || !isIndex(e->dtype)) return Linear{{}, 0, false};
    constexpr int64_t kLimit = int64_t(1) << 40;  // coefficients stay far from overflow
    if (auto* k = as<IntImm>(e)) return Linear{{}, k->value, k->value > -kLimit && k->value < kLimit};
    if (auto* r = as<VarRef>(e)) {
      auto let = lets_.find(r->var.get());
      if (let != lets_.end()) return linear(let->second);
      return Linear{{{r->var.get(), 1}}, 0};
    }
    if (auto* c = as<Cast>(e)) {
      // Widening int32 -> int64 keeps the value.
      if (c->value->dtype == DType::Int32 && e->dtype == DType::Int64) return linear(c->value);
      return Linear{{}, 0, false};
    }
    auto* b = as<Binary>(e);
    if (!b) return Linear{{}, 0, false};
    int64_t k = 0;
    switch (b->op) {
      case BinaryOp::Add: return linear(b->a).add(linear(b->b), 1);
      case BinaryOp::Sub: return linear(b->a).add(linear(b->b), -1);
      case BinaryOp::Mul:
        if (!constInt(b->b, &k) && !constInt(b->a, &k)) return Linear{{}, 0, false};
        if (k <= -kLimit || k >= kLimit) return Linear{{}, 0, false};
        return Linear{}.add(linear(as<IntImm>(b->b) ? b->a : b->b), k);
      default: return Linear{{}, 0, false};
    }
  }

  // `a - b + 1 <= 0` for a < b, and so on: the comparison as `D <= 0`
  // (negate: its negation).
  std::optional<Linear> asNonPositive(BinaryOp op, const Expr& a, const Expr& b, bool negate) const {
    if (!isIndex(a->dtype) || !isIndex(b->dtype)) return std::nullopt;
    if (negate) {
      switch (op) {
        case BinaryOp::Lt: op = BinaryOp::Ge; break;
        case BinaryOp::Le: op = BinaryOp::Gt; break;
        case BinaryOp::Gt: op = BinaryOp::Le; break;
        case BinaryOp::Ge: op = BinaryOp::Lt; break;
        default: return std::nullopt;
      }
    }
    Linear la = linear(a), lb = linear(b);
    if (!la.ok || !lb.ok) return std::nullopt;
    switch (op) {
      case BinaryOp::Lt: return la.add(lb, -1).add(Linear{{}, 1}, 1);
      case BinaryOp::Le: return la.add(lb, -1);
      case BinaryOp::Gt: return lb.add(la, -1).add(Linear{{}, 1}, 1);
      case BinaryOp::Ge: return lb.add(la, -1);
      default: return std::nullopt;
    }
  }

  void addFacts(const Expr& cond) {
    auto* b = as<Binary>(cond);
    if (!b) return;
    if (b->op == BinaryOp::And) {
      addFacts(b->a);
      addFacts(b->b);
      return;
    }
    if (std::optional<Linear> f = asNonPositive(b->op, b->a, b->b, false)) facts_.push_back(*f);
  }

  // The largest value of `l` over the ranges of its variables.
  std::optional<int64_t> upper(const Linear& l) const {
    int64_t hi = l.constant;
    for (auto& [v, c] : l.terms) {
      auto it = bounds_.find(v);
      if (it == bounds_.end()) return std::nullopt;
      std::optional<int64_t> end = c > 0 ? it->second.hi : it->second.lo;
      if (!end) return std::nullopt;
      hi += c * *end;
    }
    return hi;
  }

  bool provablyNonPositive(const Linear& d) const {
    if (std::optional<int64_t> hi = upper(d); hi && *hi <= 0) return true;
    for (const Linear& f : facts_) {
      Linear rest = d;
      rest.add(f, -1);
      if (std::optional<int64_t> hi = upper(rest); hi && *hi <= 0) return true;
    }
    return false;
  }

  std::optional<bool> decide(const Binary* b) const {
    if (std::optional<Linear> d = asNonPositive(b->op, b->a, b->b, false); d && provablyNonPositive(*d)) return true;
    if (std::optional<Linear> d = asNonPositive(b->op, b->a, b->b, true); d && provablyNonPositive(*d)) return false;
    return std::nullopt;
  }

  std::map<const VarNode*, Bounds> bounds_;
  std::map<const VarNode*, Expr> lets_;
  std::vector<Linear> facts_;
};

}  // namespace

Module foldImpliedConditions(const Module& m) { return mutateBodies<Folder>(m); }

}  // namespace tlc::passes
