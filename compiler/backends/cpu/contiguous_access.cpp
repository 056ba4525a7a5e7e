#include "compiler/backends/cpu/contiguous_access.h"

#include "compiler/ir/functor.h"

namespace tlc::cpu {

using namespace ir;

bool usesVar(const Expr& e, const VarNode* v) {
  struct Finder : IRVisitor {
    const VarNode* var = nullptr;
    bool found = false;
    void visitVarRef(const VarRef* r) override { found |= r->var.get() == var; }
  } f;
  f.var = v;
  f.visit(e);
  return f.found;
}

static bool isVar(const Expr& e, const VarNode* v) {
  auto* r = as<VarRef>(e);
  return r && r->var.get() == v;
}

bool contiguousIn(const std::vector<Expr>& indices, const VarNode* v) {
  if (indices.empty()) return false;
  for (size_t d = 0; d + 1 < indices.size(); ++d)
    if (usesVar(indices[d], v)) return false;
  const Expr& last = indices.back();
  if (isVar(last, v)) return true;
  auto* add = as<Binary>(last);
  if (!add || add->op != BinaryOp::Add) return false;
  return (isVar(add->b, v) && !usesVar(add->a, v)) || (isVar(add->a, v) && !usesVar(add->b, v));
}

}  // namespace tlc::cpu
