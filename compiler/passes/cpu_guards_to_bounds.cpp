#include "compiler/passes/cpu_guards_to_bounds.h"

#include <unordered_set>

#include "compiler/ir/functor.h"
#include "compiler/ir/module_rewrite.h"
#include "compiler/ir/substitute.h"
#include "compiler/ir/var_uses.h"
#include "compiler/passes/cpu_loop_builder.h"

namespace tlc::cpu {

using namespace ir;

namespace {

using VarSet = std::unordered_set<const VarNode*>;
using BufSet = std::unordered_set<const BufferNode*>;

bool usesAny(const Expr& e, const VarSet& vars) {
  struct Finder : IRVisitor {
    const VarSet* vars = nullptr;
    bool found = false;
    void visitVarRef(const VarRef* r) override { found |= vars->count(r->var.get()) > 0; }
  } f;
  f.vars = &vars;
  f.visit(e);
  return f.found;
}

// What evaluating an expression early could do: read memory (which buffers),
// or trap (an integer division by a non-constant).
struct Effects : IRVisitor {
  BufSet loaded;
  bool mayTrap = false;
  void visitLoad(const Load* l) override {
    loaded.insert(l->buffer.get());
    IRVisitor::visitLoad(l);
  }
  void visitBinary(const Binary* b) override {
    bool division = b->op == BinaryOp::Div || b->op == BinaryOp::FloorDiv || b->op == BinaryOp::FloorMod;
    int64_t c = 0;
    if (division && !isFloat(b->dtype) && !(constInt(b->b, &c) && c != 0)) mayTrap = true;
    IRVisitor::visitBinary(b);
  }
  bool speculatable() const { return loaded.empty() && !mayTrap; }
};

Effects effectsOf(const Expr& e) {
  Effects fx;
  fx.visit(e);
  return fx;
}

// Buffers a statement writes (stores, and the operands of intrinsics such as
// atomics), and whether it leaves its loop early.
struct Writes : IRVisitor {
  BufSet written;
  bool jumps = false;
  void visitStore(const StoreStmt* s) override {
    written.insert(s->buffer.get());
    IRVisitor::visitStore(s);
  }
  void visitEvaluate(const EvaluateStmt* s) override {
    Effects fx = effectsOf(s->value);
    written.insert(fx.loaded.begin(), fx.loaded.end());
    IRVisitor::visitEvaluate(s);
  }
  void visitBreak(const BreakStmt*) override { jumps = true; }
  void visitContinue(const ContinueStmt*) override { jumps = true; }
};

class GuardMover {
 public:
  explicit GuardMover(const ForStmt* f) : f_(f), v_(f->var) { variant_.insert(v_.get()); }

  // The rewritten loop, or null when nothing moves.
  Stmt run() {
    Writes w;
    w.visit(f_->body);
    if (w.jumps) return nullptr;
    written_ = w.written;
    Stmt body = peel(f_->body);
    if (items_.empty()) return nullptr;
    for (auto it = kept_.rbegin(); it != kept_.rend(); ++it)
      body = it->var ? Stmt(std::make_shared<const LetStmt>(it->var, it->e, body, it->loc))
                     : Stmt(std::make_shared<const IfStmt>(it->e, body, nullptr, it->loc));
    return emit(body);
  }

 private:
  struct Item {
    enum Kind { Cond, Let, Lower, Upper } kind;
    Expr e;
    Var var;  // Let
    SourceLoc loc;
  };
  struct Kept {
    Var var;  // null: an if
    Expr e;
    SourceLoc loc;
  };

  Stmt peel(Stmt body) {
    for (;;) {
      if (auto* seq = as<SeqStmt>(body); seq && seq->stmts.size() == 1) {
        body = seq->stmts[0];
      } else if (auto* l = as<LetStmt>(body)) {
        Effects fx = effectsOf(l->value);
        bool readsWritten = false;
        for (const BufferNode* b : fx.loaded) readsWritten |= written_.count(b) > 0;
        if (!usesAny(l->value, variant_) && !readsWritten && (!guardedByKept_ || fx.speculatable())) {
          items_.push_back({Item::Let, l->value, l->var, l->loc});
        } else {
          kept_.push_back({l->var, l->value, l->loc});
          variant_.insert(l->var.get());
          inline_[l->var.get()] = substitute(l->value, inline_);
        }
        body = l->body;
      } else if (auto* i = as<IfStmt>(body); i && !i->elseBody) {
        std::vector<Expr> parts, rest;
        conjuncts(i->cond, &parts);
        for (const Expr& p : parts) {
          bool mayMove = (!guardedByKept_ && rest.empty()) || effectsOf(p).speculatable();
          if (mayMove && !usesAny(p, variant_))
            items_.push_back({Item::Cond, p, nullptr, i->loc});
          else if (!(mayMove && bound(p, i->loc)))
            rest.push_back(p);
        }
        if (!rest.empty()) {
          kept_.push_back({nullptr, conjunction(rest, i->loc), i->loc});
          guardedByKept_ = true;
        }
        body = i->thenBody;
      } else {
        return body;
      }
    }
  }

  bool invariant(const Expr& e) const { return !usesAny(e, variant_); }

  // `off` with e = off + v, off free of the loop's variant values; null if none.
  Expr offset(const Expr& e) const {
    if (auto* r = as<VarRef>(e); r && r->var == v_) return makeInt(0, v_->dtype);
    auto* b = as<Binary>(e);
    if (!b || (b->op != BinaryOp::Add && b->op != BinaryOp::Sub)) return nullptr;
    if (Expr a = offset(b->a); a && invariant(b->b)) return b->op == BinaryOp::Add ? add(a, b->b) : sub(a, b->b);
    if (b->op == BinaryOp::Add && invariant(b->a))
      if (Expr o = offset(b->b)) return add(b->a, o);
    return nullptr;
  }

  // A part `A + v < B` (or <=, >, >=, either side) as a bound of v.
  bool bound(const Expr& part, SourceLoc loc) {
    auto* c = as<Binary>(part);
    if (!c || !(c->op == BinaryOp::Lt || c->op == BinaryOp::Le || c->op == BinaryOp::Gt || c->op == BinaryOp::Ge))
      return false;
    if (!isInteger(c->a->dtype) || !isSigned(c->a->dtype) || !isSigned(c->b->dtype)) return false;
    Expr a = substitute(c->a, inline_), b = substitute(c->b, inline_);
    bool less = c->op == BinaryOp::Lt || c->op == BinaryOp::Le;  // left side is the smaller one
    bool strict = c->op == BinaryOp::Lt || c->op == BinaryOp::Gt;
    Expr small = less ? a : b, large = less ? b : a;
    Expr one = makeInt(1, v_->dtype);
    if (Expr o = offset(small); o && invariant(large)) {  // o + v < large: v < large - o (+1 when <=)
      Expr hi = sub(large, o);
      items_.push_back({Item::Upper, strict ? hi : add(hi, one), nullptr, loc});
      return true;
    }
    if (Expr o = offset(large); o && invariant(small)) {  // small < o + v: v >= small - o (+1 when <)
      Expr lo = sub(small, o);
      items_.push_back({Item::Lower, strict ? add(lo, one) : lo, nullptr, loc});
      return true;
    }
    return false;
  }

  Expr ofLoopType(const Expr& e) const { return e->dtype == v_->dtype ? e : makeCast(v_->dtype, e, f_->loc); }

  Stmt emit(const Stmt& body) const {
    // Outer statements, outermost first: an if (cond), a let (var, value), or
    // an if (lo < hi) before a let that must not run on an empty range.
    std::vector<Item> outer;
    Expr lo = f_->min, hi = add(f_->min, f_->extent);
    bool narrowed = false;
    for (const Item& it : items_) {
      switch (it.kind) {
        case Item::Cond: outer.push_back(it); break;
        case Item::Let:
          if (narrowed && !effectsOf(it.e).speculatable())
            outer.push_back({Item::Cond, makeBinary(BinaryOp::Lt, lo, hi, it.loc), nullptr, it.loc});
          outer.push_back(it);
          break;
        case Item::Lower: lo = maxExpr(lo, it.e), narrowed = true; break;
        case Item::Upper: hi = minExpr(hi, it.e), narrowed = true; break;
      }
    }
    // Bounds in the wider of their types; the loop's are within the original
    // range (or the loop is empty), so they fit the variable's type.
    Expr start = narrowed ? ofLoopType(minExpr(lo, add(f_->min, f_->extent))) : f_->min;
    Expr extent = narrowed ? ofLoopType(maxExpr(sub(hi, lo), makeInt(0, lo->dtype))) : f_->extent;
    Stmt s = makeFor(v_, start, extent, ForKind::Vectorized, body, f_->loc);
    for (auto it = outer.rbegin(); it != outer.rend(); ++it)
      s = it->kind == Item::Let ? Stmt(std::make_shared<const LetStmt>(it->var, it->e, s, it->loc))
                                : Stmt(std::make_shared<const IfStmt>(it->e, s, nullptr, it->loc));
    return s;
  }

  const ForStmt* f_;
  Var v_;
  VarSet variant_;         // the loop variable and the lets kept in the body
  VarMap inline_;          // kept lets -> their values (in terms of v)
  BufSet written_;
  bool guardedByKept_ = false;
  std::vector<Item> items_;
  std::vector<Kept> kept_;
};

class GuardsToBounds : public IRMutator {
 protected:
  Stmt mutateFor(const ForStmt* node, const Stmt& self) override {
    Stmt out = IRMutator::mutateFor(node, self);
    auto* f = as<ForStmt>(out);
    if (!f || f->forKind != ForKind::Vectorized) return out;
    Stmt moved = GuardMover(f).run();
    return moved ? moved : out;
  }
};

}  // namespace

Module moveGuardsToBounds(const Module& m) { return mutateBodies<GuardsToBounds>(m); }

}  // namespace tlc::cpu
