#include "compiler/ir/var_uses.h"

namespace tlc::ir {

void BoundVars::visitFor(const ForStmt* f) {
  vars.insert(f->var.get());
  IRVisitor::visitFor(f);
}

void BoundVars::visitLet(const LetStmt* l) {
  vars.insert(l->var.get());
  IRVisitor::visitLet(l);
}

void UsesVars::visitVarRef(const VarRef* r) { found |= vars.count(r->var.get()) > 0; }

void UsesVars::visitLoad(const Load* l) {
  loads = true;
  IRVisitor::visitLoad(l);
}

}  // namespace tlc::ir
