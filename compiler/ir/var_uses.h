// Which variables a statement binds, and whether an expression or region
// depends on some of them (or on memory). Used to tell loop-invariant
// addresses from per-iteration ones (pipeline planning, the CUDA backend's
// load-ahead and barrier analyses).
#pragma once

#include <unordered_set>

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
// `loads` when it reads memory.
class UsesVars : public IRVisitor {
 public:
  const std::unordered_set<const VarNode*>& vars;
  bool found = false, loads = false;
  explicit UsesVars(const std::unordered_set<const VarNode*>& v) : vars(v) {}
  void visitVarRef(const VarRef* r) override;
  void visitLoad(const Load* l) override;
};

}  // namespace tlc::ir
