// Small helpers that build tile-IR kernels with the ir.h factories for the
// interpreter tests (the tests do not depend on the front end).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/ir.h"

namespace tlc::testing {

using namespace tlc::ir;

inline Expr i32(int64_t v) { return makeInt(v); }
inline Expr vref(const Var& v) { return makeVarRef(v); }
inline Expr ceilDiv(Expr a, int64_t b) { return floorDiv(add(std::move(a), i32(b - 1)), i32(b)); }

inline Stmt seq(std::vector<Stmt> s) { return makeSeq(std::move(s)); }
inline Stmt alloc(const Buffer& b) { return std::make_shared<const AllocStmt>(b, SourceLoc{}); }
inline Stmt store(const Buffer& b, std::vector<Expr> idx, Expr v, SourceLoc loc = {}) {
  return std::make_shared<const StoreStmt>(b, std::move(idx), std::move(v), loc);
}
inline Stmt loop(const Var& v, Expr extent, Stmt body, ForKind k = ForKind::Serial) {
  return std::make_shared<const ForStmt>(v, i32(0), std::move(extent), k, std::move(body), SourceLoc{});
}
inline Stmt kernel(std::vector<Expr> grid, std::vector<Var> vars, Stmt body, SourceLoc loc = {}) {
  return std::make_shared<const KernelStmt>(std::move(grid), std::move(vars), 128, std::move(body), loc);
}
inline Stmt copy(Region src, Region dst, SourceLoc loc = {}) {
  return std::make_shared<const CopyStmt>(std::move(src), std::move(dst), loc);
}
inline Stmt fill(const Buffer& b, Expr v) { return std::make_shared<const FillStmt>(fullRegion(b), std::move(v), SourceLoc{}); }
inline Stmt ifThen(Expr c, Stmt t, Stmt e = nullptr) {
  return std::make_shared<const IfStmt>(std::move(c), std::move(t), std::move(e), SourceLoc{});
}
inline Region region(const Buffer& b, std::vector<Expr> mins, std::vector<int64_t> extents) {
  Region r{b, {}, SourceLoc{}};
  for (size_t i = 0; i < mins.size(); ++i) r.ranges.push_back({mins[i], i32(extents[i])});
  return r;
}

inline Param tensorParam(const Buffer& b) { return Param{b->name, b, nullptr, b->loc}; }
inline Param scalarParam(const Var& v) { return Param{v->name, nullptr, v, v->loc}; }

// The classic tile gemm: C[M, N] = op(A) @ op(B), A stored [M, K] (or [K, M]
// with transA), B stored [K, N] (or [N, K] with transB); M, N, K dynamic.
struct GemmConfig {
  int64_t blockM = 32, blockN = 32, blockK = 16;
  bool transA = false, transB = false;
  DType inType = DType::Float32, accType = DType::Float32, outType = DType::Float32;
};

inline PrimFunc makeTiledGemm(const GemmConfig& cfg) {
  Var M = makeVar("M"), N = makeVar("N"), K = makeVar("K");
  Buffer A = makeBuffer("A", cfg.inType, cfg.transA ? std::vector<Expr>{vref(K), vref(M)} : std::vector<Expr>{vref(M), vref(K)},
                        MemScope::Global);
  Buffer B = makeBuffer("B", cfg.inType, cfg.transB ? std::vector<Expr>{vref(N), vref(K)} : std::vector<Expr>{vref(K), vref(N)},
                        MemScope::Global);
  Buffer C = makeBuffer("C", cfg.outType, {vref(M), vref(N)}, MemScope::Global);
  const int64_t bm = cfg.blockM, bn = cfg.blockN, bk = cfg.blockK;
  Buffer As = makeBuffer("A_s", cfg.inType, cfg.transA ? std::vector<Expr>{i32(bk), i32(bm)} : std::vector<Expr>{i32(bm), i32(bk)},
                         MemScope::Shared);
  Buffer Bs = makeBuffer("B_s", cfg.inType, cfg.transB ? std::vector<Expr>{i32(bn), i32(bk)} : std::vector<Expr>{i32(bk), i32(bn)},
                         MemScope::Shared);
  Buffer Cf = makeBuffer("C_f", cfg.accType, {i32(bm), i32(bn)}, MemScope::Fragment);
  Var bx = makeVar("bx"), by = makeVar("by"), k = makeVar("k");
  Expr row0 = mul(vref(by), i32(bm)), col0 = mul(vref(bx), i32(bn)), k0 = mul(vref(k), i32(bk));
  Region aSrc = cfg.transA ? region(A, {k0, row0}, {bk, bm}) : region(A, {row0, k0}, {bm, bk});
  Region bSrc = cfg.transB ? region(B, {col0, k0}, {bn, bk}) : region(B, {k0, col0}, {bk, bn});
  Stmt body = seq({
      alloc(As), alloc(Bs), alloc(Cf), fill(Cf, makeFloat(0.0, cfg.accType)),
      loop(k, ceilDiv(vref(K), bk),
           seq({copy(aSrc, fullRegion(As)), copy(bSrc, fullRegion(Bs)),
                std::make_shared<const GemmStmt>(fullRegion(As), fullRegion(Bs), fullRegion(Cf), cfg.transA, cfg.transB,
                                                 false, SourceLoc{})}),
           ForKind::Pipelined),
      copy(fullRegion(Cf), region(C, {row0, col0}, {bm, bn})),
  });
  PrimFunc f;
  f.name = "gemm";
  f.params = {tensorParam(A), tensorParam(B), tensorParam(C)};
  f.shapeVars = {M, N, K};
  f.body = kernel({ceilDiv(vref(N), bn), ceilDiv(vref(M), bm)}, {bx, by}, body);
  return f;
}

}  // namespace tlc::testing
