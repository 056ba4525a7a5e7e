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
//   32x32x2f32 and 16x16x4f32 take one float32 element a lane, k = l / M.
//   The int8 forms (int32 accumulators, D as above): 32x32x8i8 and
//     16x16x16i8 (gfx90a) take 4 elements a lane, k = 4 * (l / M) + v, like
//     the 16-bit ones; 32x32x16_i8 and 16x16x32_i8 (gfx942, which has no
//     other int8 form) take 8, k = 8 * (l / M) + v (v = 0..7).
//   The float8 forms (gfx942; float32 accumulators, D as above) take 8
//     elements a lane like gfx942's int8 ones: 32x32x16_fp8_fp8 and
//     16x16x32_fp8_fp8 read e4m3fnuz, the _bf8_bf8 ones e5m2fnuz (the FNUZ
//     encodings: bias 8 and 16, no infinity or negative zero, 0x80 the
//     only NaN; runtime/cuda_emu/emu_float.h, decodeFnuz).
// Products of the 16-bit inputs are exact in float32; the emulator sums
// them in double and rounds once to float32 (the hardware's summation order
// is not specified; this is the most accurate choice, as for mma.sync).
// The int8 sums are exact, wrapping modulo 2^32 as the hardware's int32
// adds do. The float8 products are exact too, summed like the 16-bit ones; a
// NaN input gives NaN.
#pragma once

#include <cstdint>

#include "compiler/backends/cuda_emu/isa.h"

namespace tlc::cuda_emu::isa {

enum class MfmaKind {
  F32_32x32x8_F16,
  F32_16x16x16_F16,
  F32_32x32x8_BF16,
  F32_16x16x16_BF16,
  I32_32x32x8_I8,
  I32_16x16x16_I8,
  I32_32x32x16_I8,
  I32_16x16x32_I8,
  F32_32x32x2_F32,
  F32_16x16x4_F32,
  F32_32x32x16_FP8,
  F32_16x16x32_FP8,
  F32_32x32x16_BF8,
  F32_16x16x32_BF8
};

struct MfmaInfo {
  const char* instruction;  // "v_mfma_f32_32x32x8f16"
  const char* builtin;      // "__builtin_amdgcn_mfma_f32_32x32x8f16"
  int m, n, k;
  bool bf16;
  int accRegs;  // float32 (int32 for int8) accumulator registers per lane
  bool int8 = false;
  int elems = 4;  // A and B elements per lane
  bool f32 = false;  // float32 inputs
  int fp8Exp = 0;    // float8 inputs: their exponent bits, 4 (fp8, e4m3fnuz) or 5 (bf8, e5m2fnuz)
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
// patterns of float16 or bfloat16; for the float32 kinds a[l][0] and
// a[l][1] are the low and high halves of the lane's float32 element),
// c[l][r] and d[l][r] the accumulators.
void mfma(MfmaKind kind, const uint16_t a[kWavefrontSize][4], const uint16_t b[kWavefrontSize][4],
          const float c[kWavefrontSize][16], float d[kWavefrontSize][16]);
// The same for the int8 kinds: a[l][v], b[l][v] (v < elems) the inputs.
void mfmaInt8(MfmaKind kind, const int8_t a[kWavefrontSize][8], const int8_t b[kWavefrontSize][8],
              const int32_t c[kWavefrontSize][16], int32_t d[kWavefrontSize][16]);
// The same for the float8 kinds: a[l][v], b[l][v] the FNUZ bytes.
void mfmaFp8(MfmaKind kind, const uint8_t a[kWavefrontSize][8], const uint8_t b[kWavefrontSize][8],
             const float c[kWavefrontSize][16], float d[kWavefrontSize][16]);

}  // namespace tlc::cuda_emu::isa
