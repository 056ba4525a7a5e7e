// The emulated MFMA instructions (isa_mfma.h) against hand-computed operand
// positions and products: every instruction one test.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <set>

#include "compiler/backends/cuda_emu/isa_mfma.h"
#include "runtime/cuda_emu/emu_float.h"

using namespace tlc::cuda_emu::isa;
namespace fl = tlc_emu_float;

namespace {

bool at(MfmaCoord c, int row, int col) { return c.row == row && c.col == col; }

// Every element of the m x k, k x n and m x n matrices belongs to exactly one (lane, slot).
void checkCoverage(MfmaKind kind) {
  const MfmaInfo& info = mfmaInfo(kind);
  std::set<std::pair<int, int>> a, b, d;
  for (int l = 0; l < kWavefrontSize; ++l) {
    for (int v = 0; v < info.elems; ++v) {
      MfmaCoord pa = mfmaAElement(kind, l, v), pb = mfmaBElement(kind, l, v);
      CHECK(a.insert({pa.row, pa.col}).second);
      CHECK(b.insert({pb.row, pb.col}).second);
    }
    for (int r = 0; r < info.accRegs; ++r) {
      MfmaCoord p = mfmaDElement(kind, l, r);
      CHECK(d.insert({p.row, p.col}).second);
      CHECK(p.row < info.m);
      CHECK(p.col < info.n);
    }
  }
  CHECK(a.size() == size_t(info.m * info.k));
  CHECK(b.size() == size_t(info.k * info.n));
  CHECK(d.size() == size_t(info.m * info.n));
}

// D = A * B + C with A[i][k] = i + 1 + k, B[k][j] = (k == j % k_extent) and C[i][j] = j:
// D[i][j] = A[i][j % K] + j, exactly representable in both 16-bit types.
void checkProduct(MfmaKind kind) {
  const MfmaInfo& info = mfmaInfo(kind);
  auto enc = [&](float x) { return info.bf16 ? fl::floatToBf16(x) : fl::floatToHalf(x); };
  uint16_t a[kWavefrontSize][4], b[kWavefrontSize][4];
  float c[kWavefrontSize][16] = {}, d[kWavefrontSize][16] = {};
  for (int l = 0; l < kWavefrontSize; ++l) {
    for (int v = 0; v < 4; ++v) {
      MfmaCoord pa = mfmaAElement(kind, l, v), pb = mfmaBElement(kind, l, v);
      a[l][v] = enc(float(pa.row + 1 + pa.col));
      b[l][v] = enc(pb.row == pb.col % info.k ? 1.0f : 0.0f);
    }
    for (int r = 0; r < info.accRegs; ++r) c[l][r] = float(mfmaDElement(kind, l, r).col);
  }
  mfma(kind, a, b, c, d);
  for (int l = 0; l < kWavefrontSize; ++l)
    for (int r = 0; r < info.accRegs; ++r) {
      MfmaCoord p = mfmaDElement(kind, l, r);
      CHECK(d[l][r] == float(p.row + 1 + p.col % info.k + p.col));
    }
}

}  // namespace

TEST_CASE("v_mfma_f32_32x32x8f16: lane 37's operands and accumulators, and the product") {
  const MfmaKind k = MfmaKind::F32_32x32x8_F16;
  // lane 37: l % 32 = 5, l / 32 = 1 -> A row 5, k 4..7; B column 5, k 4..7.
  CHECK(at(mfmaAElement(k, 37, 0), 5, 4));
  CHECK(at(mfmaAElement(k, 37, 3), 5, 7));
  CHECK(at(mfmaBElement(k, 37, 2), 6, 5));
  // D: column 5; registers 0..3 rows 4..7, 4..7 rows 12..15, 12 row 28.
  CHECK(at(mfmaDElement(k, 37, 0), 4, 5));
  CHECK(at(mfmaDElement(k, 37, 3), 7, 5));
  CHECK(at(mfmaDElement(k, 37, 4), 12, 5));
  CHECK(at(mfmaDElement(k, 37, 12), 28, 5));
  CHECK(at(mfmaDElement(k, 5, 15), 27, 5));
  checkCoverage(k);
  checkProduct(k);
}

TEST_CASE("v_mfma_f32_16x16x16f16: lane 37's operands and accumulators, and the product") {
  const MfmaKind k = MfmaKind::F32_16x16x16_F16;
  // lane 37: l % 16 = 5, l / 16 = 2 -> A row 5, k 8..11; D column 5, rows 8..11.
  CHECK(at(mfmaAElement(k, 37, 0), 5, 8));
  CHECK(at(mfmaAElement(k, 37, 3), 5, 11));
  CHECK(at(mfmaBElement(k, 37, 1), 9, 5));
  CHECK(at(mfmaDElement(k, 37, 0), 8, 5));
  CHECK(at(mfmaDElement(k, 37, 3), 11, 5));
  CHECK(at(mfmaDElement(k, 63, 3), 15, 15));
  checkCoverage(k);
  checkProduct(k);
}

TEST_CASE("v_mfma_f32_32x32x8bf16_1k and v_mfma_f32_16x16x16bf16_1k: the f16 layouts on bfloat16") {
  for (MfmaKind k : {MfmaKind::F32_32x32x8_BF16, MfmaKind::F32_16x16x16_BF16}) {
    CHECK(mfmaInfo(k).bf16);
    checkCoverage(k);
    checkProduct(k);
  }
  // A product that rounds: 1 + 2^-8 is not a bfloat16, so the inputs are 1
  // and 1 + 2^-7; the sum of 8 products is accumulated exactly.
  const MfmaKind k = MfmaKind::F32_32x32x8_BF16;
  uint16_t a[kWavefrontSize][4], b[kWavefrontSize][4];
  float c[kWavefrontSize][16] = {}, d[kWavefrontSize][16] = {};
  for (int l = 0; l < kWavefrontSize; ++l)
    for (int v = 0; v < 4; ++v) {
      a[l][v] = fl::floatToBf16(1.0f + 1.0f / 128);
      b[l][v] = fl::floatToBf16(1.0f);
    }
  mfma(k, a, b, c, d);
  CHECK(d[0][0] == 8 * (1.0f + 1.0f / 128));
}

TEST_CASE("the int8 MFMAs: gfx90a's 4 and gfx942's 8 elements a lane, exact int32 sums that wrap") {
  // Lane 37 (l % 32 = 5, l / 32 = 1; l % 16 = 5, l / 16 = 2).
  CHECK(at(mfmaAElement(MfmaKind::I32_32x32x8_I8, 37, 0), 5, 4));
  CHECK(at(mfmaAElement(MfmaKind::I32_16x16x16_I8, 37, 3), 5, 11));
  CHECK(at(mfmaAElement(MfmaKind::I32_32x32x16_I8, 37, 0), 5, 8));
  CHECK(at(mfmaAElement(MfmaKind::I32_32x32x16_I8, 37, 7), 5, 15));
  CHECK(at(mfmaBElement(MfmaKind::I32_32x32x16_I8, 37, 1), 9, 5));
  CHECK(at(mfmaAElement(MfmaKind::I32_16x16x32_I8, 37, 0), 5, 16));
  CHECK(at(mfmaAElement(MfmaKind::I32_16x16x32_I8, 37, 7), 5, 23));
  CHECK(at(mfmaBElement(MfmaKind::I32_16x16x32_I8, 37, 1), 17, 5));
  CHECK(at(mfmaDElement(MfmaKind::I32_32x32x16_I8, 37, 0), 4, 5));
  CHECK(at(mfmaDElement(MfmaKind::I32_16x16x32_I8, 37, 0), 8, 5));
  for (MfmaKind k : {MfmaKind::I32_32x32x8_I8, MfmaKind::I32_16x16x16_I8, MfmaKind::I32_32x32x16_I8,
                     MfmaKind::I32_16x16x32_I8}) {
    const MfmaInfo& info = mfmaInfo(k);
    CAPTURE(info.instruction);
    CHECK(info.int8);
    CHECK(info.k == 64 / info.m * info.elems);
    checkCoverage(k);
    // D = A * B + C against a plain triple loop over the same matrices.
    auto A = [](int i, int kk) { return (i + kk) % 7 - 3; };
    auto B = [](int kk, int j) { return (3 * kk + j) % 5 - 2; };
    int8_t a[kWavefrontSize][8] = {}, b[kWavefrontSize][8] = {};
    int32_t c[kWavefrontSize][16] = {}, d[kWavefrontSize][16] = {};
    for (int l = 0; l < kWavefrontSize; ++l) {
      for (int v = 0; v < info.elems; ++v) {
        MfmaCoord pa = mfmaAElement(k, l, v), pb = mfmaBElement(k, l, v);
        a[l][v] = (int8_t)A(pa.row, pa.col);
        b[l][v] = (int8_t)B(pb.row, pb.col);
      }
      for (int r = 0; r < info.accRegs; ++r) c[l][r] = 100 * mfmaDElement(k, l, r).row + mfmaDElement(k, l, r).col;
    }
    mfmaInt8(k, a, b, c, d);
    for (int l = 0; l < kWavefrontSize; ++l)
      for (int r = 0; r < info.accRegs; ++r) {
        MfmaCoord p = mfmaDElement(k, l, r);
        int32_t want = 100 * p.row + p.col;
        for (int kk = 0; kk < info.k; ++kk) want += A(p.row, kk) * B(kk, p.col);
        CHECK(d[l][r] == want);
      }
    // int32 accumulation wraps: INT32_MAX + k products of (-128) * (-128).
    for (int l = 0; l < kWavefrontSize; ++l) {
      for (int v = 0; v < 8; ++v) a[l][v] = b[l][v] = -128;
      for (int r = 0; r < 16; ++r) c[l][r] = INT32_MAX;
    }
    mfmaInt8(k, a, b, c, d);
    CHECK(d[0][0] == (int32_t)((uint32_t)INT32_MAX + (uint32_t)(info.k * 16384)));
  }
}

TEST_CASE("v_mfma_f32_32x32x2f32 and v_mfma_f32_16x16x4f32: one float32 element a lane") {
  // Lane 37: l % 32 = 5, l / 32 = 1 -> A row 5, k 1; l % 16 = 5, l / 16 = 2 -> k 2.
  CHECK(at(mfmaAElement(MfmaKind::F32_32x32x2_F32, 37, 0), 5, 1));
  CHECK(at(mfmaBElement(MfmaKind::F32_32x32x2_F32, 37, 0), 1, 5));
  CHECK(at(mfmaAElement(MfmaKind::F32_16x16x4_F32, 37, 0), 5, 2));
  CHECK(at(mfmaDElement(MfmaKind::F32_16x16x4_F32, 37, 0), 8, 5));
  for (MfmaKind k : {MfmaKind::F32_32x32x2_F32, MfmaKind::F32_16x16x4_F32}) {
    const MfmaInfo& info = mfmaInfo(k);
    CAPTURE(info.instruction);
    CHECK(info.f32);
    CHECK(info.elems == 1);
    checkCoverage(k);
    // Inputs that float16 cannot hold (2^-20 apart from 1): the element is a
    // whole float32, in the lane's first two 16-bit slots.
    uint16_t a[kWavefrontSize][4] = {}, b[kWavefrontSize][4] = {};
    float c[kWavefrontSize][16] = {}, d[kWavefrontSize][16] = {};
    auto put = [](uint16_t* lane, float x) {
      uint32_t bits;
      std::memcpy(&bits, &x, sizeof bits);
      lane[0] = (uint16_t)bits;
      lane[1] = (uint16_t)(bits >> 16);
    };
    for (int l = 0; l < kWavefrontSize; ++l) {
      MfmaCoord pa = mfmaAElement(k, l, 0), pb = mfmaBElement(k, l, 0);
      put(a[l], 1.0f + (pa.row + pa.col) / 1048576.0f);
      put(b[l], pb.row == 0 ? 1.0f : 2.0f);
      for (int r = 0; r < info.accRegs; ++r) c[l][r] = 0.5f;
    }
    mfma(k, a, b, c, d);
    for (int l = 0; l < kWavefrontSize; ++l)
      for (int r = 0; r < info.accRegs; ++r) {
        MfmaCoord p = mfmaDElement(k, l, r);
        double want = 0.5;
        for (int kk = 0; kk < info.k; ++kk) want += (1.0 + (p.row + kk) / 1048576.0) * (kk == 0 ? 1.0 : 2.0);
        CHECK(d[l][r] == (float)want);
      }
  }
}

TEST_CASE("the FNUZ float8 decodings of CDNA3's float8 MFMAs, by hand") {
  // e4m3fnuz (bias 8): 0x40 = 2^0, 0x44 = 1.5, 0x38 = 0.5, 0x7f = 1.875 * 2^7,
  // 0x01 = 2^-3 * 2^-7 (subnormal), 0xc4 = -1.5, 0x80 NaN.
  CHECK(fl::e4m3fnuzToFloat(0x40) == 1.0f);
  CHECK(fl::e4m3fnuzToFloat(0x44) == 1.5f);
  CHECK(fl::e4m3fnuzToFloat(0x38) == 0.5f);
  CHECK(fl::e4m3fnuzToFloat(0x7f) == 240.0f);
  CHECK(fl::e4m3fnuzToFloat(0x01) == 1.0f / 1024);
  CHECK(fl::e4m3fnuzToFloat(0x07) == 7.0f / 1024);
  CHECK(fl::e4m3fnuzToFloat(0xc4) == -1.5f);
  CHECK(fl::e4m3fnuzToFloat(0x00) == 0.0f);
  CHECK(fl::e4m3fnuzToFloat(0x80) != fl::e4m3fnuzToFloat(0x80));
  // e5m2fnuz (bias 16): 0x40 = 2^0, 0x42 = 1.5, 0x7f = 1.75 * 2^15, 0x01 = 2^-2 * 2^-15.
  CHECK(fl::e5m2fnuzToFloat(0x40) == 1.0f);
  CHECK(fl::e5m2fnuzToFloat(0x42) == 1.5f);
  CHECK(fl::e5m2fnuzToFloat(0x7f) == 57344.0f);
  CHECK(fl::e5m2fnuzToFloat(0x01) == 1.0f / 131072);
  CHECK(fl::e5m2fnuzToFloat(0x80) != fl::e5m2fnuzToFloat(0x80));
}

TEST_CASE("OCP float8 bytes read as FNUZ are half their values, but for -0, NaN and infinity") {
  // Every byte of both formats, in every position of the word, beside other bytes.
  for (int expBits : {4, 5}) {
    CAPTURE(expBits);
    auto ocp = [&](uint8_t b) { return expBits == 4 ? fl::e4m3ToFloat(b) : fl::e5m2ToFloat(b); };
    auto fnuz = [&](uint8_t b) { return expBits == 4 ? fl::e4m3fnuzToFloat(b) : fl::e5m2fnuzToFloat(b); };
    for (int code = 0; code < 256; ++code)
      for (int pos = 0; pos < 8; ++pos) {
        CAPTURE(code);
        CAPTURE(pos);
        uint64_t w = 0x3c7f80fe017c01a5ull;  // neighbours: finite, NaN / infinity and -0 bytes
        w = (w & ~(0xffull << (8 * pos))) | (uint64_t)code << (8 * pos);
        const uint64_t out = fl::ocpToFnuzHalf(w, expBits);
        for (int i = 0; i < 8; ++i) {
          const uint8_t in = (uint8_t)(w >> (8 * i)), got = (uint8_t)(out >> (8 * i));
          const float x = ocp(in);
          if (x != x || x == INFINITY || x == -INFINITY) {
            CHECK(got == 0x80);  // NaN: FNUZ has no infinity
          } else if (in == 0x80) {
            CHECK(got == 0x00);  // -0 becomes +0
          } else {
            CHECK(got == in);
            CHECK(fnuz(got) * 2 == x);
          }
        }
      }
  }
}

TEST_CASE("the float8 MFMAs: 8 FNUZ elements a lane, exact products, NaN for 0x80") {
  // Lane 37 (l % 32 = 5, l / 32 = 1; l % 16 = 5, l / 16 = 2), as gfx942's int8 forms.
  CHECK(at(mfmaAElement(MfmaKind::F32_32x32x16_FP8, 37, 0), 5, 8));
  CHECK(at(mfmaAElement(MfmaKind::F32_32x32x16_BF8, 37, 7), 5, 15));
  CHECK(at(mfmaBElement(MfmaKind::F32_16x16x32_FP8, 37, 1), 17, 5));
  CHECK(at(mfmaDElement(MfmaKind::F32_32x32x16_FP8, 37, 4), 12, 5));
  CHECK(at(mfmaDElement(MfmaKind::F32_16x16x32_BF8, 37, 3), 11, 5));
  for (MfmaKind k : {MfmaKind::F32_32x32x16_FP8, MfmaKind::F32_16x16x32_FP8, MfmaKind::F32_32x32x16_BF8,
                     MfmaKind::F32_16x16x32_BF8}) {
    const MfmaInfo& info = mfmaInfo(k);
    CAPTURE(info.instruction);
    CHECK(info.elems == 8);
    CHECK(info.k == 64 / info.m * 8);
    checkCoverage(k);
    const bool e4 = info.fp8Exp == 4;
    // A[i][kk] = 1.5 (e4m3fnuz 0x44, e5m2fnuz 0x42) for kk < i + 1, else the
    // smallest subnormal (0x01: 2^-10, 2^-17); B[kk][j] = 1 (0x40) for kk == j % K, else
    // -0.5 (0xb8, 0xbc). C = 2.
    const uint8_t one = 0x40, oneHalf = e4 ? 0x44 : 0x42, minusHalf = e4 ? 0xb8 : 0xbc, tiny = 0x01;
    const double tinyValue = e4 ? 1.0 / 1024 : 1.0 / 131072;
    uint8_t a[kWavefrontSize][8] = {}, b[kWavefrontSize][8] = {};
    float c[kWavefrontSize][16], d[kWavefrontSize][16] = {};
    auto A = [&](int i, int kk) { return kk < i + 1 ? 1.5 : tinyValue; };
    auto B = [&](int kk, int j) { return kk == j % info.k ? 1.0 : -0.5; };
    for (int l = 0; l < kWavefrontSize; ++l) {
      for (int v = 0; v < 8; ++v) {
        MfmaCoord pa = mfmaAElement(k, l, v), pb = mfmaBElement(k, l, v);
        a[l][v] = pa.col < pa.row + 1 ? oneHalf : tiny;
        b[l][v] = pb.row == pb.col % info.k ? one : minusHalf;
      }
      for (int r = 0; r < 16; ++r) c[l][r] = 2.0f;
    }
    mfmaFp8(k, a, b, c, d);
    for (int l = 0; l < kWavefrontSize; ++l)
      for (int r = 0; r < info.accRegs; ++r) {
        MfmaCoord p = mfmaDElement(k, l, r);
        double want = 2.0;
        for (int kk = 0; kk < info.k; ++kk) want += A(p.row, kk) * B(kk, p.col);
        CHECK(d[l][r] == (float)want);
      }
    // A NaN (0x80) in row 3 of A makes row 3 of D NaN and leaves the others.
    a[3][0] = 0x80;
    mfmaFp8(k, a, b, c, d);
    for (int l = 0; l < kWavefrontSize; ++l)
      for (int r = 0; r < info.accRegs; ++r) {
        const bool row3 = mfmaDElement(k, l, r).row == 3;
        CHECK((d[l][r] != d[l][r]) == row3);
      }
  }
}
