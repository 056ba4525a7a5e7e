#include "compiler/backends/cuda_emu/isa_mfma.h"

#include <cstring>
#include <vector>

#include "runtime/cuda_emu/emu_float.h"

namespace tlc::cuda_emu::isa {

const MfmaInfo& mfmaInfo(MfmaKind kind) {
  static const MfmaInfo infos[] = {
      {"v_mfma_f32_32x32x8f16", "__builtin_amdgcn_mfma_f32_32x32x8f16", 32, 32, 8, false, 16},
      {"v_mfma_f32_16x16x16f16", "__builtin_amdgcn_mfma_f32_16x16x16f16", 16, 16, 16, false, 4},
      {"v_mfma_f32_32x32x8bf16_1k", "__builtin_amdgcn_mfma_f32_32x32x8bf16_1k", 32, 32, 8, true, 16},
      {"v_mfma_f32_16x16x16bf16_1k", "__builtin_amdgcn_mfma_f32_16x16x16bf16_1k", 16, 16, 16, true, 4},
      {"v_mfma_i32_32x32x8i8", "__builtin_amdgcn_mfma_i32_32x32x8i8", 32, 32, 8, false, 16, true, 4},
      {"v_mfma_i32_16x16x16i8", "__builtin_amdgcn_mfma_i32_16x16x16i8", 16, 16, 16, false, 4, true, 4},
      {"v_mfma_i32_32x32x16_i8", "__builtin_amdgcn_mfma_i32_32x32x16_i8", 32, 32, 16, false, 16, true, 8},
      {"v_mfma_i32_16x16x32_i8", "__builtin_amdgcn_mfma_i32_16x16x32_i8", 16, 16, 32, false, 4, true, 8},
      {"v_mfma_f32_32x32x2f32", "__builtin_amdgcn_mfma_f32_32x32x2f32", 32, 32, 2, false, 16, false, 1, true},
      {"v_mfma_f32_16x16x4f32", "__builtin_amdgcn_mfma_f32_16x16x4f32", 16, 16, 4, false, 4, false, 1, true},
      {"v_mfma_f32_32x32x16_fp8_fp8", "__builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8", 32, 32, 16, false, 16, false, 8,
       false, 4},
      {"v_mfma_f32_16x16x32_fp8_fp8", "__builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8", 16, 16, 32, false, 4, false, 8,
       false, 4},
      {"v_mfma_f32_32x32x16_bf8_bf8", "__builtin_amdgcn_mfma_f32_32x32x16_bf8_bf8", 32, 32, 16, false, 16, false, 8,
       false, 5},
      {"v_mfma_f32_16x16x32_bf8_bf8", "__builtin_amdgcn_mfma_f32_16x16x32_bf8_bf8", 16, 16, 32, false, 4, false, 8,
       false, 5},
  };
  return infos[(int)kind];
}

MfmaCoord mfmaAElement(MfmaKind kind, int lane, int v) {
  const MfmaInfo& info = mfmaInfo(kind);
  return {lane % info.m, info.elems * (lane / info.m) + v};
}

MfmaCoord mfmaBElement(MfmaKind kind, int lane, int v) {
  const MfmaInfo& info = mfmaInfo(kind);
  return {info.elems * (lane / info.n) + v, lane % info.n};
}

MfmaCoord mfmaDElement(MfmaKind kind, int lane, int r) {
  const int n = mfmaInfo(kind).n;
  if (n == 32) return {8 * (r / 4) + 4 * (lane / 32) + r % 4, lane % 32};
  return {4 * (lane / 16) + r, lane % 16};
}

namespace {

// The wavefront's m x k matrix A and k x n matrix B (row-major) from the
// lanes' operand elements, element v of lane l's A as value(a[l], v).
template <class T, class Lane, class Value>
void gatherOperands(MfmaKind kind, const Lane* a, const Lane* b, Value value, std::vector<T>* A, std::vector<T>* B) {
  const MfmaInfo& info = mfmaInfo(kind);
  A->assign(info.m * info.k, T());
  B->assign(info.k * info.n, T());
  for (int l = 0; l < kWavefrontSize; ++l)
    for (int v = 0; v < info.elems; ++v) {
      MfmaCoord pa = mfmaAElement(kind, l, v), pb = mfmaBElement(kind, l, v);
      (*A)[pa.row * info.k + pa.col] = value(a[l], v);
      (*B)[pb.row * info.n + pb.col] = value(b[l], v);
    }
}

// D = A * B + C over double operands: each sum in double, rounded once to float32.
void sumProducts(const MfmaInfo& info, MfmaKind kind, const std::vector<double>& A, const std::vector<double>& B,
                 const float c[kWavefrontSize][16], float d[kWavefrontSize][16]) {
  for (int l = 0; l < kWavefrontSize; ++l)
    for (int r = 0; r < info.accRegs; ++r) {
      MfmaCoord p = mfmaDElement(kind, l, r);
      double sum = c[l][r];
      for (int k = 0; k < info.k; ++k) sum += A[p.row * info.k + k] * B[k * info.n + p.col];
      d[l][r] = (float)sum;
    }
}

}  // namespace

void mfma(MfmaKind kind, const uint16_t a[kWavefrontSize][4], const uint16_t b[kWavefrontSize][4],
          const float c[kWavefrontSize][16], float d[kWavefrontSize][16]) {
  const MfmaInfo& info = mfmaInfo(kind);
  // Element v of a lane's operand.
  auto value = [&](const uint16_t* lane, int v) {
    if (info.f32) {
      const uint32_t bits = lane[2 * v] | (uint32_t)lane[2 * v + 1] << 16;
      float x;
      std::memcpy(&x, &bits, sizeof x);
      return (double)x;
    }
    return (double)(info.bf16 ? tlc_emu_float::bf16ToFloat(lane[v]) : tlc_emu_float::halfToFloat(lane[v]));
  };
  std::vector<double> A, B;
  gatherOperands(kind, a, b, value, &A, &B);
  sumProducts(info, kind, A, B, c, d);
}

void mfmaFp8(MfmaKind kind, const uint8_t a[kWavefrontSize][8], const uint8_t b[kWavefrontSize][8],
             const float c[kWavefrontSize][16], float d[kWavefrontSize][16]) {
  const MfmaInfo& info = mfmaInfo(kind);
  const int exp = info.fp8Exp;
  std::vector<double> A, B;
  gatherOperands(kind, a, b, [&](const uint8_t* lane, int v) {
    return (double)tlc_emu_float::decodeFnuz(lane[v], exp, 7 - exp);
  }, &A, &B);
  sumProducts(info, kind, A, B, c, d);
}

void mfmaInt8(MfmaKind kind, const int8_t a[kWavefrontSize][8], const int8_t b[kWavefrontSize][8],
              const int32_t c[kWavefrontSize][16], int32_t d[kWavefrontSize][16]) {
  const MfmaInfo& info = mfmaInfo(kind);
  std::vector<int64_t> A, B;
  gatherOperands(kind, a, b, [](const int8_t* lane, int v) { return (int64_t)lane[v]; }, &A, &B);
  for (int l = 0; l < kWavefrontSize; ++l)
    for (int r = 0; r < info.accRegs; ++r) {
      MfmaCoord p = mfmaDElement(kind, l, r);
      uint32_t sum = (uint32_t)c[l][r];
      for (int k = 0; k < info.k; ++k) sum += (uint32_t)(A[p.row * info.k + k] * B[k * info.n + p.col]);
      d[l][r] = (int32_t)sum;
    }
}

}  // namespace tlc::cuda_emu::isa
