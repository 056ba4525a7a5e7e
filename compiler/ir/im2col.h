// The im2col tile of an implicit-GEMM convolution (T.c2d_im2col): the
// Parallel nest that gathers it, and the test that a nest is still that
// nest, which lets the CUDA backend load it by TMA in im2col mode.
//
// X is an (N, H, W, C) tensor; the convolution has filter (KH, KW), stride
// (SH, SW), zero padding (PH, PW) on each side and dilation (DH, DW), so its
// output is (N, OH, OW) pixels with OH = (H + 2 PH - DH (KH - 1) - 1) // SH + 1
// (OW alike). Its im2col matrix has a row per output pixel m (ow fastest,
// then oh, then n) and a column per k = (kh * KW + kw) * C + c (c fastest);
// element (m, k) is X[n, oh SH - PH + kh DH, ow SW - PW + kw DW, c], zero
// where that lies outside the image, m >= N OH OW or k >= KH KW C.
// T.c2d_im2col(X, tile, nhw_step, c_step, ...) fills a [BM, BK] shared
// tile with rows nhw_step * BM + i and columns c_step * BK + j of it.
#pragma once

#include <array>
#include <optional>
#include <vector>

#include "compiler/ir/gather_nest.h"
#include "compiler/ir/ir.h"

namespace tlc::ir {

// kernel, stride, padding and dilation, each (h, w).
struct Im2colGeometry {
  std::array<int64_t, 2> kernel{1, 1}, stride{1, 1}, pad{0, 0}, dilation{1, 1};
  // As the loop attribute ForStmt::im2col lists them:
  // [KH, KW, SH, SW, PH, PW, DH, DW].
  std::vector<int64_t> attribute() const;
  static std::optional<Im2colGeometry> fromAttribute(const std::vector<int64_t>& a);
};
// Whether `a` is a valid ForStmt::im2col attribute.
bool validIm2colAttribute(const std::vector<int64_t>& a);

// The output extent of an input extent `in` along one axis of `g` (0: h, 1: w).
Expr im2colOutputExtent(const Expr& in, const Im2colGeometry& g, int axis);

// The Parallel nest storing rows nhwStep * BM + i, columns cStep * BK + j of
// X's im2col matrix into `tile` ([BM, BK], constant), its outer loop
// carrying the geometry's attribute.
Stmt im2colNest(const Buffer& x, const Buffer& tile, const Expr& nhwStep, const Expr& cStep, const Im2colGeometry& g,
                SourceLoc loc);

// A gather nest that is exactly the im2col nest of its outer loop's
// attribute (lets inlined), with what it was built from.
struct Im2colMatch {
  const BufferNode* x = nullptr;
  const BufferNode* tile = nullptr;
  Expr nhwStep, cStep;
  Im2colGeometry geometry;
  int64_t rows = 0, cols = 0;  // BM, BK
  SourceLoc loc;               // the nest's
};
std::optional<Im2colMatch> matchIm2col(const GatherNest& g);

}  // namespace tlc::ir
