// The tile operations of the interpreter: Copy, Gemm, Fill, Reduce.
//
// Each evaluates its regions once, then works element by element with the
// masking rule of ir.h: a region element outside its buffer reads as zero and
// is not written. Gemm gathers its operands into double matrices first so a
// large tile runs as plain loops.
//
// Numerics (the oracle's definition; backends must agree within tolerance):
// - Gemm: C[i,j] starts at 0 (clear_accum) or its old value; for k ascending,
//   C[i,j] = round_C(C[i,j] + a(i,k) * b(k,j)), where the product is exact for
//   inputs up to float32 and round_C rounds to C's dtype (a fused multiply-add
//   in C's dtype). Integer C accumulates in int64 and wraps to C's dtype.
// - Reduce: float destinations combine in double and round once to dst's
//   dtype; integer destinations combine in int64 and wrap. max/min propagate NaN.
#include <algorithm>
#include <cmath>
#include <limits>

#include "compiler/interp/machine.h"

namespace tlc::interp {

using namespace tlc::ir;

namespace {

// Advances a row-major multi-index within `extents`.
void step(std::vector<int64_t>& idx, const std::vector<int64_t>& extents) {
  for (size_t d = idx.size(); d-- > 0;) {
    if (++idx[d] < extents[d]) return;
    idx[d] = 0;
  }
}

}  // namespace

RegionVal Machine::evalRegion(const CRegion& r) {
  RegionVal v;
  const BufferNode* node = prog_.buffers[r.slot].buffer;
  v.buf = &bufs_[r.slot];
  v.node = node;
  v.loc = r.loc;
  if (!v.buf->live) fail(DiagKind::InterpInvalidProgram, r.loc, "buffer `" + node->name + "` is used before it is allocated", node);
  for (size_t d = 0; d < r.ranges.size(); ++d) {
    int64_t mn = evalInt(*r.ranges[d].min);
    int64_t ext = evalInt(*r.ranges[d].extent);
    if (ext < 0)
      fail(DiagKind::InterpUndefinedBehavior, r.loc,
           "the region of `" + node->name + "` has a negative extent (" + std::to_string(ext) + ") in dimension " +
               std::to_string(d),
           node);
    v.mins.push_back(mn);
    v.extents.push_back(ext);
    if (__builtin_mul_overflow(v.numel, ext, &v.numel))
      fail(DiagKind::InterpUnsupported, r.loc, "the region of `" + node->name + "` has too many elements", node);
  }
  return v;
}

Value Machine::regionLoad(const RegionVal& r, int64_t offset, SourceLoc loc) {
  if (offset < 0) return isFloat(r.node->dtype) ? floatValue(0.0) : intValue(0);
  return loadElement(*r.buf, r.node, offset, loc);
}

// A copy_async (async_copies.cpp) reads its source here too, and records
// its writes for the wait_group that completes it instead of storing them.
void Machine::execCopy(const CStmt& s) {
  const bool async = static_cast<const CopyStmt*>(s.node)->async;
  RegionVal src = evalRegion(s.regions[0]);
  RegionVal dst = evalRegion(s.regions[1]);
  if (src.numel != dst.numel)
    fail(DiagKind::InterpShapeMismatch, s.node->loc,
         std::string(async ? "copy_async" : "copy") + " from a region of `" + src.node->name + "` of shape " +
             formatIndex(src.extents) + " (" + std::to_string(src.numel) + " elements) to a region of `" +
             dst.node->name + "` of shape " + formatIndex(dst.extents) + " (" + std::to_string(dst.numel) +
             " elements)");
  PendingCopy pending{s.regions[1].slot, dst.buf->versions.empty() ? -1 : dst.buf->current, {}, s.node->loc};
  std::vector<int64_t> si(src.extents.size(), 0), di(dst.extents.size(), 0);
  const DType st = src.node->dtype, dt = dst.node->dtype;
  for (int64_t n = 0; n < src.numel; ++n) {
    int64_t doff = dst.offset(di.data());
    if (doff >= 0) {
      Value v = castValue(regionLoad(src, src.offset(si.data()), s.node->loc), st, dt);
      if (async)
        issueWrite(pending, *dst.buf, doff, v);
      else
        storeElement(*dst.buf, doff, v);
    }
    step(si, src.extents);
    step(di, dst.extents);
  }
  if (!async) return;
  if (s.slot < 0) return openGroup_.push_back(std::move(pending));
  pending.bytes = dst.numel * dtypeBytes(dt);
  barrierAt(s).inFlight.push_back(std::move(pending));  // its bytes arrive at a wait (barriers.cpp)
}

namespace {

struct MatrixView {
  int64_t rows = 0, cols = 0;
};

}  // namespace

void Machine::execGemm(const CStmt& s) {
  auto* g = static_cast<const GemmStmt*>(s.node);
  RegionVal ra = evalRegion(s.regions[0]);
  RegionVal rb = evalRegion(s.regions[1]);
  RegionVal rc = evalRegion(s.regions[2]);
  // The last two dimensions of a region form its matrix; leading ones must be single.
  auto view = [&](const RegionVal& r, const char* role) {
    size_t rank = r.extents.size();
    bool ok = rank >= 2;
    for (size_t d = 0; ok && d + 2 < rank; ++d) ok = r.extents[d] == 1;
    if (!ok)
      fail(DiagKind::InterpShapeMismatch, r.loc.known() ? r.loc : s.node->loc,
           std::string("gemm operand ") + role + " (`" + r.node->name + "`, region shape " + formatIndex(r.extents) +
               ") is not a matrix: it needs two dimensions, any leading ones of extent 1",
           r.node);
    return MatrixView{r.extents[rank - 2], r.extents[rank - 1]};
  };
  MatrixView va = view(ra, "A"), vb = view(rb, "B"), vc = view(rc, "C");
  const int64_t M = g->transA ? va.cols : va.rows;
  const int64_t K = g->transA ? va.rows : va.cols;
  const int64_t KB = g->transB ? vb.cols : vb.rows;
  const int64_t N = g->transB ? vb.rows : vb.cols;
  if (K != KB || vc.rows != M || vc.cols != N) {
    auto dims = [](int64_t r, int64_t c) { return "[" + std::to_string(r) + ", " + std::to_string(c) + "]"; };
    fail(DiagKind::InterpShapeMismatch, s.node->loc,
         "gemm shapes disagree: op(A) is " + dims(M, K) + ", op(B) is " + dims(KB, N) + " and C is " +
             dims(vc.rows, vc.cols) + "; C = op(A) @ op(B) needs [M, K] @ [K, N] -> [M, N]");
  }
  // Offsets of element (row, col) of a matrix view.
  auto offsetOf = [](const RegionVal& r, int64_t row, int64_t col) {
    std::vector<int64_t> idx(r.extents.size(), 0);
    idx[idx.size() - 2] = row;
    idx[idx.size() - 1] = col;
    return r.offset(idx.data());
  };
  SourceLoc loc = s.node->loc;
  const DType ct = rc.node->dtype;
  const bool intAccum = !isFloat(ct);
  constexpr int64_t kMaxOperand = int64_t{1} << 28;
  if (M * K > kMaxOperand || N * K > kMaxOperand)
    fail(DiagKind::InterpUnsupported, s.node->loc, "gemm operands of more than 2^28 elements are too large for the interpreter");
  // Gather op(A) as [M][K] and op(B) transposed as [N][K], zero where masked.
  std::vector<double> a(static_cast<size_t>(M * K)), bt(static_cast<size_t>(N * K));
  std::vector<int64_t> ai, bi;
  if (intAccum) {
    ai.resize(a.size());
    bi.resize(bt.size());
  }
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K; ++k) {
      Value v = regionLoad(ra, g->transA ? offsetOf(ra, k, i) : offsetOf(ra, i, k), loc);
      if (intAccum) ai[i * K + k] = castValue(v, ra.node->dtype, DType::Int64).i;
      a[i * K + k] = asDouble(v, ra.node->dtype);
    }
  for (int64_t j = 0; j < N; ++j)
    for (int64_t k = 0; k < K; ++k) {
      Value v = regionLoad(rb, g->transB ? offsetOf(rb, j, k) : offsetOf(rb, k, j), loc);
      if (intAccum) bi[j * K + k] = castValue(v, rb.node->dtype, DType::Int64).i;
      bt[j * K + k] = asDouble(v, rb.node->dtype);
    }
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      int64_t off = offsetOf(rc, i, j);
      if (off < 0) continue;  // the write would be dropped
      Value acc = g->clearAccum ? (intAccum ? intValue(0) : floatValue(0.0)) : regionLoad(rc, off, loc);
      if (intAccum) {
        uint64_t sum = static_cast<uint64_t>(acc.i);
        const int64_t* pa = &ai[i * K];
        const int64_t* pb = &bi[j * K];
        for (int64_t k = 0; k < K; ++k) sum += static_cast<uint64_t>(pa[k]) * static_cast<uint64_t>(pb[k]);
        acc = intValue(wrapToIntDType(static_cast<int64_t>(sum), ct));
      } else {
        double sum = acc.f;
        const double* pa = &a[i * K];
        const double* pb = &bt[j * K];
        if (ct == DType::Float32) {
          for (int64_t k = 0; k < K; ++k) sum = static_cast<float>(sum + pa[k] * pb[k]);
        } else if (ct == DType::Float64) {
          for (int64_t k = 0; k < K; ++k) sum = std::fma(pa[k], pb[k], sum);
        } else {
          for (int64_t k = 0; k < K; ++k) sum = roundFloat(sum + pa[k] * pb[k], ct);
        }
        acc = floatValue(sum);
      }
      storeElement(*rc.buf, off, acc);
    }
  }
}

void Machine::execFill(const CStmt& s) {
  RegionVal dst = evalRegion(s.regions[0]);
  const CExpr& value = *s.exprs[0];
  Value v = castValue(eval(value), value.dtype, dst.node->dtype);
  std::vector<int64_t> idx(dst.extents.size(), 0);
  for (int64_t n = 0; n < dst.numel; ++n) {
    int64_t off = dst.offset(idx.data());
    if (off >= 0) storeElement(*dst.buf, off, v);
    step(idx, dst.extents);
  }
}

void Machine::execReduce(const CStmt& s) {
  auto* r = static_cast<const ReduceStmt*>(s.node);
  RegionVal src = evalRegion(s.regions[0]);
  RegionVal dst = evalRegion(s.regions[1]);
  const size_t dim = static_cast<size_t>(r->dim);
  std::vector<int64_t> outExtents;
  int64_t outNumel = 1;
  for (size_t d = 0; d < src.extents.size(); ++d) {
    if (d == dim) continue;
    outExtents.push_back(src.extents[d]);
    outNumel *= src.extents[d];
  }
  if (outNumel != dst.numel)
    fail(DiagKind::InterpShapeMismatch, s.node->loc,
         std::string("reduce_") + reduceKindName(r->reduceKind) + " over dimension " + std::to_string(dim) +
             " of a region of shape " + formatIndex(src.extents) + " gives " + std::to_string(outNumel) +
             " elements, but the destination region " + formatIndex(dst.extents) + " has " +
             std::to_string(dst.numel));
  const DType st = src.node->dtype, dt = dst.node->dtype;
  const bool fp = isFloat(dt);
  const ReduceKind kind = r->reduceKind;
  const bool isAbs = kind == ReduceKind::AbsSum || kind == ReduceKind::AbsMax;
  const int64_t len = src.extents.empty() ? 1 : src.extents[dim];
  SourceLoc loc = s.node->loc;
  std::vector<int64_t> oi(outExtents.size(), 0), di(dst.extents.size(), 0), si(src.extents.size(), 0);
  const bool u64 = dt == DType::UInt64;
  auto less = [&](int64_t p, int64_t q) { return u64 ? static_cast<uint64_t>(p) < static_cast<uint64_t>(q) : p < q; };
  for (int64_t n = 0; n < outNumel; ++n) {
    int64_t doff = dst.offset(di.data());
    if (doff >= 0) {
      for (size_t d = 0, o = 0; d < si.size(); ++d) si[d] = d == dim ? 0 : oi[o++];
      if (fp) {
        double acc;
        if (!r->clear) {
          acc = regionLoad(dst, doff, loc).f;
        } else {
          acc = kind == ReduceKind::Max ? -INFINITY : kind == ReduceKind::Min ? INFINITY : 0.0;
        }
        for (int64_t j = 0; j < len; ++j) {
          si[dim] = j;
          double v = asDouble(regionLoad(src, src.offset(si.data()), loc), st);
          if (isAbs) v = std::fabs(v);
          if (kind == ReduceKind::Sum || kind == ReduceKind::AbsSum) {
            acc += v;
          } else if (std::isnan(v) || std::isnan(acc)) {
            acc = NAN;
          } else if (kind == ReduceKind::Min) {
            acc = v < acc ? v : acc;
          } else {
            acc = v > acc ? v : acc;
          }
        }
        storeElement(*dst.buf, doff, floatValue(roundFloat(acc, dt)));
      } else {
        int64_t acc;
        if (!r->clear) {
          acc = regionLoad(dst, doff, loc).i;
        } else if (kind == ReduceKind::Max) {
          acc = castValue(floatValue(-INFINITY), DType::Float64, dt).i;
        } else if (kind == ReduceKind::Min) {
          acc = castValue(floatValue(INFINITY), DType::Float64, dt).i;
        } else {
          acc = 0;
        }
        for (int64_t j = 0; j < len; ++j) {
          si[dim] = j;
          int64_t v = castValue(regionLoad(src, src.offset(si.data()), loc), st, dt).i;
          if (isAbs && isSigned(dt) && v < 0) v = static_cast<int64_t>(0 - static_cast<uint64_t>(v));
          switch (kind) {
            case ReduceKind::Sum:
            case ReduceKind::AbsSum: acc = static_cast<int64_t>(static_cast<uint64_t>(acc) + static_cast<uint64_t>(v)); break;
            case ReduceKind::Min: acc = less(v, acc) ? v : acc; break;
            default: acc = less(acc, v) ? v : acc; break;
          }
        }
        storeElement(*dst.buf, doff, intValue(wrapToIntDType(acc, dt)));
      }
    }
    step(oi, outExtents);
    step(di, dst.extents);
  }
}

}  // namespace tlc::interp
