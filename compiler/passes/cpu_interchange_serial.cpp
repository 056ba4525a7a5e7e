#include "compiler/passes/cpu_interchange_serial.h"

#include "compiler/ir/functor.h"
#include "compiler/ir/loop_jumps.h"
#include "compiler/ir/module_rewrite.h"
#include "compiler/ir/var_uses.h"

namespace tlc::cpu {

using namespace ir;

namespace {

class HasAlloc : public IRVisitor {
 public:
  bool found = false;
  void visitAlloc(const AllocStmt*) override { found = true; }
};

// Whether the serial loop `s` may run outside the vector loop over `v`.
bool movable(const ForStmt& s, const VarNode* v) {
  if (s.forKind != ForKind::Serial || jumpsOutOf(s.body)) return false;
  std::unordered_set<const VarNode*> vars{v};
  for (const Expr& e : {s.min, s.extent}) {
    UsesVars uses(vars);
    uses.visit(e);
    if (uses.found || uses.loads) return false;
  }
  HasAlloc alloc;
  alloc.visit(s.body);
  return !alloc.found;
}

class Interchange : public IRMutator {
 protected:
  Stmt mutateFor(const ForStmt* node, const Stmt& self) override {
    Stmt body = mutate(node->body);
    if (node->forKind == ForKind::Vectorized)
      if (auto out = distribute(*node, body)) return *out;
    if (body == node->body) return self;
    auto f = std::make_shared<ForStmt>(node->var, node->min, node->extent, node->forKind, body, node->loc);
    f->copyLoopAttributes(*node);
    return f;
  }

 private:
  // The vector loop `loop` with body `body` distributed over the statements
  // of the body, serial loops moved out; nullopt when nothing moves.
  std::optional<Stmt> distribute(const ForStmt& loop, const Stmt& body) {
    std::vector<Stmt> stmts = seqStmts(body);
    bool any = false;
    for (const Stmt& s : stmts) {
      if (auto* f = as<ForStmt>(s)) any |= movable(*f, loop.var.get());
      // A buffer allocated per iteration (a running sum's variable) is one per
      // iteration: distributed, its uses would leave its scope.
      if (s->kind == StmtKind::Alloc) return std::nullopt;
    }
    if (!any || jumpsOutOf(body)) return std::nullopt;
    std::vector<Stmt> out;
    for (const Stmt& s : stmts) {
      auto vectorLoop = [&](const Stmt& b) {
        return std::make_shared<const ForStmt>(loop.var, loop.min, loop.extent, ForKind::Vectorized, b, loop.loc);
      };
      auto* f = as<ForStmt>(s);
      if (!f || !movable(*f, loop.var.get())) {
        out.push_back(vectorLoop(s));
        continue;
      }
      // The vector loop inside the serial one, itself distributed again.
      auto inner = vectorLoop(f->body);
      Stmt innerDone = distribute(*inner, f->body).value_or(inner);
      out.push_back(std::make_shared<const ForStmt>(f->var, f->min, f->extent, ForKind::Serial, innerDone, f->loc));
    }
    return makeSeq(std::move(out), loop.loc);
  }
};

}  // namespace

Module interchangeSerialLoops(const Module& m) { return mutateBodies<Interchange>(m); }

}  // namespace tlc::cpu
