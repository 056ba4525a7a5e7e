#include "compiler/passes/stage_transposed_stores.h"

#include <optional>
#include <string>
#include <unordered_set>

#include "compiler/ir/buffer_names.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/linear_form.h"
#include "compiler/ir/module_rewrite.h"
#include "compiler/ir/substitute.h"
#include "compiler/ir/var_uses.h"

namespace tlc::passes {

using namespace ir;

namespace {

// The coefficient of `v` in the integer expression `e`: 0 when `e` does not
// use it, nullopt when it uses it other than linearly.
std::optional<int64_t> coefficient(const Expr& e, const Var& v) {
  int64_t c = 0;
  for (auto& [term, k] : linearForm(e).terms) {
    auto* r = as<VarRef>(term);
    if (r && r->var == v) c += k;
    else if (usesVar(term, v)) return std::nullopt;
  }
  return c;
}

// Whether the last index of `indices` moves with `along` alone, by one.
bool rowAlong(const std::vector<Expr>& indices, const Var& along, const Var& other) {
  if (indices.empty()) return false;
  return coefficient(indices.back(), along) == 1 && coefficient(indices.back(), other) == 0;
}

// The loads of global tensors in an expression.
struct GlobalLoads : IRVisitor {
  std::vector<const Load*> loads;
  void visitLoad(const Load* l) override {
    if (l->buffer->scope == MemScope::Global) loads.push_back(l);
    IRVisitor::visitLoad(l);
  }
};

bool constExtent(const ForStmt* f, int64_t* extent) {
  int64_t lo;
  return constInt(f->min, &lo) && lo == 0 && constInt(f->extent, extent) && *extent > 0;
}

class Stager : public IRMutator {
 protected:
  Stmt mutateKernel(const KernelStmt* k, const Stmt& self) override {
    std::unordered_set<std::string> names = bufferNames(k->body);
    names_ = &names;
    Stmt out = IRMutator::mutateKernel(k, self);
    names_ = nullptr;
    return out;
  }

  Stmt mutateFor(const ForStmt* f, const Stmt& self) override {
    if (f->forKind == ForKind::Pipelined) {
      // Its plan gives each statement of the body a stage: keep them.
      ++pipelined_;
      Stmt out = IRMutator::mutateFor(f, self);
      --pipelined_;
      return out;
    }
    if (f->forKind != ForKind::Parallel) return IRMutator::mutateFor(f, self);
    if (names_ && !pipelined_)
      if (Stmt staged = stage(f)) return staged;
    return self;  // nothing to stage inside a Parallel nest
  }

 private:
  std::unordered_set<std::string>* names_ = nullptr;
  int pipelined_ = 0;

  Stmt stage(const ForStmt* outer) {
    auto* inner = as<ForStmt>(outer->body);
    int64_t rows, cols;
    if (!inner || inner->forKind != ForKind::Parallel || !constExtent(outer, &rows) || !constExtent(inner, &cols))
      return nullptr;
    const IfStmt* guard = as<IfStmt>(inner->body);
    if (guard && guard->elseBody) return nullptr;
    auto* st = as<StoreStmt>(guard ? guard->thenBody : inner->body);
    if (!st || st->buffer->scope != MemScope::Global) return nullptr;
    const Var &i = outer->var, &j = inner->var;
    const Buffer& g = st->buffer;
    if (!rowAlong(st->indices, i, j)) return nullptr;
    bool jElsewhere = false;
    for (size_t d = 0; d + 1 < st->indices.size(); ++d) jElsewhere |= usesVar(st->indices[d], j);
    if (!jElsewhere) return nullptr;
    GlobalLoads loads;
    loads.visit(st->value);
    if (guard) loads.visit(guard->cond);
    bool readsRows = false;
    for (const Load* l : loads.loads) {
      if (l->buffer == g) return nullptr;
      readsRows |= rowAlong(l->indices, j, i);
    }
    int64_t bytes = dtypeBytes(g->dtype);
    if (!readsRows || rows * bytes < 16 || cols * bytes < 16 || rows * (cols * bytes + 16) > kMaxTransposeBytes)
      return nullptr;

    SourceLoc loc = outer->loc;
    Buffer tile =
        makeBuffer(freshBufferName(g->name, "_t", names_), g->dtype, {makeInt(rows), makeInt(cols)}, MemScope::Shared, loc);
    // First nest: each element computed once, in the original order.
    Stmt fill = std::make_shared<StoreStmt>(tile, std::vector<Expr>{makeVarRef(i), makeVarRef(j)}, st->value, st->loc);
    if (guard) fill = std::make_shared<IfStmt>(guard->cond, fill, nullptr, guard->loc);
    auto fillInner = std::make_shared<ForStmt>(*inner);
    fillInner->body = fill;
    auto fillOuter = std::make_shared<ForStmt>(*outer);
    fillOuter->body = fillInner;
    // Second nest: j outer, i inner, stores along G's rows.
    Var i2 = makeVar(i->name, i->dtype, i->loc), j2 = makeVar(j->name, j->dtype, j->loc);
    VarMap map{{i.get(), makeVarRef(i2)}, {j.get(), makeVarRef(j2)}};
    std::vector<Expr> idx;
    for (const Expr& e : st->indices) idx.push_back(substitute(e, map));
    Stmt put = std::make_shared<StoreStmt>(g, idx, makeLoad(tile, {makeVarRef(i2), makeVarRef(j2)}, st->loc), st->loc);
    if (guard) put = std::make_shared<IfStmt>(substitute(guard->cond, map), put, nullptr, guard->loc);
    auto putInner = std::make_shared<ForStmt>(i2, outer->min, outer->extent, ForKind::Parallel, put, outer->loc);
    auto putOuter = std::make_shared<ForStmt>(j2, inner->min, inner->extent, ForKind::Parallel, putInner, inner->loc);
    return makeSeq({std::make_shared<AllocStmt>(tile, loc), fillOuter, putOuter}, loc);
  }
};

}  // namespace

Module stageTransposedStores(const Module& m, PassContext&) { return mutateBodies<Stager>(m); }

}  // namespace tlc::passes
