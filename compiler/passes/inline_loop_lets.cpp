#include "compiler/passes/inline_loop_lets.h"

#include "compiler/ir/functor.h"
#include "compiler/ir/module_rewrite.h"
#include "compiler/ir/substitute.h"
#include "compiler/ir/var_uses.h"

namespace tlc::passes {

using namespace ir;

namespace {

// Whether `e` has the same value wherever it is evaluated in an iteration
// of `loop`: no target intrinsics ("<target>.<name>"; the math builtins are
// pure), and loads only from tables, global tensors the loop never writes.
bool invariantInIteration(const Expr& e, const ForStmt* loop) {
  struct Finder : UsesVars {
    using UsesVars::UsesVars;
    bool effects = false;
    void visitCall(const Call* c) override {
      effects |= c->callee.find('.') != std::string::npos;
      UsesVars::visitCall(c);
    }
  };
  static const std::unordered_set<const VarNode*> none;
  Finder f(none);
  f.visit(e);
  return !f.effects && f.loadsOnlyTablesOf(loop->body);
}

// The statements of `s` as a flat sequence, with the lets among them that
// are invariant in an iteration of `loop` substituted into what they bind;
// true when there was such a let.
bool flatten(const Stmt& s, const ForStmt* loop, const VarMap& bound, std::vector<Stmt>* out) {
  if (auto* seq = as<SeqStmt>(s)) {
    bool inlined = false;
    for (const Stmt& x : seq->stmts) inlined |= flatten(x, loop, bound, out);
    return inlined;
  }
  if (auto* let = as<LetStmt>(s)) {
    Expr value = substitute(let->value, bound);
    if (invariantInIteration(value, loop)) {
      VarMap inner = bound;
      inner[let->var.get()] = value;
      flatten(let->body, loop, inner, out);
      return true;
    }
  }
  out->push_back(bound.empty() ? s : substitute(s, bound));
  return false;
}

class Inliner : public IRMutator {
 protected:
  Stmt mutateFor(const ForStmt* n, const Stmt& self) override {
    Stmt s = IRMutator::mutateFor(n, self);
    auto* f = as<ForStmt>(s);
    if (f->forKind != ForKind::Pipelined) return s;
    std::vector<Stmt> stmts;
    if (!flatten(f->body, f, {}, &stmts)) return s;
    auto out = std::make_shared<ForStmt>(*f);
    out->body = makeSeq(std::move(stmts), f->body->loc);
    return out;
  }
};

}  // namespace

Module inlineLoopLets(const Module& m, PassContext&) { return mutateBodies<Inliner>(m); }

}  // namespace tlc::passes
