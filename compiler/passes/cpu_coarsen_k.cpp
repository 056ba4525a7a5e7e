#include "compiler/passes/cpu_coarsen_k.h"

#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "compiler/ir/functor.h"
#include "compiler/ir/linear_form.h"
#include "compiler/ir/substitute.h"
#include "compiler/passes/cpu_loop_builder.h"
#include "compiler/ir/module_rewrite.h"

namespace tlc::cpu {

using namespace ir;

namespace {

constexpr int64_t kTargetK = 256;

struct Plan {
  const CopyStmt* copyA;
  const CopyStmt* copyB;
  const GemmStmt* gemm;
  int kDimA, kDimB;  // the k dimension of A_s and B_s
  int64_t bk;
  int64_t unroll;
  Buffer newA, newB;
};


// Counts the statements and expressions that mention a buffer.
class BufferUses : public IRVisitor {
 public:
  std::unordered_map<const BufferNode*, int> uses;
  void visitLoad(const Load* n) override {
    uses[n->buffer.get()]++;
    IRVisitor::visitLoad(n);
  }
  void visitStore(const StoreStmt* n) override {
    uses[n->buffer.get()]++;
    IRVisitor::visitStore(n);
  }
  void visitCopy(const CopyStmt* n) override {
    uses[n->src.buffer.get()]++;
    uses[n->dst.buffer.get()]++;
    IRVisitor::visitCopy(n);
  }
  void visitGemm(const GemmStmt* n) override {
    uses[n->a.buffer.get()]++;
    uses[n->b.buffer.get()]++;
    uses[n->c.buffer.get()]++;
    IRVisitor::visitGemm(n);
  }
  void visitFill(const FillStmt* n) override {
    uses[n->dst.buffer.get()]++;
    IRVisitor::visitFill(n);
  }
  void visitReduce(const ReduceStmt* n) override {
    uses[n->src.buffer.get()]++;
    uses[n->dst.buffer.get()]++;
    IRVisitor::visitReduce(n);
  }
  void visitAtomic(const AtomicStmt* n) override {
    uses[n->buffer.get()]++;
    IRVisitor::visitAtomic(n);
  }
};

// Whether a statement mentions a variable.
bool mentions(const Stmt& s, const Var& v) {
  struct Finder : IRVisitor {
    const VarNode* var;
    bool found = false;
    void visitVarRef(const VarRef* r) override { found = found || r->var.get() == var; }
  } f;
  f.var = v.get();
  f.visit(s);
  return f.found;
}

Buffer lengthen(const Buffer& b, int kDim, int64_t factor) {
  std::vector<Expr> shape = b->shape;
  int64_t k = 0;
  constInt(shape[size_t(kDim)], &k);
  shape[size_t(kDim)] = makeInt(k * factor, shape[size_t(kDim)]->dtype);
  return makeBuffer(b->name, b->dtype, shape, b->scope, b->loc);
}

// The loops that match, with their plans.
class Matcher : public IRVisitor {
 public:
  explicit Matcher(const BufferUses& uses) : uses_(uses) {}
  std::unordered_map<const ForStmt*, Plan> plans;
  std::unordered_map<const BufferNode*, Buffer> replaced;

  void visitFor(const ForStmt* f) override {
    if (auto plan = match(f)) {
      plans[f] = *plan;
      replaced[plan->copyA->dst.buffer.get()] = plan->newA;
      replaced[plan->copyB->dst.buffer.get()] = plan->newB;
      return;
    }
    IRVisitor::visitFor(f);
  }

 private:
  std::optional<Plan> match(const ForStmt* f) {
    if (f->forKind != ForKind::Serial && f->forKind != ForKind::Pipelined) return std::nullopt;
    std::vector<Stmt> stmts = seqStmts(f->body);
    if (stmts.size() != 3) return std::nullopt;
    auto* g = as<GemmStmt>(stmts[2]);
    if (!g || g->clearAccum) return std::nullopt;
    Plan p{};
    p.gemm = g;
    for (int i = 0; i < 2; ++i) {
      auto* c = as<CopyStmt>(stmts[size_t(i)]);
      if (!c || !isFullRegion(c->dst)) return std::nullopt;
      if (c->dst.buffer == g->a.buffer) p.copyA = c;
      else if (c->dst.buffer == g->b.buffer) p.copyB = c;
    }
    if (!p.copyA || !p.copyB || g->a.buffer == g->b.buffer) return std::nullopt;
    // Loads for later steps move before earlier gemms: they must not read the
    // accumulator, and the gemm itself must not depend on the step.
    if (p.copyA->src.buffer == g->c.buffer || p.copyB->src.buffer == g->c.buffer) return std::nullopt;
    if (mentions(stmts[2], f->var)) return std::nullopt;
    for (const Buffer& b : {g->a.buffer, g->b.buffer}) {
      if (b->scope == MemScope::Global || b->shape.size() != 2 || b == g->c.buffer) return std::nullopt;
      // Used only by this loop's copy and gemm.
      auto it = uses_.uses.find(b.get());
      if (it == uses_.uses.end() || it->second != 2) return std::nullopt;
    }
    if (!isFullRegion(g->a) || !isFullRegion(g->b)) return std::nullopt;
    p.kDimA = g->transA ? 0 : 1;
    p.kDimB = g->transB ? 1 : 0;
    int64_t ka = 0, kb = 0;
    constInt(g->a.buffer->shape[size_t(p.kDimA)], &ka);
    constInt(g->b.buffer->shape[size_t(p.kDimB)], &kb);
    if (ka != kb || ka <= 0) return std::nullopt;
    p.bk = ka;
    p.unroll = kTargetK / ka;
    int64_t n;
    if (constInt(f->extent, &n)) p.unroll = std::min(p.unroll, n);
    if (p.unroll < 2) return std::nullopt;
    p.newA = lengthen(g->a.buffer, p.kDimA, p.unroll);
    p.newB = lengthen(g->b.buffer, p.kDimB, p.unroll);
    return p;
  }
  const BufferUses& uses_;
};

// The position of dimension d among the region's dimensions of extent != 1
// (constant 1 counts as unit), or -1 when d itself is a unit dimension.
int nonUnitPosition(const Region& r, size_t d) {
  int pos = 0;
  for (size_t i = 0; i < r.ranges.size(); ++i) {
    int64_t e;
    bool unit = constInt(r.ranges[i].extent, &e) && e == 1;
    if (i == d) return unit ? -1 : pos;
    if (!unit) ++pos;
  }
  return -1;
}

// One copy of the U steps' source slices into the whole lengthened buffer,
// when the slices continue each other: the source region moves by its own
// (constant) extent along one dimension per step, which maps to the
// buffer's k dimension, and stays put along the others. Null otherwise.
Stmt wholeCopy(const CopyStmt* c, const ForStmt* f, const Buffer& nb, int kDim, int64_t unroll, const Expr& kFirst) {
  const Region& src = c->src;
  Expr k = makeVarRef(f->var, f->loc);
  Expr k1 = add(k, makeInt(1, f->var->dtype));
  int dim = -1;
  int64_t ext = 0;
  for (size_t d = 0; d < src.ranges.size(); ++d) {
    if (mentions(std::make_shared<const EvaluateStmt>(src.ranges[d].extent, c->loc), f->var)) return nullptr;
    std::optional<int64_t> diff = constantDifference(substitute(src.ranges[d].min, f->var, k1), src.ranges[d].min);
    if (!diff) return nullptr;
    if (*diff == 0) continue;
    if (dim >= 0 || !constInt(src.ranges[d].extent, &ext) || ext != *diff) return nullptr;
    dim = int(d);
  }
  if (dim < 0 || nonUnitPosition(src, size_t(dim)) < 0 ||
      nonUnitPosition(src, size_t(dim)) != nonUnitPosition(c->dst, size_t(kDim)))
    return nullptr;
  Region r = src;
  for (Range& rg : r.ranges) rg.min = substitute(rg.min, f->var, kFirst);
  r.ranges[size_t(dim)].extent = makeInt(ext * unroll, src.ranges[size_t(dim)].extent->dtype);
  return std::make_shared<const CopyStmt>(r, fullRegion(nb, c->dst.loc), c->loc);
}

class Coarsening : public IRMutator {
 public:
  Coarsening(const Matcher& m, const PrimFunc& f) : m_(m) {
    for (const Var& v : f.shapeVars) nonNegative_.insert(v.get());
  }

 protected:
  Stmt mutateKernel(const KernelStmt* k, const Stmt& self) override {
    for (const Var& v : k->blockVars) nonNegative_.insert(v.get());
    return IRMutator::mutateKernel(k, self);
  }

  Stmt mutateAlloc(const AllocStmt* node, const Stmt& self) override {
    auto it = m_.replaced.find(node->buffer.get());
    if (it == m_.replaced.end()) return self;
    return std::make_shared<const AllocStmt>(it->second, node->loc);
  }

  Stmt mutateFor(const ForStmt* f, const Stmt& self) override {
    int64_t lo;
    if (constInt(f->min, &lo) && lo >= 0) nonNegative_.insert(f->var.get());
    auto it = m_.plans.find(f);
    if (it == m_.plans.end()) return IRMutator::mutateFor(f, self);
    const Plan& p = it->second;
    SourceLoc loc = f->loc;
    DType t = f->var->dtype;
    Var outer = makeVar(f->var->name + "_outer", t, f->var->loc);
    nonNegative_.insert(outer.get());
    Expr U = makeInt(p.unroll, t);
    Expr n = f->extent->dtype == t ? f->extent : makeCast(t, f->extent);
    // for u in serial(U): slice u of A_s / B_s holds step k = min + ko*U + u (or zeros past the end).
    Var u = makeVar(f->var->name + "_inner", t, f->var->loc);
    Expr step = add(mul(makeVarRef(outer, loc), U), makeVarRef(u, loc));
    Expr k = add(f->min, step);
    auto slice = [&](const Buffer& b, int kDim) {
      Region r = fullRegion(b);
      Expr bk = makeInt(p.bk, t);
      r.ranges[size_t(kDim)] = {mul(makeVarRef(u, loc), bk), bk};
      return r;
    };
    auto load = [&](const CopyStmt* c, const Buffer& nb, int kDim) -> Stmt {
      Stmt s = substitute(std::make_shared<const CopyStmt>(c->src, c->dst, c->loc), f->var, k);
      return std::make_shared<const CopyStmt>(as<CopyStmt>(s)->src, slice(nb, kDim), c->loc);
    };
    Stmt loads = makeSeq({load(p.copyA, p.newA, p.kDimA), load(p.copyB, p.newB, p.kDimB)}, loc);
    Stmt zeros = makeSeq({std::make_shared<const FillStmt>(slice(p.newA, p.kDimA), zeroOf(p.newA->dtype), loc),
                          std::make_shared<const FillStmt>(slice(p.newB, p.kDimB), zeroOf(p.newB->dtype), loc)},
                         loc);
    std::vector<Stmt> body;
    Stmt sliced = makeFor(u, makeInt(0, t), U, ForKind::Serial,
                          std::make_shared<const IfStmt>(lt(step, n), loads, zeros, loc), loc);
    // When all U steps exist and each copy's slices continue each other, one
    // copy per operand: whole rows of the tile, which the hardware prefetches.
    Expr kFirst = add(f->min, mul(makeVarRef(outer, loc), U));
    Stmt wholeA = wholeCopy(p.copyA, f, p.newA, p.kDimA, p.unroll, kFirst);
    Stmt wholeB = wholeCopy(p.copyB, f, p.newB, p.kDimB, p.unroll, kFirst);
    const GemmStmt* g = p.gemm;
    auto gemmOf = [&](const Region& a) -> Stmt {
      return std::make_shared<const GemmStmt>(a, fullRegion(p.newB, g->b.loc), g->c, g->transA, g->transB, false,
                                              g->loc);
    };
    Stmt gemm = gemmOf(fullRegion(p.newA, g->a.loc));
    if (wholeA && wholeB) {
      Expr lastStep = add(mul(makeVarRef(outer, loc), U), makeInt(p.unroll - 1, t));
      // A's rows, contiguous along k, are read where they are (inPlace()).
      Stmt whole = inPlace(*as<CopyStmt>(wholeA), p.newA, g->transA)
                       ? makeSeq({wholeB, gemmOf(as<CopyStmt>(wholeA)->src)}, loc)
                       : makeSeq({wholeA, wholeB, gemm}, loc);
      int64_t steps;
      if (constInt(n, &steps) && steps % p.unroll == 0)
        body.push_back(whole);  // every group of steps is whole
      else
        body.push_back(std::make_shared<const IfStmt>(lt(lastStep, n), whole, makeSeq({sliced, gemm}, loc), loc));
    } else {
      body.push_back(sliced);
      body.push_back(gemm);
    }
    Expr outerExtent = floorDiv(add(n, makeInt(p.unroll - 1, t)), U);
    return makeFor(outer, makeInt(0, t), outerExtent, ForKind::Serial, makeSeq(std::move(body), loc), loc);
  }

 private:
  // Whether the gemm may read the whole copy's source instead of its tile:
  // a row-major (not transposed) A of the tile's dtype, whose rows are
  // contiguous along k, in the region's last two dimensions (the others of
  // extent 1) and starting at indices that cannot be negative. Rows and k
  // steps past the tensor's end need no zeros there: cpu-lower-gemm clamps
  // the gemm's M and K to the part of the region inside the tensor. Reading
  // A in place saves its copy (half of the mainloop's copies); B, whose rows
  // lie a tensor row apart along k, would sit in a few L1 sets, and is
  // copied.
  bool inPlace(const CopyStmt& whole, const Buffer& tile, bool transA) const {
    const Region& r = whole.src;
    size_t n = r.ranges.size();
    if (transA || n < 2 || r.buffer->scope != MemScope::Global || r.buffer->dtype != tile->dtype) return false;
    for (size_t d = 0; d < n; ++d) {
      int64_t e;
      if (d + 2 < n && !(constInt(r.ranges[d].extent, &e) && e == 1)) return false;
      if (d + 2 >= n && constantDifference(r.ranges[d].extent, tile->shape[d + 2 - n]) != 0) return false;
      if (!nonNegative(r.ranges[d].min)) return false;
    }
    return true;
  }

  // A sum of non-negative multiples of variables that cannot be negative
  // (block indices, shape variables, loops from a constant >= 0) and a
  // constant >= 0.
  bool nonNegative(const Expr& e) const {
    LinearForm lf = linearForm(e);
    if (lf.constant < 0) return false;
    for (const auto& [term, coeff] : lf.terms) {
      auto* ref = as<VarRef>(term);
      if (coeff < 0 || !ref || !nonNegative_.count(ref->var.get())) return false;
    }
    return true;
  }

  const Matcher& m_;
  std::unordered_set<const VarNode*> nonNegative_;
};

Stmt dropAllocs(const Stmt& body, const std::unordered_set<const BufferNode*>& buffers) {
  struct Dropper : IRMutator {
    const std::unordered_set<const BufferNode*>* drop;
    Stmt mutateSeq(const SeqStmt* n, const Stmt& self) override {
      std::vector<Stmt> out;
      bool changed = false;
      for (const Stmt& c : n->stmts) {
        auto* a = as<AllocStmt>(c);
        if (a && drop->count(a->buffer.get())) {
          changed = true;
          continue;
        }
        Stmt m = mutate(c);
        changed = changed || m != c;
        out.push_back(m);
      }
      return changed ? makeSeq(std::move(out), n->loc) : self;
    }
  } d;
  d.drop = &buffers;
  return d.mutate(body);
}

}  // namespace

Module coarsenGemmK(const Module& m) {
  return rewriteBodies(m, [](const PrimFunc& f) {
    BufferUses uses;
    uses.visit(f.body);
    Matcher matcher(uses);
    matcher.visit(f.body);
    if (matcher.plans.empty()) return f.body;
    Stmt body = Coarsening(matcher, f).mutate(f.body);
    // A tile that the gemm now reads in place at every step is not needed.
    BufferUses after;
    after.visit(body);
    std::unordered_set<const BufferNode*> unused;
    for (const auto& [old, tile] : matcher.replaced)
      if (!after.uses.count(tile.get())) unused.insert(tile.get());
    return unused.empty() ? body : dropAllocs(body, unused);
  });
}

}  // namespace tlc::cpu
