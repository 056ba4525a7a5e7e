#include "compiler/passes/cpu_lower_reduce.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>

#include "compiler/ir/functor.h"
#include "compiler/passes/cpu_index_math.h"
#include "compiler/passes/cpu_intrinsics.h"
#include "compiler/passes/cpu_loop_builder.h"
#include "compiler/ir/module_rewrite.h"

namespace tlc::cpu {

using namespace ir;

namespace {

DType accumulatorType(DType t) {
  if (t == DType::Float16 || t == DType::BFloat16 || t == DType::Float8E4M3 || t == DType::Float8E5M2)
    return DType::Float32;
  return t;
}

Expr absOf(Expr v) {
  if (!isSigned(v->dtype)) return v;
  return makeCall("abs", {v}, v->dtype, v->loc);
}

Expr combine(ReduceKind k, Expr acc, Expr v) {
  switch (k) {
    case ReduceKind::Sum: return makeBinary(BinaryOp::Add, acc, v);
    case ReduceKind::AbsSum: return makeBinary(BinaryOp::Add, acc, absOf(v));
    case ReduceKind::Max: return makeBinary(BinaryOp::Max, acc, v);
    case ReduceKind::AbsMax: return makeBinary(BinaryOp::Max, acc, absOf(v));
    case ReduceKind::Min: return makeBinary(BinaryOp::Min, acc, v);
  }
  return acc;
}

// The combine of two partial results (the absolute value was taken already).
Expr combinePartials(ReduceKind k, Expr a, Expr b) {
  switch (k) {
    case ReduceKind::Sum:
    case ReduceKind::AbsSum: return makeBinary(BinaryOp::Add, a, b);
    case ReduceKind::Max:
    case ReduceKind::AbsMax: return makeBinary(BinaryOp::Max, a, b);
    case ReduceKind::Min: return makeBinary(BinaryOp::Min, a, b);
  }
  return a;
}

// Accumulator lanes of a reduction along the contiguous dimension of
// `extent` elements: four 64-byte vectors (four independent chains of vector
// adds, which hide the add's latency) when the extent holds two chunks of
// them, else one; 0 when it does not hold two 64-byte chunks.
int64_t accumulatorLanes(DType at, int64_t extent) {
  int64_t vector = std::max<int64_t>(1, 64 / std::max(1, dtypeBytes(at)));
  if (extent >= 8 * vector) return 4 * vector;
  return extent >= 2 * vector ? vector : 0;
}
// The largest destination row kept in an accumulator row (reductions along an outer dimension).
constexpr int64_t kMaxAccumulatorRow = 4096;
// The levels of the lanes' pairwise combine written as statements, not loops (at most this many lanes).
constexpr int64_t kStatementLevels = 2;

class Lowering {
 public:
  explicit Lowering(const ReduceStmt* r)
      : r_(r), src_(r->src), dst_(r->dst), rank_(src_.ranges.size()), dim_(size_t(r->dim)),
        keepsDim_(dst_.ranges.size() == rank_), dt_(dst_.buffer->dtype), at_(accumulatorType(dt_)), loc_(r->loc),
        inside_(isTrue(regionInBounds(src_))) {}

  Stmt lower() {
    std::vector<Stmt> allocs;
    acc_ = makeBuffer(dst_.buffer->name + "_acc", at_, {makeInt(1)}, MemScope::Local, loc_);
    allocs.push_back(std::make_shared<const AllocStmt>(acc_, loc_));
    int64_t extent = 0, last = 0;
    bool constExtent = constInt(src_.ranges[dim_].extent, &extent);
    int64_t lanes = constExtent ? accumulatorLanes(at_, extent) : 0;
    // Along the contiguous dimension: lanes of partial results, combined at the end.
    bool laned = dim_ + 1 == rank_ && lanes > 0;
    // Along an outer one: a row of accumulators over the contiguous output dimension, walked in order.
    bool rowWise = dim_ + 1 < rank_ && constInt(src_.ranges[rank_ - 1].extent, &last) && last > 1 &&
                   last <= kMaxAccumulatorRow;
    if (laned) {
      partials_ = makeBuffer(dst_.buffer->name + "_part", at_, {makeInt(lanes)}, MemScope::Local, loc_);
      allocs.push_back(std::make_shared<const AllocStmt>(partials_, loc_));
      std::vector<Stmt> laneAllocs = {allocs.back()};
      if (nanLanes()) {
        nans_ = makeBuffer(dst_.buffer->name + "_nan", bitsType(), {makeInt(lanes)}, MemScope::Local, loc_);
        allocs.push_back(std::make_shared<const AllocStmt>(nans_, loc_));
        laneAllocs.push_back(allocs.back());
      }
      if (std::optional<int64_t> rows = acrossRows(extent, lanes)) return lowerAcrossRows(laneAllocs, *rows, extent, lanes);
    } else if (rowWise) {
      partials_ = makeBuffer(dst_.buffer->name + "_row", at_, {makeInt(last)}, MemScope::Local, loc_);
      allocs.push_back(std::make_shared<const AllocStmt>(partials_, loc_));
    }
    // Loops over every source dimension except `dim` (and, row-wise, the last), clamped to the destination.
    std::vector<LoopDim> loops;
    for (size_t d = 0; d < rank_; ++d) {
      if (d == dim_ || (rowWise && d + 1 == rank_)) continue;
      outer_.push_back(d);
      ValidSpan span = validSpan(dst_.ranges[dstDim(d)], dst_.buffer->shape[dstDim(d)]);
      loops.push_back({span.lo, span.hi, dst_.buffer->name + "_r" + std::to_string(loops.size())});
    }
    auto body = [&](const std::vector<Expr>& offs) -> Stmt {
      if (laned) return lanedBody(offs, extent, lanes);
      if (rowWise) return rowBody(offs);
      return scalarBody(offs);
    };
    Expr unitInside = makeBool(true);
    if (keepsDim_) unitInside = inBounds(dst_.ranges[dim_].min, dst_.buffer->shape[dim_]);
    allocs.push_back(guarded(unitInside, buildLoopNest(loops, ForKind::Serial, body, loc_), loc_));
    return makeSeq(std::move(allocs), loc_);
  }

 private:
  size_t dstDim(size_t d) const { return keepsDim_ ? d : (d < dim_ ? d : d - 1); }

  // Destination and source indices at the outer offsets `offs`.
  std::vector<Expr> dstIndex(const std::vector<Expr>& offs) const {
    std::vector<Expr> di;
    for (const Range& rg : dst_.ranges) di.push_back(rg.min);
    for (size_t k = 0; k < outer_.size(); ++k) di[dstDim(outer_[k])] = add(dst_.ranges[dstDim(outer_[k])].min, offs[k]);
    return di;
  }
  std::vector<Expr> srcIndex(const std::vector<Expr>& offs) const {
    std::vector<Expr> si;
    for (const Range& rg : src_.ranges) si.push_back(rg.min);
    for (size_t k = 0; k < outer_.size(); ++k) si[outer_[k]] = add(src_.ranges[outer_[k]].min, offs[k]);
    return si;
  }

  // The source element at `si` in the accumulator type; zero outside the buffer.
  Expr value(const std::vector<Expr>& si) const {
    Expr valid = makeBool(true);
    std::vector<Expr> clamped;
    for (size_t d = 0; d < rank_; ++d) {
      Expr ok = inside_ ? makeBool(true) : inBounds(si[d], src_.buffer->shape[d]);
      valid = logicalAnd(valid, ok);
      clamped.push_back(isTrue(ok) ? si[d] : clampIndex(si[d], src_.buffer->shape[d]));
    }
    Expr v = makeLoad(src_.buffer, clamped, loc_);
    if (v->dtype != at_) v = makeCast(at_, v, loc_);
    if (!isTrue(valid)) v = makeSelect(valid, v, zeroOf(at_), loc_);
    return v;
  }

  Expr initial(const std::vector<Expr>& di) const {
    Expr init = r_->clear ? reduceIdentity(r_->reduceKind, at_) : makeCast(at_, makeLoad(dst_.buffer, di, loc_), loc_);
    return init->dtype == at_ ? init : makeCast(at_, init, loc_);
  }
  Stmt store(const Buffer& b, const std::vector<Expr>& idx, Expr v) const {
    return std::make_shared<const StoreStmt>(b, idx, std::move(v), loc_);
  }
  Stmt storeResult(const std::vector<Expr>& di, Expr result) const {
    if (dt_ != at_) result = makeCast(dt_, result, loc_);
    return store(dst_.buffer, di, result);
  }
  // acc[0] = combine(acc[0], source element at offset k of the reduced dimension).
  Stmt step(const std::vector<Expr>& si0, const Expr& k) const {
    std::vector<Expr> si = si0;
    si[dim_] = add(src_.ranges[dim_].min, k);
    std::vector<Expr> a0 = {makeInt(0)};
    return store(acc_, a0, combine(r_->reduceKind, makeLoad(acc_, a0, loc_), value(si)));
  }
  Var loopVar(const std::string& suffix) const {
    return makeVar(src_.buffer->name + suffix, src_.ranges[dim_].extent->dtype, loc_);
  }

  // The rows R when the lanes of many short rows combine across the rows
  // (lowerAcrossRows): a reduction of a 2-D region along its last dimension
  // into all R elements of a 1-D destination, R a multiple of the lanes of
  // one vector (at least one vector of rows), each row a whole number of
  // chunks.
  std::optional<int64_t> acrossRows(int64_t extent, int64_t lanes) const {
    int64_t vector = 64 / std::max(1, dtypeBytes(at_)), rows = 0, lo = -1, hi = 0;
    if (rank_ != 2 || keepsDim_ || dst_.ranges.size() != 1 || extent % lanes != 0) return std::nullopt;
    ValidSpan span = validSpan(dst_.ranges[0], dst_.buffer->shape[0]);
    if (!constInt(span.lo, &lo) || lo != 0 || !constInt(span.hi, &hi) || !constInt(src_.ranges[0].extent, &rows) ||
        hi != rows || rows < vector || rows % vector != 0)
      return std::nullopt;
    return rows;
  }

  // The lanes of each of R short rows narrow to one vector of V, which is
  // stored as a row of P [R, V]; P is transposed into Q [V, R] (a nest the
  // backend moves through registers, tile_transpose.h), and V vector loops
  // over the rows combine Q's rows into the R results. A pairwise combine
  // of each row's lanes (the tree of lanedBody) takes log2(V) dependent
  // levels of shuffles and compares per row; a top-k over rows of 64
  // float32 spent most of its time there.
  Stmt lowerAcrossRows(std::vector<Stmt> allocs, int64_t rows, int64_t extent, int64_t lanes) {
    int64_t vector = 64 / std::max(1, dtypeBytes(at_));
    DType it = src_.ranges[dim_].extent->dtype;
    std::string name = dst_.buffer->name;
    Buffer p = makeBuffer(name + "_rows", at_, {makeInt(rows), makeInt(vector)}, MemScope::Local, loc_);
    Buffer q = makeBuffer(name + "_cols", at_, {makeInt(vector), makeInt(rows)}, MemScope::Local, loc_);
    Buffer a = makeBuffer(name + "_accs", at_, {makeInt(rows)}, MemScope::Local, loc_);
    for (const Buffer& b : {p, q, a}) allocs.push_back(std::make_shared<const AllocStmt>(b, loc_));
    outer_ = {0};
    Var r = makeVar(name + "_r0", it, loc_);
    Expr rv = makeVarRef(r, loc_);
    std::vector<Stmt> row = rowLanes({rv}, extent, lanes, vector);
    Var l = loopVar("_v");
    Expr lv = makeVarRef(l, loc_);
    row.push_back(makeFor(l, makeInt(0, it), makeInt(vector, it), ForKind::Vectorized,
                          store(p, {rv, lv}, makeLoad(partials_, {lv}, loc_)), loc_));
    allocs.push_back(makeFor(r, makeInt(0, it), makeInt(rows, it), ForKind::Serial, makeSeq(std::move(row), loc_), loc_));
    // Vector loops over the rows; `f` gives the statement at row `i`.
    auto overRows = [&](const std::string& suffix, const std::function<Stmt(const Expr& i)>& f) {
      Var i = makeVar(name + suffix, it, loc_);
      return makeFor(i, makeInt(0, it), makeInt(rows, it), ForKind::Vectorized, f(makeVarRef(i, loc_)), loc_);
    };
    auto laneLoop = [&](const std::string& suffix, const std::function<Stmt(const Expr& k)>& f) {
      Var k = loopVar(suffix);
      return makeFor(k, makeInt(0, it), makeInt(vector, it), ForKind::Serial, f(makeVarRef(k, loc_)), loc_);
    };
    allocs.push_back(laneLoop("_t", [&](const Expr& k) {
      return overRows("_t", [&](const Expr& i) { return store(q, {k, i}, makeLoad(p, {i, k}, loc_)); });
    }));
    auto dstAt = [&](const Expr& i) { return std::vector<Expr>{add(dst_.ranges[0].min, i)}; };
    allocs.push_back(overRows("_i", [&](const Expr& i) { return store(a, {i}, initial(dstAt(i))); }));
    allocs.push_back(laneLoop("_s", [&](const Expr& k) {
      return overRows("_s", [&](const Expr& i) {
        return store(a, {i}, combinePartials(r_->reduceKind, makeLoad(a, {i}, loc_), makeLoad(q, {k, i}, loc_)));
      });
    }));
    allocs.push_back(overRows("_o", [&](const Expr& i) { return storeResult(dstAt(i), makeLoad(a, {i}, loc_)); }));
    return makeSeq(std::move(allocs), loc_);
  }

  // Float maxima and minima over lanes keep NaN out of the accumulators'
  // chains (nans_): a lane takes `v` when it orders above (below) the lane,
  // one vmaxps / vminps, which keeps the lane for a NaN `v`; the largest
  // magnitude bits the lane saw (a shift and an unsigned max, off the chain)
  // tell after the chunks whether a NaN was among them, and the lane then
  // becomes that NaN. The NaN-propagating max of every element (a compare,
  // the NaN test of `v`'s bits, and the blends: five operations a vector)
  // is left to the few combines after the chunks.
  bool nanLanes() const {
    return isFloat(at_) && (r_->reduceKind == ReduceKind::Max || r_->reduceKind == ReduceKind::AbsMax ||
                            r_->reduceKind == ReduceKind::Min);
  }
  // The unsigned type of the accumulator's bits.
  DType bitsType() const { return at_ == DType::Float64 ? DType::UInt64 : DType::UInt32; }
  // Bits whose unsigned order is the magnitudes' (`undo`: back to bits of
  // that magnitude): shifted left by one, the sign dropped. A mask would do
  // too, but LLVM turns the mask of a value widened from float16 into a
  // second conversion, of the masked float16. 64-bit bits are masked (a
  // shifted infinity would not fit a constant; no conversion comes into them).
  Expr magnitudeBits(Expr b, bool undo = false) const {
    const DType bt = bitsType();
    if (bt == DType::UInt64) return undo ? b : makeBinary(BinaryOp::BitAnd, b, makeInt(0x7fffffffffffffffll, bt), loc_);
    return makeBinary(undo ? BinaryOp::Shr : BinaryOp::Shl, b, makeInt(1, bt), loc_);
  }
  // Those of infinity: anything above is a NaN.
  Expr infinityBits() const {
    if (at_ == DType::Float64) return makeInt(0x7ff0000000000000ll, bitsType());
    return magnitudeBits(makeInt(0x7f800000, bitsType()));
  }

  // One row's `lanes` partial results over its whole chunks, combined
  // pairwise down to the first `keep` lanes (partials_).
  std::vector<Stmt> rowLanes(const std::vector<Expr>& offs, int64_t extent, int64_t lanes, int64_t keep) const {
    std::vector<Expr> si = srcIndex(offs);
    DType it = src_.ranges[dim_].extent->dtype;
    Var l = loopVar("_l"), c = loopVar("_c");
    Expr L = makeInt(lanes, it);
    std::vector<Expr> pl = {makeVarRef(l, loc_)};
    std::vector<Stmt> body;
    std::vector<Stmt> init = {store(partials_, pl, reduceIdentity(r_->reduceKind, at_))};
    if (nans_) init.push_back(store(nans_, pl, makeInt(0, bitsType())));
    body.push_back(makeFor(l, makeInt(0, it), L, ForKind::Vectorized, makeSeq(std::move(init), loc_), loc_));
    std::vector<Expr> sc = si;
    sc[dim_] = add(src_.ranges[dim_].min, add(mul(makeVarRef(c, loc_), L), makeVarRef(l, loc_)));
    Stmt step;
    if (nans_) {
      Expr v = value(sc);
      if (r_->reduceKind == ReduceKind::AbsMax) v = absOf(v);
      const char* keep = r_->reduceKind == ReduceKind::Min ? cpu_intrinsics::kMinKeep : cpu_intrinsics::kMaxKeep;
      Expr magnitude = magnitudeBits(makeCall("reinterpret", {v}, bitsType(), loc_));
      step = makeSeq({store(partials_, pl, makeCall(keep, {makeLoad(partials_, pl, loc_), v}, at_, loc_)),
                      store(nans_, pl, makeBinary(BinaryOp::Max, makeLoad(nans_, pl, loc_), magnitude, loc_))},
                     loc_);
    } else {
      step = store(partials_, pl, combine(r_->reduceKind, makeLoad(partials_, pl, loc_), value(sc)));
    }
    body.push_back(makeFor(c, makeInt(0, it), makeInt(extent / lanes, it), ForKind::Serial,
                           makeFor(l, makeInt(0, it), L, ForKind::Vectorized, step, loc_), loc_));
    if (nans_) {
      // A lane that saw a NaN becomes it.
      Expr n = makeLoad(nans_, pl, loc_);
      Expr nan = makeCall("reinterpret", {magnitudeBits(n, true)}, at_, loc_);
      body.push_back(makeFor(l, makeInt(0, it), L, ForKind::Vectorized,
                             store(partials_, pl,
                                   makeSelect(makeBinary(BinaryOp::Gt, n, infinityBits(), loc_), nan,
                                              makeLoad(partials_, pl, loc_), loc_)),
                             loc_));
    }
    for (int64_t w = lanes / 2; w >= keep; w /= 2) body.push_back(laneLevel(w));
    return body;
  }

  // Lanes [0, w) of the partial results take lanes [w, 2w): a vector loop,
  // or statements for the last levels (kStatementLevels).
  Stmt laneLevel(int64_t w) const {
    DType it = src_.ranges[dim_].extent->dtype;
    auto level = [&](const Expr& t) {
      return store(partials_, {t},
                   combinePartials(r_->reduceKind, makeLoad(partials_, {t}, loc_),
                                   makeLoad(partials_, {add(t, makeInt(w, it))}, loc_)));
    };
    if (w > kStatementLevels) {
      Var t = loopVar("_h");
      return makeFor(t, makeInt(0, it), makeInt(w, it), ForKind::Vectorized, level(makeVarRef(t, loc_)), loc_);
    }
    std::vector<Stmt> out;
    for (int64_t t = 0; t < w; ++t) out.push_back(level(makeInt(t, it)));
    return makeSeq(std::move(out), loc_);
  }

  // The reduced dimension walked in order into one accumulator.
  Stmt scalarBody(const std::vector<Expr>& offs) const {
    std::vector<Expr> di = dstIndex(offs), si = srcIndex(offs), a0 = {makeInt(0)};
    Var k = loopVar("_k");
    return makeSeq({store(acc_, a0, initial(di)),
                    makeFor(k, makeInt(0, k->dtype), src_.ranges[dim_].extent, ForKind::Serial, step(si, makeVarRef(k, loc_)), loc_),
                    storeResult(di, makeLoad(acc_, a0, loc_))},
                   loc_);
  }

  // Along the contiguous dimension: lane l of the partial results takes the
  // elements l, l + L, ... of the main part (a vector loop per chunk of L),
  // then the lanes combine pairwise, halving at each level (lane t takes
  // lane t + w), instead of one chain of L dependent steps; lane 0 then
  // joins the accumulator, which takes the rest in order. The last levels
  // (two lanes and one) are plain statements: a loop of two iterations that
  // the vectorizer leaves scalar stays a loop with a variable index into the
  // partial results, and LLVM then keeps the whole lane array in memory
  // (every level a store and reloads) instead of in registers.
  Stmt lanedBody(const std::vector<Expr>& offs, int64_t extent, int64_t lanes) const {
    std::vector<Expr> di = dstIndex(offs), si = srcIndex(offs), a0 = {makeInt(0)};
    DType it = src_.ranges[dim_].extent->dtype;
    std::vector<Stmt> body = rowLanes(offs, extent - extent % lanes, lanes, 1);
    body.push_back(store(acc_, a0, initial(di)));
    body.push_back(store(acc_, a0,
                         combinePartials(r_->reduceKind, makeLoad(acc_, a0, loc_),
                                         makeLoad(partials_, {makeInt(0, it)}, loc_))));
    if (extent % lanes) {
      Var k = loopVar("_k");
      body.push_back(makeFor(k, makeInt(extent / lanes * lanes, it), makeInt(extent % lanes, it), ForKind::Serial,
                             step(si, makeVarRef(k, loc_)), loc_));
    }
    body.push_back(storeResult(di, makeLoad(acc_, a0, loc_)));
    return makeSeq(std::move(body), loc_);
  }

  // Along an outer dimension: a row of accumulators over the last (output)
  // dimension, each output walked in order, the row in vector loops.
  Stmt rowBody(const std::vector<Expr>& offs) const {
    size_t lastDst = dstDim(rank_ - 1);
    ValidSpan span = validSpan(dst_.ranges[lastDst], dst_.buffer->shape[lastDst]);
    DType jt = src_.ranges[rank_ - 1].extent->dtype;
    auto rowLoop = [&](const std::string& suffix, const std::function<Stmt(const Expr& j)>& f) {
      Var j = makeVar(dst_.buffer->name + suffix, jt, loc_);
      return makeFor(j, span.lo, sub(span.hi, span.lo), ForKind::Vectorized, f(makeVarRef(j, loc_)), loc_);
    };
    auto at = [&](std::vector<Expr> idx, size_t d, const Range& rg, const Expr& j) {
      idx[d] = add(rg.min, j);
      return idx;
    };
    std::vector<Expr> di = dstIndex(offs), si = srcIndex(offs);
    Stmt init = rowLoop("_j", [&](const Expr& j) {
      return store(partials_, {j}, initial(at(di, lastDst, dst_.ranges[lastDst], j)));
    });
    Var k = loopVar("_k");
    Stmt walk = makeFor(k, makeInt(0, k->dtype), src_.ranges[dim_].extent, ForKind::Serial, rowLoop("_j1", [&](const Expr& j) {
      std::vector<Expr> s = at(si, rank_ - 1, src_.ranges[rank_ - 1], j);
      s[dim_] = add(src_.ranges[dim_].min, makeVarRef(k, loc_));
      return store(partials_, {j}, combine(r_->reduceKind, makeLoad(partials_, {j}, loc_), value(s)));
    }), loc_);
    Stmt out = rowLoop("_j2", [&](const Expr& j) {
      return storeResult(at(di, lastDst, dst_.ranges[lastDst], j), makeLoad(partials_, {j}, loc_));
    });
    return makeSeq({init, walk, out}, loc_);
  }

  const ReduceStmt* r_;
  const Region &src_, &dst_;
  size_t rank_, dim_;
  bool keepsDim_;
  DType dt_, at_;
  SourceLoc loc_;
  bool inside_;
  Buffer acc_, partials_, nans_;
  std::vector<size_t> outer_;  // the source dimensions the loop nest walks
};

Stmt lowerReduce(const ReduceStmt* r) { return Lowering(r).lower(); }

class ReduceLowering : public IRMutator {
 protected:
  Stmt mutateReduce(const ReduceStmt* node, const Stmt&) override { return lowerReduce(node); }
};

}  // namespace

Module lowerReductions(const Module& m) { return mutateBodies<ReduceLowering>(m); }

}  // namespace tlc::cpu
