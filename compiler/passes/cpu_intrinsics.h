// Target intrinsics that the CPU lowering passes introduce and the LLVM CPU
// backend expands. Each appears as an ir::Call named "cpu.<name>".
//
//   cpu.address_of(Load(buf, idx))  -> the address of buf[idx] (dtype UInt64).
//                                      Only valid as an argument of the
//                                      intrinsics below.
//   cpu.gemm(&A, &B, &C, M, N, K, sAi, sAk, sBk, sBj, ldc)   (Evaluate)
//        C[i*ldc + j] += sum_k A[i*sAi + k*sAk] * B[k*sBk + j*sBj]
//        for 0<=i<M, 0<=j<N, 0<=k<K, accumulated in C's dtype (float16 and
//        bfloat16 accumulators compute in float32). All sizes and strides are
//        int64 element counts; they are already clamped to the buffers, so no
//        masking is needed. The backend generates a register-blocked SIMD
//        micro-kernel per call site, specialized on the constant arguments.
//   cpu.atomic_add / cpu.atomic_max / cpu.atomic_min(&buf[idx], value)  (Evaluate, or
//        the value of a Store: the element's previous value)
//        an atomic read-modify-write of one element.
//   cpu.max_keep(a, b) / cpu.min_keep(a, b)   (floats)
//        b when it orders above (below) a, else a: a NaN b leaves a, and a
//        NaN a stays (one vmaxps / vminps). Lanes of float max / min
//        reductions, whose NaNs are tracked beside them (cpu-lower-reduce).
#pragma once

#include <string_view>

namespace tlc::cpu_intrinsics {

inline constexpr const char* kAddressOf = "cpu.address_of";
inline constexpr const char* kGemm = "cpu.gemm";
inline constexpr const char* kAtomicAdd = "cpu.atomic_add";
inline constexpr const char* kAtomicMax = "cpu.atomic_max";
inline constexpr const char* kAtomicMin = "cpu.atomic_min";
inline constexpr const char* kMaxKeep = "cpu.max_keep";
inline constexpr const char* kMinKeep = "cpu.min_keep";

// Whether a call takes the addresses of the loads among its operands (every
// cpu.* intrinsic but the max_keep / min_keep values of their operands alone):
// their buffers are read and written in ways no pass sees.
inline bool takesAddresses(std::string_view callee) {
  return callee.rfind("cpu.", 0) == 0 && callee != kMaxKeep && callee != kMinKeep;
}

inline bool isAtomic(std::string_view callee) {
  return callee == kAtomicAdd || callee == kAtomicMax || callee == kAtomicMin;
}

}  // namespace tlc::cpu_intrinsics
