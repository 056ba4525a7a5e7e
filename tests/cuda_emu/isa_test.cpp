// The emulated instruction set against hand-computed fragments (PTX ISA,
// "Matrix Fragments for mma.m16n8k*" and "ldmatrix"), one test per
// instruction, plus the narrow-float conversions both sides share.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "compiler/backends/cuda_emu/isa.h"
#include "runtime/cuda_emu/emu_float.h"

using namespace tlc::cuda_emu;
using namespace tlc::cuda_emu::isa;
namespace fl = tlc_emu_float;

namespace {
bool at(Coord c, int row, int col) { return c.row == row && c.col == col; }
}  // namespace

TEST_CASE("mma fragment positions for lane 5 (groupID 1, threadID_in_group 1)") {
  const int L = 5;
  // m16n8k16 f16: a0,a1 (1,2),(1,3); a2,a3 (9,2),(9,3); a4,a5 (1,10),(1,11); a6,a7 (9,10),(9,11)
  int k = TLC_EMU_MMA_M16N8K16_F32_F16;
  CHECK(at(mmaAElement(k, L, 0), 1, 2));
  CHECK(at(mmaAElement(k, L, 1), 1, 3));
  CHECK(at(mmaAElement(k, L, 2), 9, 2));
  CHECK(at(mmaAElement(k, L, 3), 9, 3));
  CHECK(at(mmaAElement(k, L, 4), 1, 10));
  CHECK(at(mmaAElement(k, L, 7), 9, 11));
  // B (k, n): b0,b1 (2,1),(3,1); b2,b3 (10,1),(11,1)
  CHECK(at(mmaBElement(k, L, 0), 2, 1));
  CHECK(at(mmaBElement(k, L, 1), 3, 1));
  CHECK(at(mmaBElement(k, L, 2), 10, 1));
  CHECK(at(mmaBElement(k, L, 3), 11, 1));
  // C: c0,c1 (1,2),(1,3); c2,c3 (9,2),(9,3)
  CHECK(at(mmaCElement(k, L, 0), 1, 2));
  CHECK(at(mmaCElement(k, L, 3), 9, 3));
  // m16n8k8 tf32: a0 (1,1), a1 (9,1), a2 (1,5), a3 (9,5); b0 (1,1), b1 (5,1)
  k = TLC_EMU_MMA_M16N8K8_F32_TF32;
  CHECK(at(mmaAElement(k, L, 0), 1, 1));
  CHECK(at(mmaAElement(k, L, 1), 9, 1));
  CHECK(at(mmaAElement(k, L, 2), 1, 5));
  CHECK(at(mmaAElement(k, L, 3), 9, 5));
  CHECK(at(mmaBElement(k, L, 0), 1, 1));
  CHECK(at(mmaBElement(k, L, 1), 5, 1));
  // m16n8k32 s8: a0..a3 (1,4..7); a4..a7 (9,4..7); a8..a11 (1,20..23); a12..a15 (9,20..23)
  k = TLC_EMU_MMA_M16N8K32_S32_S8;
  CHECK(at(mmaAElement(k, L, 0), 1, 4));
  CHECK(at(mmaAElement(k, L, 3), 1, 7));
  CHECK(at(mmaAElement(k, L, 4), 9, 4));
  CHECK(at(mmaAElement(k, L, 8), 1, 20));
  CHECK(at(mmaAElement(k, L, 15), 9, 23));
  // b0..b3 (4..7, 1); b4..b7 (20..23, 1)
  CHECK(at(mmaBElement(k, L, 0), 4, 1));
  CHECK(at(mmaBElement(k, L, 3), 7, 1));
  CHECK(at(mmaBElement(k, L, 4), 20, 1));
  // m16n8k8 f16: a0,a1 (1,2),(1,3); a2,a3 (9,2),(9,3); b0,b1 (2,1),(3,1)
  k = TLC_EMU_MMA_M16N8K8_F32_F16;
  CHECK(at(mmaAElement(k, L, 2), 9, 2));
  CHECK(at(mmaBElement(k, L, 1), 3, 1));
}

namespace {
// Runs one mma kind with A = the m x k "identity" (A[i][kk] = 1 iff kk == i)
// and B[kk][n] = value(kk, n), fragments filled lane by lane from the PTX
// layout, C = 0. D[i][n] must then be B[i][n].
std::vector<std::array<uint32_t, 4>> runIdentityMma(int kind, double (*value)(int, int)) {
  const MmaInfo& in = *mmaInfo(kind);
  std::vector<std::array<uint32_t, 4>> A(32), B(32), C(32), D(32);
  for (int lane = 0; lane < 32; ++lane) {
    A[lane].fill(0);
    B[lane].fill(0);
    C[lane].fill(0);
    D[lane].fill(0);
    for (int i = 0; i < in.aRegs * 32 / elemBits(in.a); ++i) {
      Coord p = mmaAElement(kind, lane, i);
      double v = p.row == p.col ? 1.0 : 0.0;
      uint32_t bits = in.a == ElemType::TF32 ? fl::floatBits((float)v) : 0;
      if (in.a == ElemType::TF32) A[lane][i] = bits;
      else setFragElement(in.a, A[lane].data(), i, v);
    }
    for (int i = 0; i < in.bRegs * 32 / elemBits(in.b); ++i) {
      Coord p = mmaBElement(kind, lane, i);
      if (in.b == ElemType::TF32) B[lane][i] = fl::floatBits((float)value(p.row, p.col));
      else setFragElement(in.b, B[lane].data(), i, value(p.row, p.col));
    }
  }
  const uint32_t *a[32], *b[32], *c[32];
  uint32_t* d[32];
  for (int l = 0; l < 32; ++l) {
    a[l] = A[l].data();
    b[l] = B[l].data();
    c[l] = C[l].data();
    d[l] = D[l].data();
  }
  mma(kind, a, b, c, d);
  return D;
}
double smallInt(int k, int n) { return (k * 8 + n) % 13 - 6; }
}  // namespace

TEST_CASE("mma.sync with an identity A reproduces B in the accumulator layout") {
  for (int kind : {TLC_EMU_MMA_M16N8K16_F32_F16, TLC_EMU_MMA_M16N8K16_F32_BF16, TLC_EMU_MMA_M16N8K8_F32_F16,
                   TLC_EMU_MMA_M16N8K8_F32_TF32, TLC_EMU_MMA_M16N8K4_F32_TF32, TLC_EMU_MMA_M16N8K32_S32_S8,
                   TLC_EMU_MMA_M16N8K16_S32_S8, TLC_EMU_MMA_M16N8K32_F32_E4M3}) {
    CAPTURE(mmaInfo(kind)->ptx);
    auto D = runIdentityMma(kind, smallInt);
    const MmaInfo& in = *mmaInfo(kind);
    // Lane 5 holds D rows 1 and 9, columns 2 and 3; rows >= k are zero.
    auto expect = [&](int row, int col) { return row < in.k ? smallInt(row, col) : 0.0; };
    CHECK(fragElement(in.c, D[5].data(), 0) == expect(1, 2));
    CHECK(fragElement(in.c, D[5].data(), 1) == expect(1, 3));
    CHECK(fragElement(in.c, D[5].data(), 2) == expect(9, 2));
    CHECK(fragElement(in.c, D[5].data(), 3) == expect(9, 3));
    for (int lane = 0; lane < 32; ++lane)
      for (int i = 0; i < 4; ++i) {
        Coord p = mmaCElement(kind, lane, i);
        CHECK(fragElement(in.c, D[lane].data(), i) == expect(p.row, p.col));
      }
  }
}

TEST_CASE("mma.sync accumulates into C and wraps int32") {
  // All-ones A and B: D = C + k.
  int kind = TLC_EMU_MMA_M16N8K16_F32_F16;
  uint32_t A[32][4], B[32][2], C[32][4], D[32][4];
  const uint32_t *a[32], *b[32], *c[32];
  uint32_t* d[32];
  for (int l = 0; l < 32; ++l) {
    for (int r = 0; r < 4; ++r) A[l][r] = 0x3c003c00u;  // two halves of 1.0
    for (int r = 0; r < 2; ++r) B[l][r] = 0x3c003c00u;
    for (int r = 0; r < 4; ++r) C[l][r] = fl::floatBits(0.5f);
    a[l] = A[l];
    b[l] = B[l];
    c[l] = C[l];
    d[l] = D[l];
  }
  mma(kind, a, b, c, d);
  CHECK(fl::bitsFloat(D[0][0]) == 16.5f);
  CHECK(fl::bitsFloat(D[31][3]) == 16.5f);
  // int8: A all 127, B all 127, C = INT32_MAX - 1: wraps.
  kind = TLC_EMU_MMA_M16N8K32_S32_S8;
  for (int l = 0; l < 32; ++l) {
    for (int r = 0; r < 4; ++r) A[l][r] = 0x7f7f7f7fu;
    for (int r = 0; r < 2; ++r) B[l][r] = 0x7f7f7f7fu;
    for (int r = 0; r < 4; ++r) C[l][r] = 0x7ffffffeu;
  }
  mma(kind, a, b, c, d);
  CHECK((int32_t)D[3][1] == (int32_t)(uint32_t)(0x7ffffffeu + 32u * 127u * 127u));
}

TEST_CASE("ldmatrix x4, with and without .trans") {
  uint16_t rows[4][8][8];
  for (int m = 0; m < 4; ++m)
    for (int r = 0; r < 8; ++r)
      for (int c = 0; c < 8; ++c) rows[m][r][c] = (uint16_t)(m * 64 + r * 8 + c);
  uint32_t out[32][4];
  ldmatrix(4, false, rows, out);
  // lane 5: row 1, columns 2 and 3 of each matrix
  for (int m = 0; m < 4; ++m) CHECK(out[5][m] == ((uint32_t)(m * 64 + 10) | ((uint32_t)(m * 64 + 11) << 16)));
  ldmatrix(4, true, rows, out);
  // lane 5 with .trans: column 1, rows 2 and 3
  for (int m = 0; m < 4; ++m) CHECK(out[5][m] == ((uint32_t)(m * 64 + 17) | ((uint32_t)(m * 64 + 25) << 16)));
  // stmatrix is the inverse of ldmatrix
  uint16_t back[4][8][8] = {};
  stmatrix(4, true, out, back);
  CHECK(std::memcmp(back, rows, sizeof rows) == 0);
  ldmatrix(2, false, rows, out);
  CHECK(out[31][1] == ((uint32_t)(64 + 62) | ((uint32_t)(64 + 63) << 16)));
}

TEST_CASE("shfl.sync modes, segments and inactive sources") {
  uint32_t v[32], out[32];
  int arg[32], src[32];
  bool valid[32];
  for (int l = 0; l < 32; ++l) v[l] = 100 + l;
  for (int l = 0; l < 32; ++l) arg[l] = 1;
  shfl(TLC_EMU_SHFL_XOR, 0xffffffffu, v, arg, 32, out, valid, src);
  CHECK(out[4] == 105);
  CHECK(out[5] == 104);
  shfl(TLC_EMU_SHFL_DOWN, 0xffffffffu, v, arg, 16, out, valid, src);
  CHECK(out[3] == 104);
  CHECK(out[15] == 115);  // last lane of its 16-lane segment keeps its value
  CHECK(!valid[15]);
  shfl(TLC_EMU_SHFL_UP, 0xffffffffu, v, arg, 8, out, valid, src);
  CHECK(out[8] == 108);
  CHECK(out[9] == 108);
  for (int l = 0; l < 32; ++l) arg[l] = 3;
  shfl(TLC_EMU_SHFL_IDX, 0xffffffffu, v, arg, 32, out, valid, src);
  CHECK(out[17] == 103);
  shfl(TLC_EMU_SHFL_IDX, 0x0000fff0u, v, arg, 32, out, valid, src);
  CHECK(src[4] == 3);
  CHECK(!valid[4]);  // lane 3 is not in the mask
}

TEST_CASE("vote.sync") {
  bool p[32] = {};
  p[3] = p[7] = true;
  CHECK(vote(TLC_EMU_VOTE_BALLOT, 0xffffffffu, p) == 0x88u);
  CHECK(vote(TLC_EMU_VOTE_ANY, 0xffffffffu, p) == 1u);
  CHECK(vote(TLC_EMU_VOTE_ALL, 0x88u, p) == 1u);
  CHECK(vote(TLC_EMU_VOTE_ALL, 0xffu, p) == 0u);
}

TEST_CASE("atomic operations") {
  uint64_t r = 0;
  CHECK(atomicApply(TLC_EMU_ATOM_ADD, TLC_EMU_TY_F32, fl::floatBits(1.5f), fl::floatBits(2.25f), 0, &r));
  CHECK(fl::bitsFloat((uint32_t)r) == 3.75f);
  CHECK(atomicApply(TLC_EMU_ATOM_CAS, TLC_EMU_TY_U32, 7, 9, 7, &r));
  CHECK(r == 9);
  CHECK(atomicApply(TLC_EMU_ATOM_CAS, TLC_EMU_TY_U32, 7, 9, 8, &r));
  CHECK(r == 7);
  CHECK(atomicApply(TLC_EMU_ATOM_INC, TLC_EMU_TY_U32, 5, 5, 0, &r));
  CHECK(r == 0);
  CHECK(atomicApply(TLC_EMU_ATOM_MAX, TLC_EMU_TY_S32, (uint32_t)-3, (uint32_t)-7, 0, &r));
  CHECK((int32_t)r == -3);
  CHECK(atomicApply(TLC_EMU_ATOM_ADD, TLC_EMU_TY_F16, fl::floatToHalf(1.0f), fl::floatToHalf(0.5f), 0, &r));
  CHECK(r == fl::floatToHalf(1.5f));
  CHECK(!atomicApply(TLC_EMU_ATOM_AND, TLC_EMU_TY_F32, 0, 0, 0, &r));
}

TEST_CASE("shared-memory wavefronts") {
  uint64_t addr[32];
  for (int l = 0; l < 32; ++l) addr[l] = 4 * l;  // consecutive words
  CHECK(sharedWavefronts(addr, 0xffffffffu, 4).actual == 1);
  for (int l = 0; l < 32; ++l) addr[l] = 128 * l;  // one bank
  CHECK(sharedWavefronts(addr, 0xffffffffu, 4).actual == 32);
  for (int l = 0; l < 32; ++l) addr[l] = 0;  // broadcast
  CHECK(sharedWavefronts(addr, 0xffffffffu, 4).actual == 1);
  for (int l = 0; l < 32; ++l) addr[l] = 16 * l;  // 16-byte vectors: 4 phases
  Wavefronts w = sharedWavefronts(addr, 0xffffffffu, 16);
  CHECK(w.actual == 4);
  CHECK(w.ideal == 4);
  for (int l = 0; l < 32; ++l) addr[l] = 256 * l;  // 16-byte, all in banks 0-3: 8-way per phase
  CHECK(sharedWavefronts(addr, 0xffffffffu, 16).actual == 32);
}

TEST_CASE("narrow float conversions") {
  CHECK(fl::floatToHalf(1.0f) == 0x3c00);
  CHECK(fl::floatToHalf(65504.0f) == 0x7bff);
  CHECK(fl::floatToHalf(65520.0f) == 0x7c00);          // rounds to inf
  CHECK(fl::floatToHalf(5.9604645e-08f) == 0x0001);    // smallest subnormal
  CHECK(fl::floatToHalf(1.0f + 1.0f / 2048) == 0x3c00);  // tie to even
  CHECK(fl::floatToHalf(1.0f + 3.0f / 2048) == 0x3c02);  // tie to even (up)
  CHECK(fl::halfToFloat(0xc000) == -2.0f);
  CHECK(fl::halfToFloat(0x0001) == 5.9604645e-08f);
  CHECK(fl::floatToBf16(1.0f) == 0x3f80);
  CHECK(fl::bf16ToFloat(0x4049) == 3.140625f);
  CHECK(fl::floatToE4M3(448.0f) == 0x7e);
  CHECK(fl::floatToE4M3(480.0f) == 0x7f);  // past the largest finite: NaN
  CHECK(fl::e4m3ToFloat(0x01) == 0.001953125f);
  CHECK(fl::floatToE5M2(57344.0f) == 0x7b);
  CHECK(fl::e5m2ToFloat(0x7c) == INFINITY);
  CHECK(fl::floatToTf32(1.0f + 1.0f / 2048) == fl::floatBits(1.0f + 1.0f / 1024));  // ties away
}
