// Expands a cpu.gemm intrinsic call into a register-blocked SIMD gemm.
//
// C (MxN, row stride ldc, unit column stride) += A (MxK, strides sAi, sAk)
// x B (KxN, strides sBk, sBj), computed in the compute type (float32 for
// 16-bit float and float32 operands, float64, int32 or int64 otherwise).
//
// The code is generated per call site, so constant sizes and strides (the
// usual case: tiles of block-local buffers) fold into the loops. Layout:
//   for k0 in K step KC:                    (KC keeps the B panel in L1)
//     for j0 in N step NR (NR = 2 vectors): (full panels, then one masked tail)
//       B panel: used in place when its rows are contiguous and of the compute
//                type, else packed (converted, zero padded) into a stack buffer
//       for i0 in M step MR: MR x NR accumulators in registers; per k one
//                vector load of each B vector, one broadcast of A per row,
//                MR x 2 fused multiply-adds
//       remaining rows: one more block of M % MR rows when M is constant,
//                else one row at a time.
// MR is chosen so that the accumulators, the B vectors and a broadcast fit in
// the vector registers (8 rows with 32 registers, 6 with 16); the k loop is
// unrolled 8 times, the outer loops not at all (compile time).
#pragma once

#include "compiler/backends/cpu/target.h"
#include "compiler/ir/dtype.h"

#include <llvm/IR/IRBuilder.h>

#include <vector>

namespace tlc::cpu {

struct GemmOperands {
  DType a, b, c;             // element types in memory
  llvm::Value *A, *B, *C;    // base pointers
  llvm::Value *M, *N, *K;    // i64
  llvm::Value *sAi, *sAk, *sBk, *sBj, *ldc;  // i64 element strides
};

// Emits the gemm at the builder's insertion point (which stays after it).
void emitGemm(llvm::IRBuilder<>& b, const GemmOperands& ops,
              const CpuTarget& target);

// Emits a call of the gemm, generated once per module for each signature
// (element types and the sizes and strides that are constants; the others
// are parameters) into a function of its own, which is not inlined: a block
// of grouped gemms (cpu-group-blocks) calls one micro-kernel from every
// call site instead of compiling it again for each.
void emitGemmCall(llvm::IRBuilder<>& b, const GemmOperands& ops, const CpuTarget& target);

}  // namespace tlc::cpu
