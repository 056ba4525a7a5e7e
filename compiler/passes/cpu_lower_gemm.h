// Pass cpu-lower-gemm: Gemm tile operations become cpu.gemm intrinsic calls
// (see cpu_intrinsics.h) that the LLVM backend expands into a register-blocked
// SIMD micro-kernel specialized for the call's shapes, strides and dtypes.
//
// Assumes: a verified module; the matrix dimensions of each operand are the
// last two dimensions of its region (leading dimensions have extent 1); region
// starts are not negative.
// Guarantees: no Gemm statement remains. clear_accum becomes a masked fill of
// C with zero before the call. The call's M, N, K are clamped to the part of
// each region inside its buffer (reads outside yield zero, so they add
// nothing; writes outside are dropped), so the micro-kernel needs no masks
// beyond its own tails.
#pragma once

#include "compiler/ir/ir.h"

namespace tlc::cpu {

ir::Module lowerGemm(const ir::Module& m);

}  // namespace tlc::cpu
