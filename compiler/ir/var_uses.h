// Which variables a statement binds, and whether an expression or region
// depends on some of them (or on memory). Used to tell loop-invariant
// addresses from per-iteration ones (pipeline planning, the CUDA backend's
// load-ahead and barrier analyses).
#pragma once

#include <unordered_set>
#include <vector>

#include "compiler/ir/functor.h"

namespace tlc::ir {

// The loop variables and let-bound variables anywhere in a statement.
class BoundVars : public IRVisitor {
 public:
  std::unordered_set<const VarNode*> vars;
  void visitFor(const ForStmt* f) override;
  void visitLet(const LetStmt* l) override;
};

// After visiting: `found` when a visited expression uses one of `vars`,
// `loads` when it reads memory, `loaded` the buffers it reads.
class UsesVars : public IRVisitor {
 public:
  const std::unordered_set<const VarNode*>& vars;
  bool found = false, loads = false;
  std::unordered_set<const BufferNode*> loaded;
  explicit UsesVars(const std::unordered_set<const VarNode*>& v) : vars(v) {}
  void visitVarRef(const VarRef* r) override;
  void visitLoad(const Load* l) override;
  // Whether every load is from a global tensor that `loop` never writes (a
  // table such as a paged cache's block table): its values stay the same
  // through the loop, so an address read from it may be computed any
  // number of iterations ahead, or where it is used.
  bool loadsOnlyTablesOf(const Stmt& loop) const;
};

// Whether `e` uses the variable `v`.
bool usesVar(const Expr& e, const Var& v);
// The conjuncts of a boolean condition (a and b and ...), in order.
void conjuncts(const Expr& e, std::vector<Expr>* out);
// `parts[0] and parts[1] and ...` (left to right; `parts` not empty).
Expr conjunction(const std::vector<Expr>& parts, SourceLoc loc);

}  // namespace tlc::ir
