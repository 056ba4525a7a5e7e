// Device helpers for HIP C emitted by tlc (AMD GPUs), in the HIP dialect of
// the GPU emitter (compiler/backends/cuda/gpu_dialect.h).
//
// The helpers themselves are those of runtime/cuda/tlc_cuda.h: tlc embeds
// both files and hands the HIP compiler this shim with the CUDA helpers in
// place of the marker below (hip_compile.cpp, hipHelperHeader). The shim
// gives the CUDA spellings those helpers use (bfloat16 and float8 types, bit
// casts, warp shuffles with a member mask) their AMD meaning. Helpers written
// in inline PTX (cp.async, ldmatrix, mma.sync, wgmma, mbarriers, TMA) become
// traps: the HIP dialect never emits them, and MFMA has its own helpers
// below.
//
// Warp-level code of the emitter works on groups of lanes with xor shuffles:
// up to 32 lanes, within one half of a 64-lane wavefront, as on a CUDA warp,
// or 64 (`tlc::group_allreduce<64>`, `tlc::shfl_xor(v, s, 64)`), whose step
// of distance 32 crosses the halves. A group reduction's steps of distance
// 1 to 8 move values by DPP (`tlc_lane_dpp` below), that of 16 by
// ds_swizzle (`tlc_lane_swizzle`).
#pragma once
#if defined(__HIPCC_RTC__)
typedef unsigned char uint8_t;  // hiprtc declares the 32- and 64-bit ones only
typedef unsigned short uint16_t;
#else
#include <hip/hip_runtime.h>
#endif
// The HIP headers have min / max of int, float and double (and clang 19 a
// template of one type), none of which takes min(gridDim.y, 8u), whose
// first argument is a HIP coordinate property.
__device__ __forceinline__ unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
__device__ __forceinline__ unsigned max(unsigned a, unsigned b) { return a < b ? b : a; }

#ifndef __align__
#define __align__(n) __attribute__((aligned(n)))
#endif

// The narrow-float encoders of the emulator (runtime/cuda_emu/emu_float.h,
// embedded below), compiled for the host and the device.
#define memcpy __builtin_memcpy
#pragma clang force_cuda_host_device begin
// @EMU_FLOAT@
#pragma clang force_cuda_host_device end
#undef memcpy

// The narrow types and their functions live in namespace tlc_hip, and the
// CUDA names the helpers use are macros for them: HIP's own __half (which
// hiprtc always declares) is left alone, and argument-dependent lookup of the
// helpers' unqualified calls (max, min) does not reach the HIP headers'
// global templates. float16 converts through the hardware's _Float16;
// bfloat16 and float8 through the emulator's encoders.
namespace tlc_hip {
struct half {
  unsigned short __x;
};
struct bfloat16 {
  unsigned short __x;
};
// A float8 format, converted through float by the encoder and decoder.
template <uint8_t (*Encode)(float), float (*Decode)(uint8_t)> struct fp8 {
  unsigned char __x;
  fp8() = default;
  template <class T> __device__ explicit fp8(T v) : __x(Encode((float)v)) {}  // arithmetic T
  __device__ explicit operator float() const { return Decode(__x); }
};
typedef fp8<tlc_emu_float::floatToE4M3, tlc_emu_float::e4m3ToFloat> fp8_e4m3;
typedef fp8<tlc_emu_float::floatToE5M2, tlc_emu_float::e5m2ToFloat> fp8_e5m2;

__device__ __forceinline__ _Float16 native(half h) { return __builtin_bit_cast(_Float16, h.__x); }
__device__ __forceinline__ half from_native(_Float16 x) {
  half r;
  r.__x = __builtin_bit_cast(unsigned short, x);
  return r;
}
__device__ __forceinline__ unsigned short half_as_ushort(half h) { return h.__x; }
__device__ __forceinline__ half ushort_as_half(unsigned short u) {
  half r;
  r.__x = u;
  return r;
}
__device__ __forceinline__ float half2float(half h) { return (float)native(h); }
__device__ __forceinline__ half float2half_rn(float f) { return from_native((_Float16)f); }
__device__ __forceinline__ half double2half(double d) { return from_native((_Float16)d); }
__device__ __forceinline__ half habs(half h) { return ushort_as_half(h.__x & 0x7fffu); }
__device__ __forceinline__ half hadd(half a, half b) { return from_native(native(a) + native(b)); }
__device__ __forceinline__ half hsub(half a, half b) { return from_native(native(a) - native(b)); }
__device__ __forceinline__ half hmul(half a, half b) { return from_native(native(a) * native(b)); }

__device__ __forceinline__ float bfloat162float(bfloat16 b) { return tlc_emu_float::bf16ToFloat(b.__x); }
__device__ __forceinline__ bfloat16 float2bfloat16_rn(float f) {
  bfloat16 r;
  r.__x = tlc_emu_float::floatToBf16(f);
  return r;
}
__device__ __forceinline__ bfloat16 double2bfloat16(double d) { return float2bfloat16_rn((float)d); }
__device__ __forceinline__ unsigned short bfloat16_as_ushort(bfloat16 b) { return b.__x; }
__device__ __forceinline__ bfloat16 ushort_as_bfloat16(unsigned short u) {
  bfloat16 r;
  r.__x = u;
  return r;
}
__device__ __forceinline__ bfloat16 habs(bfloat16 b) { return ushort_as_bfloat16(b.__x & 0x7fffu); }
__device__ __forceinline__ bfloat16 hadd(bfloat16 a, bfloat16 b) {
  return float2bfloat16_rn(bfloat162float(a) + bfloat162float(b));
}
__device__ __forceinline__ bfloat16 hsub(bfloat16 a, bfloat16 b) {
  return float2bfloat16_rn(bfloat162float(a) - bfloat162float(b));
}
__device__ __forceinline__ bfloat16 hmul(bfloat16 a, bfloat16 b) {
  return float2bfloat16_rn(bfloat162float(a) * bfloat162float(b));
}
// Pairs of the 16-bit types, for the helpers' pair arithmetic (the HIP
// dialect emits none: compiled only so that the shared helpers compile).
struct half2 {
  half x, y;
};
struct bfloat162 {
  bfloat16 x, y;
};
template <class P, class H> __device__ __forceinline__ P make_pair(H a, H b) { return P{a, b}; }
template <class P> __device__ __forceinline__ P add2(P a, P b) { return P{hadd(a.x, b.x), hadd(a.y, b.y)}; }
template <class P> __device__ __forceinline__ P sub2(P a, P b) { return P{hsub(a.x, b.x), hsub(a.y, b.y)}; }
template <class P> __device__ __forceinline__ P mul2(P a, P b) { return P{hmul(a.x, b.x), hmul(a.y, b.y)}; }
__device__ __forceinline__ half2 fma2(half2 a, half2 b, half2 c) {
  return half2{float2half_rn(half2float(a.x) * half2float(b.x) + half2float(c.x)),
               float2half_rn(half2float(a.y) * half2float(b.y) + half2float(c.y))};
}
template <class P> __device__ __forceinline__ auto low_of(P p) { return p.x; }
template <class P> __device__ __forceinline__ auto high_of(P p) { return p.y; }
}  // namespace tlc_hip

#define __half tlc_hip::half
#define __nv_bfloat16 tlc_hip::bfloat16
#define __nv_fp8_e4m3 tlc_hip::fp8_e4m3
#define __nv_fp8_e5m2 tlc_hip::fp8_e5m2
#define __half_as_ushort tlc_hip::half_as_ushort
#define __ushort_as_half tlc_hip::ushort_as_half
#define __half2float tlc_hip::half2float
#define __float2half_rn tlc_hip::float2half_rn
#define __float2half tlc_hip::float2half_rn
#define __double2half tlc_hip::double2half
#define __bfloat162float tlc_hip::bfloat162float
#define __float2bfloat16_rn tlc_hip::float2bfloat16_rn
#define __double2bfloat16 tlc_hip::double2bfloat16
#define __bfloat16_as_ushort tlc_hip::bfloat16_as_ushort
#define __ushort_as_bfloat16 tlc_hip::ushort_as_bfloat16
#define __habs tlc_hip::habs
#define __hadd tlc_hip::hadd
#define __half2 tlc_hip::half2
#define __nv_bfloat162 tlc_hip::bfloat162
#define __halves2half2 tlc_hip::make_pair<tlc_hip::half2>
#define __halves2bfloat162 tlc_hip::make_pair<tlc_hip::bfloat162>
#define __hadd2 tlc_hip::add2
#define __hsub2 tlc_hip::sub2
#define __hmul2 tlc_hip::mul2
#define __hfma2 tlc_hip::fma2
#define __low2half tlc_hip::low_of
#define __high2half tlc_hip::high_of
#define __low2bfloat16 tlc_hip::low_of
#define __high2bfloat16 tlc_hip::high_of
#define __hsub tlc_hip::hsub
#define __hmul tlc_hip::hmul
// The HIP dialect's spellings of the narrow types (gpu_dialect.h).
typedef tlc_hip::bfloat16 tlc_bfloat16;
typedef tlc_hip::fp8_e4m3 tlc_fp8_e4m3;
typedef tlc_hip::fp8_e5m2 tlc_fp8_e5m2;

// Atomics CUDA has and HIP 5.2 lacks: 16-bit compare-and-swap (on the
// containing 32-bit word) and signed 64-bit max / min.
__device__ __forceinline__ unsigned short atomicCAS(unsigned short* p, unsigned short expected, unsigned short desired) {
  unsigned* word = (unsigned*)((size_t)p & ~(size_t)3);
  const unsigned shift = ((size_t)p & 2) * 8;
  unsigned old = *word;
  while (true) {
    unsigned short cur = (unsigned short)(old >> shift);
    if (cur != expected) return cur;
    unsigned next = (old & ~(0xffffu << shift)) | ((unsigned)desired << shift);
    unsigned seen = atomicCAS(word, old, next);
    if (seen == old) return cur;
    old = seen;
  }
}
__device__ __forceinline__ long long atomicMax(long long* p, long long v) {
  unsigned long long* u = (unsigned long long*)p;
  unsigned long long old = *u;
  while ((long long)old < v) {
    unsigned long long seen = atomicCAS(u, old, (unsigned long long)v);
    if (seen == old) break;
    old = seen;
  }
  return (long long)old;
}
__device__ __forceinline__ long long atomicMin(long long* p, long long v) {
  unsigned long long* u = (unsigned long long*)p;
  unsigned long long old = *u;
  while ((long long)old > v) {
    unsigned long long seen = atomicCAS(u, old, (unsigned long long)v);
    if (seen == old) break;
    old = seen;
  }
  return (long long)old;
}

// CUDA's member-masked shuffles: every lane of the wavefront takes part.
// `width` defaults to CUDA's warp (32 lanes, half a wavefront), so lane
// numbers stay relative to the calling lane's half; width 64 spans the
// wavefront.
template <class T> __device__ __forceinline__ T __shfl_xor_sync(unsigned, T v, int laneMask, int width = 32) {
  return __shfl_xor(v, laneMask, width);
}
template <class T> __device__ __forceinline__ T __shfl_sync(unsigned, T v, int lane, int width = 32) {
  return __shfl(v, lane, width);
}
__device__ __forceinline__ void __syncwarp(unsigned = 0xffffffffu) { __builtin_amdgcn_wave_barrier(); }

// A 32-bit value from another lane of the row by a DPP control word (a
// modifier of the move, no LDS traffic): quad_perm (ctrl < 0x100, lane i of
// each quad reads lane (ctrl >> 2i) & 3 of it), row_mirror (0x140: lane i of
// 16 reads 15 - i), row_half_mirror (0x141: lane i of 8 reads 7 - i). The
// lane-group reductions of tlc_cuda.h take their steps of distance 1 to 8
// from it, and that of distance 16 from tlc_lane_swizzle (TLC_HIP_LANES,
// group_allreduce).
#define TLC_HIP_LANES 1
template <int ctrl> __device__ __forceinline__ int tlc_lane_dpp(int w) {
  return __builtin_amdgcn_update_dpp(w, w, ctrl, 0xF, 0xF, false);
}
// A 32-bit value from another lane of the caller's 32 by ds_swizzle's
// bit mode (pattern bit 15 clear: lane i reads ((i & and) | or) ^ xor, the
// masks in bits 0-4, 5-9 and 10-14): no address, unlike ds_bpermute.
template <int pattern> __device__ __forceinline__ int tlc_lane_swizzle(int w) {
  return __builtin_amdgcn_ds_swizzle(w, pattern);
}
__device__ __forceinline__ size_t __cvta_generic_to_shared(const void* p) {
  return (size_t)(const __attribute__((address_space(3))) char*)p;
}

// @CUDA_HELPERS@

// ---- MFMA (CDNA matrix cores) ---------------------------------------------------
// D = A * B + D over one 64-lane wavefront: each lane passes its E A and E
// B elements (E = 4; 8 for gfx942's int8 and float8 forms, 1 for float32) and its accumulator
// registers (16 for 32x32, 4 for 16x16), in the operand layouts of
// compiler/backends/cuda_emu/isa_mfma.h (lane l holds A[l % M][E * (l / M) +
// v], B[E * (l / N) + v][l % N]).
namespace tlc {
typedef _Float16 mfma_f16x4 __attribute__((ext_vector_type(4)));
typedef short mfma_bf16x4 __attribute__((ext_vector_type(4)));
typedef float mfma_f32x16 __attribute__((ext_vector_type(16)));
typedef float mfma_f32x4 __attribute__((ext_vector_type(4)));
template <class V, class T> __device__ __forceinline__ V mfma_operand(const T* p) {
  V v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
template <class D, class V> __device__ __forceinline__ void mfma_store(D* d, V v) { __builtin_memcpy(d, &v, sizeof v); }
// NAME(d, a, b): D = A * B + D through BUILTIN, the operands and the
// accumulator moved in and out of the builtin's vector types.
#define TLC_MFMA_HELPER(NAME, ACC, IN, BUILTIN, OPERAND, ACCV)                                  \
  __device__ __forceinline__ void NAME(ACC* d, const IN* a, const IN* b) {                      \
    mfma_store(d, BUILTIN(mfma_operand<OPERAND>(a), mfma_operand<OPERAND>(b), mfma_operand<ACCV>(d), 0, 0, 0)); \
  }
TLC_MFMA_HELPER(mfma_32x32x8_f16, float, __half, __builtin_amdgcn_mfma_f32_32x32x8f16, mfma_f16x4, mfma_f32x16)
TLC_MFMA_HELPER(mfma_16x16x16_f16, float, __half, __builtin_amdgcn_mfma_f32_16x16x16f16, mfma_f16x4, mfma_f32x4)
TLC_MFMA_HELPER(mfma_32x32x8_bf16, float, __nv_bfloat16, __builtin_amdgcn_mfma_f32_32x32x8bf16_1k, mfma_bf16x4,
                mfma_f32x16)
TLC_MFMA_HELPER(mfma_16x16x16_bf16, float, __nv_bfloat16, __builtin_amdgcn_mfma_f32_16x16x16bf16_1k, mfma_bf16x4,
                mfma_f32x4)
TLC_MFMA_HELPER(mfma_32x32x2_f32, float, float, __builtin_amdgcn_mfma_f32_32x32x2f32, float, mfma_f32x16)
TLC_MFMA_HELPER(mfma_16x16x4_f32, float, float, __builtin_amdgcn_mfma_f32_16x16x4f32, float, mfma_f32x4)
// int8 with int32 accumulators: gfx90a's forms take 4 elements a lane
// (k = 4 * (l / M) + v), gfx942's, its only ones, 8 (k = 8 * (l / M) + v).
typedef int mfma_i32x16 __attribute__((ext_vector_type(16)));
typedef int mfma_i32x4 __attribute__((ext_vector_type(4)));
#if defined(__gfx90a__)
TLC_MFMA_HELPER(mfma_32x32x8_i8, int, i8, __builtin_amdgcn_mfma_i32_32x32x8i8, int, mfma_i32x16)
TLC_MFMA_HELPER(mfma_16x16x16_i8, int, i8, __builtin_amdgcn_mfma_i32_16x16x16i8, int, mfma_i32x4)
#endif
#if defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
TLC_MFMA_HELPER(mfma_32x32x16_i8, int, i8, __builtin_amdgcn_mfma_i32_32x32x16_i8, long, mfma_i32x16)
TLC_MFMA_HELPER(mfma_16x16x32_i8, int, i8, __builtin_amdgcn_mfma_i32_16x16x32_i8, long, mfma_i32x4)
// float8 (gfx942): v_mfma_f32_{32x32x16,16x16x32}_{fp8_fp8,bf8_bf8} read the
// FNUZ encodings (e4m3fnuz, e5m2fnuz), 8 elements a lane like the int8 forms.
// The helpers take the OCP e4m3 / e5m2 bytes of float8 tensors and hand the
// MFMA the same bits as FNUZ, which are half the values
// (tlc_emu_float::ocpToFnuzHalf: only -0 and NaN / infinity bytes change), so
// they compute D = A * B / 4 + D: the gemm keeps its accumulator at a quarter
// of its value around them (cuda_mfma.cpp), exact but for float32 underflow.
__device__ __forceinline__ long mfma_fnuz_operand(const void* p, int expBits) {
  unsigned long long w;
  __builtin_memcpy(&w, p, sizeof w);
  return (long)tlc_emu_float::ocpToFnuzHalf(w, expBits);
}
#define TLC_MFMA_FP8_HELPER(NAME, IN, EXP_BITS, BUILTIN, ACCV)                                         \
  __device__ __forceinline__ void NAME(float* d, const IN* a, const IN* b) {                             \
    mfma_store(d, BUILTIN(mfma_fnuz_operand(a, EXP_BITS), mfma_fnuz_operand(b, EXP_BITS), mfma_operand<ACCV>(d), 0, \
                          0, 0));                                                                        \
  }
TLC_MFMA_FP8_HELPER(mfma_32x32x16_e4m3, __nv_fp8_e4m3, 4, __builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8, mfma_f32x16)
TLC_MFMA_FP8_HELPER(mfma_16x16x32_e4m3, __nv_fp8_e4m3, 4, __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8, mfma_f32x4)
TLC_MFMA_FP8_HELPER(mfma_32x32x16_e5m2, __nv_fp8_e5m2, 5, __builtin_amdgcn_mfma_f32_32x32x16_bf8_bf8, mfma_f32x16)
TLC_MFMA_FP8_HELPER(mfma_16x16x32_e5m2, __nv_fp8_e5m2, 5, __builtin_amdgcn_mfma_f32_16x16x32_bf8_bf8, mfma_f32x4)
#undef TLC_MFMA_FP8_HELPER
#endif
#undef TLC_MFMA_HELPER
}  // namespace tlc
