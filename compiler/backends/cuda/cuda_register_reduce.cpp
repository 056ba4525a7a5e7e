// Reductions of register tiles (cuda_kernel_emitter.h): rows held by one
// warp or several, columns, and the deferral of an accumulating reduction's
// combine across threads to the end of its loop.
#include "compiler/backends/cuda/cuda_kernel_emitter.h"
#include "compiler/backends/cuda/cuda_region_index.h"
#include "compiler/ir/buffer_access.h"
#include "compiler/ir/loop_jumps.h"

namespace tlc::cuda {

using namespace ir;

KernelEmitter::ReduceOps KernelEmitter::reduceOps(const ReduceStmt* r) {
  ReduceOps o;
  DType td = r->dst.buffer->dtype;
  o.acc = isLowPrecisionFloat(td) ? DType::Float32 : td;
  o.accType = typeName(o.acc);
  bool max = r->reduceKind == ReduceKind::Max || r->reduceKind == ReduceKind::AbsMax;
  o.isSum = r->reduceKind == ReduceKind::Sum || r->reduceKind == ReduceKind::AbsSum;
  o.isAbs = r->reduceKind == ReduceKind::AbsSum || r->reduceKind == ReduceKind::AbsMax;
  o.identity = o.isSum || r->reduceKind == ReduceKind::AbsMax ? cast(o.acc, DType::Int32, "0")
               : max                                          ? "tlc::lowest<" + o.accType + ">()"
                                                              : "tlc::highest<" + o.accType + ">()";
  o.op = o.isSum ? "tlc::SumOp()" : max ? "tlc::MaxOp()" : "tlc::MinOp()";
  std::string A = o.accType;
  bool sum = o.isSum;
  o.combine = [A, sum, max](const std::string& a, const std::string& b) {
    if (sum) return "(" + a + " + " + b + ")";
    return std::string(max ? "tlc::max<" : "tlc::min<") + A + ">(" + a + ", " + b + ")";
  };
  auto it = bufs_.find(r->src.buffer.get());
  if (it != bufs_.end() && it->second.tile) {
    std::string name = it->second.name;
    DType ts = r->src.buffer->dtype, acc = o.acc;
    bool isAbs = o.isAbs;
    o.value = [this, name, ts, acc, isAbs](const std::string& reg) {
      std::string v = cast(acc, ts, name + "[" + reg + "]");
      return isAbs ? "tlc::abs(" + v + ")" : v;
    };
  }
  return o;
}

void KernelEmitter::emitRegisterReduce(const ReduceStmt* r, ReducePart part) {
  ReduceOps o = reduceOps(r);
  const RegisterLayout& l = bufs_[r->src.buffer.get()].tile->layout;
  TLC_CHECK(r->dim == 0 || l.rowWarps(warpLanes()) == 1 || !l.mfma, "an MFMA tile reduces rows held by one wavefront");
  if (r->dim == 0) emitColumnReduce(r, o, part);
  else if (l.rowWarps(warpLanes()) > 1 && part != ReducePart::InThread) emitWarpSpanningReduce(r, o, part);
  else emitRowReduce(r, o, part);
}

void KernelEmitter::emitRowReduce(const ReduceStmt* r, const ReduceOps& o, ReducePart part) {
  const RegisterLayout& l = bufs_[r->src.buffer.get()].tile->layout;
  DType td = r->dst.buffer->dtype;
  open("");
  Var ri = makeVar("ri"), c = makeVar("c");
  markNonNegative(ri);
  markNonNegative(c);
  std::string i = varName(ri), a = fresh("acc");
  open("#pragma unroll\n" + std::string(indent_ * 2, ' ') + "for (int " + i + " = 0; " + i + " < " +
       std::to_string(l.rowsPerThread()) + "; ++" + i + ")");
  std::string guard, target = reduceTarget(r, l, makeVarRef(ri), &guard);
  if (part == ReducePart::AcrossThreads) {
    line(o.accType + " " + a + " = " + cast(o.acc, td, target) + ";");
  } else {
    emitThreadFold(o, a, l, ri, c);
  }
  // The threads of a row are consecutive lanes of one warp (or wavefront).
  const int64_t lanes = l.rowLanes(warpLanes());
  if (part != ReducePart::InThread && lanes > 1)
    line(a + " = tlc::group_allreduce<" + std::to_string(lanes) + ">(" + a + ", " + o.op + ");");
  bool overwrite = r->clear || part == ReducePart::AcrossThreads;
  std::string result = overwrite ? a : o.combine(cast(o.acc, td, target), a);
  line((guard.empty() ? "" : "if (" + guard + ") ") + target + " = " + cast(td, o.acc, result) + ";");
  close();
  close();
}

void KernelEmitter::emitWarpSpanningReduce(const ReduceStmt* r, const ReduceOps& o, ReducePart part) {
  const RegisterLayout& l = bufs_[r->src.buffer.get()].tile->layout;
  DType td = r->dst.buffer->dtype;
  const std::string& A = o.accType;
  const int64_t W = warpLanes();
  std::string lanes = std::to_string(l.rowLanes(W)), rowWarps = std::to_string(l.rowWarps(W));
  std::string rows = std::to_string(l.rowsPerThread()), cols = std::to_string(l.colsPerThread());
  open("");
  Var ri = makeVar("ri"), c = makeVar("c");
  bindName(ri.get(), "ri");
  bindName(c.get(), "c");
  markNonNegative(ri);
  markNonNegative(c);
  std::string guard, target = reduceTarget(r, l, makeVarRef(ri), &guard);
  std::string scratch = fresh("row_partial"), a = fresh("acc"), first = fresh("first");
  // Its half of the scratch; a reduction with none (emitted where the
  // barrier analysis does not follow it) ends with a barrier instead.
  auto half = scratchHalf_.find(r);
  const int h = half == scratchHalf_.end() ? 0 : half->second;
  const bool finalBarrier = half == scratchHalf_.end() || scratchUntracked_ || part == ReducePart::AcrossThreads;
  // The partial results of a row's warps lie side by side from `first`:
  // row groups, the partial of warp w (of W lanes) of row slot p for
  // register row ri at ri * (T / W) + p * (G / W) + w, that is
  // ri * (T / W) + tid / W; an mma tile, the partial of its warp-grid column
  // wn for logical row i at i * warpsN + wn.
  std::string slot, firstOf;
  if (l.isMma()) {
    std::string row = expr(l.rowOf(makeVarRef(ri), threadIdx()));
    firstOf = "(" + row + ") * " + rowWarps;
    slot = firstOf + " + " + expr(l.warpCol(threadIdx()));
  } else {
    std::string warps = std::to_string(l.threads / W);
    slot = "ri * " + warps + " + tid / " + std::to_string(W);
    firstOf = "ri * " + warps + " + tid / " + std::to_string(l.group) + " * " + rowWarps;
  }
  line(A + "* " + scratch + " = reinterpret_cast<" + A + "*>(tlc_smem + " +
       std::to_string(rowScratchOffset_ + h * scratchHalfBytes_) + ");");
  line("#pragma unroll");
  open("for (int ri = 0; ri < " + rows + "; ++ri)");
  if (part == ReducePart::AcrossThreads) {
    line(A + " " + a + " = " + cast(o.acc, td, target) + ";");
  } else {
    emitThreadFold(o, a, l, ri, c);
  }
  line(a + " = tlc::group_allreduce<" + lanes + ">(" + a + ", " + o.op + ");");
  line("if (tid % " + lanes + " == 0) " + scratch + "[" + slot + "] = " + a + ";");
  close();
  line(syncThreads());
  // Every thread of a row combines the row's warps in the same order, so all hold the same result.
  line("#pragma unroll");
  open("for (int ri = 0; ri < " + rows + "; ++ri)");
  line("const int " + first + " = " + firstOf + ";");
  line(A + " " + a + " = " + scratch + "[" + first + "];");
  line("#pragma unroll");
  line("for (int w = 1; w < " + rowWarps + "; ++w) " + a + " = " + o.combine(a, scratch + "[" + first + " + w]") + ";");
  bool overwrite = r->clear || part == ReducePart::AcrossThreads;
  std::string result = overwrite ? a : o.combine(cast(o.acc, td, target), a);
  line((guard.empty() ? "" : "if (" + guard + ") ") + target + " = " + cast(td, o.acc, result) + ";");
  close();
  if (finalBarrier) {  // the next reduction reuses the scratch
    line(syncThreads());
    pendingAfter_ = Accesses();
  } else {
    // The barrier above ordered everything before it; after it, the reads
    // of the half and a target in shared memory are unordered.
    Accesses after;
    after.reads = scratchUse({h}).reads;
    if (!isRegister(r->dst.buffer)) after.writes.insert(r->dst.buffer.get());
    pendingAfter_ = after;
  }
  close();
}

int64_t KernelEmitter::planReductionScratch() {
  struct Scan : IRVisitor {
    std::vector<const ReduceStmt*> reductions;
    void visitReduce(const ReduceStmt* r) override { reductions.push_back(r); }
  } scan;
  scan.visit(kernel_.body);
  int64_t other = 0;
  int uses = 0;
  const int64_t W = warpLanes();
  for (const ReduceStmt* r : scan.reductions) {
    auto it = tiles_.buffers.find(r->src.buffer.get());
    if (it == tiles_.buffers.end()) continue;
    const RegisterLayout& l = it->second.layout;
    if (r->dim == 0) {
      // One partial result per warp, column register and lane of a row.
      other = std::max(other, (l.threads / W) * l.colsPerThread() * l.rowLanes(W) * 8);
      continue;
    }
    if (l.rowWarps(W) <= 1) continue;
    // One partial result (8 bytes: the widest accumulator) per warp and
    // register row, or per row and warp column of an mma tile.
    int64_t bytes = l.isMma() ? l.rows * l.warpsN * 8 : l.rowsPerThread() * (l.threads / W) * 8;
    scratchHalfBytes_ = std::max(scratchHalfBytes_, (bytes + 15) / 16 * 16);
    scratchHalf_[r] = uses++ % 2;
  }
  return std::max(other, std::min(uses, 2) * scratchHalfBytes_);
}

Accesses KernelEmitter::scratchAccesses(const Stmt& s) {
  struct Scan : IRVisitor {
    std::vector<const ReduceStmt*> reductions;
    std::vector<const GemmStmt*> gemms;
    void visitReduce(const ReduceStmt* r) override { reductions.push_back(r); }
    void visitGemm(const GemmStmt* g) override { gemms.push_back(g); }
  } scan;
  scan.visit(s);
  Accesses out;
  for (const ReduceStmt* r : scan.reductions) out.merge(scratchAccesses(r));
  // MFMA gemms stage an A operand held in registers there (cuda_mfma.cpp).
  if (options_.dialect().mfma)
    for (const GemmStmt* g : scan.gemms)
      if (isRegister(g->a.buffer)) out.merge(scratchUse({0, 1}));
  return out;
}

Accesses KernelEmitter::scratchAccesses(const ReduceStmt* r) {
  if (auto it = scratchHalf_.find(r); it != scratchHalf_.end()) return scratchUse({it->second});
  // Column reductions use the scratch from its start where warps hold the
  // same columns (emitColumnReduce), unless deferred past a loop (in-thread
  // inside it).
  if (r->dim == 0 && !deferred_.count(r))
    if (auto it = tiles_.buffers.find(r->src.buffer.get()); it != tiles_.buffers.end()) {
      const RegisterLayout& l = it->second.layout;
      if (l.threads / warpLanes() / l.rowWarps(warpLanes()) > 1) return scratchUse({0, 1});
    }
  return Accesses();
}

Accesses KernelEmitter::scratchUse(std::initializer_list<int> halves) {
  Accesses out;
  for (int h : halves) {
    if (!scratchBuffers_[h])
      scratchBuffers_[h] = makeBuffer("tlc_row_scratch" + std::to_string(h), DType::Float32, {}, MemScope::Shared);
    out.reads.insert(scratchBuffers_[h].get());
    out.writes.insert(scratchBuffers_[h].get());
  }
  return out;
}

void KernelEmitter::emitColumnReduce(const ReduceStmt* r, const ReduceOps& o, ReducePart part) {
  const BufferInfo &si = bufs_[r->src.buffer.get()], &di = bufs_[r->dst.buffer.get()];
  const RegisterLayout& l = si.tile->layout;
  DType td = r->dst.buffer->dtype;
  const std::string& A = o.accType;
  const int64_t W = warpLanes();
  int64_t cols = l.colsPerThread(), lanes = l.rowLanes(W), warps = l.threads / W, rowWarps = l.rowWarps(W);
  std::string C = std::to_string(cols), L = std::to_string(lanes), Ws = std::to_string(W);
  open("");
  std::string acc = fresh("col_acc");
  line(A + " " + acc + "[" + C + "];");
  line("#pragma unroll");
  open("for (int c = 0; c < " + C + "; ++c)");
  if (part == ReducePart::AcrossThreads) {
    line(acc + "[c] = " + cast(o.acc, td, di.name + "[c]") + ";");
  } else {
    line(acc + "[c] = " + o.identity + ";");
    line("#pragma unroll");
    Var ri = makeVar("ri");
    bindName(ri.get(), "ri");
    markNonNegative(ri);
    Expr rowInRange = l.rowInRange(makeVarRef(ri), threadIdx());
    std::string skip = regions::isAlwaysTrue(rowInRange) ? "" : "if (" + expr(rowInRange) + ") ";
    // The register of row slot ri, column c: ri * C + c in a row group.
    std::string reg = "ri * " + C + " + c";
    if (l.isMma()) {
      Var cv = makeVar("c");
      bindName(cv.get(), "c");
      markNonNegative(cv);
      reg = expr(l.tileRegisterAt(makeVarRef(ri), makeVarRef(cv)));
    }
    line("for (int ri = 0; ri < " + std::to_string(l.rowsPerThread()) + "; ++ri) " + skip + acc + "[c] = " +
         o.combine(acc + "[c]", o.value(reg)) + ";");
  }
  // Lanes l and l + G of a warp (G = the threads of a row, below W) hold
  // the same columns; a shuffle of a whole CDNA wavefront passes its width.
  if (part != ReducePart::InThread && lanes < W)
    line("for (int s = " + L + "; s < " + Ws + "; s <<= 1) " + acc + "[c] = " + o.op + "(" + acc +
         "[c], tlc::shfl_xor(" + acc + "[c], s" + (W > 32 ? ", " + Ws : std::string()) + "));");
  close();
  // Warps w and w + rowWarps hold the same columns (those of one warp
  // column of an mma tile).
  if (part != ReducePart::InThread && warps / rowWarps > 1) {
    std::string scratch = fresh("col_partial");
    line(A + "* " + scratch + " = reinterpret_cast<" + A + "*>(tlc_smem + " + std::to_string(rowScratchOffset_) + ");");
    line("#pragma unroll");
    line("for (int c = 0; c < " + C + "; ++c) if (tid % " + Ws + " < " + L + ") " + scratch + "[(tid / " + Ws +
         " * " + C + " + c) * " + L + " + tid % " + Ws + "] = " + acc + "[c];");
    line(syncThreads());
    line("#pragma unroll");
    open("for (int c = 0; c < " + C + "; ++c)");
    if (l.isMma()) {
      // The warps of the caller's warp column, one per warp row (the
      // grid's numbering: row-major, or column-major for warpgroups that
      // split the columns).
      Var wr = makeVar("wr");
      bindName(wr.get(), "wr");
      markNonNegative(wr);
      const std::string warp = expr(layout::Fragment::gridWarp(makeVarRef(wr), l.warpCol(threadIdx()), l.warpsM,
                                                              l.warpsN, l.colMajor));
      line(acc + "[c] = " + o.identity + ";");
      line("for (int wr = 0; wr < " + std::to_string(l.warpsM) + "; ++wr) " + acc + "[c] = " +
           o.combine(acc + "[c]", scratch + "[((" + warp + ") * " + C + " + c) * " + L + " + tid % " + L + "]") + ";");
    } else {
      std::string first = fresh("first");
      line("const int " + first + " = tid / " + Ws + " % " + std::to_string(rowWarps) + ";");
      line(acc + "[c] = " + scratch + "[(" + first + " * " + C + " + c) * " + L + " + tid % " + L + "];");
      line("for (int w = " + first + " + " + std::to_string(rowWarps) + "; w < " + std::to_string(warps) + "; w += " +
           std::to_string(rowWarps) + ") " + acc + "[c] = " +
           o.combine(acc + "[c]", scratch + "[(w * " + C + " + c) * " + L + " + tid % " + L + "]") + ";");
    }
    close();
    // The next reduction reuses the scratch; its target is registers.
    line(syncThreads());
    pendingAfter_ = Accesses();
  }
  line("#pragma unroll");
  open("for (int c = 0; c < " + C + "; ++c)");
  std::string target = di.name + "[c]";
  bool overwrite = r->clear || part == ReducePart::AcrossThreads;
  std::string result = overwrite ? acc + "[c]" : o.combine(cast(o.acc, td, target), acc + "[c]");
  line(target + " = " + cast(td, o.acc, result) + ";");
  close();
  close();
}

// The element of a row reduction's destination that row slot `ri` of the
// calling thread produces: its register for a register vector; for a vector
// in memory, the row's element, which the row's first thread writes (`guard`).
std::string KernelEmitter::reduceTarget(const ReduceStmt* r, const RegisterLayout& l, const Expr& ri, std::string* guard) {
  const BufferInfo& di = bufs_[r->dst.buffer.get()];
  if (di.tile) {
    guard->clear();
    return di.name + "[" + expr(ri) + "]";
  }
  *guard = "tid % " + std::to_string(l.group) + " == 0";
  if (l.paddedRows()) *guard += " && " + expr(l.rowInRange(ri, threadIdx()));
  return access(r->dst.buffer, {add(r->dst.ranges[0].min, l.rowOf(ri, threadIdx()))});
}

// A thread's registers of row slot `ri` folded into a new variable `a`. A
// maximum or minimum, or an integer sum, whose order does not change its
// value, folds into kFoldChains independent chains that are combined at the
// end, so that the reduction's latency is a quarter of a serial chain's
// (rows of 32 registers and more: top-k's 64-column rows, attention's
// scores); a floating-point sum keeps its order.
void KernelEmitter::emitThreadFold(const ReduceOps& o, const std::string& a, const RegisterLayout& l, const Var& ri,
                                   const Var& c) {
  constexpr int64_t kFoldChains = 4;
  markNonNegative(c);
  const int64_t cols = l.colsPerThread();
  const bool reorderable = !o.isSum || !isFloat(o.acc);
  const std::string ci = varName(c);
  auto element = [&] { return o.value(expr(l.tileRegisterAt(makeVarRef(ri), makeVarRef(c)))); };
  if (!reorderable || cols < 4 * kFoldChains || cols % kFoldChains) {
    line(o.accType + " " + a + " = " + o.identity + ";");
    line("#pragma unroll");
    line("for (int " + ci + " = 0; " + ci + " < " + std::to_string(cols) + "; ++" + ci + ") " +
         columnGuard(l, makeVarRef(c)) + a + " = " + o.combine(a, element()) + ";");
    return;
  }
  const std::string chains = fresh(a + "_chain"), k = std::to_string(kFoldChains);
  line(o.accType + " " + chains + "[" + k + "];");
  line("#pragma unroll");
  line("for (int q = 0; q < " + k + "; ++q) " + chains + "[q] = " + o.identity + ";");
  line("#pragma unroll");
  line("for (int " + ci + " = 0; " + ci + " < " + std::to_string(cols) + "; ++" + ci + ") " +
       columnGuard(l, makeVarRef(c)) + chains + "[" + ci + " % " + k + "] = " +
       o.combine(chains + "[" + ci + " % " + k + "]", element()) + ";");
  // The chains combined pairwise, in a tree.
  std::vector<std::string> terms;
  for (int64_t q = 0; q < kFoldChains; ++q) terms.push_back(chains + "[" + std::to_string(q) + "]");
  while (terms.size() > 1) {
    std::vector<std::string> next;
    for (size_t q = 0; q + 1 < terms.size(); q += 2) next.push_back(o.combine(terms[q], terms[q + 1]));
    if (terms.size() % 2) next.push_back(terms.back());
    terms = std::move(next);
  }
  line(o.accType + " " + a + " = " + terms[0] + ";");
}

// `if (...) ` before a combine of the thread's column register `c`, which
// skips the padding of a tile the threads do not divide; empty otherwise.
std::string KernelEmitter::columnGuard(const RegisterLayout& l, const Expr& c) {
  Expr in = l.chunkInRange(floorDiv(c, makeInt(l.vector)), threadIdx());
  return regions::isAlwaysTrue(in) ? "" : "if (" + expr(in) + ") ";
}

// ---------------------------------------------------------------------------
// Deferred combines

namespace {

// Whether `body` touches buffer `b` anywhere other than in reduction `skip`.
bool touchedOutside(const Stmt& body, const BufferNode* b, const ReduceStmt* skip) {
  struct Touches : BufferAccessVisitor {
    const BufferNode* b;
    const ReduceStmt* skip;
    bool found = false;
    void read(const Buffer& x) override { found |= x.get() == b; }
    void write(const Buffer& x) override { found |= x.get() == b; }
    void visitReduce(const ReduceStmt* n) override {
      if (n != skip) BufferAccessVisitor::visitReduce(n);
    }
  } t;
  t.b = b;
  t.skip = skip;
  t.visit(body);
  return t.found;
}

}  // namespace

std::vector<const ReduceStmt*> KernelEmitter::deferredReductions(const ForStmt* f) {
  std::vector<const ReduceStmt*> top, out;
  if (f->forKind == ForKind::Parallel || jumpsOutOf(f->body)) return out;
  std::function<void(const Stmt&)> walk = [&](const Stmt& s) {
    if (!s) return;
    if (s->kind == StmtKind::Seq)
      for (auto& c : as<SeqStmt>(s)->stmts) walk(c);
    else if (s->kind == StmtKind::Let)
      walk(as<LetStmt>(s)->body);
    else if (s->kind == StmtKind::Reduce)
      top.push_back(as<ReduceStmt>(s));
  };
  walk(f->body);
  for (auto* r : top) {
    auto si = bufs_.find(r->src.buffer.get()), di = bufs_.find(r->dst.buffer.get());
    if (r->clear || si == bufs_.end() || di == bufs_.end() || !si->second.tile || !di->second.tile) continue;
    const RegisterLayout& l = si->second.tile->layout;
    const int64_t W = warpLanes();
    bool across =
        r->dim == 0 ? l.rowLanes(W) < W || l.threads / W > l.rowWarps(W) : l.rowLanes(W) > 1 || l.rowWarps(W) > 1;
    if (across && !touchedOutside(f->body, r->dst.buffer.get(), r)) out.push_back(r);
  }
  return out;
}

void KernelEmitter::emitDeferralStart(const ReduceStmt* r) {
  ReduceOps o = reduceOps(r);
  if (!o.isSum) return;  // max and min: replicas of one value combine to it
  const BufferInfo &si = bufs_[r->src.buffer.get()], &di = bufs_[r->dst.buffer.get()];
  const RegisterLayout& l = si.tile->layout;
  Expr owner = r->dim == 0 ? l.columnVectorOwner(threadIdx()) : l.rowVectorOwner(threadIdx());
  DType td = r->dst.buffer->dtype;
  open("if (!(" + expr(owner) + "))");
  line("#pragma unroll");
  line("for (int r = 0; r < " + std::to_string(di.elems) + "; ++r) " + di.name + "[r] = " +
       cast(td, o.acc, o.identity) + ";");
  close();
}

}  // namespace tlc::cuda
