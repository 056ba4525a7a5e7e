// The emulator's TMA im2col loads (isa::tmaIm2colBox, the tensor-map
// encoding's im2col fields, Machine::tmaLoadIm2col): every row of a load
// against the plain convolution reference (tests/cuda_emu/im2col_reference.h)
// for several convolutions, loads that run from one image into the next and
// past the last one; the encoding's round trip and its rejections; and a map
// of one mode used by a load of the other reported as a bad tensor map.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "compiler/backends/cuda/tensor_map.h"
#include "compiler/backends/cuda_emu/emulator.h"
#include "compiler/backends/cuda_emu/isa.h"
#include "tests/cuda_emu/im2col_reference.h"

using namespace tlc::cuda_emu;
using namespace tlc::cuda_emu::isa;
using tlc::test::Conv2d;
using tlc::test::Im2colLoad;
namespace cu = tlc::cuda;

namespace {

// The im2col map of `v` over a float16 tensor at `address`, built field by
// field (the corners and element strides written out from the convolution,
// independently of cuda::im2colTensorMapSpec).
cu::TensorMapSpec im2colMap(const Conv2d& v, uint64_t address, int channels, int pixels) {
  cu::TensorMapSpec s;
  s.dtype = cu::TmaDType::F16;
  s.elemBytes = 2;
  s.rank = 4;
  s.address = address;
  const uint64_t dims[4] = {(uint64_t)v.C, (uint64_t)v.W, (uint64_t)v.H, (uint64_t)v.N};
  uint64_t stride = 2;
  for (int i = 0; i < 4; ++i) {
    s.dims[i] = dims[i];
    s.strides[i] = stride;
    stride *= dims[i];
  }
  s.box[0] = (uint32_t)channels;
  s.box[1] = (uint32_t)pixels;
  s.box[2] = s.box[3] = 1;
  s.im2col = true;
  s.lower[0] = -v.pw;
  s.lower[1] = -v.ph;
  s.upper[0] = v.pw - v.dw * (v.kw - 1);
  s.upper[1] = v.ph - v.dh * (v.kh - 1);
  s.elementStrides[1] = (uint32_t)v.sw;
  s.elementStrides[2] = (uint32_t)v.sh;
  return s;
}

// The rows of load `l` whose elements tmaIm2colBox addresses differently
// from the reference (in or out of bounds, or another address); the first
// few of a test are named in messages.
int mismatchingRows(const Conv2d& v, const Im2colLoad& l, int channels, int pixels, int* named) {
  const uint64_t base = 0x10000;
  cu::TensorMapSpec s = im2colMap(v, base, channels, pixels);
  int coords[4];
  uint16_t offsets[2];
  tlc::test::im2colOperands(v, l, coords, offsets);
  std::vector<uint64_t> g;
  std::vector<uint8_t> in;
  tmaIm2colBox(s, coords, offsets, &g, &in);
  REQUIRE(g.size() == (size_t)channels * pixels);
  int bad = 0;
  for (int p = 0; p < pixels; ++p) {
    bool rowBad = false;
    for (int k = 0; k < channels; ++k) {
      const size_t e = (size_t)p * channels + k;
      const int64_t src = tlc::test::im2colSource(v, l, p, k);
      rowBad |= src < 0 ? in[e] != 0 : !in[e] || g[e] != base + (uint64_t)src * 2;
    }
    if (rowBad && ++*named <= 8) {
      MESSAGE("load at m0 " << l.m0 << " tap (" << l.ki << ", " << l.kj << ") c0 " << l.c0 << ": row " << p
                            << " differs from the reference");
    }
    bad += rowBad;
  }
  return bad;
}

// Every load of `pixels` rows from each m0 (a step of `step` pixels, up to
// past the last output pixel), every tap and the channel blocks from 0 in
// steps of half a block (the last block runs past C).
void checkEveryLoad(const Conv2d& v, int channels, int pixels, int step) {
  int loads = 0, bad = 0, named = 0;
  for (int64_t m0 = 0; m0 < v.outPixels() + pixels; m0 += step)
    for (int ki = 0; ki < v.kh; ++ki)
      for (int kj = 0; kj < v.kw; ++kj)
        for (int c0 = 0; c0 < v.C; c0 += channels / 2) {
          bad += mismatchingRows(v, {m0, ki, kj, c0}, channels, pixels, &named);
          ++loads;
        }
  CAPTURE(loads);
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("im2col box: a 3x3 convolution with pad 1 and stride 1 reads what the convolution reads") {
  // 2 images of 5 x 7 pixels, 16 float16 channels: 35 output pixels each.
  const Conv2d v{2, 5, 7, 16, 3, 3, 1, 1, 1, 1, 1, 1};
  REQUIRE(v.outH() == 5);
  REQUIRE(v.outW() == 7);
  const uint64_t base = 0x10000;
  cu::TensorMapSpec s = im2colMap(v, base, 16, 16);
  CHECK(tmaBoxBytes(s) == 16 * 16 * 2);  // every row, zero-filled ones too
  std::vector<uint64_t> g;
  std::vector<uint8_t> in;
  auto load = [&](const Im2colLoad& l) {
    int coords[4];
    uint16_t offsets[2];
    tlc::test::im2colOperands(v, l, coords, offsets);
    tmaIm2colBox(s, coords, offsets, &g, &in);
  };
  auto at = [&](int n, int y, int x, int c) { return base + (uint64_t)(((n * 5 + y) * 7 + x) * 16 + c) * 2; };
  // Output pixels 30..45, the centre tap: the last five pixels of image 0
  // (its bottom row from ow = 2), then image 1 from its first pixel.
  load({30, 1, 1, 0});
  CHECK(in[0]);
  CHECK(g[0] == at(0, 4, 2, 0));
  CHECK(in[4 * 16 + 15]);
  CHECK(g[4 * 16 + 15] == at(0, 4, 6, 15));
  CHECK(g[5 * 16] == at(1, 0, 0, 0));
  CHECK(g[15 * 16 + 3] == at(1, 1, 3, 3));
  // The top-left tap of the same pixels: image 0's bottom row reads row 3,
  // image 1's first row reads the padding above it.
  load({30, 0, 0, 0});
  CHECK(g[0] == at(0, 3, 1, 0));
  CHECK_FALSE(in[5 * 16]);       // (n, y, x) = (1, -1, -1)
  CHECK_FALSE(in[11 * 16 + 7]);  // (1, -1, 5): the pad row to the end of image 1's first output row
  CHECK_FALSE(in[12 * 16]);      // (1, 0, -1): the pad column
  CHECK(g[13 * 16] == at(1, 0, 0, 0));
  // Output pixels 64..79: six pixels of image 1, then past the last image.
  load({64, 1, 1, 0});
  CHECK(g[0] == at(1, 4, 1, 0));
  CHECK(in[5 * 16 + 15]);
  for (int e = 6 * 16; e < 16 * 16; ++e) CHECK_FALSE(in[e]);
  // Every load of 32 and of 16 rows, 16 and 8 channels.
  checkEveryLoad(v, 16, 32, 8);
  checkEveryLoad(v, 8, 16, 5);
}

TEST_CASE("im2col box: stride 2, dilation 2, pad 2") {
  // 5 x 7 pixels: 3 x 4 output pixels per image.
  const Conv2d v{2, 5, 7, 16, 3, 3, 2, 2, 2, 2, 2, 2};
  REQUIRE(v.outH() == 3);
  REQUIRE(v.outW() == 4);
  checkEveryLoad(v, 16, 8, 4);
  checkEveryLoad(v, 8, 24, 3);
}

TEST_CASE("im2col box: a filter, stride and pad that differ between h and w") {
  // 2 x 3 filter, stride (1, 2), pad (0, 1) over 6 x 9 pixels: 5 x 5 output pixels.
  const Conv2d v{3, 6, 9, 32, 2, 3, 1, 2, 0, 1, 1, 1};
  REQUIRE(v.outH() == 5);
  REQUIRE(v.outW() == 5);
  checkEveryLoad(v, 16, 16, 7);
  checkEveryLoad(v, 32, 64, 16);
  // A 1 x 1 filter without padding: the pixels of the tensor in order.
  const Conv2d pointwise{2, 3, 4, 16, 1, 1, 1, 1, 0, 0, 1, 1};
  checkEveryLoad(pointwise, 16, 8, 8);
}

TEST_CASE("im2col tensor maps: the encoding keeps the mode, corners and element strides") {
  const Conv2d v{2, 5, 7, 16, 3, 3, 2, 1, 2, 1, 3, 1};
  cu::TensorMapSpec s = im2colMap(v, 0x1000, 16, 1024);
  s.swizzle = cu::TmaSwizzle::B32;
  unsigned char map[128];
  std::string why;
  REQUIRE_MESSAGE(encodeTensorMap(s, map, &why), why);
  cu::TensorMapSpec d;
  REQUIRE(decodeTensorMap(map, &d));
  CHECK(d.im2col);
  CHECK(d.rank == 4);
  CHECK(d.lower[0] == -1);
  CHECK(d.lower[1] == -2);
  CHECK(d.upper[0] == 1 - 2);
  CHECK(d.upper[1] == 2 - 3 * 2);
  CHECK(d.elementStrides[0] == 1);
  CHECK(d.elementStrides[1] == 1);
  CHECK(d.elementStrides[2] == 2);
  CHECK(d.elementStrides[3] == 1);
  CHECK(d.box[0] == 16);
  CHECK(d.box[1] == 1024);
  CHECK(d.strides[3] == 5 * 7 * 16 * 2);
  CHECK(d.swizzle == cu::TmaSwizzle::B32);
  CHECK(tmaBoxBytes(d) == 16 * 1024 * 2);
  // A tiled map decodes as tiled.
  cu::TensorMapSpec tiled = s;
  tiled.im2col = false;
  tiled.box[1] = 8;
  tiled.elementStrides[2] = 1;
  REQUIRE_MESSAGE(encodeTensorMap(tiled, map, &why), why);
  REQUIRE(decodeTensorMap(map, &d));
  CHECK_FALSE(d.im2col);
  CHECK(tmaBoxBytes(d) == 16 * 8 * 2);
}

TEST_CASE("im2col tensor maps the hardware cannot encode are rejected with the reason") {
  const Conv2d v{2, 5, 7, 16, 3, 3, 1, 1, 1, 1, 1, 1};
  unsigned char map[128];
  auto reject = [&](cu::TensorMapSpec s, const std::string& reason) {
    std::string why;
    CAPTURE(reason);
    CHECK_FALSE(encodeTensorMap(s, map, &why));
    CHECK(why.find(reason) != std::string::npos);
  };
  cu::TensorMapSpec s = im2colMap(v, 0x1000, 16, 32);
  s.rank = 3;
  reject(s, "must have rank 4");
  s = im2colMap(v, 0x1000, 16, 1025);
  reject(s, "pixels per column must be 1..1024");
  s = im2colMap(v, 0x1000, 264, 32);
  reject(s, "channels per pixel must be 1..256");
  s = im2colMap(v, 0x1000, 4, 32);  // 8-byte rows
  reject(s, "multiple of 16 bytes");
  s = im2colMap(v, 0x1000, 16, 32);
  s.lower[1] = -129;
  reject(s, "corners must be -128..127");
  s = im2colMap(v, 0x1000, 16, 32);
  s.upper[0] = 128;
  reject(s, "corners must be -128..127");
  s = im2colMap(v, 0x1000, 16, 32);
  s.elementStrides[1] = 9;
  reject(s, "element strides must be 1..8 along W and H");
  s = im2colMap(v, 0x1000, 16, 32);
  s.elementStrides[0] = 2;
  reject(s, "1 along C and N");
  s = im2colMap(v, 0x1000, 64, 32);
  s.swizzle = cu::TmaSwizzle::B64;  // 128-byte rows
  reject(s, "wider than the swizzle span");
  // Element strides are im2col's alone here.
  s = im2colMap(v, 0x1000, 16, 32);
  s.im2col = false;
  s.box[1] = 8;
  s.elementStrides[1] = 2;
  reject(s, "element strides of 1");
}

namespace {

// One thread issues `load` (tlc:: calls over `smem`, `map` and `bar`) after
// the barrier is initialized; the findings of the launch.
LaunchResult runLoad(const std::string& load, const unsigned char* map) {
  const std::string src = R"(#include "tlc_cuda.h"
extern "C" __global__ void k(const __grid_constant__ tlc::TensorMap map) {
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ tlc::u64 bar;
  if (threadIdx.x == 0) { tlc::mbar_init(&bar, 1); tlc::mbar_init_fence(); }
  __syncthreads();
  if (threadIdx.x == 0) { )" + load + R"( }
}
)";
  std::string err;
  auto m = EmulatedModule::compile(src, &err);
  REQUIRE_MESSAGE(m, err);
  LaunchConfig cfg;
  cfg.block.x = 32;
  cfg.dynamicSharedBytes = 8192;
  std::vector<KernelArg> args = {byValue("map", map, 128)};
  return m->launch("k", cfg, args);
}

bool hasWith(const LaunchResult& r, FindingKind k, const std::string& text) {
  for (auto& f : r.findings)
    if (f.kind == k && f.message.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("a tensor map of one mode used by a load of the other is a bad tensor map") {
  const Conv2d v{1, 4, 4, 16, 3, 3, 1, 1, 1, 1, 1, 1};
  std::vector<uint16_t> x((size_t)v.N * v.H * v.W * v.C, 0);
  cu::TensorMapSpec im2col = im2colMap(v, (uint64_t)x.data(), 16, 16);
  cu::TensorMapSpec tiled = im2col;
  tiled.im2col = false;
  tiled.box[1] = 4;
  tiled.elementStrides[1] = tiled.elementStrides[2] = 1;
  unsigned char im2colBytes[128], tiledBytes[128];
  std::string why;
  REQUIRE_MESSAGE(encodeTensorMap(im2col, im2colBytes, &why), why);
  REQUIRE_MESSAGE(encodeTensorMap(tiled, tiledBytes, &why), why);
  LaunchResult a = runLoad("tlc::tma_load_4d(smem, &map, &bar, 0, 0, 0, 0);", im2colBytes);
  INFO(a.render());
  CHECK(hasWith(a, FindingKind::BadTensorMap, "tma_load_4d with an im2col tensor map"));
  LaunchResult b = runLoad("tlc::tma_load_im2col_4d(smem, &map, &bar, 0, -1, -1, 0, 1, 1);", tiledBytes);
  INFO(b.render());
  CHECK(hasWith(b, FindingKind::BadTensorMap, "tma_load_im2col_4d with a tiled tensor map"));
  LaunchResult c = runLoad("tlc::tma_store_4d(&map, smem, 0, 0, 0, 0);", im2colBytes);
  INFO(c.render());
  CHECK(hasWith(c, FindingKind::BadTensorMap, "tma_store_4d with an im2col tensor map"));
}
