#include "compiler/passes/cpu_split_block_rows.h"

#include <unordered_map>
#include <unordered_set>

#include "compiler/ir/functor.h"
#include "compiler/ir/module_rewrite.h"
#include "compiler/ir/var_uses.h"

namespace tlc::cpu {

using namespace ir;

namespace {

bool isTile(const Buffer& b) { return b->scope == MemScope::Shared || b->scope == MemScope::Fragment; }

bool isVar(const Expr& e, const VarNode* v) {
  auto* r = as<VarRef>(e);
  return r && r->var.get() == v;
}

// The dimension of a copy's tensor region onto which a tile's rows map: the
// first of its non-unit dimensions, when the copy maps dimensions one to one
// (lower-copy-fill's direct case) and that one has the tile's R rows; -1
// otherwise.
int rowDimension(const Region& tensor, const Region& tile, int64_t rows) {
  std::vector<int> td = nonUnitDims(tensor), bd = nonUnitDims(tile);
  if (td.empty() || td.size() != bd.size() || bd[0] != 0) return -1;
  for (size_t k = 0; k < td.size(); ++k) {
    int64_t a = 0, b = 0;
    if (!constInt(tensor.ranges[td[k]].extent, &a) || !constInt(tile.ranges[bd[k]].extent, &b) || a != b) return -1;
  }
  int64_t first = 0;
  constInt(tensor.ranges[td[0]].extent, &first);
  return first == rows ? td[0] : -1;
}

// Whether a kernel body (after its allocations) follows the rule of the
// header, for tiles of `rows` rows.
class RowCheck : public IRVisitor {
 public:
  explicit RowCheck(int64_t rows) : rows_(rows) {}
  bool ok = true;
  bool stepped = false;  // some serial loop holds a row loop or a copy

  bool finish() const {
    for (const BufferNode* b : written_)
      if (read_.count(b)) return false;
    return ok && stepped;
  }

  void visitFor(const ForStmt* f) override {
    visit(f->min);
    visit(f->extent);
    int64_t mn = -1, n = -1;
    bool rowLoop = !row_ && f->forKind == ForKind::Parallel && constInt(f->min, &mn) && mn == 0 &&
                   constInt(f->extent, &n) && n == rows_;
    bool serial = f->forKind == ForKind::Serial || f->forKind == ForKind::Pipelined;
    if (rowLoop) {
      row_ = f->var.get();
      stepped = stepped || serialDepth_ > 0;
    }
    varying_.insert(f->var.get());
    serialDepth_ += serial;
    ++loopDepth_;
    visit(f->body);
    --loopDepth_;
    serialDepth_ -= serial;
    if (rowLoop) row_ = nullptr;
  }
  void visitLet(const LetStmt* l) override {
    visit(l->value);
    if (loopDepth_ > 0) varying_.insert(l->var.get());
    visit(l->body);
  }
  void visitAlloc(const AllocStmt* a) override { ok = ok && row_ && !isTile(a->buffer); }
  void visitLoad(const Load* l) override {
    access(l->buffer, l->indices, false);
    IRVisitor::visitLoad(l);
  }
  void visitStore(const StoreStmt* s) override {
    access(s->buffer, s->indices, true);
    for (const Expr& e : s->indices) visit(e);
    visit(s->value);
  }
  void visitCopy(const CopyStmt* c) override {
    stepped = stepped || serialDepth_ > 0;
    ok = ok && !row_ && !c->async && !c->barrier && !c->usedWhen;
    bool srcTile = isTile(c->src.buffer), dstTile = isTile(c->dst.buffer);
    if (!ok || !(srcTile || dstTile)) {
      ok = false;
      return;
    }
    if (srcTile && dstTile) {
      ok = isFullRegion(c->src) && isFullRegion(c->dst);
      return;
    }
    const Region& tile = srcTile ? c->src : c->dst;
    const Region& tensor = srcTile ? c->dst : c->src;
    int d = rowDimension(tensor, tile, rows_);
    ok = isFullRegion(tile) && tensor.buffer->scope == MemScope::Global && d >= 0;
    if (!ok) return;
    (srcTile ? written_ : read_).insert(tensor.buffer.get());
    // A written row keeps its place in the tensor through the loops.
    if (srcTile && usesVarying(tensor.ranges[size_t(d)].min)) ok = false;
    for (const Range& r : tensor.ranges) {
      visit(r.min);
      visit(r.extent);
    }
  }
  void visitFill(const FillStmt* f) override {
    ok = ok && !row_ && isTile(f->dst.buffer) && isFullRegion(f->dst);
    visit(f->value);
  }
  void visitReduce(const ReduceStmt* r) override {
    ok = ok && !row_ && r->dim != 0 && isTile(r->src.buffer) && isTile(r->dst.buffer) && isFullRegion(r->src) &&
         isFullRegion(r->dst);
  }
  void visitKernel(const KernelStmt*) override { ok = false; }
  void visitEvaluate(const EvaluateStmt*) override { ok = false; }
  void visitGemm(const GemmStmt*) override { ok = false; }
  void visitAtomic(const AtomicStmt*) override { ok = false; }
  void visitAnnotateLayout(const AnnotateLayoutStmt*) override { ok = false; }
  void visitBreak(const BreakStmt*) override { ok = false; }
  void visitContinue(const ContinueStmt*) override { ok = false; }
  void visitPrint(const PrintStmt*) override { ok = false; }
  void visitVersion(const VersionStmt*) override { ok = false; }
  void visitAsyncCommit(const AsyncCommitStmt*) override { ok = false; }
  void visitAsyncWait(const AsyncWaitStmt*) override { ok = false; }
  void visitBarrierArrive(const BarrierArriveStmt*) override { ok = false; }
  void visitBarrierWait(const BarrierWaitStmt*) override { ok = false; }
  void visitWarpSpecialize(const WarpSpecializeStmt*) override { ok = false; }

 private:
  int64_t rows_;
  const VarNode* row_ = nullptr;  // the enclosing row loop's variable
  int serialDepth_ = 0, loopDepth_ = 0;
  std::unordered_set<const VarNode*> varying_;  // loop variables and lets bound in loops
  std::unordered_set<const BufferNode*> read_, written_;

  bool usesVarying(const Expr& e) const {
    UsesVars uses(varying_);
    uses.visit(e);
    return uses.found;
  }

  void access(const Buffer& b, const std::vector<Expr>& indices, bool write) {
    if (isTile(b)) {
      ok = ok && row_ && !indices.empty() && isVar(indices[0], row_);
      return;
    }
    if (b->scope != MemScope::Global) return;  // a row loop's own variables
    (write ? written_ : read_).insert(b.get());
    if (!write) return;
    // A tensor element written by row i is written by row i only: some index
    // is i plus a value that no loop changes.
    bool slot = false;
    for (const Expr& e : indices) {
      auto* add = as<Binary>(e);
      slot = slot || isVar(e, row_) ||
             (add && add->op == BinaryOp::Add &&
              ((isVar(add->a, row_) && !usesVarying(add->b)) || (isVar(add->b, row_) && !usesVarying(add->a))));
    }
    ok = ok && row_ && slot;
  }
};

// The rewrite: tiles of `group` rows, row loops over [0, group) whose
// variable i stands for row i + r * group outside the tiles' first index,
// copies of the tensors' rows r * group onwards.
class SplitRows : public IRMutator {
 public:
  SplitRows(int64_t rows, int64_t group, Var r, std::unordered_map<const BufferNode*, Buffer> tiles)
      : rows_(rows), group_(group), r_(std::move(r)), tiles_(std::move(tiles)) {}

 protected:
  Stmt mutateFor(const ForStmt* f, const Stmt& self) override {
    int64_t mn = -1, n = -1;
    if (row_ || f->forKind != ForKind::Parallel || !constInt(f->min, &mn) || mn != 0 || !constInt(f->extent, &n) ||
        n != rows_)
      return IRMutator::mutateFor(f, self);
    row_ = f->var.get();
    Stmt body = mutate(f->body);
    row_ = nullptr;
    return std::make_shared<ForStmt>(f->var, f->min, makeInt(group_, f->extent->dtype), f->forKind, body, f->loc);
  }
  Expr mutateVarRef(const VarRef* v, const Expr& self) override {
    return v->var.get() == row_ ? add(self, firstRow(self->dtype)) : self;
  }
  Expr mutateLoad(const Load* l, const Expr& self) override {
    auto it = tiles_.find(l->buffer.get());
    if (it == tiles_.end()) return IRMutator::mutateLoad(l, self);
    return makeLoad(it->second, tileIndices(l->indices), l->loc);
  }
  Stmt mutateStore(const StoreStmt* s, const Stmt& self) override {
    auto it = tiles_.find(s->buffer.get());
    if (it == tiles_.end()) return IRMutator::mutateStore(s, self);
    return std::make_shared<const StoreStmt>(it->second, tileIndices(s->indices), mutate(s->value), s->loc);
  }
  Stmt mutateCopy(const CopyStmt* c, const Stmt& self) override {
    auto copy = std::make_shared<CopyStmt>(*c);
    bool srcTile = tiles_.count(c->src.buffer.get()), dstTile = tiles_.count(c->dst.buffer.get());
    if (srcTile != dstTile) {
      Region& tensor = srcTile ? copy->dst : copy->src;
      Range& rg = tensor.ranges[size_t(rowDimension(tensor, srcTile ? c->src : c->dst, rows_))];
      rg.min = add(rg.min, firstRow(rg.min->dtype));
      rg.extent = makeInt(group_, rg.extent->dtype);
    }
    if (srcTile) copy->src = fullRegion(tiles_[c->src.buffer.get()], c->src.loc);
    if (dstTile) copy->dst = fullRegion(tiles_[c->dst.buffer.get()], c->dst.loc);
    return copy;
  }
  Stmt mutateFill(const FillStmt* f, const Stmt&) override {
    return std::make_shared<const FillStmt>(fullRegion(tiles_.at(f->dst.buffer.get()), f->dst.loc), f->value, f->loc);
  }
  Stmt mutateReduce(const ReduceStmt* r, const Stmt&) override {
    return std::make_shared<const ReduceStmt>(r->reduceKind, fullRegion(tiles_.at(r->src.buffer.get()), r->src.loc),
                                              fullRegion(tiles_.at(r->dst.buffer.get()), r->dst.loc), r->dim,
                                              r->clear, r->loc);
  }

 private:
  int64_t rows_, group_;
  Var r_;
  std::unordered_map<const BufferNode*, Buffer> tiles_;
  const VarNode* row_ = nullptr;

  // r * group, the group's first row, as a `t`.
  Expr firstRow(DType t) const {
    Expr r = makeVarRef(r_);
    return mul(r->dtype == t ? r : makeCast(t, r), makeInt(group_, t));
  }

  std::vector<Expr> tileIndices(const std::vector<Expr>& indices) {
    std::vector<Expr> out{indices[0]};
    for (size_t d = 1; d < indices.size(); ++d) out.push_back(mutate(indices[d]));
    return out;
  }
};

Stmt splitKernel(const KernelStmt* k, const Stmt& self, int64_t maxBytes) {
  auto* seq = as<SeqStmt>(k->body);
  if (!seq) return self;
  size_t allocs = 0;
  int64_t rows = 0, rowBytes = 0;
  for (; allocs < seq->stmts.size(); ++allocs) {
    auto* a = as<AllocStmt>(seq->stmts[allocs]);
    if (!a) break;
    const Buffer& b = a->buffer;
    int64_t first = 0, elems = 1;
    if (!isTile(b) || a->versions != 1 || !constInt(b->shape[0], &first) || (rows && first != rows)) return self;
    rows = first;
    for (size_t d = 1; d < b->shape.size(); ++d) {
      int64_t n = 0;
      if (!constInt(b->shape[d], &n)) return self;
      elems *= n;
    }
    rowBytes += elems * dtypeBytes(b->dtype);
  }
  if (rows * rowBytes <= maxBytes) return self;
  int64_t group = 0;
  for (int64_t g = 16; g < rows; g += 16)
    if (rows % g == 0 && g * rowBytes <= maxBytes) group = g;
  if (group == 0) return self;
  std::vector<Stmt> rest(seq->stmts.begin() + long(allocs), seq->stmts.end());
  Stmt body = makeSeq(rest, seq->loc);
  RowCheck check(rows);
  check.visit(body);
  if (!check.finish()) return self;

  std::unordered_map<const BufferNode*, Buffer> tiles;
  std::vector<Stmt> out;
  for (size_t i = 0; i < allocs; ++i) {
    auto* a = as<AllocStmt>(seq->stmts[i]);
    std::vector<Expr> shape = a->buffer->shape;
    shape[0] = makeInt(group, shape[0]->dtype);
    Buffer b = makeBuffer(a->buffer->name, a->buffer->dtype, shape, a->buffer->scope, a->buffer->loc);
    tiles[a->buffer.get()] = b;
    out.push_back(std::make_shared<const AllocStmt>(b, a->loc));
  }
  Var r = makeVar("row_group", DType::Int32, k->loc);
  Stmt split = SplitRows(rows, group, r, tiles).mutate(body);
  out.push_back(std::make_shared<ForStmt>(r, makeInt(0), makeInt(rows / group), ForKind::Serial, split, k->loc));
  return std::make_shared<const KernelStmt>(k->grid, k->blockVars, k->threads, makeSeq(out, seq->loc), k->loc,
                                            k->swizzle);
}

class SplitKernels : public IRMutator {
 public:
  explicit SplitKernels(int64_t maxBytes) : maxBytes_(maxBytes) {}

 protected:
  Stmt mutateKernel(const KernelStmt* k, const Stmt& self) override { return splitKernel(k, self, maxBytes_); }

 private:
  int64_t maxBytes_;
};

}  // namespace

Module splitBlockRows(const Module& m, int64_t maxBytes) {
  return rewriteBodies(m, [&](const PrimFunc& f) { return SplitKernels(maxBytes).mutate(f.body); });
}

}  // namespace tlc::cpu
