// The emulated CDNA matrix instructions (MFMA) of the HIP backend: the data
// semantics of one instruction over a 64-lane wavefront, one function per
// instruction, pure (no memory, no scheduling), like isa.h's PTX ones.
//
// Operand layouts (AMD CDNA3 ISA, "Matrix fused multiply-add", one block,
// no broadcast: CBSZ = ABID = BLGP = 0), lane l of the wavefront:
//   32x32x8 (f16, bf16_1k): A[i][k] with i = l % 32, k = 4 * (l / 32) + v in
//     element v (0..3) of the lane's A operand; B[k][j] with j = l % 32 and the
//     same k; D[i][j] in register r (0..15) with j = l % 32,
//     i = 8 * (r / 4) + 4 * (l / 32) + r % 4.
//   16x16x16 (f16, bf16_1k): i (or j) = l % 16, k = 4 * (l / 16) + v;
//     D[i][j] in register r (0..3) with j = l % 16, i = 4 * (l / 16) + r.
// Products of the 16-bit inputs are exact in float32; the emulator sums
// them in double and rounds once to float32 (the hardware's summation order
// is not specified; this is the most accurate choice, as for mma.sync).
#pragma once

#include <cstdint>

namespace tlc::cuda_emu::isa {

constexpr int kWavefrontSize = 64;

enum class MfmaKind { F32_32x32x8_F16, F32_16x16x16_F16, F32_32x32x8_BF16, F32_16x16x16_BF16 };

struct MfmaInfo {
  const char* instruction;  // "v_mfma_f32_32x32x8f16"
  const char* builtin;      // "__builtin_amdgcn_mfma_f32_32x32x8f16"
  int m, n, k;
  bool bf16;
  int accRegs;  // float32 accumulator registers per lane
};
const MfmaInfo& mfmaInfo(MfmaKind kind);

struct MfmaCoord {
  int row, col;
};
// Position (i, k) of element v of lane l's A operand in the m x k matrix A.
MfmaCoord mfmaAElement(MfmaKind kind, int lane, int v);
// Position (k, j) of element v of lane l's B operand in the k x n matrix B.
MfmaCoord mfmaBElement(MfmaKind kind, int lane, int v);
// Position (i, j) of accumulator register r of lane l in the m x n matrix D.
MfmaCoord mfmaDElement(MfmaKind kind, int lane, int r);

// D = A * B + C for one wavefront: a[l][v], b[l][v] the 16-bit inputs (bit
// patterns of float16 or bfloat16), c[l][r] and d[l][r] the accumulators.
void mfma(MfmaKind kind, const uint16_t a[kWavefrontSize][4], const uint16_t b[kWavefrontSize][4],
          const float c[kWavefrontSize][16], float d[kWavefrontSize][16]);

}  // namespace tlc::cuda_emu::isa
