#include "compiler/ir/substitute.h"

#include "compiler/ir/functor.h"

namespace tlc::ir {

namespace {

class Substituter : public IRMutator {
 public:
  explicit Substituter(const VarMap& map, BufferMap buffers = {}) : map_(map), buffers_(std::move(buffers)) {}

 protected:
  Expr mutateVarRef(const VarRef* n, const Expr& self) override {
    auto it = map_.find(n->var.get());
    if (it == map_.end() || shadowed(n->var.get())) return self;
    return it->second;
  }

  Expr mutateLoad(const Load* n, const Expr& self) override {
    std::vector<Expr> idx;
    bool changed = mutateExprs(n->indices, idx);
    Buffer b = buffer(n->buffer);
    if (!changed && b == n->buffer) return self;
    return makeLoad(b, std::move(idx), n->loc);
  }

  Stmt mutateKernel(const KernelStmt* n, const Stmt& self) override {
    for (const Var& v : n->blockVars) shadow_.push_back(v.get());
    Stmt out = IRMutator::mutateKernel(n, self);
    shadow_.resize(shadow_.size() - n->blockVars.size());
    return out;
  }

  Stmt mutateFor(const ForStmt* n, const Stmt& self) override {
    Expr mn = mutate(n->min), ext = mutate(n->extent);
    shadow_.push_back(n->var.get());
    Stmt body = mutate(n->body);
    shadow_.pop_back();
    if (mn == n->min && ext == n->extent && body == n->body) return self;
    auto f = std::make_shared<ForStmt>(n->var, mn, ext, n->forKind, body, n->loc);
    f->copyLoopAttributes(*n);
    return f;
  }

  Stmt mutateLet(const LetStmt* n, const Stmt& self) override {
    Expr v = mutate(n->value);
    shadow_.push_back(n->var.get());
    Stmt body = mutate(n->body);
    shadow_.pop_back();
    if (v == n->value && body == n->body) return self;
    return std::make_shared<const LetStmt>(n->var, v, body, n->loc);
  }

  Stmt mutateAlloc(const AllocStmt* n, const Stmt& self) override {
    if (auto it = buffers_.find(n->buffer.get()); it != buffers_.end())
      return std::make_shared<const AllocStmt>(it->second, n->loc, n->versions, n->arrivals);
    std::vector<Expr> shape;
    if (!mutateExprs(n->buffer->shape, shape)) return self;
    const BufferNode& old = *n->buffer;
    Buffer b = makeBuffer(old.name, old.dtype, std::move(shape), old.scope, old.loc);
    buffers_[n->buffer.get()] = b;
    return std::make_shared<const AllocStmt>(b, n->loc, n->versions, n->arrivals);
  }

  Stmt mutateStore(const StoreStmt* n, const Stmt& self) override {
    std::vector<Expr> idx;
    bool changed = mutateExprs(n->indices, idx);
    Expr v = mutate(n->value);
    Buffer b = buffer(n->buffer);
    if (!changed && v == n->value && b == n->buffer) return self;
    return std::make_shared<const StoreStmt>(b, std::move(idx), v, n->loc);
  }

  Stmt mutateAtomic(const AtomicStmt* n, const Stmt& self) override {
    std::vector<Expr> idx, prevIdx;
    bool changed = mutateExprs(n->indices, idx);
    Expr v = mutate(n->value);
    changed |= mutateExprs(n->prevIndices, prevIdx);
    Buffer b = buffer(n->buffer), prev = n->prev ? buffer(n->prev) : nullptr;
    if (!changed && v == n->value && b == n->buffer && prev == n->prev) return self;
    return std::make_shared<const AtomicStmt>(n->atomicKind, b, std::move(idx), v, n->loc, prev, std::move(prevIdx));
  }

  Stmt mutatePrint(const PrintStmt* n, const Stmt& self) override {
    Stmt out = IRMutator::mutatePrint(n, self);
    Buffer b = buffer(n->buffer);
    if (b == n->buffer) return out;
    auto p = std::make_shared<PrintStmt>(*as<PrintStmt>(out));
    p->buffer = b;
    return p;
  }

  Stmt mutateVersion(const VersionStmt* n, const Stmt& self) override {
    Stmt out = IRMutator::mutateVersion(n, self);
    std::vector<Buffer> bufs;
    bool changed = false;
    for (const Buffer& b : n->buffers) {
      bufs.push_back(buffer(b));
      changed |= bufs.back() != b;
    }
    if (!changed) return out;
    auto* v = as<VersionStmt>(out);
    return std::make_shared<const VersionStmt>(std::move(bufs), v->version, v->body, v->loc);
  }

  Stmt mutateCopy(const CopyStmt* n, const Stmt& self) override {
    Region s = region(n->src), d = region(n->dst);
    BarrierRef bar = barrier(n->barrier);
    Expr used = n->usedWhen ? mutate(n->usedWhen) : nullptr;
    if (same(s, n->src) && same(d, n->dst) && same(bar, n->barrier) && used == n->usedWhen) return self;
    return std::make_shared<const CopyStmt>(s, d, n->loc, n->async, bar, used);
  }
  Stmt mutateGemm(const GemmStmt* n, const Stmt& self) override {
    Region a = region(n->a), b = region(n->b), c = region(n->c);
    if (same(a, n->a) && same(b, n->b) && same(c, n->c)) return self;
    return std::make_shared<const GemmStmt>(a, b, c, n->transA, n->transB, n->clearAccum, n->loc);
  }
  Stmt mutateFill(const FillStmt* n, const Stmt& self) override {
    Region d = region(n->dst);
    Expr v = mutate(n->value);
    if (same(d, n->dst) && v == n->value) return self;
    return std::make_shared<const FillStmt>(d, v, n->loc);
  }
  Stmt mutateReduce(const ReduceStmt* n, const Stmt& self) override {
    Region s = region(n->src), d = region(n->dst);
    if (same(s, n->src) && same(d, n->dst)) return self;
    return std::make_shared<const ReduceStmt>(n->reduceKind, s, d, n->dim, n->clear, n->loc);
  }
  Stmt mutateBarrierArrive(const BarrierArriveStmt* n, const Stmt& self) override {
    BarrierRef bar = barrier(n->barrier);
    Expr bytes = n->expectBytes ? mutate(n->expectBytes) : nullptr;
    if (same(bar, n->barrier) && bytes == n->expectBytes) return self;
    return std::make_shared<const BarrierArriveStmt>(bar, bytes, n->loc);
  }
  Stmt mutateBarrierWait(const BarrierWaitStmt* n, const Stmt& self) override {
    BarrierRef bar = barrier(n->barrier);
    Expr parity = mutate(n->parity);
    if (same(bar, n->barrier) && parity == n->parity) return self;
    return std::make_shared<const BarrierWaitStmt>(bar, parity, n->loc);
  }
  Stmt mutateAnnotateLayout(const AnnotateLayoutStmt* n, const Stmt& self) override {
    Buffer b = buffer(n->buffer);
    if (b == n->buffer) return self;
    return std::make_shared<const AnnotateLayoutStmt>(b, n->layout, n->loc);
  }

 private:
  const VarMap& map_;
  std::vector<const VarNode*> shadow_;
  BufferMap buffers_;

  bool shadowed(const VarNode* v) const {
    for (const VarNode* s : shadow_)
      if (s == v) return true;
    return false;
  }
  Buffer buffer(const Buffer& b) const {
    auto it = buffers_.find(b.get());
    return it == buffers_.end() ? b : it->second;
  }
  Region region(const Region& r) {
    Region out = mutateRegion(r);
    out.buffer = buffer(r.buffer);
    return out;
  }
  BarrierRef barrier(const BarrierRef& b) {
    if (!b) return b;
    return {buffer(b.buffer), mutate(b.index)};
  }
  static bool same(const BarrierRef& a, const BarrierRef& b) { return a.buffer == b.buffer && a.index == b.index; }
  static bool same(const Region& a, const Region& b) {
    if (a.buffer != b.buffer || a.ranges.size() != b.ranges.size()) return false;
    for (size_t i = 0; i < a.ranges.size(); ++i)
      if (a.ranges[i].min != b.ranges[i].min || a.ranges[i].extent != b.ranges[i].extent) return false;
    return true;
  }
};

}  // namespace

Expr substitute(const Expr& e, const VarMap& map) {
  if (map.empty()) return e;
  Substituter s(map);
  return s.mutate(e);
}

Stmt substitute(const Stmt& s, const VarMap& map) {
  if (map.empty()) return s;
  Substituter sub(map);
  return sub.mutate(s);
}

Stmt substitute(const Stmt& s, const VarMap& map, const BufferMap& buffers) {
  if (map.empty() && buffers.empty()) return s;
  Substituter sub(map, buffers);
  return sub.mutate(s);
}

Expr substitute(const Expr& e, const Var& var, const Expr& value) { return substitute(e, VarMap{{var.get(), value}}); }

Stmt substitute(const Stmt& s, const Var& var, const Expr& value) { return substitute(s, VarMap{{var.get(), value}}); }

}  // namespace tlc::ir
