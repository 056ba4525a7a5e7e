#include "compiler/backends/cpu/streaming_stores.h"

#include "compiler/ir/functor.h"

namespace tlc::cpu {

using namespace ir;

namespace {

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

bool isVar(const Expr& e, const VarNode* v) {
  auto* r = as<VarRef>(e);
  return r && r->var.get() == v;
}

// `v` or `x + v` / `v + x` with x free of v: consecutive iterations write
// consecutive elements.
bool contiguousIn(const Expr& index, const VarNode* v) {
  if (isVar(index, v)) return true;
  auto* add = as<Binary>(index);
  if (!add || add->op != BinaryOp::Add) return false;
  return (isVar(add->b, v) && !usesVar(add->a, v)) || (isVar(add->a, v) && !usesVar(add->b, v));
}

}  // namespace

BufferSet writeOnlyTensors(const PrimFunc& f) {
  struct LoadedBuffers : IRVisitor {
    BufferSet loaded;
    void visitLoad(const Load* l) override {
      loaded.insert(l->buffer.get());
      IRVisitor::visitLoad(l);
    }
  } scan;
  scan.visit(f.body);
  BufferSet out;
  for (const Param& p : f.params)
    if (p.buffer && !scan.loaded.count(p.buffer.get())) out.insert(p.buffer.get());
  return out;
}

const StoreStmt* streamableStore(const ForStmt& loop, const BufferSet& writeOnly) {
  if (loop.forKind != ForKind::Vectorized) return nullptr;
  auto* store = as<StoreStmt>(loop.body);
  if (!store || store->buffer->scope != MemScope::Global || !writeOnly.count(store->buffer.get())) return nullptr;
  int bytes = dtypeBytes(store->buffer->dtype);
  if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8) return nullptr;
  if (store->indices.empty()) return nullptr;
  const VarNode* v = loop.var.get();
  for (size_t d = 0; d + 1 < store->indices.size(); ++d)
    if (usesVar(store->indices[d], v)) return nullptr;
  return contiguousIn(store->indices.back(), v) ? store : nullptr;
}

}  // namespace tlc::cpu
