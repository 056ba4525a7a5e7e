#include "compiler/ir/functor.h"

namespace tlc::ir {

// ---------------------------------------------------------------- visitor

void IRVisitor::visit(const Expr& e) {
  if (!e) return;
  switch (e->kind) {
#define EXPR(Name)                                       \
  case ExprKind::Name:                                   \
    visit##Name(static_cast<const Name*>(e.get()));      \
    return;
#include "compiler/ir/node_kinds.def"
  }
}

void IRVisitor::visit(const Stmt& s) {
  if (!s) return;
  switch (s->kind) {
#define STMT(Name)                                              \
  case StmtKind::Name:                                          \
    visit##Name(static_cast<const Name##Stmt*>(s.get()));       \
    return;
#include "compiler/ir/node_kinds.def"
  }
}

void IRVisitor::visitRegion(const Region& r) {
  for (const Range& rg : r.ranges) {
    visit(rg.min);
    visit(rg.extent);
  }
}

void IRVisitor::visitIntImm(const IntImm*) {}
void IRVisitor::visitFloatImm(const FloatImm*) {}
void IRVisitor::visitVarRef(const VarRef*) {}
void IRVisitor::visitBinary(const Binary* n) {
  visit(n->a);
  visit(n->b);
}
void IRVisitor::visitUnary(const Unary* n) { visit(n->a); }
void IRVisitor::visitCast(const Cast* n) { visit(n->value); }
void IRVisitor::visitSelect(const Select* n) {
  visit(n->cond);
  visit(n->t);
  visit(n->f);
}
void IRVisitor::visitCall(const Call* n) {
  for (const Expr& a : n->args) visit(a);
}
void IRVisitor::visitLoad(const Load* n) {
  for (const Expr& i : n->indices) visit(i);
}
void IRVisitor::visitSeq(const SeqStmt* n) {
  for (const Stmt& s : n->stmts) visit(s);
}
void IRVisitor::visitKernel(const KernelStmt* n) {
  for (const Expr& g : n->grid) visit(g);
  visit(n->body);
}
void IRVisitor::visitAlloc(const AllocStmt*) {}
void IRVisitor::visitFor(const ForStmt* n) {
  visit(n->min);
  visit(n->extent);
  visit(n->body);
}
void IRVisitor::visitIf(const IfStmt* n) {
  visit(n->cond);
  visit(n->thenBody);
  visit(n->elseBody);
}
void IRVisitor::visitStore(const StoreStmt* n) {
  for (const Expr& i : n->indices) visit(i);
  visit(n->value);
}
void IRVisitor::visitLet(const LetStmt* n) {
  visit(n->value);
  visit(n->body);
}
void IRVisitor::visitEvaluate(const EvaluateStmt* n) { visit(n->value); }
void IRVisitor::visitCopy(const CopyStmt* n) {
  visitRegion(n->src);
  visitRegion(n->dst);
  if (n->barrier) visit(n->barrier.index);
  if (n->usedWhen) visit(n->usedWhen);
}
void IRVisitor::visitGemm(const GemmStmt* n) {
  visitRegion(n->a);
  visitRegion(n->b);
  visitRegion(n->c);
}
void IRVisitor::visitFill(const FillStmt* n) {
  visitRegion(n->dst);
  visit(n->value);
}
void IRVisitor::visitReduce(const ReduceStmt* n) {
  visitRegion(n->src);
  visitRegion(n->dst);
}
void IRVisitor::visitAtomic(const AtomicStmt* n) {
  for (const Expr& i : n->indices) visit(i);
  visit(n->value);
  for (const Expr& i : n->prevIndices) visit(i);
}
void IRVisitor::visitAnnotateLayout(const AnnotateLayoutStmt*) {}
void IRVisitor::visitBreak(const BreakStmt*) {}
void IRVisitor::visitContinue(const ContinueStmt*) {}
void IRVisitor::visitPrint(const PrintStmt* n) {
  visit(n->value);
  for (const PrintTag& t : n->iteration) visit(t.value);
  for (const Expr& i : n->index) visit(i);
}
void IRVisitor::visitVersion(const VersionStmt* n) {
  visit(n->version);
  visit(n->body);
}
void IRVisitor::visitAsyncCommit(const AsyncCommitStmt*) {}
void IRVisitor::visitAsyncWait(const AsyncWaitStmt*) {}
void IRVisitor::visitBarrierArrive(const BarrierArriveStmt* n) {
  visit(n->barrier.index);
  if (n->expectBytes) visit(n->expectBytes);
}
void IRVisitor::visitBarrierWait(const BarrierWaitStmt* n) {
  visit(n->barrier.index);
  visit(n->parity);
}
void IRVisitor::visitWarpSpecialize(const WarpSpecializeStmt* n) {
  visit(n->producer);
  visit(n->consumer);
}

// ---------------------------------------------------------------- mutator

Expr IRMutator::mutate(const Expr& e) {
  if (!e) return e;
  switch (e->kind) {
#define EXPR(Name)        \
  case ExprKind::Name:    \
    return mutate##Name(static_cast<const Name*>(e.get()), e);
#include "compiler/ir/node_kinds.def"
  }
  return e;
}

Stmt IRMutator::mutate(const Stmt& s) {
  if (!s) return s;
  switch (s->kind) {
#define STMT(Name)        \
  case StmtKind::Name:    \
    return mutate##Name(static_cast<const Name##Stmt*>(s.get()), s);
#include "compiler/ir/node_kinds.def"
  }
  return s;
}

bool IRMutator::mutateExprs(const std::vector<Expr>& in, std::vector<Expr>& out) {
  bool changed = false;
  out.clear();
  out.reserve(in.size());
  for (const Expr& e : in) {
    out.push_back(mutate(e));
    changed |= out.back() != e;
  }
  return changed;
}

Region IRMutator::mutateRegion(const Region& r) {
  Region out{r.buffer, {}, r.loc};
  for (const Range& rg : r.ranges) out.ranges.push_back({mutate(rg.min), mutate(rg.extent)});
  return out;
}

static bool sameRegion(const Region& a, const Region& b) {
  if (a.buffer != b.buffer || a.ranges.size() != b.ranges.size()) return false;
  for (size_t i = 0; i < a.ranges.size(); ++i)
    if (a.ranges[i].min != b.ranges[i].min || a.ranges[i].extent != b.ranges[i].extent) return false;
  return true;
}

Expr IRMutator::mutateIntImm(const IntImm*, const Expr& self) { return self; }
Expr IRMutator::mutateFloatImm(const FloatImm*, const Expr& self) { return self; }
Expr IRMutator::mutateVarRef(const VarRef*, const Expr& self) { return self; }
Expr IRMutator::mutateBinary(const Binary* n, const Expr& self) {
  Expr a = mutate(n->a), b = mutate(n->b);
  if (a == n->a && b == n->b) return self;
  return std::make_shared<const Binary>(n->op, a, b, n->dtype, n->loc);
}
Expr IRMutator::mutateUnary(const Unary* n, const Expr& self) {
  Expr a = mutate(n->a);
  if (a == n->a) return self;
  return std::make_shared<const Unary>(n->op, a, n->dtype, n->loc);
}
Expr IRMutator::mutateCast(const Cast* n, const Expr& self) {
  Expr v = mutate(n->value);
  if (v == n->value) return self;
  return makeCast(n->dtype, v, n->loc);
}
Expr IRMutator::mutateSelect(const Select* n, const Expr& self) {
  Expr c = mutate(n->cond), t = mutate(n->t), f = mutate(n->f);
  if (c == n->cond && t == n->t && f == n->f) return self;
  return std::make_shared<const Select>(c, t, f, n->loc);
}
Expr IRMutator::mutateCall(const Call* n, const Expr& self) {
  std::vector<Expr> args;
  if (!mutateExprs(n->args, args)) return self;
  return makeCall(n->callee, std::move(args), n->dtype, n->loc);
}
Expr IRMutator::mutateLoad(const Load* n, const Expr& self) {
  std::vector<Expr> idx;
  if (!mutateExprs(n->indices, idx)) return self;
  return makeLoad(n->buffer, std::move(idx), n->loc);
}

Stmt IRMutator::mutateSeq(const SeqStmt* n, const Stmt& self) {
  std::vector<Stmt> out;
  bool changed = false;
  for (const Stmt& s : n->stmts) {
    out.push_back(mutate(s));
    changed |= out.back() != s;
  }
  if (!changed) return self;
  return makeSeq(std::move(out), n->loc);
}
Stmt IRMutator::mutateKernel(const KernelStmt* n, const Stmt& self) {
  std::vector<Expr> grid;
  bool changed = mutateExprs(n->grid, grid);
  Stmt body = mutate(n->body);
  if (!changed && body == n->body) return self;
  return std::make_shared<const KernelStmt>(grid, n->blockVars, n->threads, body, n->loc, n->swizzle);
}
Stmt IRMutator::mutateAlloc(const AllocStmt*, const Stmt& self) { return self; }
Stmt IRMutator::mutateFor(const ForStmt* n, const Stmt& self) {
  Expr mn = mutate(n->min), ext = mutate(n->extent);
  Stmt body = mutate(n->body);
  if (mn == n->min && ext == n->extent && body == n->body) return self;
  auto f = std::make_shared<ForStmt>(n->var, mn, ext, n->forKind, body, n->loc);
  f->copyLoopAttributes(*n);
  return f;
}
Stmt IRMutator::mutateIf(const IfStmt* n, const Stmt& self) {
  Expr c = mutate(n->cond);
  Stmt t = mutate(n->thenBody), e = mutate(n->elseBody);
  if (c == n->cond && t == n->thenBody && e == n->elseBody) return self;
  return std::make_shared<const IfStmt>(c, t, e, n->loc, n->likely);
}
Stmt IRMutator::mutateStore(const StoreStmt* n, const Stmt& self) {
  std::vector<Expr> idx;
  bool changed = mutateExprs(n->indices, idx);
  Expr v = mutate(n->value);
  if (!changed && v == n->value) return self;
  return std::make_shared<const StoreStmt>(n->buffer, idx, v, n->loc);
}
Stmt IRMutator::mutateLet(const LetStmt* n, const Stmt& self) {
  Expr v = mutate(n->value);
  Stmt b = mutate(n->body);
  if (v == n->value && b == n->body) return self;
  return std::make_shared<const LetStmt>(n->var, v, b, n->loc);
}
Stmt IRMutator::mutateEvaluate(const EvaluateStmt* n, const Stmt& self) {
  Expr v = mutate(n->value);
  if (v == n->value) return self;
  return std::make_shared<const EvaluateStmt>(v, n->loc);
}
Stmt IRMutator::mutateCopy(const CopyStmt* n, const Stmt& self) {
  Region s = mutateRegion(n->src), d = mutateRegion(n->dst);
  BarrierRef bar = mutateBarrier(n->barrier);
  Expr used = n->usedWhen ? mutate(n->usedWhen) : nullptr;
  if (sameRegion(s, n->src) && sameRegion(d, n->dst) && bar.index == n->barrier.index && used == n->usedWhen)
    return self;
  return std::make_shared<const CopyStmt>(s, d, n->loc, n->async, bar, used);
}
Stmt IRMutator::mutateGemm(const GemmStmt* n, const Stmt& self) {
  Region a = mutateRegion(n->a), b = mutateRegion(n->b), c = mutateRegion(n->c);
  if (sameRegion(a, n->a) && sameRegion(b, n->b) && sameRegion(c, n->c)) return self;
  return std::make_shared<const GemmStmt>(a, b, c, n->transA, n->transB, n->clearAccum, n->loc);
}
Stmt IRMutator::mutateFill(const FillStmt* n, const Stmt& self) {
  Region d = mutateRegion(n->dst);
  Expr v = mutate(n->value);
  if (sameRegion(d, n->dst) && v == n->value) return self;
  return std::make_shared<const FillStmt>(d, v, n->loc);
}
Stmt IRMutator::mutateReduce(const ReduceStmt* n, const Stmt& self) {
  Region s = mutateRegion(n->src), d = mutateRegion(n->dst);
  if (sameRegion(s, n->src) && sameRegion(d, n->dst)) return self;
  return std::make_shared<const ReduceStmt>(n->reduceKind, s, d, n->dim, n->clear, n->loc);
}
Stmt IRMutator::mutateAtomic(const AtomicStmt* n, const Stmt& self) {
  std::vector<Expr> idx, prevIdx;
  bool changed = mutateExprs(n->indices, idx);
  Expr v = mutate(n->value);
  changed |= mutateExprs(n->prevIndices, prevIdx);
  if (!changed && v == n->value) return self;
  return std::make_shared<const AtomicStmt>(n->atomicKind, n->buffer, idx, v, n->loc, n->prev, prevIdx);
}
Stmt IRMutator::mutateAnnotateLayout(const AnnotateLayoutStmt*, const Stmt& self) { return self; }
Stmt IRMutator::mutateBreak(const BreakStmt*, const Stmt& self) { return self; }
Stmt IRMutator::mutateContinue(const ContinueStmt*, const Stmt& self) { return self; }
Stmt IRMutator::mutatePrint(const PrintStmt* n, const Stmt& self) {
  Expr v = mutate(n->value);
  bool changed = v != n->value;
  std::vector<PrintTag> iteration;
  for (const PrintTag& t : n->iteration) {
    iteration.push_back({t.name, mutate(t.value)});
    changed |= iteration.back().value != t.value;
  }
  std::vector<Expr> index;
  changed |= mutateExprs(n->index, index);
  if (!changed) return self;
  auto p = std::make_shared<PrintStmt>(*n);
  p->value = v;
  p->iteration = std::move(iteration);
  p->index = std::move(index);
  return p;
}
Stmt IRMutator::mutateVersion(const VersionStmt* n, const Stmt& self) {
  Expr v = mutate(n->version);
  Stmt b = mutate(n->body);
  if (v == n->version && b == n->body) return self;
  return std::make_shared<const VersionStmt>(n->buffers, v, b, n->loc);
}
Stmt IRMutator::mutateAsyncCommit(const AsyncCommitStmt*, const Stmt& self) { return self; }
Stmt IRMutator::mutateAsyncWait(const AsyncWaitStmt*, const Stmt& self) { return self; }
BarrierRef IRMutator::mutateBarrier(const BarrierRef& b) { return b ? BarrierRef{b.buffer, mutate(b.index)} : b; }
Stmt IRMutator::mutateBarrierArrive(const BarrierArriveStmt* n, const Stmt& self) {
  BarrierRef bar = mutateBarrier(n->barrier);
  Expr bytes = n->expectBytes ? mutate(n->expectBytes) : nullptr;
  if (bar.index == n->barrier.index && bytes == n->expectBytes) return self;
  return std::make_shared<const BarrierArriveStmt>(bar, bytes, n->loc);
}
Stmt IRMutator::mutateBarrierWait(const BarrierWaitStmt* n, const Stmt& self) {
  BarrierRef bar = mutateBarrier(n->barrier);
  Expr parity = mutate(n->parity);
  if (bar.index == n->barrier.index && parity == n->parity) return self;
  return std::make_shared<const BarrierWaitStmt>(bar, parity, n->loc);
}
Stmt IRMutator::mutateWarpSpecialize(const WarpSpecializeStmt* n, const Stmt& self) {
  Stmt p = mutate(n->producer), c = mutate(n->consumer);
  if (p == n->producer && c == n->consumer) return self;
  return std::make_shared<const WarpSpecializeStmt>(n->producerThreads, p, c, n->loc);
}

}  // namespace tlc::ir
