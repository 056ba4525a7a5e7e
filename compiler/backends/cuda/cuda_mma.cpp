// Tensor-core gemm: planning (eligibility, warp grid, register accumulators,
// swizzled operands) and emission (ldmatrix or element loads + mma.sync).
#include "compiler/backends/cuda/cuda_mma.h"

#include <cmath>

#include "compiler/backends/bank_wavefronts.h"
#include "compiler/backends/cuda/cuda_archs.h"
#include "compiler/backends/cuda/cuda_kernel_emitter.h"
#include "compiler/ir/functor.h"

namespace tlc::cuda {

using namespace ir;

// The two matrix dimensions of a region (its non-unit dimensions), with
// constant extents; false when there are not exactly two of them.
bool matrixDims(const Region& r, int* d0, int* d1, int64_t* e0, int64_t* e1) {
  std::vector<int> dims;
  std::vector<int64_t> ext;
  for (size_t d = 0; d < r.ranges.size(); ++d) {
    int64_t e;
    if (!constInt(r.ranges[d].extent, &e)) return false;
    if (e != 1) {
      dims.push_back((int)d);
      ext.push_back(e);
    }
  }
  if (dims.size() == 1 && r.ranges.size() >= 2) {  // a 1 x N or N x 1 matrix
    int other = dims[0] == (int)r.ranges.size() - 1 ? dims[0] - 1 : dims[0] + 1;
    if (other > dims[0]) {
      dims.push_back(other);
      ext.push_back(1);
    } else {
      dims.insert(dims.begin(), other);
      ext.insert(ext.begin(), 1);
    }
  }
  if (dims.size() != 2) return false;
  *d0 = dims[0];
  *d1 = dims[1];
  *e0 = ext[0];
  *e1 = ext[1];
  return true;
}

namespace {

class MentionsBuffer : public IRVisitor {
 public:
  const BufferNode* target;
  bool found = false;
  explicit MentionsBuffer(const BufferNode* t) : target(t) {}
  void visitLoad(const Load* l) override {
    found |= l->buffer.get() == target;
    IRVisitor::visitLoad(l);
  }
  void visitStore(const StoreStmt* s) override {
    found |= s->buffer.get() == target;
    IRVisitor::visitStore(s);
  }
  void visitCopy(const CopyStmt* c) override {
    found |= c->src.buffer.get() == target || c->dst.buffer.get() == target;
    IRVisitor::visitCopy(c);
  }
  void visitFill(const FillStmt* f) override {
    found |= f->dst.buffer.get() == target;
    IRVisitor::visitFill(f);
  }
  void visitReduce(const ReduceStmt* r) override {
    found |= r->src.buffer.get() == target || r->dst.buffer.get() == target;
    IRVisitor::visitReduce(r);
  }
  void visitGemm(const GemmStmt* g) override {
    found |= g->a.buffer.get() == target || g->b.buffer.get() == target || g->c.buffer.get() == target;
    IRVisitor::visitGemm(g);
  }
  void visitAtomic(const AtomicStmt* a) override {
    found |= a->buffer.get() == target;
    IRVisitor::visitAtomic(a);
  }
};

bool mentions(const Stmt& s, const BufferNode* b) {
  MentionsBuffer m(b);
  m.visit(s);
  return m.found;
}
bool mentions(const Expr& e, const BufferNode* b) {
  MentionsBuffer m(b);
  m.visit(e);
  return m.found;
}

// Inside a Parallel nest: every access of the fragment is F[v0, v1, ...].
class IndexedByNest : public IRVisitor {
 public:
  const BufferNode* target;
  const std::vector<Var>& vars;
  bool ok = true;
  IndexedByNest(const BufferNode* t, const std::vector<Var>& v) : target(t), vars(v) {}
  bool matches(const std::vector<Expr>& idx) {
    if (idx.size() != vars.size()) return false;
    for (size_t d = 0; d < idx.size(); ++d) {
      auto* r = as<VarRef>(idx[d]);
      if (!r || r->var.get() != vars[d].get()) return false;
    }
    return true;
  }
  void visitLoad(const Load* l) override {
    if (l->buffer.get() == target && !matches(l->indices)) ok = false;
    IRVisitor::visitLoad(l);
  }
  void visitStore(const StoreStmt* s) override {
    if (s->buffer.get() == target && !matches(s->indices)) ok = false;
    IRVisitor::visitStore(s);
  }
  void visitFor(const ForStmt* f) override {
    // A loop over the fragment inside the nest would index it by other variables.
    IRVisitor::visitFor(f);
  }
  void visitCopy(const CopyStmt* c) override { ok &= !(c->src.buffer.get() == target || c->dst.buffer.get() == target); }
  void visitFill(const FillStmt* f) override { ok &= f->dst.buffer.get() != target; }
  void visitReduce(const ReduceStmt* r) override { ok &= r->src.buffer.get() != target && r->dst.buffer.get() != target; }
  void visitGemm(const GemmStmt* g) override { ok &= g->c.buffer.get() != target && g->a.buffer.get() != target && g->b.buffer.get() != target; }
  void visitAtomic(const AtomicStmt* a) override { ok &= a->buffer.get() != target; }
};

}  // namespace

// The perfectly nested Parallel loops starting at `f`, and the innermost body.
std::vector<const ForStmt*> parallelNest(const ForStmt* f, Stmt* body) {
  std::vector<const ForStmt*> nest{f};
  Stmt b = f->body;
  while (auto* inner = as<ForStmt>(b)) {
    if (inner->forKind != ForKind::Parallel) break;
    nest.push_back(inner);
    b = inner->body;
  }
  if (body) *body = b;
  return nest;
}

namespace {

// Whether every use of fragment `b` in `s` (a block-level statement) fits
// the register accumulator layout.
bool usesConform(const Stmt& s, const BufferNode* b, const std::unordered_set<const GemmStmt*>& mmaGemms) {
  if (!s) return true;
  switch (s->kind) {
    case StmtKind::Seq:
      for (auto& c : as<SeqStmt>(s)->stmts)
        if (!usesConform(c, b, mmaGemms)) return false;
      return true;
    case StmtKind::Let: {
      auto* l = as<LetStmt>(s);
      return !mentions(l->value, b) && usesConform(l->body, b, mmaGemms);
    }
    case StmtKind::If: {
      auto* i = as<IfStmt>(s);
      return !mentions(i->cond, b) && usesConform(i->thenBody, b, mmaGemms) && usesConform(i->elseBody, b, mmaGemms);
    }
    case StmtKind::Alloc: return true;
    case StmtKind::For: {
      auto* f = as<ForStmt>(s);
      if (mentions(f->min, b) || mentions(f->extent, b)) return false;
      if (f->forKind != ForKind::Parallel) return usesConform(f->body, b, mmaGemms);
      if (!mentions(s, b)) return true;
      Stmt body;
      auto nest = parallelNest(f, &body);
      if (nest.size() != b->shape.size()) return false;
      std::vector<Var> vars;
      for (size_t d = 0; d < nest.size(); ++d) {
        int64_t mn, ext, shape;
        if (!constInt(nest[d]->min, &mn) || mn != 0 || !constInt(nest[d]->extent, &ext) ||
            !constInt(b->shape[d], &shape) || ext != shape)
          return false;
        vars.push_back(nest[d]->var);
      }
      IndexedByNest check(b, vars);
      check.visit(body);
      return check.ok;
    }
    case StmtKind::Fill: {
      auto* f = as<FillStmt>(s);
      return f->dst.buffer.get() != b || isFullRegion(f->dst);
    }
    case StmtKind::Copy: {
      auto* c = as<CopyStmt>(s);
      if (c->src.buffer.get() == b && c->dst.buffer.get() == b) return false;
      if (c->src.buffer.get() == b) return isFullRegion(c->src);
      if (c->dst.buffer.get() == b) return isFullRegion(c->dst);
      return true;
    }
    case StmtKind::Reduce: {
      // A row or column reduction: the register reduction of layout inference
      // (cuda_fragment_layout.h), which demotes the accumulator when its group does not fit.
      auto* r = as<ReduceStmt>(s);
      if (r->dst.buffer.get() == b) return false;
      if (r->src.buffer.get() != b) return !mentions(s, b);
      return isFullRegion(r->src) && (r->dim == 1 || r->dim == 0);
    }
    case StmtKind::Gemm: {
      auto* g = as<GemmStmt>(s);
      if (g->a.buffer.get() == b || g->b.buffer.get() == b) return false;
      if (g->c.buffer.get() == b) return mmaGemms.count(g) && isFullRegion(g->c);
      return true;
    }
    default: return !mentions(s, b);
  }
}

}  // namespace

bool mmaShapeOf(const GemmStmt* g, int64_t threads, const CudaOptions& options, MmaShape* out, bool fullRow,
                bool registerBudget) {
  if (!options.tensorCores || threads % 32 != 0) return false;
  auto operandOk = [](const Region& r) {
    return r.buffer->scope == MemScope::Shared || r.buffer->scope == MemScope::Fragment;
  };
  if (!operandOk(g->a) || !operandOk(g->b)) return false;
  if (g->c.buffer->scope != MemScope::Fragment && g->c.buffer->scope != MemScope::Shared) return false;
  int a0, a1, b0, b1, c0, c1;
  int64_t ea0, ea1, eb0, eb1, ec0, ec1;
  if (!matrixDims(g->a, &a0, &a1, &ea0, &ea1) || !matrixDims(g->b, &b0, &b1, &eb0, &eb1) ||
      !matrixDims(g->c, &c0, &c1, &ec0, &ec1))
    return false;
  MmaShape s;
  s.m = ec0;
  s.n = ec1;
  s.k = g->transA ? ea0 : ea1;
  if ((g->transA ? ea1 : ea0) != s.m || (g->transB ? eb1 : eb0) != s.k || (g->transB ? eb0 : eb1) != s.n) return false;
  DType ta = g->a.buffer->dtype, tb = g->b.buffer->dtype, tc = g->c.buffer->dtype;
  if (ta != tb) return false;
  if (ta == DType::Float16 || ta == DType::BFloat16) {
    s.kind = ta == DType::Float16 ? MmaKind::F16 : MmaKind::BF16;
    s.kStep = 16;
    if (tc != DType::Float32 && tc != DType::Float16 && tc != DType::BFloat16) return false;
  } else if (ta == DType::Float32) {
    s.kind = MmaKind::TF32;
    s.kStep = 8;
    if (tc != DType::Float32) return false;
  } else if (ta == DType::Int8) {
    s.kind = MmaKind::S8;
    s.kStep = 32;
    if (tc != DType::Int32) return false;
  } else if (ta == DType::Float8E4M3 || ta == DType::Float8E5M2) {
    // Float8 tensor cores start at sm_89 (mma.sync m16n8k32; wgmma k32 on sm_90a).
    if (options.dialect().nvidiaTensorCores && archVersion(options.arch) < 89) return false;
    s.kind = ta == DType::Float8E4M3 ? MmaKind::F8E4M3 : MmaKind::F8E5M2;
    s.kStep = 32;
    if (tc != DType::Float32 && tc != DType::Float16 && tc != DType::BFloat16) return false;
  } else {
    return false;
  }
  if (s.m % 16 || s.n % 8 || s.k % s.kStep) return false;
  // CDNA: float16, bfloat16, int8, float32 and (gfx942) float8 gemms run on
  // the matrix cores (MFMA); the others keep the mma.sync layout, filled by
  // multiply-adds (cuda_mma_fma.cpp).
  const bool fits = !registerBudget || s.m * s.n / threads <= kMaxAccumulatorRegisters;
  if (options.dialect().mfma && mfmaShapeOf(threads, fullRow, options.arch, &s)) {
    if (!fits) return false;
    *out = s;
    return true;
  }
  int64_t warps = threads / 32;
  int64_t best = -1;
  for (int64_t wm = 1; wm <= warps; ++wm) {
    if (warps % wm) continue;
    int64_t wn = warps / wm;
    if ((s.m / 16) % wm || (s.n / 8) % wn) continue;
    int64_t cost = s.m / wm + s.n / wn;
    if (best < 0 || cost < best || (cost == best && wm > s.warpsM)) {
      best = cost;
      s.warpsM = wm;
      s.warpsN = wn;
    }
  }
  if (best < 0) return false;
  if (fullRow && (s.m / 16) % warps == 0) {
    s.warpsM = warps;
    s.warpsN = 1;
  }
  // Keep the accumulator within a sane register budget (255 per thread).
  if (!fits) return false;
  *out = s;
  return true;
}

int64_t ldsWavefronts(const std::vector<int64_t>& offsets, int64_t bytes) {
  return backend::bankWavefronts(
             (int)offsets.size(), bytes, [&](int l) { return offsets[l]; }, [](int) { return true; })
      .actual;
}

int64_t rowMajorCopyWavefronts(int64_t rows, int64_t cols, int64_t bytes,
                               const std::function<int64_t(int64_t, int64_t)>& offset) {
  const int64_t chunk = 16 / bytes, chunks = rows * cols / chunk;
  int64_t total = 0;
  std::vector<int64_t> offs;
  for (int64_t p = 0; p < chunks; p += 32) {
    offs.clear();
    for (int64_t i = p; i < std::min(chunks, p + 32); ++i) offs.push_back(offset(i * chunk / cols, i * chunk % cols) * bytes);
    total += ldsWavefronts(offs, 16);
  }
  return total;
}

namespace {

// The LDS wavefronts of an MFMA operand tile read across k under `layout`:
// one wavefront's element reads (lane l: row k0 + E * (l / S) + v, column
// c0 + l % S, for each k step k0, v < E and block column c0), plus the copy
// writing the tile in 16-byte chunks in row-major order, 32 lanes at a time.
int64_t acrossKWavefronts(const layout::Layout& layout, int64_t rows, int64_t cols, int64_t bytes, int64_t E,
                          int64_t S, int64_t kStep) {
  int64_t total = 0;
  std::vector<int64_t> offs;
  for (int64_t k0 = 0; k0 + kStep <= rows; k0 += kStep)
    for (int64_t v = 0; v < E; ++v)
      for (int64_t c0 = 0; c0 + S <= cols; c0 += S)
        for (int64_t half = 0; half < 64; half += 32) {
          offs.clear();
          for (int64_t l = half; l < half + 32; ++l)
            offs.push_back(layout.apply({k0 + E * (l / S) + v, c0 + l % S})[0] * bytes);
          total += ldsWavefronts(offs, bytes);
        }
  return total + rowMajorCopyWavefronts(rows, cols, bytes,
                                        [&](int64_t r, int64_t c) { return layout.apply({r, c})[0]; });
}

// An MFMA operand read across k (A transposed, B not transposed): each lane
// reads its E elements one by one down the column, the lanes of a phase in
// 32 / S groups E rows apart. The 16-byte-chunk swizzle keys on the row's
// low bits, which groups E = 8 rows apart (or tiles whose rows are not a
// power of two of chunks) share: runs of S columns moved by the row's group
// of E rows, or the tile's 16-byte chunks XORed in every other group of E
// rows (rows that are not a power of two of chunks), spread the groups over
// the banks. The layout with the fewest
// wavefronts (reads and the copy's writes), the chunk swizzle on a tie.
layout::Layout acrossKLayout(int64_t rows, int64_t cols, int64_t bytes, int64_t E, int64_t S, int64_t kStep) {
  layout::Layout best = layout::Layout::swizzled(rows, cols, (int)bytes);
  if (16 % bytes || rows < kStep || cols % S || (S * bytes) % 16) return best;
  int64_t bestCount = acrossKWavefronts(best, rows, cols, bytes, E, S, kStep);
  const int64_t runs = cols / S;
  int64_t period = 1;
  while (runs % (2 * period) == 0 && 2 * period <= 64 / S) period *= 2;
  std::vector<layout::Layout> candidates{layout::Layout::runRotated(rows, cols, S, E)};
  if (period > 1) candidates.push_back(layout::Layout::runXored(rows, cols, S, E, period));
  if (layout::Layout::chunksXorFits(rows, cols, (int)bytes, E))
    for (int64_t mask : {1, 2, 4}) candidates.push_back(layout::Layout::chunksXored(rows, cols, (int)bytes, E, mask));
  for (layout::Layout& c : candidates) {
    if (int64_t n = acrossKWavefronts(c, rows, cols, bytes, E, S, kStep); n < bestCount) {
      bestCount = n;
      best = std::move(c);
    }
  }
  return best;
}

}  // namespace

MmaPlan planMma(const KernelStmt& kernel, const std::vector<const GemmStmt*>& gemms, int64_t threads,
                const CudaOptions& options, const std::unordered_set<const BufferNode*>& writtenInParallel,
                const std::unordered_set<const GemmStmt*>& fullRow,
                const std::unordered_set<const BufferNode*>& demoted,
                const std::unordered_map<const GemmStmt*, MmaShape>& grids) {
  MmaPlan plan;
  std::unordered_set<const GemmStmt*> eligible;
  std::unordered_map<const BufferNode*, MmaShape> accum;
  for (auto* g : gemms) {
    MmaShape s;
    if (!mmaShapeOf(g, threads, options, &s, fullRow.count(g) > 0)) continue;
    if (auto it = grids.find(g); it != grids.end()) {
      s.warpsM = it->second.warpsM;
      s.warpsN = it->second.warpsN;
      s.colMajor = it->second.colMajor;
    }
    eligible.insert(g);
    if (g->c.buffer->scope == MemScope::Fragment && g->c.buffer->shape.size() == 2 && !demoted.count(g->c.buffer.get()))
      accum[g->c.buffer.get()] = s;
    // Operand tiles read by ldmatrix (16-bit mma.sync) or by MFMA (every
    // type it takes: a lane's 4 to 16 bytes lie in one 16-byte chunk, which
    // the swizzle moves whole) spread their rows' chunks over the banks.
    // So do the tiles that mma.sync reads 4 bytes per lane from (tf32, int8,
    // float8): four lanes read a 16-byte run of a row, eight rows at once.
    if (options.swizzle) {
      for (const Region* r : {&g->a, &g->b}) {
        const Buffer& b = r->buffer;
        const int bytes = dtypeBytes(b->dtype);
        int64_t rows, cols;
        if (b->scope != MemScope::Shared || b->shape.size() != 2 || !constInt(b->shape[0], &rows) ||
            !constInt(b->shape[1], &cols) || (cols * bytes) % 16 != 0)
          continue;
        // MFMA operands read along k (A not transposed, B transposed): a
        // lane reads E elements of one row, the lanes of one LDS phase read
        // P consecutive rows at the same column (and, where the phase is
        // wider than a block, the next read of those rows). 16-byte chunks
        // cannot spread them over all the banks (they all read the same
        // half or quarter of a chunk): XOR runs of the phase's width per
        // row instead.
        const bool alongK = r == &g->a ? !g->transA : g->transB;
        if (s.mfma && alongK) {
          const int64_t readBytes = mfmaLaneElems(s.kind, options.arch) * bytes;
          const int64_t lanes = readBytes <= 4 ? 32 : readBytes <= 8 ? 16 : 8;
          const int64_t P = std::min<int64_t>(s.mfma, lanes), run = readBytes * (lanes / P);
          if (readBytes < 16 && run <= 8 && layout::Layout::runSwizzleFits(cols, bytes, run, P)) {
            plan.swizzled.emplace(b.get(), layout::Layout::runSwizzled(rows, cols, bytes, run, P));
            continue;
          }
        }
        if (s.mfma && !alongK) {
          plan.swizzled.emplace(b.get(), acrossKLayout(rows, cols, bytes, mfmaLaneElems(s.kind, options.arch), s.mfma,
                                                       s.kStep));
          continue;
        }
        plan.swizzled.emplace(b.get(), layout::Layout::swizzled(rows, cols, bytes));
      }
    }
  }
  for (auto& [buf, s] : accum) {
    // Every eligible gemm into this buffer must share the warp grid (they do:
    // it is a function of the tile and thread count).
    if (!usesConform(kernel.body, buf, eligible)) continue;
    plan.registerFragments.emplace(
        buf, MmaFragment{s.mfma ? layout::Fragment::mfmaAccumulator(s.m, s.n, s.warpsM, s.warpsN, s.mfma)
                                : layout::Fragment::mmaAccumulator(s.m, s.n, s.warpsM, s.warpsN, s.colMajor),
                         s.warpsM, s.warpsN, s.mfma, s.colMajor});
  }
  return plan;
}

std::pair<Expr, Expr> mmaAccumulatorIndex(int64_t m, int64_t n, int64_t warpsM, int64_t warpsN, const Expr& tid,
                                          const Expr& reg, int64_t mfma, bool colMajor, int64_t vector) {
  if (mfma) return mfmaAccumulatorIndex(m, n, warpsM, warpsN, mfma, tid, reg);
  const int64_t V = vector, atomCols = 4 * V;
  int64_t wm = m / warpsM, wn = n / warpsN, atomsN = wn / atomCols;
  Expr lane = floorMod(tid, makeInt(32));
  RegisterLayout grid = RegisterLayout::mma(m, n, warpsM, warpsN, 0, colMajor, V);
  Expr warpRow = grid.warpRow(tid), warpCol = grid.warpCol(tid);
  Expr atom = floorDiv(reg, makeInt(2 * V)), q = floorMod(reg, makeInt(2 * V));
  Expr row = add(add(mul(warpRow, makeInt(wm)), mul(floorDiv(atom, makeInt(atomsN)), makeInt(16))),
                 add(mul(floorDiv(q, makeInt(V)), makeInt(8)), floorDiv(lane, makeInt(4))));
  Expr col = add(add(mul(warpCol, makeInt(wn)), mul(floorMod(atom, makeInt(atomsN)), makeInt(atomCols))),
                 add(mul(floorMod(lane, makeInt(4)), makeInt(V)), floorMod(q, makeInt(V))));
  return {row, col};
}

// ---------------------------------------------------------------------------
// Emission

bool ldmatrixOperandOk(const Region& reg) {
  int d0, d1;
  int64_t e0, e1, last, mn;
  if (!matrixDims(reg, &d0, &d1, &e0, &e1)) return false;
  const Buffer& b = reg.buffer;
  if (d1 != (int)b->shape.size() - 1) return false;
  if (!constInt(b->shape.back(), &last) || (last * 2) % 16 != 0) return false;
  if (!constInt(reg.ranges[d1].min, &mn) || mn % 8 != 0) return false;
  for (size_t d = 0; d + 1 < reg.ranges.size(); ++d)
    if (!constInt(reg.ranges[d].min, &mn)) return false;
  return true;
}

std::pair<Expr, Expr> ldmatrixAElement(const Expr& lane, const Expr& rowBase, const Expr& kk, bool transA) {
  if (!transA)
    return {add(rowBase, floorMod(lane, makeInt(16))), add(kk, mul(floorDiv(lane, makeInt(16)), makeInt(8)))};
  Expr q = floorDiv(lane, makeInt(8)), l8 = floorMod(lane, makeInt(8));
  return {add(rowBase, mul(floorMod(q, makeInt(2)), makeInt(8))), add(kk, add(mul(floorDiv(q, makeInt(2)), makeInt(8)), l8))};
}

std::pair<Expr, Expr> ldmatrixBElement(const Expr& lane, const Expr& colBase, const Expr& kk, bool transB, bool pair) {
  Expr q = floorDiv(lane, makeInt(8)), l8 = floorMod(lane, makeInt(8));
  if (transB)  // stored [N, K]
    return {add(kk, mul(floorMod(q, makeInt(2)), makeInt(8))),
            add(colBase, pair ? add(mul(floorDiv(q, makeInt(2)), makeInt(8)), l8) : l8)};
  // stored [K, N]
  return {add(kk, add(mul(floorMod(q, makeInt(2)), makeInt(8)), l8)),
          add(colBase, pair ? mul(floorDiv(q, makeInt(2)), makeInt(8)) : makeInt(0))};
}

std::vector<Expr> operandIndex(const Region& r, bool transposed, const Expr& first, const Expr& second) {
  int d0, d1;
  int64_t e0, e1;
  matrixDims(r, &d0, &d1, &e0, &e1);
  std::vector<Expr> idx;
  for (auto& rg : r.ranges) idx.push_back(rg.min);
  idx[d0] = add(idx[d0], transposed ? second : first);
  idx[d1] = add(idx[d1], transposed ? first : second);
  return idx;
}

Expr registerAOperand(int64_t a, int64_t atomsK, const Expr& kk, int q, int64_t vector) {
  const int64_t V = vector;
  Expr base = mul(add(makeInt(a * atomsK), floorDiv(kk, makeInt(4 * V))), makeInt(2 * V));
  return add(base, makeInt((q / 2) * 2 * V + (q % 2) * V));
}

std::string KernelEmitter::registerAWord(const std::string& tile, const Expr& reg, int64_t vector) {
  auto at = [&](int64_t i) { return tile + "[" + expr(i ? add(reg, makeInt(i)) : reg) + "]"; };
  if (vector == 1) return "tlc::to_tf32(" + at(0) + ")";
  if (vector == 4) return "tlc::pack4_bytes(" + at(0) + ", " + at(1) + ", " + at(2) + ", " + at(3) + ")";
  return "tlc::pack2(" + at(0) + ", " + at(1) + ")";
}

bool KernelEmitter::emitGemmMma(const GemmStmt* g) {
  LocationScope at(*this, g->loc);
  MmaShape s;
  if (!mmaShapeOf(g, threads_, options_, &s)) return false;
  BufferInfo& cInfo = bufs_[g->c.buffer.get()];
  bool cRegister = cInfo.place == Placement::Register;
  if (cRegister) {
    // The accumulator's layout fixes the warp grid (see planMma), and on
    // CDNA the MFMA block.
    const int64_t lanes = s.mfma ? 64 : 32, rowStep = s.mfma ? cInfo.mfma : 16, colStep = s.mfma ? cInfo.mfma : 8;
    if (!cInfo.fragment || (cInfo.mfma != 0) != (s.mfma != 0) || cInfo.warpsM * cInfo.warpsN * lanes != threads_ ||
        s.m % (rowStep * cInfo.warpsM) || s.n % (colStep * cInfo.warpsN))
      return false;
    s.warpsM = cInfo.warpsM;
    s.warpsN = cInfo.warpsN;
    s.colMajor = cInfo.colMajor;
    if (s.mfma) {
      s.mfma = cInfo.mfma;
      s.kStep = mfmaKStep(s.kind, s.mfma, options_.arch);
      if (s.k % s.kStep) return false;
    }
  } else if (cInfo.place != Placement::Shared) {
    return false;
  }
  // A from registers: a tile of an mma group laid out over the gemm's rows
  // (cuda_fragment_layout.h, "Mma groups"), with the lane's columns per atom
  // of A's element type (registerOperandVector).
  const BufferInfo& aInfo = bufs_[g->a.buffer.get()];
  bool aRegister = aInfo.place == Placement::Register;
  const bool sixteen = s.kind == MmaKind::F16 || s.kind == MmaKind::BF16;
  const int64_t aVector = registerOperandVector(g->a.buffer->dtype);
  // MFMA reads a register A through LDS (cuda_mfma.cpp), in any accumulator layout.
  if (aRegister && !(aInfo.fragment && cRegister &&
                     (s.mfma ? sixteen
                             : !aInfo.mfma && s.warpsN == 1 && aInfo.warpsN == 1 && aInfo.warpsM == s.warpsM &&
                                   aInfo.mmaVector == aVector) &&
                     !g->transA && isFullRegion(g->a)))
    return false;
  if (!aRegister && aInfo.place != Placement::Shared) return false;
  if (bufs_[g->b.buffer.get()].place != Placement::Shared) return false;

  int64_t wm = s.m / s.warpsM, wn = s.n / s.warpsN, am = wm / 16, an = wn / 8;
  int64_t regs = s.mfma ? (wm / s.mfma) * (wn / s.mfma) * (s.mfma * s.mfma / 64) : am * an * 4;
  bool intMma = s.kind == MmaKind::S8;
  bool byteMma = isByteMma(s.kind);
  DType accT = intMma ? DType::Int32 : DType::Float32;
  std::string accName;
  open("");
  Var lane = makeVar("lane"), wr = makeVar("warp_m"), wc = makeVar("warp_n");
  for (auto& v : {lane, wr, wc}) markNonNegative(v);
  if (!s.mfma) {
    line("const int " + varName(lane) + " = tid % 32;");
    std::string gridRow = std::to_string(s.colMajor ? s.warpsM : s.warpsN);
    line("const int " + varName(s.colMajor ? wc : wr) + " = (tid / 32) / " + gridRow + ";");
    line("const int " + varName(s.colMajor ? wr : wc) + " = (tid / 32) % " + gridRow + ";");
  }
  Var r = makeVar("r");
  markNonNegative(r);
  auto cIndex = [&](const Expr& regExpr) {
    auto [i, j] = mmaAccumulatorIndex(s.m, s.n, s.warpsM, s.warpsN, threadIdx(), regExpr, s.mfma, s.colMajor);
    int c0, c1;
    int64_t e0, e1;
    matrixDims(g->c, &c0, &c1, &e0, &e1);
    std::vector<Expr> idx;
    for (auto& rg : g->c.ranges) idx.push_back(rg.min);
    idx[c0] = add(idx[c0], i);
    idx[c1] = add(idx[c1], j);
    return idx;
  };
  bool useTemp = !cRegister || g->c.buffer->dtype != accT;
  if (useTemp) {
    accName = fresh("acc");
    line(typeName(accT) + " " + accName + "[" + std::to_string(regs) + "];");
    open("#pragma unroll\n" + std::string(indent_ * 2, ' ') + "for (int " + varName(r) + " = 0; " + varName(r) + " < " +
         std::to_string(regs) + "; ++" + varName(r) + ")");
    if (g->clearAccum) {
      line(accName + "[" + varName(r) + "] = 0;");
    } else {
      std::string src = cRegister ? cInfo.name + "[" + varName(r) + "]" : access(g->c.buffer, cIndex(makeVarRef(r)));
      line(accName + "[" + varName(r) + "] = " + cast(accT, g->c.buffer->dtype, src) + ";");
    }
    close();
  } else {
    accName = cInfo.name;
    if (g->clearAccum) line("for (int r_ = 0; r_ < " + std::to_string(regs) + "; ++r_) " + accName + "[r_] = 0;");
  }

  auto storeBack = [&] {
    if (!useTemp) return;
    open("#pragma unroll\n" + std::string(indent_ * 2, ' ') + "for (int " + varName(r) + " = 0; " + varName(r) + " < " +
         std::to_string(regs) + "; ++" + varName(r) + ")");
    std::string dst = cRegister ? cInfo.name + "[" + varName(r) + "]" : access(g->c.buffer, cIndex(makeVarRef(r)));
    line(dst + " = " + cast(g->c.buffer->dtype, accT, accName + "[" + varName(r) + "]") + ";");
    close();
  };
  if (s.mfma) {
    emitGemmMfma(g, s, accName);
    storeBack();
    close();
    return true;
  }
  if (!options_.dialect().nvidiaTensorCores) {
    emitGemmLayoutFma(g, s, accName, regs);
    storeBack();
    close();
    return true;
  }

  // Operand element (row, k) of A and (k, col) of B as buffer indices.
  auto aIndex = [&](const Expr& row, const Expr& k) { return operandIndex(g->a, g->transA, row, k); };
  auto bIndex = [&](const Expr& k, const Expr& col) { return operandIndex(g->b, g->transB, k, col); };
  bool f16 = s.kind == MmaKind::F16 || s.kind == MmaKind::BF16;
  bool ldA = f16 && !aRegister && ldmatrixOperandOk(g->a), ldB = f16 && ldmatrixOperandOk(g->b);
  // 8-bit operands whose 4 bytes per register lie along k in a row of a
  // shared tile: one word load, where the tile's rows (padding included)
  // and layout runs keep words whole and the region starts at a word, at
  // constant origins.
  auto wordOk = [&](const Region& reg) {
    const Buffer& b = reg.buffer;
    const BufferInfo& bi = bufs_[b.get()];
    int64_t mn;
    if (bi.place != Placement::Shared || dtypeBytes(b->dtype) != 1 || splitRows(bi, b, 4) ||
        (bi.layoutRun && bi.layoutRun % 4))
      return false;
    for (size_t d = 0; d < reg.ranges.size(); ++d)
      if (!constInt(reg.ranges[d].min, &mn) || (d + 1 == reg.ranges.size() && mn % 4)) return false;
    int64_t last = 0;
    return constInt(b->shape.back(), &last) && last % 4 == 0;
  };
  bool wordA = !aRegister && !g->transA && wordOk(g->a), wordB = g->transB && wordOk(g->b);

  Var kk = makeVar("kk");
  markNonNegative(kk);
  open("#pragma unroll\n" + std::string(indent_ * 2, ' ') + "for (int " + varName(kk) + " = 0; " + varName(kk) + " < " +
       std::to_string(s.k) + "; " + varName(kk) + " += " + std::to_string(s.kStep) + ")");
  std::string af = fresh("a_frag"), bfr = fresh("b_frag");
  line("unsigned " + af + "[" + std::to_string(am) + "][4];");
  line("unsigned " + bfr + "[" + std::to_string(an) + "][2];");
  Expr laneE = makeVarRef(lane), kkE = makeVarRef(kk);
  Expr g8 = floorDiv(laneE, makeInt(4)), t4 = floorMod(laneE, makeInt(4));
  Expr aRowBase = mul(makeVarRef(wr), makeInt(wm)), bColBase = mul(makeVarRef(wc), makeInt(wn));
  auto elem = [&](const Buffer& b, const std::vector<Expr>& idx) { return access(b, idx); };
  for (int64_t a = 0; a < am; ++a) {
    Expr rowBase = add(aRowBase, makeInt(a * 16));
    std::string dst = af + "[" + std::to_string(a) + "]";
    if (aRegister) {
      for (int q = 0; q < 4; ++q)
        line(dst + "[" + std::to_string(q) + "] = " +
             registerAWord(aInfo.name, registerAOperand(a, s.k / (4 * aVector), kkE, q, aVector), aVector) + ";");
      continue;
    }
    if (ldA) {
      auto [row, k] = ldmatrixAElement(laneE, rowBase, kkE, g->transA);
      line(std::string(g->transA ? "tlc::ldmatrix_x4_trans(" : "tlc::ldmatrix_x4(") + dst + ", &" +
           elem(g->a.buffer, aIndex(row, k)) + ");");
      continue;
    }
    for (int q = 0; q < 4; ++q) {
      Expr row = add(rowBase, add(g8, makeInt((q % 2) * 8)));
      std::string v;
      if (s.kind == MmaKind::TF32) {
        Expr k = add(kkE, add(t4, makeInt((q / 2) * 4)));
        v = "tlc::to_tf32(" + elem(g->a.buffer, aIndex(row, k)) + ")";
      } else if (byteMma && wordA) {
        Expr k = add(kkE, add(mul(t4, makeInt(4)), makeInt((q / 2) * 16)));
        v = "tlc::load_word(&" + elem(g->a.buffer, aIndex(row, k)) + ")";
      } else if (byteMma) {
        Expr k = add(kkE, add(mul(t4, makeInt(4)), makeInt((q / 2) * 16)));
        v = "tlc::pack4_bytes(";
        for (int e = 0; e < 4; ++e) v += (e ? ", " : "") + elem(g->a.buffer, aIndex(row, add(k, makeInt(e))));
        v += ")";
      } else {
        Expr k = add(kkE, add(mul(t4, makeInt(2)), makeInt((q / 2) * 8)));
        v = "tlc::pack2(" + elem(g->a.buffer, aIndex(row, k)) + ", " + elem(g->a.buffer, aIndex(row, add(k, makeInt(1)))) + ")";
      }
      line(dst + "[" + std::to_string(q) + "] = " + v + ";");
    }
  }
  const char* fn = s.kind == MmaKind::F16      ? "tlc::mma_m16n8k16_f16"
                   : s.kind == MmaKind::BF16   ? "tlc::mma_m16n8k16_bf16"
                   : s.kind == MmaKind::TF32   ? "tlc::mma_m16n8k8_tf32"
                   : s.kind == MmaKind::F8E4M3 ? "tlc::mma_m16n8k32_e4m3"
                   : s.kind == MmaKind::F8E5M2 ? "tlc::mma_m16n8k32_e5m2"
                                               : "tlc::mma_m16n8k32_s8";
  // Each B atom is loaded right before the MMAs that use it, so only a pair
  // of B fragments is live at a time (register pressure).
  auto mmaColumn = [&](int64_t b) {
    for (int64_t a = 0; a < am; ++a)
      line(std::string(fn) + "(&" + accName + "[" + std::to_string((a * an + b) * 4) + "], " + af + "[" +
           std::to_string(a) + "], " + bfr + "[" + std::to_string(b) + "]);");
  };
  for (int64_t b = 0; b < an; ++b) {
    Expr colBase = add(bColBase, makeInt(b * 8));
    std::string dst = bfr + "[" + std::to_string(b) + "]";
    if (ldB) {
      bool pair = b + 1 < an && b % 2 == 0;
      if (!pair && b % 2 == 1) continue;  // loaded with the previous atom
      auto [k, col] = ldmatrixBElement(laneE, colBase, kkE, g->transB, pair);
      std::string addr = "&" + elem(g->b.buffer, bIndex(k, col));
      if (pair) {
        std::string tmp = fresh("b4");
        line("unsigned " + tmp + "[4];");
        line(std::string(g->transB ? "tlc::ldmatrix_x4(" : "tlc::ldmatrix_x4_trans(") + tmp + ", " + addr + ");");
        line(dst + "[0] = " + tmp + "[0]; " + dst + "[1] = " + tmp + "[1];");
        line(bfr + "[" + std::to_string(b + 1) + "][0] = " + tmp + "[2]; " + bfr + "[" + std::to_string(b + 1) + "][1] = " +
             tmp + "[3];");
      } else {
        line(std::string(g->transB ? "tlc::ldmatrix_x2(" : "tlc::ldmatrix_x2_trans(") + dst + ", " + addr + ");");
      }
      mmaColumn(b);
      if (pair) mmaColumn(b + 1);
      continue;
    }
    for (int q = 0; q < 2; ++q) {
      Expr col = add(colBase, g8);
      std::string v;
      if (s.kind == MmaKind::TF32) {
        Expr k = add(kkE, add(t4, makeInt(q * 4)));
        v = "tlc::to_tf32(" + elem(g->b.buffer, bIndex(k, col)) + ")";
      } else if (byteMma && wordB) {
        Expr k = add(kkE, add(mul(t4, makeInt(4)), makeInt(q * 16)));
        v = "tlc::load_word(&" + elem(g->b.buffer, bIndex(k, col)) + ")";
      } else if (byteMma) {
        Expr k = add(kkE, add(mul(t4, makeInt(4)), makeInt(q * 16)));
        v = "tlc::pack4_bytes(";
        for (int e = 0; e < 4; ++e) v += (e ? ", " : "") + elem(g->b.buffer, bIndex(add(k, makeInt(e)), col));
        v += ")";
      } else {
        Expr k = add(kkE, add(mul(t4, makeInt(2)), makeInt(q * 8)));
        v = "tlc::pack2(" + elem(g->b.buffer, bIndex(k, col)) + ", " + elem(g->b.buffer, bIndex(add(k, makeInt(1)), col)) + ")";
      }
      line(dst + "[" + std::to_string(q) + "] = " + v + ";");
    }
    mmaColumn(b);
  }
  close();
  storeBack();
  close();
  return true;
}

}  // namespace tlc::cuda
