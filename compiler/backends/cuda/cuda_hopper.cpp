#include "compiler/backends/cuda/cuda_hopper.h"

#include <functional>

#include "compiler/backends/cuda/cuda_layout_plan.h"
#include "compiler/ir/buffer_access.h"
#include "compiler/ir/buffer_writes.h"
#include "compiler/backends/cuda/tensor_map.h"
#include "compiler/ir/gather_nest.h"
#include "compiler/ir/substitute.h"
#include "compiler/ir/var_uses.h"

namespace tlc::cuda {

using namespace ir;

int64_t panelSpan(int64_t cols, int64_t elemBytes) {
  int64_t rowBytes = cols * elemBytes;
  int64_t span = rowBytes >= 128 ? 128 : rowBytes;
  return (span == 128 || span == 64 || span == 32) && rowBytes % span == 0 ? span : 0;
}

void setPanelShape(const BufferNode* tile, int64_t rows, int64_t cols, int64_t span, HopperOperand* out) {
  out->tile = tile;
  out->rows = rows;
  out->cols = cols;
  out->span = span;
  out->panels = cols * dtypeBytes(tile->dtype) / span;
  out->stageBytes = rows * cols * dtypeBytes(tile->dtype);
}

bool hasGathers(const HopperMainloop& h) {
  for (const HopperOperand& op : h.tiles)
    if (op.gather) return true;
  return false;
}

int64_t gatheredBytes(const HopperMainloop& h) {
  int64_t bytes = 0;
  for (const HopperOperand& op : h.tiles) {
    if (!op.gather || !op.tile) continue;
    int64_t n = dtypeBytes(op.tile->dtype);
    for (const Expr& e : op.tile->shape) {
      int64_t d = 0;
      n *= constInt(e, &d) ? d : 0;
    }
    bytes += n;
  }
  return bytes;
}

bool gathersIntoPanels(const HopperMainloop& h) {
  for (const HopperOperand& op : h.tiles)
    if (op.gather && op.inPanels()) return true;
  return false;
}

const HopperOperand* loopTile(const HopperMainloop& h, const BufferNode* b) {
  for (const HopperOperand& op : h.tiles)
    if (b == op.tile) return &op;
  return nullptr;
}

bool hopperTarget(const CudaOptions& options) {
  return options.arch == "sm_90a" && options.tensorCores && options.asyncCopy && options.warpSpecialize && options.tma;
}

namespace {

// Counts the statements of a kernel that touch each buffer.
class TouchCount : public BufferAccessVisitor {
 public:
  std::unordered_map<const BufferNode*, int> count;
  void visitStmt(const Stmt& s) {
    seen_.clear();
    visit(s);
    for (auto* b : seen_) count[b]++;
  }

 protected:
  void read(const Buffer& b) override { seen_.insert(b.get()); }
  void write(const Buffer& b) override { seen_.insert(b.get()); }

 private:
  std::unordered_set<const BufferNode*> seen_;
};

// Uses of values the producer warpgroup cannot compute itself: variables
// bound in the kernel (`vars`), and loads other than of global tensors that
// the kernel never writes (those it may read again: a sequence's offset, an
// expert's first row).
struct ProducerUses : UsesVars {
  const std::set<const BufferNode*>& written;
  bool computed = false;  // found, or a load of a buffer the kernel computes
  ProducerUses(const std::unordered_set<const VarNode*>& v, const std::set<const BufferNode*>& w)
      : UsesVars(v), written(w) {}
  void visitVarRef(const VarRef* r) override {
    UsesVars::visitVarRef(r);
    computed |= found;
  }
  void visitLoad(const Load* l) override {
    UsesVars::visitLoad(l);
    if (l->buffer->scope != MemScope::Global || written.count(l->buffer.get())) computed = true;
  }
};

bool fail(std::string* why, const std::string& text) {
  if (why) *why = text;
  return false;
}

// The TMA operand of one producer copy: a whole 16-bit shared tile filled
// from a box of a global tensor whose two non-unit dimensions are the tile's,
// the tile's columns along the tensor's contiguous (last) dimension.
bool planOperand(const CopyStmt* c, HopperOperand* out, std::string* why) {
  const Buffer& tile = c->dst.buffer;
  const Buffer& src = c->src.buffer;
  int64_t rows, cols;
  if (tile->shape.size() != 2 || !constInt(tile->shape[0], &rows) || !constInt(tile->shape[1], &cols))
    return fail(why, "`" + tile->name + "` is not a two-dimensional tile of constant shape");
  if (!isFullRegion(c->dst)) return fail(why, "the copy into `" + tile->name + "` does not fill the whole tile");
  if (src->dtype != tile->dtype) return fail(why, "the copy into `" + tile->name + "` converts its elements");
  if (src->shape.size() > 5) return fail(why, "`" + src->name + "` has more than 5 dimensions");
  int d0, d1;
  int64_t e0, e1;
  if (!matrixDims(c->src, &d0, &d1, &e0, &e1) || e0 != rows || e1 != cols)
    return fail(why, "the region of `" + src->name + "` is not a [" + std::to_string(rows) + ", " +
                         std::to_string(cols) + "] box of two of its dimensions");
  if (d1 != (int)src->shape.size() - 1)
    return fail(why, "the tile's rows do not run along the contiguous dimension of `" + src->name + "`");
  int64_t rowBytes = cols * dtypeBytes(tile->dtype);
  int64_t span = panelSpan(cols, dtypeBytes(tile->dtype));
  if (!span)
    return fail(why, "the rows of `" + tile->name + "` are " + std::to_string(rowBytes) +
                         " bytes: TMA tiles need rows of 32, 64 or a multiple of 128 bytes");
  if (rows > 256 || rows % 8) return fail(why, "`" + tile->name + "` has " + std::to_string(rows) +
                                                   " rows: TMA tiles need a multiple of 8, at most 256");
  // `out` is left as it was when the copy is not a TMA operand: the caller
  // may plan the copy for the producer threads in it instead.
  HopperOperand op;
  op.copy = c;
  setPanelShape(tile.get(), rows, cols, span, &op);
  op.rowDim = d0;
  op.colDim = d1;
  if (op.stageBytes % 1024) return fail(why, "a stage of `" + tile->name + "` is not a multiple of 1024 bytes");
  *out = op;
  return true;
}

// The values of the kernel's top-level lets before `f` whose values use
// only block indices and kernel arguments: the producer warpgroup runs
// before them, so its copies' regions use their values instead.
VarMap producerLets(const KernelStmt& kernel, const ForStmt* f) {
  VarMap lets;
  BoundVars bound;
  bound.visit(kernel.body);
  std::set<const BufferNode*> written = collectBufferWrites(kernel.body).buffers;
  std::function<bool(const Stmt&)> walk = [&](const Stmt& s) {
    if (!s) return false;
    if (s.get() == f) return true;
    if (auto* seq = as<SeqStmt>(s)) {
      for (auto& x : seq->stmts)
        if (walk(x)) return true;
      return false;
    }
    if (auto* l = as<LetStmt>(s)) {
      Expr v = substitute(l->value, lets);
      ProducerUses uses(bound.vars, written);
      uses.visit(v);
      if (!uses.computed) lets[l->var.get()] = v;
      return walk(l->body);
    }
    return false;
  };
  walk(kernel.body);
  return lets;
}

// `c` with `lets` (producerLets) substituted into its regions: the copy the
// producer warpgroup issues.
std::shared_ptr<CopyStmt> producerCopyOf(const CopyStmt* c, const VarMap& lets) {
  auto copy = std::make_shared<CopyStmt>(*c);
  for (Region* r : {&copy->src, &copy->dst})
    for (auto& rg : r->ranges) {
      rg.min = substitute(rg.min, lets);
      rg.extent = substitute(rg.extent, lets);
    }
  return copy;
}

// The tile of a gather nest, written by the producer warpgroup's threads,
// whose values the producer can compute (the lets before the loop
// substituted, nothing else the kernel computes). A tile a gemm reads
// (`panels`) is written in the panel layout wgmma reads: a two-dimensional
// 16-bit, 8-bit or 32-bit tile of panel-wide rows; any other keeps its own
// layout.
bool planGatherOperand(const KernelStmt& kernel, const ForStmt* f, const GatherNest& g, const VarMap& lets,
                       bool panels, HopperOperand* out, std::string* why) {
  const BufferNode* tile = g.tile;
  if (!panels) {
    out->tile = tile;
    out->stageBytes = dtypeBytes(tile->dtype);
    for (const Expr& e : tile->shape) {
      int64_t n = 0;
      if (!constInt(e, &n)) return fail(why, "`" + tile->name + "` is not a tile of constant shape");
      out->stageBytes *= n;
    }
  } else {
    int64_t rows, cols;
    if (tile->shape.size() != 2 || !constInt(tile->shape[0], &rows) || !constInt(tile->shape[1], &cols))
      return fail(why, "`" + tile->name + "` is not a two-dimensional tile of constant shape");
    int64_t span = panelSpan(cols, dtypeBytes(tile->dtype));
    if (!span || rows > 256 || rows % 8)
      return fail(why, "the gathered tile `" + tile->name + "` has no wgmma panel shape");
    setPanelShape(tile, rows, cols, span, out);
    if (out->stageBytes % 1024) return fail(why, "a stage of `" + tile->name + "` is not a multiple of 1024 bytes");
  }
  Stmt substituted = substitute(Stmt(g.outer, [](const StmtNode*) {}), lets);
  auto pg = gatherNest(substituted, f);
  if (!pg) return fail(why, "the gather into `" + tile->name + "` does not keep its form in the producer");
  BoundVars bound;
  bound.visit(kernel.body);
  bound.vars.erase(f->var.get());
  BoundVars nest;
  nest.visit(substituted);
  for (const VarNode* v : nest.vars) bound.vars.erase(v);
  std::set<const BufferNode*> written = collectBufferWrites(kernel.body).buffers;
  ProducerUses uses(bound.vars, written);
  uses.visit(substituted);
  if (uses.computed) return fail(why, "the gather into `" + tile->name + "` uses values computed in the kernel");
  out->gather = g;
  out->producerGather = pg;
  out->gatherStmt = substituted;
  out->rowDim = 0;
  out->colDim = 1;
  return true;
}

// The im2col tile of a gather nest T.c2d_im2col wrote (ir/im2col.h),
// loaded by TMA in im2col mode into the panels wgmma reads: false when the
// nest is no longer that nest, or when TMA cannot load it (the tile's
// columns must lie in one filter tap: C a multiple of BK; the corners of
// the filter's bounding box within -128..127; strides of at most 8), and
// the producer threads then gather it.
bool planIm2colOperand(const GatherNest& g, const VarMap& lets, const std::unordered_set<const VarNode*>& bound,
                       const std::set<const BufferNode*>& written, HopperOperand* out) {
  std::optional<Im2colMatch> m = matchIm2col(g);
  if (!m) return false;
  const BufferNode* x = m->x;
  TmaDType type;
  int elemBytes = 0;
  int64_t channels = 0;
  if (!tmaDTypeOf(std::string(dtypeName(x->dtype)), &type, &elemBytes) || !constInt(x->shape[3], &channels) ||
      channels % m->cols)
    return false;
  const ir::Im2colGeometry& geo = m->geometry;
  for (int axis = 0; axis < 2; ++axis) {
    int64_t upper = geo.pad[axis] - geo.dilation[axis] * (geo.kernel[axis] - 1);
    if (geo.pad[axis] > 127 || upper < -128 || upper > 127 || geo.stride[axis] > 8) return false;
  }
  int64_t span = panelSpan(m->cols, elemBytes);
  if (!span || m->rows > 256 || m->rows % 8) return false;
  HopperOperand op;
  setPanelShape(m->tile, m->rows, m->cols, span, &op);
  if (op.stageBytes % 1024) return false;
  m->nhwStep = substitute(m->nhwStep, lets);
  m->cStep = substitute(m->cStep, lets);
  ProducerUses uses(bound, written);
  uses.visit(m->nhwStep);
  uses.visit(m->cStep);
  if (uses.computed) return false;
  op.im2col = m;
  op.rowDim = 0;
  op.colDim = 1;
  *out = op;
  return true;
}

// Whether the rows of a copy's tile are runs of whole 4-byte words of its
// source's rows, which the producer threads can move by cp.async.
bool wordRuns(const CopyStmt* c) {
  const Buffer& tile = c->dst.buffer;
  int64_t eb = dtypeBytes(tile->dtype), cols = 0, srcCols = 0;
  if (c->src.buffer->dtype != tile->dtype || tile->shape.empty() || !constInt(tile->shape.back(), &cols)) return false;
  if (eb >= 4) return true;
  return cols * eb % 4 == 0 && constInt(c->src.ranges.back().extent, &srcCols) && srcCols == cols;
}

// The general form: every stage-0 copy a tensor copy, the tiles used by
// nothing outside the loop.
bool planGeneralLoop(const KernelStmt& kernel, const ForStmt* f, const PipelineSchedule& sched, int64_t threads,
                     HopperMainloop* out, std::string* why) {
  VarMap lets = producerLets(kernel, f);
  BoundVars bound;
  bound.visit(kernel.body);
  bound.vars.erase(f->var.get());
  std::set<const BufferNode*> written = collectBufferWrites(kernel.body).buffers;
  // The tiles the loop's gemms read, which wgmma reads in panels.
  std::unordered_set<const BufferNode*> gemmTiles;
  struct Gemms : IRVisitor {
    std::unordered_set<const BufferNode*>* tiles;
    void visitGemm(const GemmStmt* g) override {
      tiles->insert(g->a.buffer.get());
      tiles->insert(g->b.buffer.get());
    }
  } gemms;
  gemms.tiles = &gemmTiles;
  gemms.visit(f->body);
  for (const CopyStmt* c : sched.producers) {
    auto copy = producerCopyOf(c, lets);
    ProducerUses uses(bound.vars, written);
    uses.visitRegion(copy->src);
    uses.visitRegion(copy->dst);
    if (uses.computed) return fail(why, "a copy's region uses values computed in the kernel");
    HopperOperand op;
    std::string tmaWhy;
    if (planOperand(copy.get(), &op, &tmaWhy)) {
      op.copy = c;
      op.substituted = copy;
      out->tiles.push_back(op);
      continue;
    }
    // A copy TMA cannot describe (a column of scales, rows of an odd
    // width): the producer threads issue it, as the gather nest it is, by
    // runs of asynchronous copies where it has runs of 4 bytes or more,
    // element by element otherwise (a column of 2-byte scales: the producer
    // thread then waits for its loads, off the consumers' path).
    Stmt nest = copyAsGatherNest(c);
    std::optional<GatherNest> g = nest ? gatherNest(nest, f) : std::nullopt;
    if (!g) return fail(why, tmaWhy);
    if (!planGatherOperand(kernel, f, *g, lets, gemmTiles.count(g->tile) > 0, &op, why)) return false;
    op.copyNest = nest;
    if (!wordRuns(c)) op.elementCopy = copy;
    out->tiles.push_back(op);
  }
  for (const GatherNest& g : sched.gathers) {
    HopperOperand op;
    if (!(gemmTiles.count(g.tile) && planIm2colOperand(g, lets, bound.vars, written, &op)) &&
        !planGatherOperand(kernel, f, g, lets, true, &op, why))
      return false;
    out->tiles.push_back(op);
  }
  // Copies beside TMA ones are worth a producer of threads only when tensor
  // copies and the gemms they feed are the loop's work.
  bool tma = false, copiedByThreads = false;
  for (const HopperOperand& op : out->tiles) {
    tma |= op.tma();
    copiedByThreads |= op.copyNest != nullptr;
  }
  if (copiedByThreads && (!tma || gemmTiles.empty()))
    return fail(why, "the loop's copies are not tensor copies feeding a gemm");
  ProducerUses uses(bound.vars, written);
  uses.visit(substitute(f->min, lets));
  uses.visit(substitute(f->extent, lets));
  if (uses.computed) return fail(why, "the trip count uses values computed in the kernel");
  if (threads + 128 > 1024) return fail(why, "no room for a producer warpgroup beside " + std::to_string(threads) +
                                                 " threads");
  // The tiles are touched only inside the loop.
  LayoutAnnotations annotations = collectLayoutAnnotations(kernel);
  TouchCount outside;
  std::function<void(const Stmt&)> walk = [&](const Stmt& st) {
    if (auto* seq = as<SeqStmt>(st)) {
      for (auto& x : seq->stmts) walk(x);
    } else if (auto* l = as<LetStmt>(st)) {
      walk(l->body);
    } else if (st.get() != f) {
      outside.visitStmt(st);
    }
  };
  walk(kernel.body);
  for (const HopperOperand& op : out->tiles) {
    if (outside.count[op.tile]) return fail(why, "`" + op.tile->name + "` is used outside the loop");
    if (annotations.count(op.tile)) return fail(why, "`" + op.tile->name + "` has a layout annotation");
  }
  out->loop = f;
  out->stages = sched.depth;
  out->producerLets = lets;
  return true;
}

bool planLoop(const KernelStmt& kernel, const ForStmt* f, int64_t threads, const CudaOptions& options,
              HopperMainloop* out, std::string* why) {
  PipelineSchedule sched = pipelineSchedule(f);
  std::vector<Stmt> body = seqStmts(f->body);
  if (sched.empty() || sched.depth < 2) return fail(why, "the loop has no copies that run ahead");
  bool gemmForm = sched.producers.size() + sched.gathers.size() == 2 && body.size() == 3 &&
                  sched.produces(body[0].get()) && sched.produces(body[1].get()) && as<GemmStmt>(body[2]);
  if (!gemmForm) return planGeneralLoop(kernel, f, sched, threads, out, why);
  auto* g = as<GemmStmt>(body[2]);
  if (!g) return fail(why, "the loop body does not end with a gemm");
  if (g->clearAccum) return fail(why, "the gemm clears its accumulator");
  MmaShape s;
  if (!mmaShapeOf(g, threads, options, &s))
    return fail(why, "the gemm is not a float16, bfloat16, float8, tf32 or int8 tensor-core gemm");
  const bool s8 = s.kind == MmaKind::S8;
  DType accType = s8 ? DType::Int32 : DType::Float32;
  if (g->c.buffer->scope != MemScope::Fragment || g->c.buffer->dtype != accType || g->c.buffer->shape.size() != 2 ||
      !isFullRegion(g->c))
    return fail(why, std::string("the gemm does not accumulate into a whole ") + (s8 ? "int32" : "float32") +
                         " fragment");
  int64_t warps = threads / 32;
  if (s.m % (16 * warps))
    return fail(why, "wgmma gives each warp 16-row slices of the accumulator: a block of " + std::to_string(threads) +
                         " threads needs block_M to be a multiple of " + std::to_string(16 * warps) + ", not " +
                         std::to_string(s.m));
  if (s.n > 256) return fail(why, "the accumulator is wider than 256 columns");
  if (threads + 128 > 1024) return fail(why, "no room for a producer warpgroup beside " + std::to_string(threads) +
                                                 " threads");
  s.warpsM = threads / 32;
  s.warpsN = 1;
  if (!isFullRegion(g->a) || !isFullRegion(g->b)) return fail(why, "the gemm reads part of an operand tile");
  // The producer substitutes the kernel's lets before the loop (a split-K
  // gemm's per-block trip count) into the copies' regions and the trip count.
  VarMap lets = producerLets(kernel, f);
  // The producer warpgroup runs only the copies: their regions and the trip
  // count may use the loop variable, block indices and kernel arguments, not
  // values the kernel computes.
  BoundVars bound;
  bound.visit(kernel.body);
  bound.vars.erase(f->var.get());
  std::set<const BufferNode*> written = collectBufferWrites(kernel.body).buffers;
  // Each operand tile is filled by a copy (TMA), an im2col tile (TMA) or a
  // gather nest (cp.async).
  auto operand = [&](const Buffer& tile, HopperOperand* op) {
    for (const CopyStmt* c : sched.producers)
      if (c->dst.buffer.get() == tile.get()) {
        auto sc = producerCopyOf(c, lets);
        if (!planOperand(sc.get(), op, why)) return false;
        op->copy = c;
        op->substituted = sc;
        return true;
      }
    for (const GatherNest& gn : sched.gathers)
      if (gn.tile == tile.get())
        return planIm2colOperand(gn, lets, bound.vars, written, op) ||
               planGatherOperand(kernel, f, gn, lets, true, op, why);
    return fail(why, "the copies do not fill the gemm's two operands");
  };
  HopperOperand a, b;
  if (!operand(g->a.buffer, &a) || !operand(g->b.buffer, &b)) return false;
  // A is [M, K] (K contiguous: K-major) or, transposed, [K, M]; B is [K, N]
  // (N contiguous: MN-major) or, transposed, [N, K].
  a.mnMajor = g->transA;
  b.mnMajor = !g->transB;
  if (wgmmaKMajorOnly(s.kind) && (a.mnMajor || b.mnMajor))
    return fail(why, std::string(s8 ? "int8" : s.kind == MmaKind::TF32 ? "tf32" : "float8") +
                         " wgmma reads both operands K-major: A as [M, K] and B as [N, K] with transpose_B=True");
  if (a.mnMajor && a.span != 128) return fail(why, "a transposed A tile needs rows of at least 128 bytes");
  out->slices = s.m / (16 * warps);
  if (a.mnMajor && out->slices > 1)
    return fail(why, "a transposed A tile needs block_M = " + std::to_string(16 * warps) + " for " +
                         std::to_string(threads) + " threads");
  // Each wgmma of an MN-major B starts at a whole panel.
  int64_t panelElems = b.span / dtypeBytes(b.tile->dtype);
  if (b.mnMajor && s.n > panelElems && s.n % panelElems)
    return fail(why, "block_N must be a multiple of " + std::to_string(panelElems));
  // A layout annotation on a tile asks for that layout, which TMA does not
  // write; one on the accumulator may ask for shared memory.
  LayoutAnnotations annotations = collectLayoutAnnotations(kernel);
  if (annotations.count(a.tile) || annotations.count(b.tile))
    return fail(why, "an operand tile has a layout annotation");
  if (auto it = annotations.find(g->c.buffer.get());
      it != annotations.end() && it->second->layout.kind != LayoutKind::MmaAccumulator)
    return fail(why, "the accumulator has a layout annotation");
  // The tiles are touched only by their copy and the gemm.
  TouchCount touches;
  std::function<void(const Stmt&)> walk = [&](const Stmt& st) {
    if (auto* seq = as<SeqStmt>(st)) {
      for (auto& x : seq->stmts) walk(x);
    } else if (auto* l = as<LetStmt>(st)) {
      walk(l->body);
    } else if (st.get() == f) {
      for (auto& x : body) touches.visitStmt(x);
    } else {
      touches.visitStmt(st);
    }
  };
  walk(kernel.body);
  if (touches.count[a.tile] != 2 || touches.count[b.tile] != 2)
    return fail(why, "the operand tiles are used outside the loop's copies and gemm");
  ProducerUses uses(bound.vars, written);
  for (const HopperOperand* op : {&a, &b})
    if (op->copy) uses.visitRegion(op->producerCopy()->src);
  uses.visit(substitute(f->min, lets));
  uses.visit(substitute(f->extent, lets));
  if (uses.computed) return fail(why, "the copies' regions use values computed in the kernel");
  out->loop = f;
  out->producerLets = lets;
  out->gemm = g;
  out->a = a;
  out->b = b;
  out->tiles = {a, b};
  out->shape = s;
  out->stages = sched.depth;
  return true;
}

}  // namespace

int64_t hopperEntryRegisters(int64_t blocks, int64_t threads, int64_t producers) {
  return 65536 / blocks / (threads + producers) / 8 * 8;
}

bool hopperBlocksFit(int64_t blocks, int64_t threads, int64_t sharedBytes, int64_t maxSharedBytes,
                     int64_t instructionRegisters) {
  return blocks * (sharedBytes + 1024) <= maxSharedBytes &&
         hopperEntryRegisters(blocks, threads) >= instructionRegisters + 32;
}

bool gemmTakesTwoBlocks(int64_t threads, int64_t sharedBytes, int64_t maxSharedBytes, int64_t instructionRegisters) {
  return threads <= 128 && hopperBlocksFit(2, threads, sharedBytes, maxSharedBytes, instructionRegisters);
}

void chooseHopperOccupancy(HopperMainloop* plan, int64_t threads, int64_t sharedBytes, int64_t maxSharedBytes,
                           int64_t tileRegisters, int64_t instructionRegisters) {
  // Producer threads that gather compute addresses: they keep more (and,
  // once the blocks per SM are known, what the consumers can spare: below).
  plan->producerThreads = 128;
  plan->producerRegs = hasGathers(*plan) ? (threads <= 256 ? 56 : 40) : (threads <= 256 ? 40 : 24);
  // Registers: the launch gives each thread 65536 / blocks / (threads + 128),
  // rounded down to a multiple of 8 (the allocation unit); the producer
  // gives most of its share to the consumers. setmaxnreg.inc takes registers
  // only from those its block's setmaxnreg.dec released, so the consumers'
  // increase must not exceed the producer's decrease (a consumer asking for
  // more waits forever).
  auto consumerRegs = [&](int64_t blocks) {
    int64_t entry = hopperEntryRegisters(blocks, threads, plan->producerThreads);
    int64_t released = plan->producerThreads * (entry - plan->producerRegs);
    return std::min<int64_t>((entry + released / threads) / 8 * 8, 240);
  };
  // ptxas compiles the whole kernel, the consumers' code after their
  // setmaxnreg.inc included, within the count __launch_bounds__ implies (the
  // entry count). A wgmma whose accumulator does not fit there with 32
  // registers to spare is a fatal ptxas error ("Insufficient registers"),
  // not a spill: an m64n256 float32 wgmma (128 accumulator registers) needs
  // about 154, while two m64n128 ones accumulating the same 128 registers
  // compile within 128.
  auto fits = [&](int64_t blocks) {
    return hopperBlocksFit(blocks, threads, sharedBytes, maxSharedBytes, instructionRegisters);
  };
  plan->blocksPerSM = gemmTakesTwoBlocks(threads, sharedBytes, maxSharedBytes, instructionRegisters) ? 2 : 1;
  // A general-form loop whose register tiles are small (a dequantizing
  // loop's weight tile and a few accumulator columns, not a gemm's
  // accumulator) is bound by latency: it takes as many blocks per SM, up to
  // 2048 threads, as leave its consumers the registers of its tiles and 32
  // more.
  // setmaxnreg.dec must lower the count (ptxas rejects a producer count
  // above the kernel's: C7406), so a block count whose entry count is
  // below the producer's is out.
  if (!plan->gemm)
    for (int64_t blocks = 2048 / (threads + 128); blocks > plan->blocksPerSM; --blocks)
      if (fits(blocks) && hopperEntryRegisters(blocks, threads) >= plan->producerRegs &&
          consumerRegs(blocks) >= tileRegisters + 32) {
        plan->blocksPerSM = blocks;
        break;
      }
  // Producers that gather compute an address per chunk of their tiles: at
  // 56 registers the gather of a convolution's tile spilled to local memory
  // (ncu: a million spill requests, the producers waiting on them; ptxas
  // needed 88). They keep what the consumers can spare: the consumers keep
  // their register tiles and 64 more (the accumulators of a 256-row
  // dequantizing gemm spill below 192), and an increase of at least one
  // step of 8.
  //
  // A gathering producer issues a cp.async per 16 bytes of its tiles; at one
  // block per SM its one warpgroup is one warp per scheduler, whose runs'
  // address arithmetic then bounds the loop (a convolution's 128-row tile
  // ran slower than its 64-row one at two blocks per SM, bench/RESULTS.md
  // 2026-12-06). Two warpgroups share the runs where there are many (a
  // stage's gathered tiles of 16 KB: 8 runs of 16 bytes per thread of one
  // warpgroup; a dequantizing gemm's few scales stay with one) and each of
  // their threads keeps the registers a gather needs.
  auto gatherProducerRegs = [&](int64_t producers) {
    int64_t entry = std::min<int64_t>(hopperEntryRegisters(plan->blocksPerSM, threads, producers), 240);
    int64_t need = std::min<int64_t>((tileRegisters + 64 + 7) / 8 * 8, 240);
    int64_t spare = need > entry ? (need - entry) * threads / producers : 8 * ((threads + producers - 1) / producers);
    return std::max<int64_t>(plan->producerRegs, (entry - spare) / 8 * 8);
  };
  if (hasGathers(*plan)) {
    if (plan->blocksPerSM == 1 && gatheredBytes(*plan) >= kTwoProducersGatheredBytes && threads + 256 <= 1024 &&
        gatherProducerRegs(256) >= kGatherProducerRegisters && hopperEntryRegisters(1, threads, 256) >= instructionRegisters + 32)
      plan->producerThreads = 256;
    plan->producerRegs = gatherProducerRegs(plan->producerThreads);
  }
  plan->consumerRegs = consumerRegs(plan->blocksPerSM);
}

std::optional<HopperMainloop> planHopperMainloop(const KernelStmt& kernel, int64_t threads, const CudaOptions& options,
                                                 std::string* whyNot) {
  if (whyNot) whyNot->clear();
  if (!hopperTarget(options) || threads % 128) return std::nullopt;
  // The kernel's own statements, through the bodies of its lets.
  std::vector<Stmt> top;
  std::function<void(const Stmt&)> flatten = [&](const Stmt& s) {
    if (auto* seq = as<SeqStmt>(s)) {
      for (auto& x : seq->stmts) flatten(x);
    } else if (auto* l = as<LetStmt>(s)) {
      flatten(l->body);
    } else if (s) {
      top.push_back(s);
    }
  };
  flatten(kernel.body);
  for (const Stmt& st : top) {
    auto* f = as<ForStmt>(st);
    if (!f || f->forKind != ForKind::Pipelined || f->numStages < 2) continue;
    if (!f->warpSpecialize) {
      if (whyNot) *whyNot = "the loop asks for no warp specialization (warp_specialize=False)";
      return std::nullopt;
    }
    HopperMainloop plan;
    if (planLoop(kernel, f, threads, options, &plan, whyNot)) return plan;
    return std::nullopt;  // the first pipelined loop only
  }
  return std::nullopt;
}

}  // namespace tlc::cuda
