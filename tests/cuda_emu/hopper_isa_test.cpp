// The emulated Hopper instructions against hand-computed values: wgmma
// descriptors, swizzle, operand addresses in every canonical layout (PTX ISA
// "Shared Memory Matrix Layout"), the m64nN accumulator layout and product,
// mbarrier phase rules, tensor-copy boxes and the tensor-map encoding.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "compiler/backends/cuda/tensor_map.h"
#include "compiler/backends/cuda_emu/emulator.h"
#include "compiler/backends/cuda_emu/isa.h"
#include "runtime/cuda_emu/emu_float.h"

using namespace tlc::cuda_emu;
using namespace tlc::cuda_emu::isa;
namespace cu = tlc::cuda;

namespace {
uint64_t desc(uint32_t start, uint32_t lbo, uint32_t sbo, int mode, int base = 0) {
  return (uint64_t)((start & 0x3ffff) >> 4) | ((uint64_t)(lbo >> 4) << 16) | ((uint64_t)(sbo >> 4) << 32) |
         ((uint64_t)base << 49) | ((uint64_t)mode << 62);
}
}  // namespace

TEST_CASE("wgmma matrix descriptor decode") {
  SmemDesc d = decodeSmemDesc(desc(0x2a40, 8192, 1024, 1, 5));
  CHECK(d.start == 0x2a40);
  CHECK(d.lbo == 8192);
  CHECK(d.sbo == 1024);
  CHECK(d.baseOffset == 5);
  CHECK(d.swizzle == 128);
  CHECK(decodeSmemDesc(desc(0, 0, 0, 2)).swizzle == 64);
  CHECK(decodeSmemDesc(desc(0, 0, 0, 3)).swizzle == 32);
  CHECK(decodeSmemDesc(desc(0, 0, 0, 0)).swizzle == 0);
  CHECK(decodeSmemDesc(desc(0x3fff0, 0, 0, 0)).start == 0x3fff0);  // 18-bit address
}

TEST_CASE("swizzle address function") {
  // 128B: chunk bits [6:4] ^= row bits [9:7].
  CHECK(swizzleAddress(0x090, 128) == 0x080);  // row 1, chunk 1 -> 0
  CHECK(swizzleAddress(0x3a0, 128) == 0x3d0);  // row 7, chunk 2 -> 5
  CHECK(swizzleAddress(0x410, 128) == 0x410);  // row 8 = row 0 of the next 1024 B
  CHECK(swizzleAddress(0x3a7, 128) == 0x3d7);  // bytes inside a chunk stay
  // 64B: bits [5:4] ^= [8:7].
  CHECK(swizzleAddress(0x1b0, 64) == 0x180);
  CHECK(swizzleAddress(0x0a0, 64) == 0x0b0);
  // 32B: bit 4 ^= bit 7.
  CHECK(swizzleAddress(0x090, 32) == 0x080);
  CHECK(swizzleAddress(0x110, 32) == 0x110);
  CHECK(swizzleAddress(0x3a0, 0) == 0x3a0);
}

TEST_CASE("wgmma operand addresses: hand-computed elements") {
  // K-major 128B, start 1024, SBO 1024: (mn 9, k 10) = 1024 + 1024 + 128 + 20 = 2196 = 0x894,
  // row bits 1, chunk 1 -> 0: 0x884.
  CHECK(wgmmaElementAddress(decodeSmemDesc(desc(1024, 16, 1024, 1)), false, 9, 10, 2) == 0x884);
  // K-major, no swizzle, LBO 128 (K), SBO 256 (M): 256 + 16 + 128 + 4.
  CHECK(wgmmaElementAddress(decodeSmemDesc(desc(0, 128, 256, 0)), false, 9, 10, 2) == 404);
  // K-major 64B, SBO 512: (3, 5) = 3 * 64 + 10 = 0xca, bits [8:7] = 1 -> chunk 0 ^ 1: 0xda.
  CHECK(wgmmaElementAddress(decodeSmemDesc(desc(0, 16, 512, 2)), false, 3, 5, 2) == 0xda);
  // MN-major 128B, LBO 8192 (64-wide MN chunks), SBO 1024 (8 k-rows): (mn 70, k 9) =
  // 8192 + 12 + 1024 + 128 = 0x248c, row bits 1, chunk 0 -> 1: 0x249c.
  CHECK(wgmmaElementAddress(decodeSmemDesc(desc(0, 8192, 1024, 1)), true, 70, 9, 2) == 0x249c);
  // MN-major, no swizzle, LBO 256 (8-deep K groups), SBO 128 (8-wide MN groups): 128 + 2 + 256 + 32.
  CHECK(wgmmaElementAddress(decodeSmemDesc(desc(0, 256, 128, 0)), true, 9, 10, 2) == 418);
  // MN-major 32B, LBO 256, SBO 256: (mn 17, k 3) = 256 + 2 + 96 = 354, bit 7 = 0.
  CHECK(wgmmaElementAddress(decodeSmemDesc(desc(0, 256, 256, 3)), true, 17, 3, 2) == 354);
}

namespace {
// Independent placement (by rows and chunks, as a TMA box or a hand-written
// kernel lays the tile out) for a 16-bit operand with `rows` MN rows.
uint32_t place(bool mnMajor, int span, int mn, int k, uint32_t lbo, uint32_t sbo) {
  if (span == 0) {
    if (!mnMajor) return (mn / 8) * sbo + (k / 8) * lbo + (mn % 8) * 16 + (k % 8) * 2;
    return (mn / 8) * sbo + (k / 8) * lbo + (k % 8) * 16 + (mn % 8) * 2;
  }
  // The XOR is the row's index within its 8-row-of-128-B repeat (bits [9:7]),
  // restricted to the span's chunk bits.
  auto chunkXor = [&](int rowInGroup) {
    int rowBits = (rowInGroup * span / 128) & 7;
    return rowBits & (span / 16 - 1);
  };
  if (!mnMajor) {
    int kb = k * 2;
    int chunk = (kb / 16) ^ chunkXor(mn % 8);
    return (mn / 8) * sbo + (mn % 8) * span + chunk * 16 + kb % 16;
  }
  int per = span / 2, pos = (mn % per) * 2;
  int chunk = (pos / 16) ^ chunkXor(k % 8);
  return (mn / per) * lbo + (k / 8) * sbo + (k % 8) * span + chunk * 16 + pos % 16;
}
}  // namespace

TEST_CASE("wgmma operand addresses: every element of A and B in all swizzles and both majors") {
  const int spans[4] = {0, 32, 64, 128};
  const int modes[4] = {0, 3, 2, 1};
  for (int si = 0; si < 4; ++si)
    for (int mnMajor = 0; mnMajor < 2; ++mnMajor) {
      const int span = spans[si];
      const int rows = 128;  // covers A's 64 rows and B's n up to 128
      uint32_t lbo, sbo;
      if (span == 0) {
        lbo = mnMajor ? 16 * 128 : 128;    // MN-major: K groups after 16 MN groups; K-major: the 2nd K core matrix
        sbo = mnMajor ? 128 : 256;
      } else if (!mnMajor) {
        lbo = 16;
        sbo = 8 * span;
      } else {
        lbo = 16 * span;  // K (16 rows) x span per MN chunk
        sbo = 8 * span;
      }
      SmemDesc d = decodeSmemDesc(desc(4096, lbo, sbo, modes[si]));
      int mismatches = 0;
      for (int mn = 0; mn < rows; ++mn)
        for (int k = 0; k < 16; ++k)
          if (wgmmaElementAddress(d, mnMajor, mn, k, 2) != 4096 + place(mnMajor, span, mn, k, lbo, sbo)) mismatches++;
      INFO("span " << span << " mnMajor " << mnMajor);
      CHECK(mismatches == 0);
    }
}

TEST_CASE("wgmma accumulator layout (m64nN, f32 D)") {
  // thread 37: w 1, g 1, q 1; reg 6: j 1, e 2 -> (16 + 1 + 8, 8 + 2) ; reg 3 -> (25, 3)
  Coord c = wgmmaAccElement(37, 6);
  CHECK(c.row == 25);
  CHECK(c.col == 10);
  c = wgmmaAccElement(37, 3);
  CHECK(c.row == 25);
  CHECK(c.col == 3);
  c = wgmmaAccElement(127, 63);  // w 3, g 7, q 3; j 15, e 3
  CHECK(c.row == 63);
  CHECK(c.col == 127);
  // Every (row, col) of a 64 x 32 tile is held exactly once.
  std::vector<int> hits(64 * 32, 0);
  for (int t = 0; t < 128; ++t)
    for (int r = 0; r < 16; ++r) {
      Coord p = wgmmaAccElement(t, r);
      hits[p.row * 32 + p.col]++;
    }
  for (int h : hits) CHECK(h == 1);
}

TEST_CASE("wgmma product against a plain loop, with and without scale-d") {
  for (int n : {8, 24, 64, 256}) {
    std::vector<double> A(64 * 16), B(16 * n);
    for (int i = 0; i < 64; ++i)
      for (int k = 0; k < 16; ++k) A[i * 16 + k] = (i * 3 + k * 7) % 11 - 5;
    for (int k = 0; k < 16; ++k)
      for (int j = 0; j < n; ++j) B[k * n + j] = (k * 5 + j * 3) % 13 - 6;
    std::vector<std::vector<float>> acc(128, std::vector<float>(n / 2, 2.0f));
    float* d[128];
    int scale[128];
    for (int t = 0; t < 128; ++t) {
      d[t] = acc[t].data();
      scale[t] = t % 2;  // odd threads accumulate onto 2.0
    }
    wgmma(n, 16, A.data(), B.data(), d, scale);
    int bad = 0;
    for (int t = 0; t < 128; ++t)
      for (int r = 0; r < n / 2; ++r) {
        Coord p = wgmmaAccElement(t, r);
        double ref = t % 2 ? 2.0 : 0.0;
        for (int k = 0; k < 16; ++k) ref += A[p.row * 16 + k] * B[k * n + p.col];
        if (acc[t][r] != (float)ref) bad++;
      }
    INFO("n " << n);
    CHECK(bad == 0);
  }
}

TEST_CASE("float8 wgmma (k32): hand-computed sums of decoded e4m3 / e5m2 bytes") {
  // e4m3 0x3C = +1.5 (exponent 7 - 7, mantissa 1.100b); e5m2 0xC0 = -2.0
  // (sign, exponent 16 - 15); e4m3 0x01 = 2^-9 (the smallest subnormal).
  CHECK(tlc_emu_float::e4m3ToFloat(0x3C) == 1.5f);
  CHECK(tlc_emu_float::e5m2ToFloat(0xC0) == -2.0f);
  CHECK(tlc_emu_float::e4m3ToFloat(0x01) == 0x1p-9f);
  const int n = 8, k = 32;
  std::vector<double> A(64 * k, 0.0), B(k * n, 0.0);
  for (int kk = 0; kk < k; ++kk) {
    A[0 * k + kk] = tlc_emu_float::e4m3ToFloat(0x3C);       // row 0: 1.5 everywhere
    A[5 * k + kk] = kk < 16 ? 1.0 : 0x1p-9;                // row 5: 1 on the first half, 2^-9 on the second
    B[kk * n + 0] = tlc_emu_float::e5m2ToFloat(0xC0);       // column 0: -2 everywhere
    B[kk * n + 3] = kk % 2 ? 4.0 : 0.0;                    // column 3: 4 on odd k
  }
  std::vector<std::vector<float>> acc(128, std::vector<float>(n / 2, 0.0f));
  float* d[128];
  int scale[128];
  for (int t = 0; t < 128; ++t) {
    d[t] = acc[t].data();
    scale[t] = 0;
  }
  wgmma(n, k, A.data(), B.data(), d, scale);
  auto at = [&](int row, int col) {
    for (int t = 0; t < 128; ++t)
      for (int r = 0; r < n / 2; ++r) {
        Coord p = wgmmaAccElement(t, r);
        if (p.row == row && p.col == col) return acc[t][r];
      }
    return -1.0f;
  };
  CHECK(at(0, 0) == -96.0f);  // 32 x 1.5 x -2
  CHECK(at(0, 3) == 96.0f);   // 16 odd k x 1.5 x 4
  CHECK(at(5, 0) == -32.0f - 16 * 2 * 0x1p-9f);
  CHECK(at(5, 3) == 32.0f + 8 * 4 * 0x1p-9f);
  CHECK(at(1, 0) == 0.0f);
}

TEST_CASE("int8 wgmma (k32) product against a plain loop, wrapping modulo 2^32") {
  const int n = 16;
  std::vector<double> A(64 * 32), B(32 * n);
  for (int i = 0; i < 64; ++i)
    for (int k = 0; k < 32; ++k) A[i * 32 + k] = (i * 37 + k * 11) % 256 - 128;
  for (int k = 0; k < 32; ++k)
    for (int j = 0; j < n; ++j) B[k * n + j] = (k * 53 + j * 29) % 256 - 128;
  std::vector<std::vector<int32_t>> acc(128, std::vector<int32_t>(n / 2, 2147483000));
  int32_t* d[128];
  int scale[128];
  for (int t = 0; t < 128; ++t) {
    d[t] = acc[t].data();
    scale[t] = t % 2;  // odd threads accumulate (and may wrap past 2^31 - 1)
  }
  wgmmaS8(n, A.data(), B.data(), d, scale);
  int bad = 0;
  for (int t = 0; t < 128; ++t)
    for (int r = 0; r < n / 2; ++r) {
      Coord p = wgmmaAccElement(t, r);
      int64_t ref = t % 2 ? 2147483000 : 0;
      for (int k = 0; k < 32; ++k) ref += (int64_t)A[p.row * 32 + k] * (int64_t)B[k * n + p.col];
      if (acc[t][r] != (int32_t)(uint32_t)(uint64_t)ref) bad++;
    }
  CHECK(bad == 0);
}

TEST_CASE("mbarrier phases, parity and transaction counts") {
  MbarState s;
  mbarInit(s, 2);
  CHECK(mbarParityDone(s, 1));  // the phase before the first counts as complete
  CHECK_FALSE(mbarParityDone(s, 0));
  CHECK(mbarArrive(s, 0) == MbarEvent::None);
  CHECK(mbarArrive(s, 64) == MbarEvent::None);  // arrivals done, 64 bytes pending
  CHECK(s.pending == 0);
  CHECK(s.tx == 64);
  CHECK(mbarCompleteTx(s, 32) == MbarEvent::None);
  CHECK(mbarCompleteTx(s, 32) == MbarEvent::Completed);
  CHECK(s.phase == 1);
  CHECK(s.pending == 2);  // counts reset
  CHECK(mbarParityDone(s, 0));
  CHECK_FALSE(mbarParityDone(s, 1));
  // Bytes may land before the expect_tx: the pending arrival holds the phase.
  MbarState t;
  mbarInit(t, 1);
  CHECK(mbarCompleteTx(t, 16) == MbarEvent::None);
  CHECK(t.tx == -16);
  CHECK(mbarArrive(t, 16) == MbarEvent::Completed);
  // More bytes than expected once every arrival is in: the phase cannot complete.
  MbarState u;
  mbarInit(u, 1);
  CHECK(mbarArrive(u, 16) == MbarEvent::None);
  CHECK(mbarCompleteTx(u, 32) == MbarEvent::TxOverflow);
  CHECK(u.phase == 0);
  // An arrival more than the count while bytes are pending.
  MbarState v;
  mbarInit(v, 1);
  CHECK(mbarArrive(v, 16) == MbarEvent::None);
  CHECK(mbarArrive(v, 0) == MbarEvent::ArrivalOverflow);
}

namespace {
cu::TensorMapSpec smallMap() {
  cu::TensorMapSpec s;
  s.dtype = cu::TmaDType::F16;
  s.elemBytes = 2;
  s.rank = 2;
  s.address = 0x1000;
  s.dims[0] = 5;
  s.dims[1] = 3;
  s.strides[0] = 2;
  s.strides[1] = 16;
  s.box[0] = 8;
  s.box[1] = 4;
  return s;
}
}  // namespace

TEST_CASE("tensor map encoding round trip and rejection") {
  cu::TensorMapSpec s = smallMap();
  s.swizzle = cu::TmaSwizzle::B64;
  unsigned char map[128];
  std::string why;
  REQUIRE(encodeTensorMap(s, map, &why));
  cu::TensorMapSpec d;
  REQUIRE(decodeTensorMap(map, &d));
  CHECK(d.rank == 2);
  CHECK(d.address == 0x1000);
  CHECK(d.dims[0] == 5);
  CHECK(d.dims[1] == 3);
  CHECK(d.strides[1] == 16);
  CHECK(d.box[0] == 8);
  CHECK(d.box[1] == 4);
  CHECK(d.swizzle == cu::TmaSwizzle::B64);
  map[0] ^= 1;
  CHECK_FALSE(decodeTensorMap(map, &d));  // bad magic
  unsigned char zeros[128] = {};
  CHECK_FALSE(decodeTensorMap(zeros, &d));
  s.box[0] = 5;  // 10-byte rows
  CHECK_FALSE(encodeTensorMap(s, map, &why));
  CHECK(why.find("multiple of 16") != std::string::npos);
  s = smallMap();
  s.box[0] = 64;
  s.swizzle = cu::TmaSwizzle::B32;  // 128-byte rows wider than the 32-byte span
  CHECK_FALSE(encodeTensorMap(s, map, &why));
}

TEST_CASE("tensor copy box: out-of-bounds elements and global addresses") {
  cu::TensorMapSpec s = smallMap();
  CHECK(tmaBoxBytes(s) == 64);
  const int coords[2] = {-1, 1};
  std::vector<uint64_t> g;
  std::vector<uint8_t> in;
  tmaBox(s, coords, &g, &in);
  REQUIRE(g.size() == 32);
  CHECK_FALSE(in[0]);  // x = -1
  CHECK(in[1]);        // (0, 1)
  CHECK(g[1] == 0x1010);
  CHECK(in[8 + 3]);  // (2, 2)
  CHECK(g[8 + 3] == 0x1000 + 4 + 32);
  CHECK_FALSE(in[6]);   // x = 5 = dims[0]
  CHECK_FALSE(in[16]);  // y = 3 = dims[1]
  int inside = 0;
  for (auto b : in) inside += b;
  CHECK(inside == 5 * 2);  // x 0..4, y 1..2
}
