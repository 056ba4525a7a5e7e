// The plain convolution reference for TMA im2col loads, shared by the
// emulator's im2col tests: which element of an (N, H, W, C) tensor each row
// of a load reads, computed from output pixels and filter taps directly,
// without the pixel walk over the map's bounding box that the emulator
// (and the hardware) performs.
#pragma once

#include <cstdint>

namespace tlc::test {

// A 2-D convolution over an (N, H, W, C) input: filter (kh, kw), stride
// (sh, sw), zero pad (ph, pw) on each side, dilation (dh, dw).
struct Conv2d {
  int N, H, W, C;
  int kh, kw, sh, sw, ph, pw, dh, dw;
  int outH() const { return (H + 2 * ph - dh * (kh - 1) - 1) / sh + 1; }
  int outW() const { return (W + 2 * pw - dw * (kw - 1) - 1) / sw + 1; }
  int64_t outPixels() const { return (int64_t)N * outH() * outW(); }
};

// One load of an implicit gemm's A tile: rows for the output pixels m0,
// m0 + 1, ... (0-based over N * OH * OW, ow fastest), each the channels
// c0, c0 + 1, ... of the input pixel under filter tap (ki, kj) (row, column).
struct Im2colLoad {
  int64_t m0;
  int ki, kj;
  int c0;
};

// The instruction's operands for `l`: coords (c, w, h, n), innermost first,
// the top-left tap of output pixel m0 (w = ow * sw - pw, h = oh * sh - ph);
// offsets (w, h), the tap's shift (kj * dw, ki * dh).
inline void im2colOperands(const Conv2d& v, const Im2colLoad& l, int coords[4], uint16_t offsets[2]) {
  const int64_t perImage = (int64_t)v.outH() * v.outW();
  const int64_t n = l.m0 / perImage, r = l.m0 % perImage;
  coords[0] = l.c0;
  coords[1] = (int)(r % v.outW()) * v.sw - v.pw;
  coords[2] = (int)(r / v.outW()) * v.sh - v.ph;
  coords[3] = (int)n;
  offsets[0] = (uint16_t)(l.kj * v.dw);
  offsets[1] = (uint16_t)(l.ki * v.dh);
}

// The flat index ((n * H + y) * W + x) * C + c of the element that row p,
// channel k of load `l` reads: X[n][oh * sh - ph + ki * dh][ow * sw - pw +
// kj * dw][c0 + k] for output pixel m0 + p = (n, oh, ow); -1 where that is
// outside the input (padding, channels past C, pixels past the last image):
// the load reads zero there.
inline int64_t im2colSource(const Conv2d& v, const Im2colLoad& l, int p, int k) {
  const int64_t perImage = (int64_t)v.outH() * v.outW();
  const int64_t m = l.m0 + p, n = m / perImage, r = m % perImage;
  const int64_t y = (r / v.outW()) * v.sh - v.ph + (int64_t)l.ki * v.dh;
  const int64_t x = (r % v.outW()) * v.sw - v.pw + (int64_t)l.kj * v.dw;
  const int64_t c = (int64_t)l.c0 + k;
  if (n >= v.N || y < 0 || y >= v.H || x < 0 || x >= v.W || c < 0 || c >= v.C) return -1;
  return ((n * v.H + y) * v.W + x) * v.C + c;
}

}  // namespace tlc::test
