#include "compiler/ir/var_uses.h"

#include "compiler/ir/buffer_writes.h"

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
  loaded.insert(l->buffer.get());
  IRVisitor::visitLoad(l);
}

bool UsesVars::loadsOnlyTablesOf(const Stmt& loop) const {
  if (loaded.empty()) return true;
  BufferWrites writes = collectBufferWrites(loop);
  for (const BufferNode* b : loaded)
    if (b->scope != MemScope::Global || writes.buffers.count(b)) return false;
  return true;
}

bool usesVar(const Expr& e, const Var& v) {
  std::unordered_set<const VarNode*> vars{v.get()};
  UsesVars u(vars);
  u.visit(e);
  return u.found;
}

void conjuncts(const Expr& e, std::vector<Expr>* out) {
  auto* b = as<Binary>(e);
  if (b && b->op == BinaryOp::And && b->dtype == DType::Bool) {
    conjuncts(b->a, out);
    conjuncts(b->b, out);
    return;
  }
  out->push_back(e);
}

Expr conjunction(const std::vector<Expr>& parts, SourceLoc loc) {
  Expr cond = parts.at(0);
  for (size_t k = 1; k < parts.size(); ++k) cond = makeBinary(BinaryOp::And, cond, parts[k], loc);
  return cond;
}

}  // namespace tlc::ir
