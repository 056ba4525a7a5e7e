// How tile-IR dtypes live in LLVM: the type of an element in memory, the
// type of a value in registers, and conversions between dtypes.
//
// bool is i8 in memory and i1 in registers; float8 formats are i8 in memory
// and float in registers (decoded and encoded by the CPU runtime's
// conversion functions); every other dtype is the same LLVM type in both.
#pragma once

#include <llvm/IR/IRBuilder.h>

#include "compiler/ir/dtype.h"

namespace tlc::cpu {

llvm::Type* storageType(llvm::LLVMContext& ctx, DType t);
llvm::Type* valueType(llvm::LLVMContext& ctx, DType t);
bool isFloat8(DType t);

// Converts a register value of dtype `from` to dtype `to` with the
// language's cast rules (float -> int saturates and NaN gives 0; to bool
// compares with zero; float8 results are rounded to the float8 format).
llvm::Value* castValue(llvm::IRBuilder<>& b, llvm::Value* v, DType from, DType to);

// float, double or half (scalars or vectors) -> bfloat, rounded to nearest
// even, without the runtime library call LLVM would otherwise emit.
llvm::Value* truncToBFloat(llvm::IRBuilder<>& b, llvm::Value* v);

// Defines, in `m`, the float -> bfloat conversion routines that LLVM's x86
// code generator calls when the target has no bfloat instructions
// (__truncsfbf2, __truncdfbf2): C runtimes before GCC 13's lack them, so the
// JIT could not resolve them and shared objects would not link. Weak and
// hidden, so each module keeps its own copy to itself.
void defineBFloatLibcalls(llvm::Module& m);

// Whether `v` (float, or a vector of them) is a NaN, from its bits: the
// exponent all ones and a nonzero mantissa. An integer test, not `fcmp uno
// v, v`: LLVM narrows that comparison of a value widened from float16 to a
// float16 comparison, which targets without AVX512-FP16 run one element at
// a time (a row maximum of float16 data ran 8x slower, a SiLU 5x).
llvm::Value* isNaNBits(llvm::IRBuilderBase& b, llvm::Value* v);

// Memory <-> register forms.
llvm::Value* loadedToValue(llvm::IRBuilder<>& b, llvm::Value* stored, DType t);
llvm::Value* valueToStored(llvm::IRBuilder<>& b, llvm::Value* v, DType t);

}  // namespace tlc::cpu
