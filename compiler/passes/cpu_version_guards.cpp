#include "compiler/passes/cpu_version_guards.h"

#include <unordered_map>

#include "compiler/ir/functor.h"
#include "compiler/ir/module_rewrite.h"
#include "compiler/ir/substitute.h"
#include "compiler/ir/var_uses.h"

namespace tlc::cpu {

using namespace ir;

namespace {

// A loop variable of the nest and its constant range [lo, hi].
struct NestVar {
  const VarNode* var;
  int64_t lo, hi;
};

// Whether `e` reads memory, divides by a non-constant, or uses a variable of
// `vars`.
bool unsafeOrUses(const Expr& e, const std::unordered_map<const VarNode*, NestVar>& vars) {
  struct Finder : IRVisitor {
    const std::unordered_map<const VarNode*, NestVar>* vars = nullptr;
    bool found = false;
    void visitVarRef(const VarRef* r) override { found |= vars->count(r->var.get()) > 0; }
    void visitLoad(const Load*) override { found = true; }
    void visitCall(const Call*) override { found = true; }
    void visitBinary(const Binary* b) override {
      bool division = b->op == BinaryOp::Div || b->op == BinaryOp::FloorDiv || b->op == BinaryOp::FloorMod;
      int64_t c = 0;
      if (division && !(constInt(b->b, &c) && c != 0)) found = true;
      IRVisitor::visitBinary(b);
    }
  } f;
  f.vars = &vars;
  f.visit(e);
  return f.found;
}

class Versioner : public IRMutator {
 protected:
  Stmt mutateFor(const ForStmt* n, const Stmt& self) override {
    if (n->forKind != ForKind::Parallel) return IRMutator::mutateFor(n, self);
    Stmt v = version(n, self);
    return v ? v : self;
  }

 private:
  // The nest at `top` with a fast version, or null.
  static Stmt version(const ForStmt* top, const Stmt& original) {
    std::unordered_map<const VarNode*, NestVar> vars;
    std::vector<const ForStmt*> loops;
    const ForStmt* f = top;
    for (;;) {
      int64_t lo = 0, ext = 0;
      if (!constInt(f->min, &lo) || !constInt(f->extent, &ext) || ext <= 0) return nullptr;
      vars[f->var.get()] = {f->var.get(), lo, lo + ext - 1};
      loops.push_back(f);
      Stmt inner = f->body;
      if (auto* seq = as<SeqStmt>(inner); seq && seq->stmts.size() == 1) inner = seq->stmts[0];
      auto* next = as<ForStmt>(inner);
      if (!next || next->forKind != ForKind::Parallel) break;
      f = next;
    }
    // Lets, then the guard.
    VarMap lets;
    std::vector<const LetStmt*> letChain;
    Stmt inner = loops.back()->body;
    for (;;) {
      if (auto* seq = as<SeqStmt>(inner); seq && seq->stmts.size() == 1) {
        inner = seq->stmts[0];
      } else if (auto* l = as<LetStmt>(inner)) {
        lets[l->var.get()] = substitute(l->value, lets);
        letChain.push_back(l);
        inner = l->body;
      } else {
        break;
      }
    }
    auto* guard = as<IfStmt>(inner);
    if (!guard || guard->elseBody) return nullptr;
    std::vector<Expr> parts, kept, tests;
    conjuncts(guard->cond, &parts);
    for (const Expr& p : parts) {
      Expr test = atRangeEnd(substitute(p, lets), vars);
      (test ? tests : kept).push_back(test ? test : p);
    }
    if (tests.empty()) return nullptr;

    // The fast nest: the guard without the parts the test covers.
    Stmt fastBody = guard->thenBody;
    if (!kept.empty())
      fastBody = std::make_shared<const IfStmt>(conjunction(kept, guard->loc), fastBody, nullptr, guard->loc);
    for (auto it = letChain.rbegin(); it != letChain.rend(); ++it)
      fastBody = std::make_shared<const LetStmt>((*it)->var, (*it)->value, fastBody, (*it)->loc);
    for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
      auto loop = std::make_shared<ForStmt>((*it)->var, (*it)->min, (*it)->extent, (*it)->forKind, fastBody, (*it)->loc);
      loop->copyLoopAttributes(**it);
      fastBody = loop;
    }
    // The original nest, shared (IR nodes are immutable), is the else branch.
    return std::make_shared<const IfStmt>(conjunction(tests, guard->loc), fastBody, original, top->loc,
                                          /*likely=*/true);
  }

  // `part` (A + v < B, or <=, >, >=, either side) evaluated at the end of
  // v's range where it is hardest to satisfy, or null when `part` is not of
  // that form.
  static Expr atRangeEnd(const Expr& part, const std::unordered_map<const VarNode*, NestVar>& vars) {
    auto* c = as<Binary>(part);
    if (!c || !(c->op == BinaryOp::Lt || c->op == BinaryOp::Le || c->op == BinaryOp::Gt || c->op == BinaryOp::Ge))
      return nullptr;
    if (!isInteger(c->a->dtype) || !isSigned(c->a->dtype) || !isSigned(c->b->dtype)) return nullptr;
    bool less = c->op == BinaryOp::Lt || c->op == BinaryOp::Le;
    const Expr& small = less ? c->a : c->b;
    const Expr& large = less ? c->b : c->a;
    for (const Expr* side : {&small, &large}) {
      const NestVar* v = plusVar(*side, vars);
      const Expr& other = side == &small ? large : small;
      if (!v || unsafeOrUses(other, vars)) continue;
      // v on the small side: the test is hardest at v's last value; on the
      // large side, at its first.
      int64_t end = side == &small ? v->hi : v->lo;
      VarMap at;
      at[v->var] = makeInt(end, v->var->dtype, part->loc);
      return substitute(part, at);
    }
    return nullptr;
  }

  // The variable v of `e` = A + v (A free of the nest's variables, of loads
  // and of divisions by variables), or null.
  static const NestVar* plusVar(const Expr& e, const std::unordered_map<const VarNode*, NestVar>& vars) {
    if (auto* r = as<VarRef>(e)) {
      auto it = vars.find(r->var.get());
      return it == vars.end() ? nullptr : &it->second;
    }
    auto* b = as<Binary>(e);
    if (!b || (b->op != BinaryOp::Add && b->op != BinaryOp::Sub)) return nullptr;
    if (const NestVar* v = plusVar(b->a, vars); v && !unsafeOrUses(b->b, vars)) return v;
    if (b->op == BinaryOp::Add)
      if (const NestVar* v = plusVar(b->b, vars); v && !unsafeOrUses(b->a, vars)) return v;
    return nullptr;
  }

};

}  // namespace

Module versionGuardedNests(const Module& m) { return mutateBodies<Versioner>(m); }

}  // namespace tlc::cpu
