#include "compiler/passes/accumulate_reductions.h"

#include <unordered_map>
#include <unordered_set>

#include "compiler/ir/buffer_access.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/int_arith.h"
#include "compiler/ir/module_rewrite.h"

namespace tlc::passes {

using namespace ir;

namespace {

// How many accesses each buffer of a kernel has; annotated buffers count
// as touched everywhere.
struct AccessCounts : BufferAccessVisitor {
  std::unordered_map<const BufferNode*, int> count;
  std::unordered_set<const BufferNode*> annotated;
  void read(const Buffer& b) override { ++count[b.get()]; }
  void write(const Buffer& b) override { ++count[b.get()]; }
  void visitAnnotateLayout(const AnnotateLayoutStmt* n) override { annotated.insert(n->buffer.get()); }
};

BinaryOp combineOp(ReduceKind k) {
  switch (k) {
    case ReduceKind::Sum:
    case ReduceKind::AbsSum: return BinaryOp::Add;
    case ReduceKind::Max:
    case ReduceKind::AbsMax: return BinaryOp::Max;
    case ReduceKind::Min: return BinaryOp::Min;
  }
  return BinaryOp::Add;
}

bool sameExtent(const Expr& a, const Expr& b) {
  int64_t x, y;
  return constInt(a, &x) && constInt(b, &y) && x == y;
}

// Whether `e` loads `b` at exactly `vars`.
bool loadsAt(const Expr& e, const BufferNode* b, const std::vector<Var>& vars) {
  auto* l = as<Load>(e);
  if (!l || l->buffer.get() != b || l->indices.size() != vars.size()) return false;
  for (size_t d = 0; d < vars.size(); ++d) {
    auto* r = as<VarRef>(l->indices[d]);
    if (!r || r->var != vars[d]) return false;
  }
  return true;
}

// The buffer A when `s` is `A[j...] = A[j...] op P[j...]` over all of P.
const StoreStmt* accumulation(const Stmt& s, const Buffer& p, BinaryOp op) {
  std::vector<Var> vars;
  Stmt body = s;
  while (auto* f = as<ForStmt>(body)) {
    if (f->forKind != ForKind::Parallel || vars.size() >= p->shape.size() || !sameExtent(f->min, makeInt(0)) ||
        !sameExtent(f->extent, p->shape[vars.size()]))
      return nullptr;
    vars.push_back(f->var);
    body = f->body;
  }
  auto* st = as<StoreStmt>(body);
  if (!st || vars.size() != p->shape.size() || st->buffer == p) return nullptr;
  const Buffer& a = st->buffer;
  if (a->scope != MemScope::Fragment || a->dtype != p->dtype || a->shape.size() != p->shape.size()) return nullptr;
  for (size_t d = 0; d < vars.size(); ++d)
    if (!sameExtent(a->shape[d], p->shape[d])) return nullptr;
  auto* v = as<Binary>(st->value);
  if (!v || v->op != op) return nullptr;
  for (size_t d = 0; d < vars.size(); ++d) {
    auto* r = as<VarRef>(st->indices[d]);
    if (!r || r->var != vars[d]) return nullptr;
  }
  bool ok = (loadsAt(v->a, a.get(), vars) && loadsAt(v->b, p.get(), vars)) ||
            (loadsAt(v->b, a.get(), vars) && loadsAt(v->a, p.get(), vars));
  return ok ? st : nullptr;
}

class Fuser : public IRMutator {
 protected:
  Stmt mutateKernel(const KernelStmt* k, const Stmt& self) override {
    AccessCounts counts;
    counts.visit(k->body);
    counts_ = &counts;
    Stmt out = IRMutator::mutateKernel(k, self);
    counts_ = nullptr;
    return out;
  }

  Stmt mutateSeq(const SeqStmt* n, const Stmt& self) override {
    Stmt mutated = IRMutator::mutateSeq(n, self);
    auto* seq = as<SeqStmt>(mutated);
    if (!seq || !counts_) return mutated;
    std::vector<Stmt> out;
    bool changed = false;
    for (size_t i = 0; i < seq->stmts.size(); ++i) {
      auto* r = as<ReduceStmt>(seq->stmts[i]);
      const StoreStmt* st = nullptr;
      if (r && i + 1 < seq->stmts.size() && eligible(*r)) st = accumulation(seq->stmts[i + 1], r->dst.buffer, combineOp(r->reduceKind));
      if (!st) {
        out.push_back(seq->stmts[i]);
        continue;
      }
      out.push_back(std::make_shared<ReduceStmt>(r->reduceKind, r->src, fullRegion(st->buffer, r->dst.loc), r->dim,
                                                 false, r->loc));
      removed.insert(r->dst.buffer.get());
      changed = true;
      ++i;
    }
    return changed ? makeSeq(std::move(out), n->loc) : mutated;
  }


 public:
  // The temporaries folded away.
  std::unordered_set<const BufferNode*> removed;

 private:
  bool eligible(const ReduceStmt& r) const {
    const Buffer& p = r.dst.buffer;
    auto it = counts_->count.find(p.get());
    return r.clear && isFullRegion(r.dst) && p->scope == MemScope::Fragment && dtypeBits(p->dtype) > 16 &&
           !counts_->annotated.count(p.get()) && it != counts_->count.end() && it->second == 2;
  }

  const AccessCounts* counts_ = nullptr;
};

// Removes the allocations of the given buffers.
class DropAllocs : public IRMutator {
 public:
  explicit DropAllocs(const std::unordered_set<const BufferNode*>& b) : buffers_(b) {}

 protected:
  Stmt mutateAlloc(const AllocStmt* n, const Stmt& self) override {
    return buffers_.count(n->buffer.get()) ? makeSeq({}, n->loc) : self;
  }

 private:
  const std::unordered_set<const BufferNode*>& buffers_;
};

}  // namespace

Module accumulateReductions(const Module& m, PassContext&) {
  return rewriteBodies(m, [](const PrimFunc& f) {
    Fuser fuse;
    Stmt body = fuse.mutate(f.body);
    return fuse.removed.empty() ? body : DropAllocs(fuse.removed).mutate(body);
  });
}

}  // namespace tlc::passes
