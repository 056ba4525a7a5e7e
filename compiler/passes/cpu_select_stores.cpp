#include "compiler/passes/cpu_select_stores.h"

#include <map>

#include "compiler/ir/functor.h"
#include "compiler/ir/module_rewrite.h"

namespace tlc::cpu {

using namespace ir;

namespace {

class SelectStores : public IRMutator {
 protected:
  Stmt mutateKernel(const KernelStmt* k, const Stmt& self) override {
    ranges_.clear();
    return IRMutator::mutateKernel(k, self);
  }

  Stmt mutateFor(const ForStmt* f, const Stmt& self) override {
    int64_t mn = 0, n = 0;
    bool known = constInt(f->min, &mn) && constInt(f->extent, &n) && mn >= 0 && n > 0;
    if (known) ranges_[f->var.get()] = {mn, mn + n};
    if (f->forKind == ForKind::Vectorized) vector_.push_back(f->var.get());
    Stmt out = IRMutator::mutateFor(f, self);
    if (f->forKind == ForKind::Vectorized) vector_.pop_back();
    ranges_.erase(f->var.get());
    return out;
  }

  Stmt mutateIf(const IfStmt* i, const Stmt& self) override {
    Stmt out = IRMutator::mutateIf(i, self);
    auto* g = as<IfStmt>(out);
    auto* s = g ? as<StoreStmt>(g->thenBody) : nullptr;
    if (!s || g->elseBody || vector_.empty() || !everyElementExists(*s)) return out;
    Expr value = s->value->dtype == s->buffer->dtype ? s->value : makeCast(s->buffer->dtype, s->value, s->loc);
    Expr old = makeLoad(s->buffer, s->indices, s->loc);
    return std::make_shared<const StoreStmt>(s->buffer, s->indices, makeSelect(g->cond, value, old, s->loc), s->loc);
  }

 private:
  std::map<const VarNode*, std::pair<int64_t, int64_t>> ranges_;  // [lo, hi) of enclosing loops
  std::vector<const VarNode*> vector_;                             // enclosing Vectorized loops

  bool everyElementExists(const StoreStmt& s) const {
    if (s.buffer->scope != MemScope::Local || s.indices.size() != s.buffer->shape.size()) return false;
    bool byVectorVar = false;
    for (size_t d = 0; d < s.indices.size(); ++d) {
      int64_t dim = 0, c = 0;
      if (!constInt(s.buffer->shape[d], &dim)) return false;
      if (constInt(s.indices[d], &c)) {
        if (c < 0 || c >= dim) return false;
        continue;
      }
      auto* v = as<VarRef>(s.indices[d]);
      auto r = v ? ranges_.find(v->var.get()) : ranges_.end();
      if (r == ranges_.end() || r->second.second > dim) return false;
      byVectorVar |= v->var.get() == vector_.back();
    }
    return byVectorVar;
  }
};

}  // namespace

Module selectGuardedStores(const Module& m) { return mutateBodies<SelectStores>(m); }

}  // namespace tlc::cpu
