// Use collection for fragment layout inference: walks the kernel's
// block-level statements and records, for every candidate fragment, the
// uses that fit a register layout, the first one that does not (with its
// location), and the statements that tie fragments into groups.
#include "compiler/backends/cuda/cuda_fragment_uses.h"

#include <algorithm>

#include "compiler/backends/cuda/cuda_kernel_scan.h"
#include "compiler/ir/functor.h"

namespace tlc::cuda {

using namespace ir;

void FragmentUses::reject(const BufferNode* b, const std::string& why, SourceLoc loc) {
  auto it = cands.find(b);
  if (it != cands.end() && it->second.fallback.empty()) {
    it->second.fallback = why;
    it->second.fallbackLoc = loc;
  }
}

namespace {

bool constShape(const BufferNode* b, std::vector<int64_t>* shape) {
  shape->clear();
  for (auto& d : b->shape) {
    int64_t v;
    if (!constInt(d, &v) || v <= 0) return false;
    shape->push_back(v);
  }
  return true;
}

bool isVar(const Expr& e, const Var& v) {
  auto* r = as<VarRef>(e);
  return r && r->var == v;
}

SourceLoc either(SourceLoc precise, SourceLoc fallback) { return precise.known() ? precise : fallback; }

class UseCollector {
 public:
  FragmentUses& uses;
  std::unordered_set<const BufferNode*> fixed;
  explicit UseCollector(FragmentUses& u) : uses(u) {}

  void reject(const BufferNode* b, const std::string& why, SourceLoc loc) { uses.reject(b, why, loc); }
  void setRole(const BufferNode* b, Role r, SourceLoc loc) {
    auto it = uses.cands.find(b);
    if (it == uses.cands.end()) return;
    if (it->second.role != Role::Unknown && it->second.role != r)
      reject(b, "used both as a row vector and as a column vector", loc);
    else
      it->second.role = r;
  }
  void link(const BufferNode* a, const BufferNode* b, bool sameRole, SourceLoc loc, const char* how) {
    uses.links.push_back({a, b, sameRole, loc, how});
  }

  // Any element access of a candidate in `e` (outside a Parallel nest) sends it to shared memory.
  void scalarUses(const Expr& e, SourceLoc loc) {
    if (e) visitAccesses(e, "an element access outside a Parallel loop", loc);
  }
  void scalarUses(const Region& r, SourceLoc loc) {
    for (auto& rg : r.ranges) {
      scalarUses(rg.min, loc);
      scalarUses(rg.extent, loc);
    }
  }

  void block(const Stmt& s) {
    if (!s) return;
    SourceLoc loc = s->loc;
    switch (s->kind) {
      case StmtKind::Seq:
        for (auto& c : as<SeqStmt>(s)->stmts) block(c);
        return;
      case StmtKind::Let:
        scalarUses(as<LetStmt>(s)->value, loc);
        block(as<LetStmt>(s)->body);
        return;
      case StmtKind::If: {
        auto* i = as<IfStmt>(s);
        scalarUses(i->cond, loc);
        block(i->thenBody);
        block(i->elseBody);
        return;
      }
      case StmtKind::For: {
        auto* f = as<ForStmt>(s);
        scalarUses(f->min, loc);
        scalarUses(f->extent, loc);
        if (f->forKind == ForKind::Parallel) nest(f);
        else block(f->body);
        return;
      }
      case StmtKind::Copy: copy(as<CopyStmt>(s)); return;
      case StmtKind::Fill: {
        auto* f = as<FillStmt>(s);
        scalarUses(f->value, loc);
        scalarUses(f->dst, loc);
        if (!isFullRegion(f->dst)) reject(f->dst.buffer.get(), "a fill of part of the buffer", loc);
        return;
      }
      case StmtKind::Reduce: reduce(as<ReduceStmt>(s)); return;
      case StmtKind::Gemm: {
        auto* g = as<GemmStmt>(s);
        for (auto* r : {&g->a, &g->b, &g->c}) scalarUses(*r, loc);
        // An accumulator's own gemm, and an A operand read from registers
        // (checked against the gemm once the layouts are known), fit.
        if (!fixed.count(g->c.buffer.get()) || !isFullRegion(g->c))
          reject(g->c.buffer.get(), "a gemm accumulator not held in mma registers", loc);
        if (uses.cands.count(g->a.buffer.get()) && g->a.buffer != g->c.buffer)
          uses.gemmOperands.push_back({g->a.buffer.get(), g});
        reject(g->b.buffer.get(), "a gemm operand", loc);
        return;
      }
      case StmtKind::AnnotateLayout: return;  // a constraint, not a use
      default: {
        // Stores, atomics, evaluates at block level: any candidate they touch is a scalar use.
        TouchAll all(this, "an element access outside a Parallel loop", loc);
        all.visit(s);
        return;
      }
    }
  }

 private:
  // Rejects every candidate accessed in a subtree.
  class TouchAll : public IRVisitor {
   public:
    TouchAll(UseCollector* c, std::string why, SourceLoc loc) : c_(c), why_(std::move(why)), loc_(loc) {}
    void visitLoad(const Load* l) override {
      c_->reject(l->buffer.get(), why_, either(l->loc, loc_));
      IRVisitor::visitLoad(l);
    }
    void visitStore(const StoreStmt* s) override {
      c_->reject(s->buffer.get(), why_, either(s->loc, loc_));
      IRVisitor::visitStore(s);
    }
    void visitAtomic(const AtomicStmt* a) override {
      c_->reject(a->buffer.get(), why_, either(a->loc, loc_));
      IRVisitor::visitAtomic(a);
    }
    void visitCopy(const CopyStmt* c) override {
      c_->reject(c->src.buffer.get(), why_, either(c->loc, loc_));
      c_->reject(c->dst.buffer.get(), why_, either(c->loc, loc_));
      IRVisitor::visitCopy(c);
    }
    void visitFill(const FillStmt* f) override {
      c_->reject(f->dst.buffer.get(), why_, either(f->loc, loc_));
      IRVisitor::visitFill(f);
    }
    void visitReduce(const ReduceStmt* r) override {
      c_->reject(r->src.buffer.get(), why_, either(r->loc, loc_));
      c_->reject(r->dst.buffer.get(), why_, either(r->loc, loc_));
      IRVisitor::visitReduce(r);
    }
    void visitGemm(const GemmStmt* g) override {
      for (auto* r : {&g->a, &g->b, &g->c}) c_->reject(r->buffer.get(), why_, either(g->loc, loc_));
      IRVisitor::visitGemm(g);
    }

   private:
    UseCollector* c_;
    std::string why_;
    SourceLoc loc_;
  };

  void visitAccesses(const Expr& e, const std::string& why, SourceLoc loc) {
    TouchAll all(this, why, loc);
    all.visit(e);
  }

  void copy(const CopyStmt* c) {
    SourceLoc loc = c->loc;
    scalarUses(c->src, loc);
    scalarUses(c->dst, loc);
    const BufferNode *s = c->src.buffer.get(), *d = c->dst.buffer.get();
    bool sc = uses.cands.count(s), dc = uses.cands.count(d);
    if (sc && !isFullRegion(c->src)) reject(s, "a copy of part of the buffer", loc);
    if (dc && !isFullRegion(c->dst)) reject(d, "a copy into part of the buffer", loc);
    if (sc && dc) {
      if (s == d) reject(s, "a copy onto itself", loc);
      if (c->src.buffer->shape.size() != c->dst.buffer->shape.size()) {
        reject(s, "a copy between fragments of different rank", loc);
        reject(d, "a copy between fragments of different rank", loc);
      }
      link(s, d, true, loc, "copy");
      return;
    }
    if (sc) partner(s, c->dst.buffer, loc);
    if (dc) partner(d, c->src.buffer, loc);
  }
  void partner(const BufferNode* cand, const Buffer& other, SourceLoc loc) {
    auto& c = uses.cands[cand];
    // A thread-private buffer would see only this thread's elements.
    if (other->scope == MemScope::Local || other->scope == MemScope::Var)
      reject(cand, "a copy to or from a local buffer", loc);
    if (other->scope == MemScope::Global || other->scope == MemScope::Shared) {
      int64_t bytes = dtypeBytes(other->dtype);
      c.globalBytes = c.globalBytes ? std::min(c.globalBytes, bytes) : bytes;
    }
  }

  void reduce(const ReduceStmt* r) {
    SourceLoc loc = r->loc;
    scalarUses(r->src, loc);
    scalarUses(r->dst, loc);
    const BufferNode *s = r->src.buffer.get(), *d = r->dst.buffer.get();
    // A destination in memory (a shared vector) takes the rows' results from
    // the first thread of each row: no link to the source's group.
    std::vector<int64_t> dstShape;
    bool inMemory = !uses.cands.count(d) && d->scope != MemScope::Global && constShape(d, &dstShape);
    int64_t dstRows = inMemory ? (dstShape.size() == 1 ? dstShape[0] : -1)
                               : uses.cands.count(d) ? uses.cands[d].shape[0] : -1;
    bool ok = uses.cands.count(s) && (uses.cands.count(d) || inMemory) && r->src.buffer->shape.size() == 2 &&
              r->dim == 1 && r->dst.buffer->shape.size() == 1 && isFullRegion(r->src) && isFullRegion(r->dst) &&
              uses.cands[s].shape[0] == dstRows;
    // A column reduction of a tile into a column vector of its group.
    bool columns = uses.cands.count(s) && uses.cands.count(d) && r->src.buffer->shape.size() == 2 && r->dim == 0 &&
                   r->dst.buffer->shape.size() == 1 && isFullRegion(r->src) && isFullRegion(r->dst) &&
                   uses.cands[s].shape.size() == 2 && uses.cands[s].shape[1] == uses.cands[d].shape[0];
    if (columns) {
      setRole(s, Role::Tile, loc);
      setRole(d, Role::Columns, loc);
      uses.cands[s].columnReduced = true;
      link(s, d, false, loc, "column reduction");
      return;
    }
    if (ok && inMemory) {
      setRole(s, Role::Tile, loc);
      uses.cands[s].reduced = true;
      return;
    }
    if (!ok) {
      reject(s, "a reduction other than of a whole tile into a row or column vector of its group", loc);
      reject(d, "a reduction other than of a whole register tile along one of its dimensions", loc);
      return;
    }
    setRole(s, Role::Tile, loc);
    setRole(d, Role::Rows, loc);
    uses.cands[s].reduced = true;
    link(s, d, false, loc, "reduction");
  }

  // Accesses inside a Parallel nest.
  class NestScan : public IRVisitor {
   public:
    NestScan(UseCollector* c, NestUse* n, const std::vector<const ForStmt*>& loops) : c_(c), n_(n), loops_(loops) {}
    bool allocates = false;
    void access(const Buffer& b, const std::vector<Expr>& idx, SourceLoc at) {
      const BufferNode* p = b.get();
      SourceLoc loc = either(at, n_->loop->loc);
      if (!c_->uses.cands.count(p)) return;
      if (std::find(n_->buffers.begin(), n_->buffers.end(), p) == n_->buffers.end()) n_->buffers.push_back(p);
      auto& shape = c_->uses.cands[p].shape;
      if (loops_.size() == 2 && idx.size() == 2 && isVar(idx[0], loops_[0]->var) && isVar(idx[1], loops_[1]->var) &&
          shape == n_->extents) {
        c_->setRole(p, Role::Tile, loc);
      } else if (loops_.size() == 2 && idx.size() == 1 && isVar(idx[0], loops_[0]->var) && shape[0] == n_->extents[0]) {
        c_->setRole(p, Role::Rows, loc);
      } else if (loops_.size() == 2 && idx.size() == 1 && isVar(idx[0], loops_[1]->var) && shape[0] == n_->extents[1]) {
        c_->setRole(p, Role::Columns, loc);
      } else if (loops_.size() == 1 && idx.size() == 1 && isVar(idx[0], loops_[0]->var) && shape[0] == n_->extents[0]) {
        // role decided by the group
      } else {
        c_->reject(p, "an access that is not indexed by the Parallel loop variables in order", loc);
      }
    }
    void visitLoad(const Load* l) override {
      access(l->buffer, l->indices, l->loc);
      IRVisitor::visitLoad(l);
    }
    void visitStore(const StoreStmt* s) override {
      access(s->buffer, s->indices, s->loc);
      IRVisitor::visitStore(s);
    }
    void visitAtomic(const AtomicStmt* a) override {
      c_->reject(a->buffer.get(), "an atomic update", either(a->loc, n_->loop->loc));
      IRVisitor::visitAtomic(a);
    }
    void visitAlloc(const AllocStmt* a) override {
      allocates = true;  // thread-local buffers: keep such nests on the generic path
      IRVisitor::visitAlloc(a);
    }
    void visitCopy(const CopyStmt* c) override { tileOp(c->dst.buffer, c->src.buffer, c->loc); }
    void visitFill(const FillStmt* f) override { tileOp(f->dst.buffer, f->dst.buffer, f->loc); }
    void visitReduce(const ReduceStmt* r) override { tileOp(r->dst.buffer, r->src.buffer, r->loc); }
    void visitGemm(const GemmStmt* g) override {
      tileOp(g->c.buffer, g->a.buffer, g->loc);
      c_->reject(g->b.buffer.get(), kWhy, either(g->loc, n_->loop->loc));
    }

   private:
    static constexpr const char* kWhy = "a tile operation inside a Parallel loop";
    void tileOp(const Buffer& a, const Buffer& b, SourceLoc at) {
      SourceLoc loc = either(at, n_->loop->loc);
      c_->reject(a.get(), kWhy, loc);
      c_->reject(b.get(), kWhy, loc);
    }
    UseCollector* c_;
    NestUse* n_;
    const std::vector<const ForStmt*>& loops_;
  };

  void nest(const ForStmt* f) {
    Stmt body;
    auto loops = parallelNest(f, &body);
    NestUse use{f, {}, {}, Role::Unknown};
    bool shapeOk = loops.size() <= 2;
    for (auto* l : loops) {
      int64_t mn, ext;
      shapeOk &= constInt(l->min, &mn) && mn == 0 && constInt(l->extent, &ext) && ext > 0;
      use.extents.push_back(shapeOk ? ext : 0);
    }
    NestScan scan(this, &use, loops);
    scan.visit(body);
    if (use.buffers.empty()) return;
    auto rejectAll = [&](const std::string& why) {
      for (auto* b : use.buffers) reject(b, why, f->loc);
    };
    if (!shapeOk) rejectAll("a Parallel loop nest that is not one or two loops of constant extent from 0");
    if (loops.size() == 1 && scan.allocates) rejectAll("a one-dimensional Parallel loop that allocates a buffer");
    if (loops.size() == 2) use.kind = Role::Tile;
    for (size_t k = 1; k < use.buffers.size(); ++k) link(use.buffers[0], use.buffers[k], loops.size() == 1, f->loc, "Parallel loop");
    uses.nests.push_back(use);
  }
};

}  // namespace

FragmentUses collectFragmentUses(const KernelStmt& kernel, const std::unordered_set<const BufferNode*>& fixed) {
  FragmentUses uses;
  KernelScan scan;
  scan.visit(kernel.body);
  for (const AllocStmt* a : scan.blockAllocs)
    if (a->buffer->scope == MemScope::Fragment) uses.fragments.push_back(a->buffer.get());
  UseCollector collector(uses);
  collector.fixed = fixed;
  for (auto* b : uses.fragments) {
    Candidate c;
    c.buffer = b;
    c.fixed = fixed.count(b) > 0;
    if (!constShape(b, &c.shape)) continue;  // reported by the placement
    if (c.shape.size() > 2) {
      c.fallback = "a fragment of more than two dimensions";
      c.fallbackLoc = b->loc;
    }
    if (c.shape.size() == 2) c.role = Role::Tile;
    uses.cands[b] = c;
  }
  collector.block(kernel.body);
  return uses;
}

}  // namespace tlc::cuda
