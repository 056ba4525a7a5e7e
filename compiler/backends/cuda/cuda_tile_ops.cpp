// Lowering of the tile operations copy, fill, reduce and (element-wise) gemm
// onto the threads of a block, or onto one thread inside a Parallel loop.
// Region elements outside their buffer are masked: reads give zero, writes
// are dropped.
#include "compiler/backends/cuda/cuda_kernel_emitter.h"
#include "compiler/backends/cuda/cuda_mma.h"
#include "compiler/backends/cuda/cuda_region_index.h"

#include <optional>

#include "compiler/passes/simplify.h"

namespace tlc::cuda {

using namespace ir;

namespace regions {

std::vector<Expr> extentsOf(const Region& r, const std::vector<int>& dims) {
  std::vector<Expr> e;
  for (int d : dims) e.push_back(r.ranges[d].extent);
  return e;
}

std::vector<Expr> unflatten(const Expr& flat, const std::vector<Expr>& extents) {
  std::vector<Expr> out(extents.size());
  Expr rest = flat;
  for (size_t k = extents.size(); k-- > 0;) {
    out[k] = k == 0 ? rest : floorMod(rest, extents[k]);
    if (k > 0) rest = floorDiv(rest, extents[k]);
  }
  return out;
}

std::vector<Expr> regionIndex(const Region& r, const std::vector<int>& dims, const std::vector<Expr>& locals) {
  std::vector<Expr> idx;
  for (auto& rg : r.ranges) idx.push_back(rg.min);
  for (size_t k = 0; k < dims.size(); ++k) {
    Expr l = locals[k];
    if (l->dtype != idx[dims[k]]->dtype) l = makeCast(idx[dims[k]]->dtype, l);
    idx[dims[k]] = add(idx[dims[k]], l);
  }
  return idx;
}

bool isAlwaysTrue(const Expr& e) {
  int64_t v;
  return constInt(e, &v) && v != 0;
}

bool sameExtent(const Expr& a, const Expr& b) {
  int64_t x, y;
  if (constInt(a, &x) && constInt(b, &y)) return x == y;
  return a == b;
}

bool sameExtents(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  bool same = a.size() == b.size();
  for (size_t k = 0; same && k < a.size(); ++k) same = sameExtent(a[k], b[k]);
  return same;
}

Expr product(const std::vector<Expr>& e) {
  Expr p = makeInt(1);
  for (auto& x : e) p = mul(p, x);
  return p;
}

int64_t copyRunWidth(const CopyStmt* c) {
  const Region &src = c->src, &dst = c->dst;
  auto sd = nonUnitDims(src), dd = nonUnitDims(dst);
  auto es = extentsOf(src, sd), ed = extentsOf(dst, dd);
  int64_t inner = 0;
  if (!sameExtents(es, ed) || sd.empty() || sd.back() != (int)src.ranges.size() - 1 ||
      dd.back() != (int)dst.ranges.size() - 1 || !constInt(es.back(), &inner))
    return 0;
  int64_t V = 16 / std::max(dtypeBytes(src.buffer->dtype), dtypeBytes(dst.buffer->dtype));
  while (V > 1 && inner % V) V /= 2;
  return V < 2 ? 0 : V;
}

}  // namespace regions

using namespace regions;

namespace {

// The index of region `r`'s last element.
std::vector<Expr> lastIndex(const Region& r) {
  std::vector<Expr> last;
  for (auto& rg : r.ranges) last.push_back(sub(add(rg.min, rg.extent), makeInt(1)));
  return last;
}

}  // namespace

// Copies to or from an mma accumulator held in registers. Register r of a
// thread holds element (i, j) of mmaAccumulatorIndex; registers 2k and 2k + 1
// hold two adjacent columns of one row, so stores to memory move them as one
// pair (4 bytes of float16, 8 of float32) where both are inside the
// destination and the address is aligned, and element by element otherwise.
void KernelEmitter::emitFragmentCopy(const CopyStmt* c) {
  BufferInfo& s = bufs_[c->src.buffer.get()];
  BufferInfo& d = bufs_[c->dst.buffer.get()];
  const BufferInfo& frag = s.fragment ? s : d;
  const Buffer& fb = s.fragment ? c->src.buffer : c->dst.buffer;
  int64_t m, n;
  constInt(fb->shape[0], &m);
  constInt(fb->shape[1], &n);
  const Region& other = s.fragment ? c->dst : c->src;
  bool bothFragments = s.fragment && d.fragment;
  DType td = c->dst.buffer->dtype;
  auto dims = nonUnitDims(other);
  auto extents = extentsOf(other, dims);
  int64_t e0 = 0, e1 = 0;
  // The other region is the fragment's [m, n] matrix: index it by (i, j)
  // directly instead of through the flat element number.
  bool matrix = dims.size() == 2 && constInt(extents[0], &e0) && constInt(extents[1], &e1) && e0 == m && e1 == n;
  // Every (i, j) of the fragment lies inside a whole-buffer matrix region.
  bool inside = matrix && isFullRegion(other);
  int64_t pairBytes = 2 * dtypeBytes(td);
  // (MFMA registers r and r + 1 hold adjacent rows, not columns; so do
  // those of a tf32 operand layout, one column per lane and atom.)
  bool pairs = s.fragment && !frag.mfma && frag.mmaVector >= 2 && !bothFragments && matrix && dims[1] == (int)other.ranges.size() - 1 &&
               bufs_[other.buffer.get()].place != Placement::Register && (pairBytes == 4 || pairBytes == 8 || pairBytes == 16);
  // Pairs into a whole row-major shared buffer whose padded rows hold an even
  // number of elements start at even offsets (a pair's first column is even)
  // from a base aligned to 128 bytes: every one is aligned, so the store
  // needs neither the test nor the element-by-element path.
  const BufferInfo& ob = bufs_[other.buffer.get()];
  int64_t rowLength = 0;
  // So are pairs into a TMA-stored staging tile: its panels' 16-byte chunks
  // lie at multiples of 16 bytes from a base aligned to 1024.
  bool alignedPairs = pairs && inside && ob.place == Placement::Shared &&
                      ((!ob.layout && ob.versions == 1 && ob.sharedOffset % pairBytes == 0 &&
                        constInt(other.buffer->shape.back(), &rowLength) && (rowLength + ob.rowPad) % 2 == 0) ||
                       tmaStoreOf(other.buffer.get()));
  Var r = makeVar("r");
  markNonNegative(r);
  open("#pragma unroll\n" + std::string(indent_ * 2, ' ') + "for (int " + varName(r) + " = 0; " + varName(r) + " < " +
       std::to_string(frag.elems) + "; " + (pairs ? varName(r) + " += 2" : "++" + varName(r)) + ")");
  auto [i, j] = mmaAccumulatorIndex(m, n, frag.warpsM, frag.warpsN, threadIdx(), makeVarRef(r), frag.mfma, frag.colMajor,
                                    frag.mmaVector);
  auto indexOf = [&, i = i, j = j](int64_t dj) {
    if (matrix) return regionIndex(other, dims, {i, add(j, makeInt(dj))});
    return regionIndex(other, dims, unflatten(add(mul(i, makeInt(n)), j), extents));
  };
  fragmentRegister_[fb.get()] = makeVarRef(r);
  if (bothFragments) {
    fragmentRegister_[c->dst.buffer.get()] = makeVarRef(r);
    line(access(c->dst.buffer, {}) + " = " + cast(td, c->src.buffer->dtype, access(c->src.buffer, {})) + ";");
  } else if (s.fragment) {
    auto storeAt = [&](const std::vector<Expr>& idx, const std::string& reg) {
      std::string store = access(c->dst.buffer, idx) + " = " + cast(td, c->src.buffer->dtype, reg) + ";";
      Expr in = inside ? makeBool(true) : inBounds(c->dst.buffer, idx);
      line(isAlwaysTrue(in) ? store : "if (" + expr(in) + ") " + store);
    };
    std::string reg = bufs_[fb.get()].name + "[" + varName(r) + "]";
    if (!pairs) {
      storeAt(indexOf(0), reg);
    } else {
      auto first = indexOf(0), second = indexOf(1);
      std::string ptr = fresh("pair_ptr"), T = typeName(td);
      line(T + "* " + ptr + " = &" + access(c->dst.buffer, first) + ";");
      std::string cond = "tlc::aligned(" + ptr + ", " + std::to_string(pairBytes) + ")";
      Expr in = inside ? makeBool(true) : inBounds(c->dst.buffer, second);
      if (!isAlwaysTrue(in)) cond = expr(in) + " && " + cond;
      std::string next = bufs_[fb.get()].name + "[" + varName(r) + " + 1]";
      std::string pairStore = "tlc::store_pair<" + T + ">(" + ptr + ", " + cast(td, c->src.buffer->dtype, reg) + ", " +
                              cast(td, c->src.buffer->dtype, next) + ");";
      if (alignedPairs) {
        line(pairStore);
      } else {
        open("if (" + cond + ")");
        line(pairStore);
        close("} else {");
        ++indent_;
        storeAt(first, reg);
        storeAt(second, next);
        close();
      }
    }
  } else {
    auto idx = indexOf(0);
    Expr in = inBounds(other.buffer, idx);
    std::string v = cast(td, c->src.buffer->dtype, access(c->src.buffer, idx));
    if (!isAlwaysTrue(in)) v = "(" + expr(in) + " ? " + v + " : " + cast(td, DType::Int32, "0") + ")";
    line(access(c->dst.buffer, {}) + " = " + v + ";");
  }
  fragmentRegister_.clear();
  close();
}

// The condition that the rows of region `r` start on multiples of V
// elements: the buffer's last extent and the region's last origin are
// multiples of V (unsimplified).
Expr KernelEmitter::vectorRowStarts(const Region& r, int64_t V) {
  auto multiple = [&](const Expr& e) {
    return makeBinary(BinaryOp::Eq, floorMod(e, makeInt(V, e->dtype)), makeInt(0, e->dtype));
  };
  return logicalAnd(multiple(r.buffer->shape.back()), multiple(r.ranges.back().min));
}

// The condition that region `r` lies inside its buffer and that its rows
// start on multiples of V elements, simplified: the test a copy makes
// before moving whole V-element vectors without per-element checks.
Expr KernelEmitter::wholeVectorRows(const Region& r, int64_t V) {
  return passes::simplifyExpr(logicalAnd(regionInside(r), vectorRowStarts(r, V)));
}

// The value of `e` for every thread of the block, or nothing if it is not a
// function of the thread index alone.
std::optional<std::vector<int64_t>> KernelEmitter::perThreadValues(const Expr& e) {
  std::vector<int64_t> v(threads_);
  try {
    for (int64_t t = 0; t < threads_; ++t) v[t] = layout::evalIndex(e, {{tid_, t}});
  } catch (const InternalError&) {
    return std::nullopt;
  }
  return v;
}

// The condition that region `r` lies inside its buffer (its first and last
// elements do).
Expr KernelEmitter::regionInside(const Region& r) {
  std::vector<Expr> first;
  for (auto& rg : r.ranges) first.push_back(rg.min);
  return logicalAnd(inBounds(r.buffer, first), inBounds(r.buffer, lastIndex(r)));
}

// Whether copy `c`, moving V-element vectors, loads the whole tiles whose
// source rows are not aligned by tlc::load_shifted: a global source whose
// rows need not be whole vectors long (a runtime last extent, or a constant
// one V does not divide: K = 4093), the same element type on both sides, a
// shared destination whose rows are whole vectors apart, and vectors of 4,
// 8 or 16 bytes.
bool KernelEmitter::loadsShifted(const CopyStmt* c, int64_t V) {
  const BufferInfo &s = bufs_[c->src.buffer.get()], &d = bufs_[c->dst.buffer.get()];
  const int64_t bytes = V * dtypeBytes(c->src.buffer->dtype);
  int64_t srcRow = 0;
  return V > 0 && c->src.buffer->dtype == c->dst.buffer->dtype && s.place == Placement::Global && !s.layout &&
         d.place == Placement::Shared && !splitRows(d, c->dst.buffer, V) && (bytes == 4 || bytes == 8 || bytes == 16) &&
         !(constInt(c->src.buffer->shape.back(), &srcRow) && srcRow % V == 0);
}

// Elements per vector move of a partitioned copy, or 0 for element-wise
// moves: the innermost run must be the last (contiguous) dimension of both
// buffers, in memory (not registers), with a constant extent.
int64_t KernelEmitter::vectorWidth(const CopyStmt* c) {
  auto placeOk = [&](const Buffer& b) { return bufs_[b.get()].place != Placement::Register; };
  if (!placeOk(c->src.buffer) || !placeOk(c->dst.buffer)) return 0;
  return runWidth(c);
}

// copyRunWidth, narrowed to the contiguous runs of either buffer's layout.
int64_t KernelEmitter::runWidth(const CopyStmt* c) {
  int64_t V = copyRunWidth(c);
  for (const Buffer* b : {&c->src.buffer, &c->dst.buffer})
    if (int64_t run = bufs_[b->get()].layoutRun)
      while (V > run) V /= 2;
  return V < 2 ? 0 : V;
}

// A copy repeated by a loop (a pipelined producer) moves the same per-thread
// chunks each time, shifted by the region's origin: with a linear (row-major)
// source and a destination at a constant origin, each chunk's offsets are
// loop-invariant. Declares them once, before the loop; the copy's unchecked
// path then adds them to the per-iteration bases instead of recomputing the
// index arithmetic (which the GPU compiler tends to rematerialize).
//
// When a later chunk sits at a constant index step from the thread's first
// chunk for every thread (the block's chunks cover whole rows, so each move
// advances by the same rows), and its destination offset differs by a
// constant too (a swizzle whose period divides the step), its offsets are
// the first chunk's plus those constants: no registers of its own, and the
// additions fold into the addressing.
void KernelEmitter::declareCopyThreadOffsets(const CopyStmt* c) {
  int64_t V = vectorWidth(c);
  const Region &src = c->src, &dst = c->dst;
  BufferInfo &si = bufs_[src.buffer.get()], &di = bufs_[dst.buffer.get()];
  if (!V || si.layout || si.place != Placement::Global || si.fragment || di.fragment) return;
  int64_t total = 1, m;
  for (auto& rg : dst.ranges)
    if (!constInt(rg.min, &m)) return;
  auto sd = nonUnitDims(src), dd = nonUnitDims(dst);
  auto es = extentsOf(src, sd);
  for (auto& e : es) {
    if (!constInt(e, &m)) return;
    total *= m;
  }
  int64_t perThread = total / V / threads_;
  if ((total / V) % threads_ || perThread > 16) return;
  Region origin = src;
  for (auto& rg : origin.ranges) rg.min = makeInt(0, rg.min->dtype);
  Expr version = di.version;
  di.version = nullptr;
  // The constant by which `later` exceeds the per-thread values `first` for
  // every thread, if any.
  auto constantStep = [&](const std::optional<std::vector<int64_t>>& first,
                          const Expr& later) -> std::optional<int64_t> {
    auto b = perThreadValues(later);
    if (!first || !b) return std::nullopt;
    const std::vector<int64_t>& a = *first;
    for (int64_t t = 0; t < threads_; ++t)
      if ((*b)[t] - a[t] != (*b)[0] - a[0]) return std::nullopt;
    return (*b)[0] - a[0];
  };
  auto& names = hoistedCopyOffsets_[c];
  // The first chunk's indices and destination offset, for every thread.
  auto firstLocals = unflatten(mul(threadIdx(), makeInt(V)), es);
  std::vector<std::optional<std::vector<int64_t>>> firstIndex;
  for (const Expr& e : firstLocals) firstIndex.push_back(perThreadValues(e));
  auto firstDst = perThreadValues(offsetExpr(dst.buffer, regionIndex(dst, dd, firstLocals)));
  for (int64_t j = 0; j < perThread; ++j) {
    auto locals = unflatten(mul(add(makeInt(j * threads_), threadIdx()), makeInt(V)), es);
    Expr dstOff = offsetExpr(dst.buffer, regionIndex(dst, dd, locals));
    if (j > 0) {
      std::vector<Expr> step;
      for (size_t d = 0; d < locals.size(); ++d)
        if (auto delta = constantStep(firstIndex[d], locals[d])) step.push_back(makeInt(*delta));
      auto dstStep = constantStep(firstDst, dstOff);
      if (step.size() == locals.size() && dstStep) {
        auto& [so, dof] = names.front();
        names.emplace_back("(" + so + " + " + expr(offsetExpr(src.buffer, regionIndex(origin, sd, step))) + ")",
                           "(" + dof + " + " + std::to_string(*dstStep) + ")");
        continue;
      }
    }
    std::string so = fresh("src_off"), dof = fresh("dst_off");
    line("const long long " + so + " = " + expr(offsetExpr(src.buffer, regionIndex(origin, sd, locals))) + ";");
    line("const int " + dof + " = " + expr(dstOff) + ";");
    names.emplace_back(so, dof);
  }
  di.version = version;
}

// Element `idx` of `b` as `as`, or zero where `idx` is outside `b`.
std::string KernelEmitter::maskedRead(const Buffer& b, const std::vector<Expr>& idx, DType as) {
  std::string val = cast(as, b->dtype, access(b, idx));
  Expr in = inBounds(b, idx);
  return isAlwaysTrue(in) ? val : "(" + expr(in) + " ? " + val + " : " + cast(as, DType::Int32, "0") + ")";
}

// Stores `value` into element `idx` of `b`, unless `idx` is outside `b`.
void KernelEmitter::storeInside(const Buffer& b, const std::vector<Expr>& idx, const std::string& value) {
  std::string store = access(b, idx) + " = " + value + ";";
  Expr in = inBounds(b, idx);
  line(isAlwaysTrue(in) ? store : "if (" + expr(in) + ") " + store);
}

void KernelEmitter::emitCopy(const CopyStmt* c, bool partitioned, bool async) {
  LocationScope at(*this, c->loc);
  // Tiles in the mma layout (accumulators and the tiles of their groups)
  // first: their copies store pairs of columns.
  if (bufs_[c->src.buffer.get()].fragment || bufs_[c->dst.buffer.get()].fragment) {
    emitFragmentCopy(c);
    return;
  }
  if (bufs_[c->src.buffer.get()].tile || bufs_[c->dst.buffer.get()].tile) {
    emitTileCopy(c);
    return;
  }
  if (const TmaStore* ts = tmaStoreOf(c->src.buffer.get()); ts && !inTmaStorePlain_) {
    emitTmaStore(c, *ts, [&] {
      inTmaStorePlain_ = true;
      emitCopy(c, partitioned, async);
      inTmaStorePlain_ = false;
    });
    return;
  }
  const Region &src = c->src, &dst = c->dst;
  DType ts = src.buffer->dtype, td = dst.buffer->dtype;
  // One element moved with masks: reads outside the source give zero,
  // writes outside the destination are dropped.
  auto maskedMove = [&](const std::vector<Expr>& sIdx, const std::vector<Expr>& dIdx) {
    storeInside(dst.buffer, dIdx, maskedRead(src.buffer, sIdx, td));
  };
  auto sd = nonUnitDims(src), dd = nonUnitDims(dst);
  auto es = extentsOf(src, sd), ed = extentsOf(dst, dd);
  bool matched = sameExtents(es, ed);
  Expr total = product(es);
  open("");

  int64_t V = partitioned ? vectorWidth(c) : 0;
  if (V) {
    // A whole tile inside both buffers, with aligned rows, takes a loop
    // without per-chunk checks; edge tiles take the checked loop.
    std::string vs = std::to_string(V);
    Expr fast = makeBool(true);
    std::vector<std::string> alignChecks;
    for (const Region* r : {&src, &dst}) {
      fast = logicalAnd(fast, wholeVectorRows(*r, V));
      if (bufs_[r->buffer.get()].place == Placement::Global)
        alignChecks.push_back("tlc::aligned(" + bufs_[r->buffer.get()].name + ", " +
                              std::to_string(V * dtypeBytes(r->buffer->dtype)) + ")");
    }
    std::string fastCond = expr(fast);
    for (auto& a : alignChecks) fastCond += " && " + a;
    // A split shared side moves element by element, the global side still
    // by vectors.
    bool srcSplit = splitRows(bufs_[src.buffer.get()], src.buffer, V);
    bool dstSplit = splitRows(bufs_[dst.buffer.get()], dst.buffer, V);
    const int64_t vecBytes = V * dtypeBytes(ts);
    bool asyncOk = async && ts == td && !dstSplit && bufs_[src.buffer.get()].place == Placement::Global &&
                   bufs_[dst.buffer.get()].place == Placement::Shared && vecBytes >= 4;
    bool shiftedOk = loadsShifted(c, V);
    auto emitVectorLoop = [&](bool checked, bool shifted = false) {
      // The unchecked loop is always unrolled; the checked one (edge tiles)
      // stays rolled where the caller asks (pipelined producers). Rolling
      // every checked loop compiles faster (0.9 s instead of 1.2 s for the
      // gemm) but made the gemm 4.5% slower on an H200, although no full
      // tile takes it.
      bool rolled = noUnroll_;
      noUnroll_ = noUnroll_ && checked;
      auto vectorMoveAt = [&](const std::string& sp, const std::string& dp) {
        if (shifted) {
          line("tlc::load_shifted<" + std::to_string(vecBytes) + ">(" + dp + ", " + sp + ");");
        } else if (asyncOk) {
          line("tlc::cp_async" + std::to_string(vecBytes) + "(" + dp + ", " + sp + ", true);");
        } else if (ts == td && !srcSplit && !dstSplit) {
          line("tlc::copy_vec<" + typeName(ts) + ", " + vs + ">(" + dp + ", " + sp + ");");
        } else {
          // Staged through registers: converted, or moved element by element
          // on a split side. A scope of its own: straight-line moves repeat it.
          open("");
          line("__align__(16) " + typeName(ts) + " in_v[" + vs + "];");
          line("__align__(16) " + typeName(td) + " out_v[" + vs + "];");
          if (srcSplit) {
            line("#pragma unroll");
            line("for (int v = 0; v < " + vs + "; ++v) in_v[v] = " + sp + "[v];");
          } else {
            line("tlc::copy_vec<" + typeName(ts) + ", " + vs + ">(in_v, " + sp + ");");
          }
          line("#pragma unroll");
          line("for (int v = 0; v < " + vs + "; ++v) out_v[v] = " + cast(td, ts, "in_v[v]") + ";");
          if (dstSplit) {
            line("#pragma unroll");
            line("for (int v = 0; v < " + vs + "; ++v) " + dp + "[v] = out_v[v];");
          } else {
            line("tlc::copy_vec<" + typeName(td) + ", " + vs + ">(" + dp + ", out_v);");
          }
          close();
        }
      };
      auto hoisted = hoistedCopyOffsets_.find(c);
      if (!checked && hoisted != hoistedCopyOffsets_.end()) {
        // Straight-line moves from per-thread offsets computed before the loop.
        noUnroll_ = rolled;
        std::vector<Expr> mins;
        for (auto& rg : src.ranges) mins.push_back(rg.min);
        BufferInfo& di = bufs_[dst.buffer.get()];
        Expr version = di.versions > 1 && di.version ? mul(di.version, makeInt(di.elems)) : makeInt(0);
        std::string sb = fresh("src_base"), db = fresh("dst_base");
        line("const " + typeName(ts) + "* " + sb + " = " + bufs_[src.buffer.get()].name + " + " +
             expr(offsetExpr(src.buffer, mins)) + ";");
        line(typeName(td) + "* " + db + " = " + di.name + " + " + expr(version) + ";");
        if (shifted) {
          // Every vector loaded into registers before the first is stored:
          // one round trip to memory for the whole tile.
          std::string sv = fresh("shifted_v");
          size_t n = hoisted->second.size();
          line("__align__(16) " + typeName(ts) + " " + sv + "[" + std::to_string(n * V) + "];");
          for (size_t j = 0; j < n; ++j)
            line("tlc::load_shifted<" + std::to_string(vecBytes) + ">(&" + sv + "[" + std::to_string(j * V) + "], " +
                 sb + " + " + hoisted->second[j].first + ");");
          for (size_t j = 0; j < n; ++j)
            line("tlc::copy_vec<" + typeName(td) + ", " + vs + ">(" + db + " + " + hoisted->second[j].second + ", &" +
                 sv + "[" + std::to_string(j * V) + "]);");
          return;
        }
        for (auto& [so, dof] : hoisted->second) vectorMoveAt(sb + " + " + so, db + " + " + dof);
        return;
      }
      Var chunk = openLoop(floorDiv(total, makeInt(V)), partitioned, "chunk");
      noUnroll_ = rolled;
      auto locals = unflatten(mul(makeVarRef(chunk), makeInt(V)), es);
      auto sIdx = regionIndex(src, sd, locals), dIdx = regionIndex(dst, dd, locals);
      std::string sp = fresh("src_ptr"), dp = fresh("dst_ptr");
      std::string sOff = expr(offsetExpr(src.buffer, sIdx)), dOff = expr(offsetExpr(dst.buffer, dIdx));
      line("const " + typeName(ts) + "* " + sp + " = " + bufs_[src.buffer.get()].name + " + " + sOff + ";");
      line(typeName(td) + "* " + dp + " = " + bufs_[dst.buffer.get()].name + " + " + dOff + ";");
      auto vectorMove = [&] { vectorMoveAt(sp, dp); };
      if (!checked) {
        vectorMove();
        close();
        return;
      }
      auto lastOf = [&](std::vector<Expr> idx) {
        idx.back() = add(idx.back(), makeInt(V - 1));
        return idx;
      };
      Expr sFull = logicalAnd(inBounds(src.buffer, sIdx), inBounds(src.buffer, lastOf(sIdx)));
      Expr dFull = logicalAnd(inBounds(dst.buffer, dIdx), inBounds(dst.buffer, lastOf(dIdx)));
      std::string alignedCond =
          (srcSplit ? "true" : "tlc::aligned(" + sp + ", " + std::to_string(V * dtypeBytes(ts)) + ")") + " && " +
          (dstSplit ? "true" : "tlc::aligned(" + dp + ", " + std::to_string(V * dtypeBytes(td)) + ")");
      open("if (" + expr(sFull) + " && " + expr(dFull) + " && " + alignedCond + ")");
      vectorMove();
      if (asyncOk) {
        // A vector wholly outside the source (rows past the tensor's edge:
        // the rows of a decode step's tile beyond M) is one zero-filling
        // asynchronous copy that reads nothing.
        auto rowStart = sIdx;
        rowStart.back() = makeInt(0);
        const Expr& col = sIdx.back();
        auto either = [](Expr a, Expr b) { return makeBinary(BinaryOp::Or, std::move(a), std::move(b)); };
        Expr outside = either(makeUnary(UnaryOp::Not, inBounds(src.buffer, rowStart)),
                              either(makeUnary(UnaryOp::Not, lt(col, src.buffer->shape.back())),
                                     lt(add(col, makeInt(V - 1)), makeInt(0))));
        close("} else if (" + expr(outside) + " && " + expr(dFull) + " && tlc::aligned(" + dp + ", " +
              std::to_string(V * dtypeBytes(td)) + ")) {");
        ++indent_;
        line("tlc::cp_async" + std::to_string(V * dtypeBytes(ts)) + "(" + dp + ", " + bufs_[src.buffer.get()].name +
             ", false);");
      }
      if (!dstSplit) {
        // A whole vector inside both buffers whose source is not aligned (a
        // tensor whose rows are not whole vectors: K = 4093): its elements
        // are loaded one by one, and stored as one vector.
        close("} else if (" + expr(sFull) + " && " + expr(dFull) + " && tlc::aligned(" + dp + ", " +
              std::to_string(V * dtypeBytes(td)) + ")) {");
        ++indent_;
        line("__align__(16) " + typeName(td) + " row_v[" + vs + "];");
        line("#pragma unroll");
        line("for (int v = 0; v < " + vs + "; ++v) row_v[v] = " + cast(td, ts, sp + "[v]") + ";");
        line("tlc::copy_vec<" + typeName(td) + ", " + vs + ">(" + dp + ", row_v);");
      }
      close("} else {");
      ++indent_;
      Var v = makeVar("v");
      markNonNegative(v);
      open("for (int " + varName(v) + " = 0; " + varName(v) + " < " + vs + "; ++" + varName(v) + ")");
      auto sI = sIdx, dI = dIdx;
      sI.back() = add(sI.back(), makeVarRef(v));
      dI.back() = add(dI.back(), makeVarRef(v));
      maskedMove(sI, dI);
      close();
      close();
      close();  // chunk loop
    };
    if (fastCond == "true") {
      emitVectorLoop(false);
    } else {
      open("if (" + fastCond + ")");
      emitVectorLoop(false);
      if (shiftedOk) {
        Expr inside =
            logicalAnd(logicalAnd(regionInside(src), wholeVectorRows(dst, V)), elementsAfter(src.buffer, lastIndex(src), V));
        close("} else if (" + expr(passes::simplifyExpr(inside)) + ") {");
        ++indent_;
        emitVectorLoop(false, true);
      }
      close("} else {");
      ++indent_;
      if (shiftedOk && hoistedCopyOffsets_.count(c)) {
        // Aligned rows keep the checked loop's asynchronous copies.
        open("if (" + alignedRows(src, V) + ")");
        emitVectorLoop(true);
        close("} else {");
        ++indent_;
        emitShiftedEdgeTile(c, V);  // cuda_shifted_copies.cpp
        close();
      } else {
        emitVectorLoop(true);
      }
      close();
    }
    close();
    return;
  }
  Var e = openLoop(total, partitioned, "e");
  auto sLocals = unflatten(makeVarRef(e), es);
  auto dLocals = matched ? sLocals : unflatten(makeVarRef(e), ed);
  maskedMove(regionIndex(src, sd, sLocals), regionIndex(dst, dd, dLocals));
  close();
  close();
}

void KernelEmitter::emitFill(const FillStmt* f, bool partitioned) {
  LocationScope at(*this, f->loc);
  const Region& dst = f->dst;
  DType t = dst.buffer->dtype;
  open("");
  std::string v = fresh("fill_value");
  line("const " + typeName(t) + " " + v + " = " + expr(f->value) + ";");
  BufferInfo& info = bufs_[dst.buffer.get()];
  if (info.fragment || info.tile) {
    line("#pragma unroll");
    line("for (int r = 0; r < " + std::to_string(info.elems) + "; ++r) " + info.name + "[r] = " + v + ";");
    close();
    return;
  }
  auto dims = nonUnitDims(dst);
  Var e = openLoop(product(extentsOf(dst, dims)), partitioned, "e");
  auto idx = regionIndex(dst, dims, unflatten(makeVarRef(e), extentsOf(dst, dims)));
  storeInside(dst.buffer, idx, v);
  close();
  close();
}

void KernelEmitter::emitReduce(const ReduceStmt* r, bool partitioned) {
  LocationScope at(*this, r->loc);
  const Region &src = r->src, &dst = r->dst;
  if (bufs_[src.buffer.get()].tile) {
    emitRegisterReduce(r, deferred_.count(r) ? ReducePart::InThread : ReducePart::Whole);
    return;
  }
  ReduceOps ops = reduceOps(r);
  DType td = dst.buffer->dtype, ts = src.buffer->dtype, acc = ops.acc;
  // Output coordinates: the source dimensions other than `dim`.
  std::vector<int> outDims;
  for (int d = 0; d < (int)src.ranges.size(); ++d)
    if (d != r->dim) outDims.push_back(d);
  std::vector<Expr> outExt = extentsOf(src, outDims);
  Expr nOut = product(outExt);
  Expr len = src.ranges[r->dim].extent;
  auto dd = nonUnitDims(dst);
  auto de = extentsOf(dst, dd);
  const std::string& A = ops.accType;
  bool isAbs = ops.isAbs;
  auto combine = ops.combine;
  const std::string &identity = ops.identity, &op = ops.op;
  int64_t outs, length = 0, group = 1;
  if (partitioned && threads_ % 32 == 0 && constInt(nOut, &outs) && outs > 0 && outs < threads_) {
    group = 1;
    while (group * 2 <= warpLanes() && group * 2 * outs <= threads_) group *= 2;
    if (constInt(len, &length))
      while (group > 1 && group / 2 >= length) group /= 2;
  }
  open("");
  Var o = makeVar("o");
  markNonNegative(o);
  std::string lane = fresh("lane_g");
  bool grouped = group > 1;
  if (grouped) {
    int64_t per = threads_ / group, rounds = (outs + per - 1) / per;
    line("const int " + lane + " = tid % " + std::to_string(group) + ";");
    std::string rd = fresh("round");
    open("for (int " + rd + " = 0; " + rd + " < " + std::to_string(rounds) + "; ++" + rd + ")");
    line("const int " + varName(o) + " = " + rd + " * " + std::to_string(per) + " + tid / " + std::to_string(group) + ";");
  } else {
    Var oo = openLoop(nOut, partitioned, "o");
    o = oo;
  }
  std::string accName = fresh("acc");
  line(A + " " + accName + " = " + identity + ";");
  std::string valid = grouped ? varName(o) + " < " + expr(nOut) : "true";
  open("if (" + valid + ")");
  auto outLocals = unflatten(makeVarRef(o), outExt);
  Var k = makeVar("k");
  markNonNegative(k);
  if (grouped)
    open("for (int " + varName(k) + " = " + lane + "; " + varName(k) + " < " + expr(len) + "; " + varName(k) + " += " +
         std::to_string(group) + ")");
  else
    open("for (int " + varName(k) + " = 0; " + varName(k) + " < " + expr(len) + "; ++" + varName(k) + ")");
  std::vector<Expr> sIdx;
  for (auto& rg : src.ranges) sIdx.push_back(rg.min);
  for (size_t q = 0; q < outDims.size(); ++q) sIdx[outDims[q]] = add(sIdx[outDims[q]], outLocals[q]);
  sIdx[r->dim] = add(sIdx[r->dim], makeVarRef(k));
  std::string v = cast(acc, ts, access(src.buffer, sIdx));
  Expr in = inBounds(src.buffer, sIdx);
  if (!isAlwaysTrue(in)) v = "(" + expr(in) + " ? " + v + " : " + cast(acc, DType::Int32, "0") + ")";
  if (isAbs) v = "tlc::abs(" + v + ")";
  line(accName + " = " + combine(accName, v) + ";");
  close();
  close();
  if (grouped) line(accName + " = tlc::group_allreduce<" + std::to_string(group) + ">(" + accName + ", " + op + ");");
  open("if (" + valid + (grouped ? " && " + lane + " == 0" : "") + ")");
  auto dIdx = regionIndex(dst, dd, unflatten(makeVarRef(o), de));
  Expr dIn = inBounds(dst.buffer, dIdx);
  std::string target = access(dst.buffer, dIdx);
  std::string result = accName;
  if (!r->clear) result = combine(cast(acc, td, target), accName);
  std::string store = target + " = " + cast(td, acc, result) + ";";
  line(isAlwaysTrue(dIn) ? store : "if (" + expr(dIn) + ") " + store);
  close();
  close();  // rounds / outputs loop
  close();
}

void KernelEmitter::emitGemm(const GemmStmt* g, bool partitioned) {
  if (!emitGemmMma(g)) emitGemmScalar(g, partitioned);
}

void KernelEmitter::emitGemmScalar(const GemmStmt* g, bool partitioned) {
  LocationScope at(*this, g->loc);
  // A gemm that tensor cores would take but for its accumulator's size.
  MmaShape big;
  if (mmaShapeOf(g, threads_, options_, &big, false, /*registerBudget=*/false) && !warnedScalar_.count(g)) {
    warnedScalar_.insert(g);
    diags_.report(DiagKind::CudaGemmScalar, g->loc,
                  "this gemm runs without tensor cores, as scalar multiply-adds: its " + std::to_string(big.m) +
                      " x " + std::to_string(big.n) + " accumulator needs " +
                      std::to_string(big.m * big.n / threads_) + " registers per thread on " +
                      std::to_string(threads_) + " threads (at most " + std::to_string(kMaxAccumulatorRegisters) +
                      "); use more threads or a smaller tile")
        .note(g->c.buffer->loc, "`" + g->c.buffer->name + "` declared here");
  }
  auto ad = nonUnitDims(g->a), bd = nonUnitDims(g->b), cd = nonUnitDims(g->c);
  auto pad2 = [](std::vector<int> d, const Region& r) {
    // Matrices with a unit dimension: take the trailing dimensions.
    int rank = (int)r.ranges.size();
    if (d.size() >= 2 || rank < 2) return d;
    return std::vector<int>{rank - 2, rank - 1};
  };
  ad = pad2(ad, g->a);
  bd = pad2(bd, g->b);
  cd = pad2(cd, g->c);
  if (ad.size() != 2 || bd.size() != 2 || cd.size() != 2) {
    diags_.report(DiagKind::CudaUnsupported, g->loc, "gemm operands must be two-dimensional tiles on cuda");
    failed_ = true;
    return;
  }
  DType tc = g->c.buffer->dtype;
  DType acc = isLowPrecisionFloat(tc) ? DType::Float32 : tc;
  Expr M = g->c.ranges[cd[0]].extent, N = g->c.ranges[cd[1]].extent;
  Expr K = g->transA ? g->a.ranges[ad[0]].extent : g->a.ranges[ad[1]].extent;
  open("");
  Var e = openLoop(mul(M, N), partitioned, "e");
  Expr i = floorDiv(makeVarRef(e), N), j = floorMod(makeVarRef(e), N);
  auto cIdx = regionIndex(g->c, cd, {i, j});
  Expr cIn = inBounds(g->c.buffer, cIdx);
  std::string accName = fresh("acc");
  std::string init = g->clearAccum ? cast(acc, DType::Int32, "0") : cast(acc, tc, access(g->c.buffer, cIdx));
  if (!g->clearAccum && !isAlwaysTrue(cIn)) init = "(" + expr(cIn) + " ? " + init + " : " + cast(acc, DType::Int32, "0") + ")";
  line(typeName(acc) + " " + accName + " = " + init + ";");
  Var k = makeVar("k");
  markNonNegative(k);
  open("for (int " + varName(k) + " = 0; " + varName(k) + " < " + expr(K) + "; ++" + varName(k) + ")");
  Expr kk = makeVarRef(k);
  auto aIdx = regionIndex(g->a, ad, g->transA ? std::vector<Expr>{kk, i} : std::vector<Expr>{i, kk});
  auto bIdx = regionIndex(g->b, bd, g->transB ? std::vector<Expr>{j, kk} : std::vector<Expr>{kk, j});
  auto masked = [&](const Buffer& b, const std::vector<Expr>& idx) {
    std::string v = cast(acc, b->dtype, access(b, idx));
    Expr in = inBounds(b, idx);
    if (!isAlwaysTrue(in)) v = "(" + expr(in) + " ? " + v + " : " + cast(acc, DType::Int32, "0") + ")";
    return v;
  };
  line(accName + " += " + masked(g->a.buffer, aIdx) + " * " + masked(g->b.buffer, bIdx) + ";");
  close();
  std::string store = access(g->c.buffer, cIdx) + " = " + cast(tc, acc, accName) + ";";
  line(isAlwaysTrue(cIn) ? store : "if (" + expr(cIn) + ") " + store);
  close();
  close();
}

}  // namespace tlc::cuda
