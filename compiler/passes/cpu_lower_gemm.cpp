#include "compiler/passes/cpu_lower_gemm.h"

#include "compiler/ir/functor.h"
#include "compiler/support/diagnostics.h"
#include "compiler/passes/cpu_index_math.h"
#include "compiler/passes/cpu_intrinsics.h"
#include "compiler/passes/cpu_loop_builder.h"
#include "compiler/ir/module_rewrite.h"

namespace tlc::cpu {

using namespace ir;

namespace {

// One operand seen as a matrix: rows x cols with element strides, and the
// number of rows / cols that lie inside the buffer.
struct MatrixView {
  Expr address;
  Expr rowStride, colStride;
  Expr validRows, validCols;
};

MatrixView viewOf(const Region& r, SourceLoc loc) {
  size_t n = r.ranges.size();
  TLC_CHECK(n >= 1, "gemm operand needs at least one dimension");
  std::vector<Expr> strides = rowMajorStrides(r.buffer);
  std::vector<Expr> base;
  for (const Range& rg : r.ranges) base.push_back(rg.min);
  MatrixView v;
  v.address = makeCall(cpu_intrinsics::kAddressOf, {makeLoad(r.buffer, base, loc)}, DType::UInt64, loc);
  if (n == 1) {  // a vector: one row
    v.rowStride = makeInt(0, DType::Int64);
    v.colStride = strides[0];
    v.validRows = makeInt(1, DType::Int64);
    v.validCols = toI64(validExtent(r.ranges[0], r.buffer->shape[0]));
    return v;
  }
  v.rowStride = strides[n - 2];
  v.colStride = strides[n - 1];
  v.validRows = toI64(validExtent(r.ranges[n - 2], r.buffer->shape[n - 2]));
  v.validCols = toI64(validExtent(r.ranges[n - 1], r.buffer->shape[n - 1]));
  return v;
}

class GemmLowering : public IRMutator {
 protected:
  Stmt mutateGemm(const GemmStmt* g, const Stmt&) override {
    SourceLoc loc = g->loc;
    MatrixView a = viewOf(g->a, loc), b = viewOf(g->b, loc), c = viewOf(g->c, loc);
    // op(A) is M x K: element (i, k).
    Expr sAi = g->transA ? a.colStride : a.rowStride;
    Expr sAk = g->transA ? a.rowStride : a.colStride;
    Expr aRows = g->transA ? a.validCols : a.validRows;
    Expr aK = g->transA ? a.validRows : a.validCols;
    // op(B) is K x N: element (k, j).
    Expr sBk = g->transB ? b.colStride : b.rowStride;
    Expr sBj = g->transB ? b.rowStride : b.colStride;
    Expr bK = g->transB ? b.validCols : b.validRows;
    Expr bCols = g->transB ? b.validRows : b.validCols;

    Expr M = minExpr(aRows, c.validRows);
    Expr N = minExpr(bCols, c.validCols);
    Expr K = minExpr(aK, bK);
    Stmt call = std::make_shared<const EvaluateStmt>(
        makeCall(cpu_intrinsics::kGemm, {a.address, b.address, c.address, M, N, K, sAi, sAk, sBk, sBj, c.rowStride},
                 c.address->dtype, loc),
        loc);
    if (!g->clearAccum) return call;
    Stmt clear = std::make_shared<const FillStmt>(g->c, zeroOf(g->c.buffer->dtype), loc);
    return makeSeq({clear, call}, loc);
  }
};

}  // namespace

Module lowerGemm(const Module& m) { return mutateBodies<GemmLowering>(m); }

}  // namespace tlc::cpu
