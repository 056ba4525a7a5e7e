// Im2col tensor maps at launch (cuda/tensor_map.h): im2colTensorMapSpec's
// corners, element strides and box for several convolutions and each reason
// it gives for one TMA cannot describe; planLaunchMaps on im2col maps (the
// version without TMA or the error, never a staged copy); encodeTensorMap
// handing im2col specs to cuTensorMapEncodeIm2col with the driver's argument
// order; and a kernel run in the CUDA emulator whose tma_load_im2col_4d
// tiles, through maps built by im2colTensorMapSpec, match the convolution
// reference (tests/cuda_emu/im2col_reference.h), swizzled or not.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "compiler/backends/cuda/tensor_map.h"
#include "compiler/backends/cuda_emu/emulator.h"
#include "tests/cuda_emu/im2col_reference.h"

using namespace tlc;
using test::Conv2d;
using test::Im2colLoad;

namespace {

cuda::Im2colGeometry geometryOf(const Conv2d& v) {
  cuda::Im2colGeometry g;
  g.kernel[0] = v.kh, g.kernel[1] = v.kw;
  g.stride[0] = v.sh, g.stride[1] = v.sw;
  g.pad[0] = v.ph, g.pad[1] = v.pw;
  g.dilation[0] = v.dh, g.dilation[1] = v.dw;
  return g;
}

std::vector<int64_t> shapeOf(const Conv2d& v) { return {v.N, v.H, v.W, v.C}; }

// The reason im2colTensorMapSpec gives for a float16 map over `v` (empty
// when it describes the map).
std::string whyNot(const Conv2d& v, int64_t pixels, int64_t channels, int swizzle = 0, uint64_t address = 4096,
                   const std::string& dtype = "float16") {
  cuda::TensorMapSpec s;
  std::string why;
  if (cuda::im2colTensorMapSpec(dtype, address, shapeOf(v), geometryOf(v), pixels, channels, swizzle, &s, &why))
    return "";
  CHECK_FALSE(why.empty());
  return why;
}

}  // namespace

TEST_CASE("im2col map specs: corners, element strides and box of a convolution") {
  // 2 x 3 filter, stride (2, 1), pad (1, 2), dilation (3, 1) over 2 images of
  // 9 x 10 pixels of 32 float16 channels.
  const Conv2d v{2, 9, 10, 32, 2, 3, 2, 1, 1, 2, 3, 1};
  cuda::TensorMapSpec s;
  std::string why;
  REQUIRE_MESSAGE(cuda::im2colTensorMapSpec("float16", 4096, shapeOf(v), geometryOf(v), 128, 32, 64, &s, &why), why);
  CHECK(s.im2col);
  CHECK(s.rank == 4);
  CHECK(s.dtype == cuda::TmaDType::F16);
  CHECK(s.elemBytes == 2);
  CHECK(s.address == 4096);
  // Innermost first: C, W, H, N.
  CHECK(s.dims[0] == 32);
  CHECK(s.dims[1] == 10);
  CHECK(s.dims[2] == 9);
  CHECK(s.dims[3] == 2);
  CHECK(s.strides[1] == 32 * 2);
  CHECK(s.strides[2] == 10 * 32 * 2);
  CHECK(s.strides[3] == 9 * 10 * 32 * 2);
  CHECK(s.box[0] == 32);   // channels per pixel
  CHECK(s.box[1] == 128);  // pixels per column
  CHECK(s.swizzle == cuda::TmaSwizzle::B64);
  // (w, h): lower = -pad, upper = pad - dilation * (filter - 1).
  CHECK(s.lower[0] == -2);
  CHECK(s.lower[1] == -1);
  CHECK(s.upper[0] == 2 - 1 * 2);
  CHECK(s.upper[1] == 1 - 3 * 1);
  CHECK(s.elementStrides[0] == 1);
  CHECK(s.elementStrides[1] == 1);  // stride along w
  CHECK(s.elementStrides[2] == 2);  // stride along h
  CHECK(s.elementStrides[3] == 1);
  // The limits themselves are allowed.
  CHECK(whyNot(v, 1024, 128) == "");
  CHECK(whyNot(Conv2d{1, 4, 4, 16, 1, 1, 8, 8, 127, 0, 1, 1}, 1, 8) == "");
  CHECK(whyNot(Conv2d{1, 4, 4, 64, 1, 1, 1, 1, 0, 0, 1, 1}, 16, 64, 128) == "");
  CHECK(whyNot(Conv2d{1, 4, 4, 256, 1, 1, 1, 1, 0, 0, 1, 1}, 16, 256, 0, 4096, "int8") == "");
}

TEST_CASE("im2col map specs TMA cannot describe give the reason") {
  const Conv2d v{2, 5, 7, 16, 3, 3, 1, 1, 1, 1, 1, 1};
  auto with = [&](auto change) {
    Conv2d w = v;
    change(w);
    return w;
  };
  auto says = [](const std::string& why, const std::string& text) {
    INFO(why);
    CHECK(why.find(text) != std::string::npos);
  };
  {
    cuda::TensorMapSpec s;
    std::string why;
    CHECK_FALSE(cuda::im2colTensorMapSpec("float16", 4096, {5, 7, 16}, geometryOf(v), 32, 16, 0, &s, &why));
    says(why, "needs a rank-4 (N, H, W, C) tensor, not one of rank 3");
  }
  says(whyNot(v, 32, 16, 0, 4096, "bool"), "TMA cannot copy elements of type bool");
  says(whyNot(v, 32, 16, 48), "the swizzle is 48 bytes (0, 32, 64 or 128 allowed)");
  says(whyNot(with([](Conv2d& c) { c.kh = 0; }), 32, 16), "the convolution's filter extent along h is 0 (at least 1 needed)");
  says(whyNot(with([](Conv2d& c) { c.dw = 0; }), 32, 16), "the convolution's dilation along w is 0 (at least 1 needed)");
  says(whyNot(with([](Conv2d& c) { c.ph = -1; }), 32, 16), "the convolution's pad along h is -1 (at least 0 needed)");
  says(whyNot(with([](Conv2d& c) { c.sw = 9; }), 32, 16),
       "the convolution's stride along w is 9 (TMA's im2col mode steps 1 to 8 elements)");
  says(whyNot(with([](Conv2d& c) { c.sh = 0; }), 32, 16), "the convolution's stride along h is 0");
  says(whyNot(with([](Conv2d& c) { c.ph = 129; }), 32, 16), "the im2col corners along h are -129 and 127");
  says(whyNot(with([](Conv2d& c) { c.kw = 66, c.dw = 2, c.pw = 0; }), 32, 16),
       "the im2col corners along w are 0 and -130 (pad 0, filter 66, dilation 2), outside -128..127");
  says(whyNot(v, 0, 16), "each im2col load copies 0 pixels (1 to 1024 allowed)");
  says(whyNot(v, 1025, 16), "each im2col load copies 1025 pixels (1 to 1024 allowed)");
  says(whyNot(v, 32, 0), "each im2col load copies 0 channels of a pixel (1 to 256 allowed)");
  says(whyNot(v, 32, 264, 0, 4096, "int8"), "each im2col load copies 264 channels of a pixel (1 to 256 allowed)");
  says(whyNot(v, 32, 4), "each im2col pixel's channels are 8 bytes, not a multiple of 16");
  says(whyNot(with([](Conv2d& c) { c.C = 128; }), 32, 128, 128),
       "each im2col pixel's channels (256 bytes) are wider than the swizzle span");
  says(whyNot(v, 32, 16, 0, 4104), "the data address is not 16-byte aligned");
  says(whyNot(with([](Conv2d& c) { c.C = 12; }), 32, 8),
       "the stride of dimension 2 is 24 bytes, which is not a multiple of 16 below 2^40");
  says(whyNot(with([](Conv2d& c) { c.N = 0; }), 32, 16), "dimension 0 has 0 elements");
}

TEST_CASE("a launch maps an im2col tensor where it lies, else runs the version without TMA or fails") {
  // An (N, H, W, C) = (2, 5, 7, 16) float16 input, and one of 12 channels
  // (24-byte pixels, which TMA cannot step over).
  auto input = [](int) { return cuda::LaunchTensor{"float16", 4096, {2, 5, 7, 16}, "X"}; };
  auto narrow = [](int) { return cuda::LaunchTensor{"float16", 4096, {2, 5, 7, 12}, "X"}; };
  cuda::TensorMapArg map;
  map.paramIndex = 0;
  map.box = {64, 16};  // {pixels, channels}
  map.swizzle = 32;
  map.im2col = true;
  map.geometry = geometryOf(Conv2d{2, 5, 7, 16, 3, 3, 1, 1, 1, 1, 1, 1});
  cuda::LaunchMaps plan = cuda::planLaunchMaps("conv", {map}, input, true, true);
  CHECK(plan.error.empty());
  CHECK_FALSE(plan.fallback);
  REQUIRE(plan.specs.size() == 1);
  CHECK(plan.specs[0].im2col);
  CHECK(plan.specs[0].box[0] == 16);
  CHECK(plan.specs[0].box[1] == 64);
  CHECK(plan.specs[0].lower[0] == -1);
  CHECK(plan.specs[0].upper[1] == -1);
  CHECK(plan.specs[0].swizzle == cuda::TmaSwizzle::B32);
  // Never staged, even when the map allows staging, nor passed as zeros.
  map.stage = true;
  cuda::LaunchMaps fallback = cuda::planLaunchMaps("conv", {map}, narrow, true, true);
  CHECK(fallback.fallback);
  CHECK(fallback.staged.empty());
  CHECK(fallback.specs.empty());
  CHECK(fallback.note.find("note: `conv` runs its version without TMA: tensor `X`: the stride of dimension 2 is "
                           "24 bytes") != std::string::npos);
  map.store = true;
  CHECK(cuda::planLaunchMaps("conv", {map}, narrow, true, true).fallback);
  cuda::LaunchMaps error = cuda::planLaunchMaps("conv", {map}, narrow, false, true);
  CHECK_FALSE(error.fallback);
  CHECK(error.error.find("kernel `conv` copies tensor `X` with TMA") != std::string::npos);
  // A box that is not {pixels, channels}.
  map.store = map.stage = false;
  map.box = {64, 16, 1};
  cuda::LaunchMaps box = cuda::planLaunchMaps("conv", {map}, input, false, true);
  CHECK(box.error.find("an im2col map's box is {pixels, channels}, not 3 values") != std::string::npos);
}

namespace {

// What the fake driver entry points were called with.
struct EncodeCall {
  bool tiled = false, im2col = false;
  int dtype = -1, interleave = -1, swizzle = -1, l2 = -1, oob = -1;
  unsigned rank = 0, channels = 0, pixels = 0;
  void* address = nullptr;
  uint64_t dims[5] = {}, strides[4] = {};
  int lower[2] = {}, upper[2] = {};
  unsigned box[5] = {}, elementStrides[5] = {};
};
EncodeCall gCall;

int fakeTiled(void*, int dtype, unsigned rank, void* address, const uint64_t* dims, const uint64_t* strides,
              const unsigned* box, const unsigned* elementStrides, int interleave, int swizzle, int l2, int oob) {
  gCall = EncodeCall{};
  gCall.tiled = true;
  gCall.dtype = dtype, gCall.rank = rank, gCall.address = address;
  for (unsigned i = 0; i < rank; ++i) {
    gCall.dims[i] = dims[i];
    gCall.box[i] = box[i];
    gCall.elementStrides[i] = elementStrides[i];
    if (i + 1 < rank) gCall.strides[i] = strides[i];
  }
  gCall.interleave = interleave, gCall.swizzle = swizzle, gCall.l2 = l2, gCall.oob = oob;
  return 0;
}

int fakeIm2col(void*, int dtype, unsigned rank, void* address, const uint64_t* dims, const uint64_t* strides,
               const int* lower, const int* upper, unsigned channels, unsigned pixels, const unsigned* elementStrides,
               int interleave, int swizzle, int l2, int oob) {
  gCall = EncodeCall{};
  gCall.im2col = true;
  gCall.dtype = dtype, gCall.rank = rank, gCall.address = address;
  for (unsigned i = 0; i < rank; ++i) {
    gCall.dims[i] = dims[i];
    gCall.elementStrides[i] = elementStrides[i];
    if (i + 1 < rank) gCall.strides[i] = strides[i];
  }
  for (int a = 0; a < 2; ++a) gCall.lower[a] = lower[a], gCall.upper[a] = upper[a];
  gCall.channels = channels, gCall.pixels = pixels;
  gCall.interleave = interleave, gCall.swizzle = swizzle, gCall.l2 = l2, gCall.oob = oob;
  return 7;  // a driver result code, returned as is
}

}  // namespace

TEST_CASE("encodeTensorMap hands im2col specs to cuTensorMapEncodeIm2col in the driver's argument order") {
  // 3 x 3, stride (2, 1), pad (1, 0), dilation (1, 2) over (N, H, W, C) = (2, 9, 10, 32).
  const Conv2d v{2, 9, 10, 32, 3, 3, 2, 1, 1, 0, 1, 2};
  cuda::TensorMapSpec s;
  std::string why;
  REQUIRE(cuda::im2colTensorMapSpec("bfloat16", 1 << 20, shapeOf(v), geometryOf(v), 256, 64, 128, &s, &why));
  alignas(64) unsigned char bytes[128];
  CHECK(cuda::tensorMapEncoderName(s) == std::string("cuTensorMapEncodeIm2col"));
  CHECK(cuda::encodeTensorMap(fakeTiled, fakeIm2col, s, bytes) == 7);
  REQUIRE(gCall.im2col);
  CHECK(gCall.dtype == (int)cuda::TmaDType::BF16);
  CHECK(gCall.rank == 4);
  CHECK(gCall.address == reinterpret_cast<void*>(uintptr_t{1} << 20));
  CHECK(gCall.dims[0] == 32);
  CHECK(gCall.dims[1] == 10);
  CHECK(gCall.dims[2] == 9);
  CHECK(gCall.dims[3] == 2);
  // Strides of dimensions 1 to 3 (bytes).
  CHECK(gCall.strides[0] == 64);
  CHECK(gCall.strides[1] == 640);
  CHECK(gCall.strides[2] == 5760);
  // Corners innermost first: (w, h).
  CHECK(gCall.lower[0] == 0);
  CHECK(gCall.lower[1] == -1);
  CHECK(gCall.upper[0] == 0 - 2 * 2);
  CHECK(gCall.upper[1] == 1 - 1 * 2);
  CHECK(gCall.channels == 64);
  CHECK(gCall.pixels == 256);
  CHECK(gCall.elementStrides[0] == 1);
  CHECK(gCall.elementStrides[1] == 1);
  CHECK(gCall.elementStrides[2] == 2);
  CHECK(gCall.elementStrides[3] == 1);
  CHECK(gCall.interleave == 0);
  CHECK(gCall.swizzle == (int)cuda::TmaSwizzle::B128);
  CHECK(gCall.l2 == 3);
  CHECK(gCall.oob == 0);
  // Without the entry point: kTensorMapEncoderMissing, whatever the tiled one.
  CHECK(cuda::encodeTensorMap(fakeTiled, nullptr, s, bytes) == cuda::kTensorMapEncoderMissing);
  // A tiled spec goes to cuTensorMapEncodeTiled with element strides of 1.
  cuda::TensorMapSpec tiled;
  REQUIRE(cuda::rowMajorTensorMapSpec("float16", 4096, {64, 128}, {16, 32}, 64, &tiled, &why));
  CHECK(cuda::tensorMapEncoderName(tiled) == std::string("cuTensorMapEncodeTiled"));
  CHECK(cuda::encodeTensorMap(fakeTiled, nullptr, tiled, bytes) == 0);
  REQUIRE(gCall.tiled);
  CHECK(gCall.rank == 2);
  CHECK(gCall.box[0] == 32);
  CHECK(gCall.box[1] == 16);
  CHECK(gCall.elementStrides[0] == 1);
  CHECK(gCall.elementStrides[1] == 1);
  CHECK(cuda::encodeTensorMap(nullptr, fakeIm2col, tiled, bytes) == cuda::kTensorMapEncoderMissing);
}

namespace {

// One thread of the kernel issues the im2col load at the given operands;
// after the barrier's phase completes (the load's bytes, zero rows
// included), every thread copies the shared tile out as it lies.
const char* kIm2colKernel = R"(#include "tlc_cuda.h"
extern "C" __global__ void load(const __grid_constant__ tlc::TensorMap map, unsigned* out, int c, int w, int h, int n,
                                int off_w, int off_h, int bytes) {
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ tlc::u64 bar;
  if (threadIdx.x == 0) { tlc::mbar_init(&bar, 1); tlc::mbar_init_fence(); }
  __syncthreads();
  if (threadIdx.x == 0) {
    tlc::mbar_arrive_expect_tx(&bar, bytes);
    tlc::tma_load_im2col_4d(smem, &map, &bar, c, w, h, n, (unsigned short)off_w, (unsigned short)off_h);
  }
  tlc::mbar_wait(&bar, 0);
  const unsigned* tile = reinterpret_cast<const unsigned*>(smem);
  for (int i = threadIdx.x; i < bytes / 4; i += blockDim.x) out[i] = tile[i];
}
)";

// Runs each of `loads` of `pixels` rows of `channels` float16 channels over
// an input whose element i holds i + 1, through a map built by
// im2colTensorMapSpec with `swizzle`, and compares each tile (read through
// the swizzle) with the reference: the number of loads that differ.
int mismatchingLoads(cuda_emu::EmulatedModule& m, const Conv2d& v, int pixels, int channels, int swizzle,
                     const std::vector<Im2colLoad>& loads) {
  std::vector<uint16_t> x((size_t)v.N * v.H * v.W * v.C);
  for (size_t i = 0; i < x.size(); ++i) x[i] = (uint16_t)(i + 1);
  cuda::TensorMapSpec spec;
  std::string why;
  REQUIRE_MESSAGE(cuda::im2colTensorMapSpec("float16", (uint64_t)(uintptr_t)x.data(), shapeOf(v), geometryOf(v),
                                            pixels, channels, swizzle, &spec, &why),
                  why);
  alignas(64) unsigned char map[128];
  REQUIRE_MESSAGE(cuda_emu::encodeTensorMap(spec, map, &why), why);
  const int bytes = pixels * channels * 2;
  const int spanChunks = swizzle / 16;  // 16-byte chunks a swizzle row permutes
  int bad = 0;
  for (const Im2colLoad& l : loads) {
    int coords[4];
    uint16_t offsets[2];
    test::im2colOperands(v, l, coords, offsets);
    std::vector<uint16_t> tile(bytes / 2, 0xdead);
    std::vector<cuda_emu::KernelArg> args = {
        cuda_emu::byValue("map", map, 128), cuda_emu::KernelArg::buffer("out", tile.data(), bytes, true, true),
        cuda_emu::KernelArg::value("c", coords[0]), cuda_emu::KernelArg::value("w", coords[1]),
        cuda_emu::KernelArg::value("h", coords[2]), cuda_emu::KernelArg::value("n", coords[3]),
        cuda_emu::KernelArg::value("off_w", (int)offsets[0]), cuda_emu::KernelArg::value("off_h", (int)offsets[1]),
        cuda_emu::KernelArg::value("bytes", bytes)};
    cuda_emu::LaunchConfig cfg;
    cfg.block.x = 64;
    cfg.dynamicSharedBytes = (size_t)bytes;
    cuda_emu::LaunchResult r = m.launch("load", cfg, args);
    CAPTURE(l.m0);
    CAPTURE(l.ki);
    CAPTURE(l.kj);
    CAPTURE(l.c0);
    INFO(r.render());
    CHECK(r.clean());
    bool differs = false;
    for (int p = 0; p < pixels; ++p)
      for (int k = 0; k < channels; ++k) {
        const int logical = (p * channels + k) * 2;
        const int chunk = logical / 16, row = logical / 128;
        const int physical = spanChunks ? ((chunk ^ (row % spanChunks)) * 16 + logical % 16) : logical;
        const int64_t src = test::im2colSource(v, l, p, k);
        differs |= tile[physical / 2] != (src < 0 ? 0 : x[src]);
      }
    bad += differs;
  }
  return bad;
}

}  // namespace

TEST_CASE("an emulated kernel's tma_load_im2col_4d tiles are the rows the convolution reads") {
  std::string err;
  auto m = cuda_emu::EmulatedModule::compile(kIm2colKernel, &err);
  REQUIRE_MESSAGE(m, err);
  // 3 x 3, pad 1, stride 1 over 2 images of 5 x 7 pixels (35 output pixels
  // each): loads from the start, across into image 1, and past image 1,
  // with corner, centre and edge taps and a channel block past C.
  const Conv2d same{2, 5, 7, 16, 3, 3, 1, 1, 1, 1, 1, 1};
  CHECK(mismatchingLoads(*m, same, 32, 16, 0,
                         {{0, 0, 0, 0}, {0, 1, 1, 0}, {30, 2, 2, 0}, {30, 0, 1, 0}, {50, 1, 2, 0}, {64, 2, 0, 0}}) == 0);
  CHECK(mismatchingLoads(*m, same, 16, 8, 0, {{28, 1, 1, 8}, {33, 0, 2, 12}}) == 0);
  // Stride 2, dilation 2, pad 2: 3 x 4 output pixels per image.
  const Conv2d strided{2, 5, 7, 16, 3, 3, 2, 2, 2, 2, 2, 2};
  CHECK(mismatchingLoads(*m, strided, 8, 16, 0, {{0, 0, 0, 0}, {8, 1, 2, 0}, {10, 2, 1, 0}, {20, 2, 2, 0}}) == 0);
  // 64 channels of 128 bytes through the 128-byte swizzle (and 32 through
  // the 64-byte one): the rows land as a tiled {channels, pixels} box would.
  const Conv2d wide{2, 4, 5, 64, 3, 3, 1, 1, 1, 1, 1, 1};
  CHECK(mismatchingLoads(*m, wide, 16, 64, 128, {{0, 0, 0, 0}, {12, 1, 1, 0}, {32, 2, 2, 0}}) == 0);
  CHECK(mismatchingLoads(*m, wide, 24, 32, 64, {{4, 0, 2, 32}, {30, 1, 0, 0}}) == 0);
}
