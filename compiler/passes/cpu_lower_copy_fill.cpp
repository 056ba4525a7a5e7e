#include "compiler/passes/cpu_lower_copy_fill.h"

#include <algorithm>

#include "compiler/ir/functor.h"
#include "compiler/passes/cpu_index_math.h"
#include "compiler/passes/cpu_loop_builder.h"
#include "compiler/ir/module_rewrite.h"

namespace tlc::cpu {

using namespace ir;

namespace {

// Maps destination loop offsets (one per non-unit destination dimension) to
// source offsets (one per non-unit source dimension).
struct ElementMap {
  std::vector<int> srcDims, dstDims;
  bool direct = true;
  std::vector<Expr> dstExtents, srcExtents;

  std::vector<Expr> srcOffsets(const std::vector<Expr>& dstOffsets) const {
    if (direct) return dstOffsets;
    // Linearize over the destination, then split over the source.
    Expr linear = makeInt(0, DType::Int64);
    for (size_t k = 0; k < dstOffsets.size(); ++k) linear = add(mul(linear, toI64(dstExtents[k])), toI64(dstOffsets[k]));
    std::vector<Expr> out(srcExtents.size());
    for (size_t k = srcExtents.size(); k-- > 0;) {
      Expr ext = toI64(srcExtents[k]);
      out[k] = makeCast(srcExtents[k]->dtype, floorMod(linear, ext));
      linear = floorDiv(linear, ext);
    }
    return out;
  }
};

ElementMap mapElements(const Region& src, const Region& dst) {
  ElementMap m;
  m.srcDims = nonUnitDims(src);
  m.dstDims = nonUnitDims(dst);
  for (int d : m.srcDims) m.srcExtents.push_back(src.ranges[d].extent);
  for (int d : m.dstDims) m.dstExtents.push_back(dst.ranges[d].extent);
  m.direct = m.srcDims.size() == m.dstDims.size();
  for (size_t k = 0; m.direct && k < m.srcDims.size(); ++k) {
    int64_t a, b;
    bool same = sameExpr(m.srcExtents[k], m.dstExtents[k]) ||
                (constInt(m.srcExtents[k], &a) && constInt(m.dstExtents[k], &b) && a == b);
    if (!same) m.direct = false;
  }
  return m;
}

// Full indices of a region from offsets of its non-unit dimensions.
std::vector<Expr> regionIndices(const Region& r, const std::vector<int>& dims, const std::vector<Expr>& offsets) {
  std::vector<Expr> idx;
  for (const Range& rg : r.ranges) idx.push_back(rg.min);
  for (size_t k = 0; k < dims.size(); ++k) idx[dims[k]] = add(r.ranges[dims[k]].min, offsets[k]);
  return idx;
}

std::string loopName(const Region& r, size_t k) { return r.buffer->name + "_i" + std::to_string(k); }

Stmt lowerCopy(const CopyStmt* c) {
  const Region& src = c->src;
  const Region& dst = c->dst;
  ElementMap map = mapElements(src, dst);
  DType dt = dst.buffer->dtype;
  auto convert = [&](Expr v) { return v->dtype == dt ? v : makeCast(dt, v, c->loc); };

  // Unmasked: every element of both regions is inside its buffer.
  auto fastBody = [&](const std::vector<Expr>& offs) -> Stmt {
    std::vector<Expr> di = regionIndices(dst, map.dstDims, offs);
    std::vector<Expr> si = regionIndices(src, map.srcDims, map.srcOffsets(offs));
    return std::make_shared<const StoreStmt>(dst.buffer, di, convert(makeLoad(src.buffer, si, c->loc)), c->loc);
  };
  std::vector<LoopDim> fullDims;
  for (size_t k = 0; k < map.dstDims.size(); ++k)
    fullDims.push_back({makeInt(0, map.dstExtents[k]->dtype), map.dstExtents[k], loopName(dst, k)});

  Expr allInside = logicalAnd(regionInBounds(src), regionInBounds(dst));
  Stmt fast = buildLoopNest(fullDims, ForKind::Parallel, fastBody, c->loc);
  if (isTrue(allInside)) return fast;

  // Masked: loops clamped to the destination, reads guarded per element.
  auto maskedBody = [&](const std::vector<Expr>& offs) -> Stmt {
    std::vector<Expr> di = regionIndices(dst, map.dstDims, offs);
    std::vector<Expr> si = regionIndices(src, map.srcDims, map.srcOffsets(offs));
    Expr valid = makeBool(true);
    std::vector<Expr> clamped;
    for (size_t d = 0; d < si.size(); ++d) {
      Expr shape = src.buffer->shape[d];
      Expr ok = inBounds(si[d], shape);
      valid = logicalAnd(valid, ok);
      clamped.push_back(isTrue(ok) ? si[d] : clampIndex(si[d], shape));
    }
    Expr value = convert(makeLoad(src.buffer, clamped, c->loc));
    if (!isTrue(valid)) value = makeSelect(valid, value, zeroOf(dt), c->loc);
    return std::make_shared<const StoreStmt>(dst.buffer, di, value, c->loc);
  };
  std::vector<LoopDim> clampedDims;
  for (size_t k = 0; k < map.dstDims.size(); ++k) {
    int d = map.dstDims[k];
    ValidSpan span = validSpan(dst.ranges[d], dst.buffer->shape[d]);
    clampedDims.push_back({span.lo, span.hi, loopName(dst, k)});
  }
  Expr unitDimsInside = makeBool(true);
  for (size_t d = 0; d < dst.ranges.size(); ++d) {
    if (std::find(map.dstDims.begin(), map.dstDims.end(), (int)d) != map.dstDims.end()) continue;
    unitDimsInside = logicalAnd(unitDimsInside, inBounds(dst.ranges[d].min, dst.buffer->shape[d]));
  }
  Stmt masked = guarded(unitDimsInside, buildLoopNest(clampedDims, ForKind::Parallel, maskedBody, c->loc), c->loc);
  return std::make_shared<const IfStmt>(allInside, fast, masked, c->loc, /*likely=*/true);
}

Stmt lowerFill(const FillStmt* f) {
  const Region& dst = f->dst;
  std::vector<int> dims = nonUnitDims(dst);
  DType dt = dst.buffer->dtype;
  Expr value = f->value->dtype == dt ? f->value : makeCast(dt, f->value, f->loc);
  std::vector<LoopDim> loops;
  Expr unitInside = makeBool(true);
  for (size_t d = 0; d < dst.ranges.size(); ++d) {
    if (std::find(dims.begin(), dims.end(), (int)d) == dims.end()) {
      unitInside = logicalAnd(unitInside, inBounds(dst.ranges[d].min, dst.buffer->shape[d]));
      continue;
    }
    ValidSpan span = validSpan(dst.ranges[d], dst.buffer->shape[d]);
    loops.push_back({span.lo, span.hi, loopName(dst, loops.size())});
  }
  auto body = [&](const std::vector<Expr>& offs) -> Stmt {
    return std::make_shared<const StoreStmt>(dst.buffer, regionIndices(dst, dims, offs), value, f->loc);
  };
  return guarded(unitInside, buildLoopNest(loops, ForKind::Parallel, body, f->loc), f->loc);
}

class CopyFillLowering : public IRMutator {
 protected:
  Stmt mutateCopy(const CopyStmt* node, const Stmt&) override { return lowerCopy(node); }
  Stmt mutateFill(const FillStmt* node, const Stmt&) override { return lowerFill(node); }
};

}  // namespace

Module lowerCopyAndFill(const Module& m) { return mutateBodies<CopyFillLowering>(m); }

}  // namespace tlc::cpu
