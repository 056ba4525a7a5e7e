#include "compiler/backends/cpu/next_block_prefetch.h"

#include "compiler/backends/cpu/contiguous_access.h"
#include "compiler/ir/equality.h"
#include "compiler/ir/functor.h"

namespace tlc::cpu {

using namespace ir;

namespace {

bool sameAccess(const Load* a, const Load* b) {
  return a->buffer == b->buffer && structurallyEqual(a->indices, b->indices);
}

}  // namespace

std::vector<const Load*> nextBlockPrefetches(const ForStmt& loop, const std::vector<const VarNode*>& blockVars) {
  struct Scan : IRVisitor {
    std::vector<const Load*> loads;
    bool innermost = true;
    void visitLoad(const Load* l) override {
      loads.push_back(l);
      IRVisitor::visitLoad(l);
    }
    void visitFor(const ForStmt* f) override {
      innermost = false;
      IRVisitor::visitFor(f);
    }
  } scan;
  if (loop.forKind != ForKind::Vectorized) return {};
  scan.visit(loop.body);
  if (!scan.innermost) return {};
  std::vector<const Load*> out;
  for (const Load* l : scan.loads) {
    if (l->buffer->scope != MemScope::Global || !contiguousIn(l->indices, loop.var.get())) continue;
    if (!ownedByBlock(l->indices, blockVars)) continue;
    bool seen = false;
    for (const Load* o : out) seen = seen || sameAccess(o, l);
    if (!seen) out.push_back(l);
  }
  return out;
}

bool ownedByBlock(const std::vector<Expr>& indices, const std::vector<const VarNode*>& blockVars) {
  if (blockVars.empty()) return false;
  for (const VarNode* b : blockVars) {
    bool used = false;
    for (const Expr& i : indices) used = used || usesVar(i, b);
    if (!used) return false;
  }
  return true;
}

}  // namespace tlc::cpu
