#include "compiler/passes/cpu_lower_reduce.h"

#include <cmath>
#include <limits>

#include "compiler/ir/functor.h"
#include "compiler/passes/cpu_index_math.h"
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

Expr identity(ReduceKind k, DType t) {
  switch (k) {
    case ReduceKind::Sum:
    case ReduceKind::AbsSum:
    case ReduceKind::AbsMax: return zeroOf(t);
    case ReduceKind::Max:
      if (isFloat(t)) return makeFloat(-std::numeric_limits<double>::infinity(), t);
      return makeInt(isSigned(t) ? (dtypeBits(t) == 64 ? std::numeric_limits<int64_t>::min()
                                                       : -(int64_t(1) << (dtypeBits(t) - 1)))
                                 : 0,
                     t);
    case ReduceKind::Min:
      if (isFloat(t)) return makeFloat(std::numeric_limits<double>::infinity(), t);
      if (isSigned(t)) return makeInt(dtypeBits(t) == 64 ? std::numeric_limits<int64_t>::max()
                                                         : (int64_t(1) << (dtypeBits(t) - 1)) - 1,
                                      t);
      return makeInt(dtypeBits(t) == 64 ? -1 : (int64_t(1) << dtypeBits(t)) - 1, t);
  }
  return zeroOf(t);
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

Stmt lowerReduce(const ReduceStmt* r) {
  const Region& src = r->src;
  const Region& dst = r->dst;
  size_t rank = src.ranges.size();
  size_t dim = size_t(r->dim);
  bool dstKeepsDim = dst.ranges.size() == rank;
  DType dt = dst.buffer->dtype;
  DType at = accumulatorType(dt);
  SourceLoc loc = r->loc;

  Buffer acc = makeBuffer(dst.buffer->name + "_acc", at, {makeInt(1)}, MemScope::Local, loc);
  std::vector<Expr> accIdx = {makeInt(0)};

  // Loops over every source dimension except `dim`, clamped to the destination.
  std::vector<size_t> outerSrcDims;
  std::vector<LoopDim> loops;
  for (size_t d = 0; d < rank; ++d) {
    if (d == dim) continue;
    size_t dd = dstKeepsDim ? d : (d < dim ? d : d - 1);
    outerSrcDims.push_back(d);
    ValidSpan span = validSpan(dst.ranges[dd], dst.buffer->shape[dd]);
    loops.push_back({span.lo, span.hi, dst.buffer->name + "_r" + std::to_string(loops.size())});
  }

  auto body = [&](const std::vector<Expr>& offs) -> Stmt {
    std::vector<Expr> di;
    for (const Range& rg : dst.ranges) di.push_back(rg.min);
    for (size_t k = 0; k < outerSrcDims.size(); ++k) {
      size_t d = outerSrcDims[k];
      size_t dd = dstKeepsDim ? d : (d < dim ? d : d - 1);
      di[dd] = add(dst.ranges[dd].min, offs[k]);
    }
    Expr init = r->clear ? identity(r->reduceKind, at) : makeCast(at, makeLoad(dst.buffer, di, loc), loc);
    if (init->dtype != at) init = makeCast(at, init, loc);
    Stmt initStore = std::make_shared<const StoreStmt>(acc, accIdx, init, loc);

    Var rv = makeVar(src.buffer->name + "_k", src.ranges[dim].extent->dtype, loc);
    std::vector<Expr> si;
    for (const Range& rg : src.ranges) si.push_back(rg.min);
    for (size_t k = 0; k < outerSrcDims.size(); ++k) si[outerSrcDims[k]] = add(src.ranges[outerSrcDims[k]].min, offs[k]);
    si[dim] = add(src.ranges[dim].min, makeVarRef(rv, loc));
    Expr valid = makeBool(true);
    std::vector<Expr> clamped;
    for (size_t d = 0; d < rank; ++d) {
      Expr ok = inBounds(si[d], src.buffer->shape[d]);
      valid = logicalAnd(valid, ok);
      clamped.push_back(isTrue(ok) ? si[d] : clampIndex(si[d], src.buffer->shape[d]));
    }
    Expr v = makeLoad(src.buffer, clamped, loc);
    if (v->dtype != at) v = makeCast(at, v, loc);
    if (!isTrue(valid)) v = makeSelect(valid, v, zeroOf(at), loc);
    Stmt step = std::make_shared<const StoreStmt>(acc, accIdx, combine(r->reduceKind, makeLoad(acc, accIdx, loc), v), loc);
    Stmt loop = makeFor(rv, makeInt(0, rv->dtype), src.ranges[dim].extent, ForKind::Serial, step, loc);

    Expr result = makeLoad(acc, accIdx, loc);
    if (dt != at) result = makeCast(dt, result, loc);
    Stmt store = std::make_shared<const StoreStmt>(dst.buffer, di, result, loc);
    return makeSeq({initStore, loop, store}, loc);
  };
  Expr unitInside = makeBool(true);
  if (dstKeepsDim) unitInside = inBounds(dst.ranges[dim].min, dst.buffer->shape[dim]);
  Stmt nest = guarded(unitInside, buildLoopNest(loops, ForKind::Serial, body, loc), loc);
  return makeSeq({std::make_shared<const AllocStmt>(acc, loc), nest}, loc);
}

class ReduceLowering : public IRMutator {
 protected:
  Stmt mutateReduce(const ReduceStmt* node, const Stmt&) override { return lowerReduce(node); }
};

}  // namespace

Module lowerReductions(const Module& m) { return mutateBodies<ReduceLowering>(m); }

}  // namespace tlc::cpu
