// Host prelude for emulated CUDA kernels.
//
// The emulator (compiler/backends/cuda_emu) compiles the very CUDA C source
// tlc hands to NVRTC as host C++, with this header force-included first and
// thread-sanitizer instrumentation turned on. This header supplies what NVRTC
// would: the CUDA keywords (__global__, __shared__, ...), built-in variables
// (threadIdx, blockIdx, ...), vector and narrow-float types with arithmetic,
// math intrinsics, warp collectives, atomics, and the PTX-level building
// blocks (tlc_emu::mma, ldmatrix, cp_async, ...) that the host versions of
// the device helper headers (runtime/cuda_emu/device/) are written in.
//
// Assumes: single-threaded cooperative execution (one GPU thread runs at a
// time as a fiber; the emulator switches at barriers, collectives and waits),
// blocks one after another, and `tlc_emu_host` / `tlc_emu_self` set by the
// emulator before any kernel runs.
// Guarantees: every memory access of kernel code is reported to the emulator
// (the __tsan_* hooks below), and every operation with GPU semantics goes
// through tlc_emu_api with the caller's return address for line mapping.
#pragma once

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <type_traits>
#include <utility>

#include "emu_abi.h"
#include "emu_float.h"

#define TLC_EMU_HOOK extern "C" __attribute__((no_sanitize_thread, visibility("default"), used))
#define TLC_EMU_PC __builtin_return_address(0)
#define TLC_EMU_NOINLINE __attribute__((noinline, no_sanitize_thread))

extern "C" {
__attribute__((visibility("default"))) tlc_emu_api* tlc_emu_host = nullptr;
__attribute__((visibility("default"))) tlc_emu_thread_state* tlc_emu_self = nullptr;
// All of shared memory (static __shared__ variables and the dynamic part) is
// one section, so the emulator knows its bounds and 32-bit shared addresses
// (__cvta_generic_to_shared) are offsets from its start.
#define TLC_EMU_SHARED_SECTION __attribute__((section("tlc_emu_shared")))
#ifndef TLC_EMU_DYN_SMEM_CAPACITY
#define TLC_EMU_DYN_SMEM_CAPACITY (232448)
#endif
__attribute__((visibility("default"), aligned(1024))) TLC_EMU_SHARED_SECTION unsigned char
    tlc_emu_dyn_smem_storage[TLC_EMU_DYN_SMEM_CAPACITY];
__attribute__((visibility("default"))) unsigned char* tlc_emu_dyn_smem = tlc_emu_dyn_smem_storage;
extern unsigned char __start_tlc_emu_shared[];
extern unsigned char __stop_tlc_emu_shared[];
__attribute__((visibility("default"))) unsigned char* tlc_emu_shared_begin() {
  return __start_tlc_emu_shared;
}
__attribute__((visibility("default"))) unsigned char* tlc_emu_shared_end() {
  return __stop_tlc_emu_shared;
}
}

// ---------------------------------------------------------------------------
// Memory-access hooks: the compiler's -fsanitize=thread instrumentation calls
// these for every load and store of kernel code.

#define TLC_EMU_RW_HOOKS(N)                                                                \
  TLC_EMU_HOOK void __tsan_read##N(void* p) { tlc_emu_host->access(p, N, TLC_EMU_READ, TLC_EMU_PC); } \
  TLC_EMU_HOOK void __tsan_write##N(void* p) { tlc_emu_host->access(p, N, TLC_EMU_WRITE, TLC_EMU_PC); } \
  TLC_EMU_HOOK void __tsan_unaligned_read##N(void* p) {                                    \
    tlc_emu_host->access(p, N, TLC_EMU_READ, TLC_EMU_PC);                                   \
  }                                                                                        \
  TLC_EMU_HOOK void __tsan_unaligned_write##N(void* p) {                                   \
    tlc_emu_host->access(p, N, TLC_EMU_WRITE, TLC_EMU_PC);                                  \
  }                                                                                        \
  TLC_EMU_HOOK void __tsan_volatile_read##N(void* p) {                                     \
    tlc_emu_host->access(p, N, TLC_EMU_READ, TLC_EMU_PC);                                   \
  }                                                                                        \
  TLC_EMU_HOOK void __tsan_volatile_write##N(void* p) {                                    \
    tlc_emu_host->access(p, N, TLC_EMU_WRITE, TLC_EMU_PC);                                  \
  }
TLC_EMU_RW_HOOKS(1)
TLC_EMU_RW_HOOKS(2)
TLC_EMU_RW_HOOKS(4)
TLC_EMU_RW_HOOKS(8)
TLC_EMU_RW_HOOKS(16)
#undef TLC_EMU_RW_HOOKS
TLC_EMU_HOOK void __tsan_read_range(void* p, unsigned long n) {
  tlc_emu_host->access(p, n, TLC_EMU_READ, TLC_EMU_PC);
}
TLC_EMU_HOOK void __tsan_write_range(void* p, unsigned long n) {
  tlc_emu_host->access(p, n, TLC_EMU_WRITE, TLC_EMU_PC);
}
TLC_EMU_HOOK void __tsan_init() {}
// The guard byte of a function-scope static with a dynamic initializer
// (e.g. a __shared__ array of a class type) is read with an atomic load.
TLC_EMU_HOOK char __tsan_atomic8_load(const volatile char* a, int) { return *a; }
TLC_EMU_HOOK void __tsan_atomic8_store(volatile char* a, char v, int) { *a = v; }
TLC_EMU_HOOK void __tsan_func_entry(void*) {}
TLC_EMU_HOOK void __tsan_func_exit() {}
TLC_EMU_HOOK void __tsan_vptr_update(void*, void*) {}
TLC_EMU_HOOK void __tsan_vptr_read(void*) {}

// ---------------------------------------------------------------------------
// CUDA keywords.

#define __global__
#define __device__
#define __host__
#define __noinline__ __attribute__((noinline))
#define __forceinline__ inline __attribute__((always_inline))
#define __restrict__ __restrict
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define __constant__ static
#define __grid_constant__
#define __shared__ static TLC_EMU_SHARED_SECTION
#define __CUDA_ARCH__ 800
// The Hopper helpers of tlc_cuda.h (sm_90a only on a GPU) are emulated too.
#define __CUDA_ARCH_FEAT_SM90_ALL 1
#define __CUDACC_RTC__ 1
#define __TLC_CUDA_EMULATED__ 1
#ifndef CUDART_INF_F
#define CUDART_INF_F __builtin_huge_valf()
#endif

// ---------------------------------------------------------------------------
// Built-in variables and vector types.

struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return uint3{x, y, z}; }
};
#define threadIdx (*reinterpret_cast<const uint3*>(&tlc_emu_self->thread_idx))
#define blockIdx (*reinterpret_cast<const uint3*>(&tlc_emu_self->block_idx))
#define blockDim (*reinterpret_cast<const dim3*>(&tlc_emu_self->block_dim))
#define gridDim (*reinterpret_cast<const dim3*>(&tlc_emu_self->grid_dim))
static constexpr int warpSize = 32;

#define TLC_EMU_VEC2(T, N, A)                      \
  struct __attribute__((aligned(A))) N##2 {        \
    T x, y;                                        \
  };                                               \
  inline N##2 make_##N##2(T x, T y) { return N##2{x, y}; }
#define TLC_EMU_VEC4(T, N, A)                      \
  struct __attribute__((aligned(A))) N##4 {        \
    T x, y, z, w;                                  \
  };                                               \
  inline N##4 make_##N##4(T x, T y, T z, T w) { return N##4{x, y, z, w}; }
TLC_EMU_VEC2(signed char, char, 2)
TLC_EMU_VEC4(signed char, char, 4)
TLC_EMU_VEC2(unsigned char, uchar, 2)
TLC_EMU_VEC4(unsigned char, uchar, 4)
TLC_EMU_VEC2(short, short, 4)
TLC_EMU_VEC4(short, short, 8)
TLC_EMU_VEC2(unsigned short, ushort, 4)
TLC_EMU_VEC4(unsigned short, ushort, 8)
TLC_EMU_VEC2(int, int, 8)
TLC_EMU_VEC4(int, int, 16)
TLC_EMU_VEC2(unsigned, uint, 8)
TLC_EMU_VEC4(unsigned, uint, 16)
TLC_EMU_VEC2(float, float, 8)
TLC_EMU_VEC4(float, float, 16)
TLC_EMU_VEC2(double, double, 16)
TLC_EMU_VEC2(long long, longlong, 16)
TLC_EMU_VEC2(unsigned long long, ulonglong, 16)
#undef TLC_EMU_VEC2
#undef TLC_EMU_VEC4
struct __attribute__((aligned(16))) float3_unused_ {};
struct float3 {
  float x, y, z;
};
inline float3 make_float3(float x, float y, float z) { return float3{x, y, z}; }

// ---------------------------------------------------------------------------
// Narrow float types. Arithmetic happens in float and rounds back, as the
// CUDA headers' operators do on sm_80.

struct __half {
  unsigned short __x;
  __half() = default;
  __half(float f) : __x(tlc_emu_float::floatToHalf(f)) {}
  __half(double f) : __x(tlc_emu_float::floatToHalf((float)f)) {}
  __half(int v) : __x(tlc_emu_float::floatToHalf((float)v)) {}
  __half(unsigned v) : __x(tlc_emu_float::floatToHalf((float)v)) {}
  __half(long long v) : __x(tlc_emu_float::floatToHalf((float)v)) {}
  operator float() const { return tlc_emu_float::halfToFloat(__x); }
};
struct __nv_bfloat16 {
  unsigned short __x;
  __nv_bfloat16() = default;
  __nv_bfloat16(float f) : __x(tlc_emu_float::floatToBf16(f)) {}
  __nv_bfloat16(double f) : __x(tlc_emu_float::floatToBf16((float)f)) {}
  __nv_bfloat16(int v) : __x(tlc_emu_float::floatToBf16((float)v)) {}
  __nv_bfloat16(unsigned v) : __x(tlc_emu_float::floatToBf16((float)v)) {}
  __nv_bfloat16(long long v) : __x(tlc_emu_float::floatToBf16((float)v)) {}
  operator float() const { return tlc_emu_float::bf16ToFloat(__x); }
};
struct __nv_fp8_e4m3 {
  unsigned char __x;
  __nv_fp8_e4m3() = default;
  explicit __nv_fp8_e4m3(float f) : __x(tlc_emu_float::floatToE4M3(f)) {}
  explicit __nv_fp8_e4m3(double f) : __x(tlc_emu_float::floatToE4M3((float)f)) {}
  explicit __nv_fp8_e4m3(__half h) : __x(tlc_emu_float::floatToE4M3((float)h)) {}
  explicit __nv_fp8_e4m3(__nv_bfloat16 h) : __x(tlc_emu_float::floatToE4M3((float)h)) {}
  explicit __nv_fp8_e4m3(int v) : __x(tlc_emu_float::floatToE4M3((float)v)) {}
  operator float() const { return tlc_emu_float::e4m3ToFloat(__x); }
};
struct __nv_fp8_e5m2 {
  unsigned char __x;
  __nv_fp8_e5m2() = default;
  explicit __nv_fp8_e5m2(float f) : __x(tlc_emu_float::floatToE5M2(f)) {}
  explicit __nv_fp8_e5m2(double f) : __x(tlc_emu_float::floatToE5M2((float)f)) {}
  explicit __nv_fp8_e5m2(__half h) : __x(tlc_emu_float::floatToE5M2((float)h)) {}
  explicit __nv_fp8_e5m2(__nv_bfloat16 h) : __x(tlc_emu_float::floatToE5M2((float)h)) {}
  explicit __nv_fp8_e5m2(int v) : __x(tlc_emu_float::floatToE5M2((float)v)) {}
  operator float() const { return tlc_emu_float::e5m2ToFloat(__x); }
};
typedef __half half;
typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_fp8_e4m3 fp8_e4m3;
typedef __nv_fp8_e5m2 fp8_e5m2;

#define TLC_EMU_NARROW_OPS(T)                                                           \
  inline T operator+(T a, T b) { return T((float)a + (float)b); }                       \
  inline T operator-(T a, T b) { return T((float)a - (float)b); }                       \
  inline T operator*(T a, T b) { return T((float)a * (float)b); }                       \
  inline T operator/(T a, T b) { return T((float)a / (float)b); }                       \
  inline T operator-(T a) {                                                             \
    T r;                                                                                \
    r.__x = a.__x ^ 0x8000;                                                             \
    return r;                                                                           \
  }                                                                                     \
  inline T& operator+=(T& a, T b) { return a = a + b; }                                 \
  inline T& operator-=(T& a, T b) { return a = a - b; }                                 \
  inline T& operator*=(T& a, T b) { return a = a * b; }                                 \
  inline T& operator/=(T& a, T b) { return a = a / b; }                                 \
  inline bool operator==(T a, T b) { return (float)a == (float)b; }                     \
  inline bool operator!=(T a, T b) { return (float)a != (float)b; }                     \
  inline bool operator<(T a, T b) { return (float)a < (float)b; }                       \
  inline bool operator<=(T a, T b) { return (float)a <= (float)b; }                     \
  inline bool operator>(T a, T b) { return (float)a > (float)b; }                       \
  inline bool operator>=(T a, T b) { return (float)a >= (float)b; }
TLC_EMU_NARROW_OPS(__half)
TLC_EMU_NARROW_OPS(__nv_bfloat16)
#undef TLC_EMU_NARROW_OPS

struct __half2 {
  __half x, y;
};
struct __nv_bfloat162 {
  __nv_bfloat16 x, y;
};
typedef __half2 half2;
typedef __nv_bfloat162 nv_bfloat162;

inline __half __float2half(float f) { return __half(f); }
inline __half __float2half_rn(float f) { return __half(f); }
inline __half __double2half(double f) { return __half((float)f); }
inline __nv_bfloat16 __double2bfloat16(double f) { return __nv_bfloat16((float)f); }
inline __nv_bfloat16 __habs(__nv_bfloat16 a) {
  a.__x &= 0x7fff;
  return a;
}
inline float __half2float(__half h) { return (float)h; }
inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
inline float __bfloat162float(__nv_bfloat16 h) { return (float)h; }
inline __half __hadd(__half a, __half b) { return a + b; }
inline __half __hsub(__half a, __half b) { return a - b; }
inline __half __hmul(__half a, __half b) { return a * b; }
inline __half __hdiv(__half a, __half b) { return a / b; }
inline __half __hfma(__half a, __half b, __half c) { return __half(fmaf(a, b, c)); }
inline __half __hneg(__half a) { return -a; }
inline __half __habs(__half a) {
  a.__x &= 0x7fff;
  return a;
}
inline __half __hmax(__half a, __half b) { return __half(fmaxf(a, b)); }
inline __half __hmin(__half a, __half b) { return __half(fminf(a, b)); }
inline __nv_bfloat16 __hadd(__nv_bfloat16 a, __nv_bfloat16 b) { return a + b; }
inline __nv_bfloat16 __hsub(__nv_bfloat16 a, __nv_bfloat16 b) { return a - b; }
inline __nv_bfloat16 __hmul(__nv_bfloat16 a, __nv_bfloat16 b) { return a * b; }
inline __nv_bfloat16 __hfma(__nv_bfloat16 a, __nv_bfloat16 b, __nv_bfloat16 c) {
  return __nv_bfloat16(fmaf(a, b, c));
}
inline __nv_bfloat16 __hmax(__nv_bfloat16 a, __nv_bfloat16 b) { return __nv_bfloat16(fmaxf(a, b)); }
inline __nv_bfloat16 __hmin(__nv_bfloat16 a, __nv_bfloat16 b) { return __nv_bfloat16(fminf(a, b)); }
inline __half hexp(__half a) { return __half(expf(a)); }
inline __half hsqrt(__half a) { return __half(sqrtf(a)); }
inline __half2 __halves2half2(__half a, __half b) { return __half2{a, b}; }
inline __half2 __floats2half2_rn(float a, float b) { return __half2{__half(a), __half(b)}; }
inline __half2 __float22half2_rn(float2 v) { return __half2{__half(v.x), __half(v.y)}; }
inline float2 __half22float2(__half2 v) { return float2{(float)v.x, (float)v.y}; }
inline __half __low2half(__half2 v) { return v.x; }
inline __half __high2half(__half2 v) { return v.y; }
inline __half2 __hadd2(__half2 a, __half2 b) { return __half2{a.x + b.x, a.y + b.y}; }
inline __half2 __hsub2(__half2 a, __half2 b) { return __half2{a.x - b.x, a.y - b.y}; }
inline __half2 __hmul2(__half2 a, __half2 b) { return __half2{a.x * b.x, a.y * b.y}; }
inline __half2 __hfma2(__half2 a, __half2 b, __half2 c) {
  return __half2{__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)};
}
inline __half2 __hmax2(__half2 a, __half2 b) { return __half2{__hmax(a.x, b.x), __hmax(a.y, b.y)}; }
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) {
  return __nv_bfloat162{__nv_bfloat16(a), __nv_bfloat16(b)};
}
inline __nv_bfloat162 __float22bfloat162_rn(float2 v) {
  return __nv_bfloat162{__nv_bfloat16(v.x), __nv_bfloat16(v.y)};
}
inline float2 __bfloat1622float2(__nv_bfloat162 v) { return float2{(float)v.x, (float)v.y}; }
inline __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) {
  return __nv_bfloat162{a, b};
}
inline __nv_bfloat16 __low2bfloat16(__nv_bfloat162 v) { return v.x; }
inline __nv_bfloat16 __high2bfloat16(__nv_bfloat162 v) { return v.y; }
inline __nv_bfloat162 __hadd2(__nv_bfloat162 a, __nv_bfloat162 b) { return __nv_bfloat162{a.x + b.x, a.y + b.y}; }
inline __nv_bfloat162 __hsub2(__nv_bfloat162 a, __nv_bfloat162 b) { return __nv_bfloat162{a.x - b.x, a.y - b.y}; }
inline __nv_bfloat162 __hmul2(__nv_bfloat162 a, __nv_bfloat162 b) { return __nv_bfloat162{a.x * b.x, a.y * b.y}; }
inline unsigned short __half_as_ushort(__half h) { return h.__x; }
inline __half __ushort_as_half(unsigned short u) {
  __half h;
  h.__x = u;
  return h;
}
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.__x; }
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short u) {
  __nv_bfloat16 h;
  h.__x = u;
  return h;
}
inline bool __hisnan(__half h) { return isnan((float)h); }
inline bool __hisinf(__half h) { return isinf((float)h); }

// ---------------------------------------------------------------------------
// Integer and float intrinsics.

template <class To, class From>
inline To tlc_emu_bit_cast(From f) {
  static_assert(sizeof(To) == sizeof(From), "bit cast of different sizes");
  To t;
  memcpy(&t, &f, sizeof(To));
  return t;
}
inline float __int_as_float(int v) { return tlc_emu_bit_cast<float>(v); }
inline float __uint_as_float(unsigned v) { return tlc_emu_bit_cast<float>(v); }
inline int __float_as_int(float v) { return tlc_emu_bit_cast<int>(v); }
inline unsigned __float_as_uint(float v) { return tlc_emu_bit_cast<unsigned>(v); }
inline double __longlong_as_double(long long v) { return tlc_emu_bit_cast<double>(v); }
inline long long __double_as_longlong(double v) { return tlc_emu_bit_cast<long long>(v); }
inline int __popc(unsigned v) { return __builtin_popcount(v); }
inline int __popcll(unsigned long long v) { return __builtin_popcountll(v); }
inline int __clz(int v) { return v == 0 ? 32 : __builtin_clz((unsigned)v); }
inline int __clzll(long long v) { return v == 0 ? 64 : __builtin_clzll((unsigned long long)v); }
inline int __ffs(int v) { return __builtin_ffs(v); }
inline int __ffsll(long long v) { return __builtin_ffsll(v); }
inline unsigned __brev(unsigned v) {
  unsigned r = 0;
  for (int i = 0; i < 32; ++i) r |= ((v >> i) & 1u) << (31 - i);
  return r;
}
inline unsigned __umulhi(unsigned a, unsigned b) {
  return (unsigned)(((unsigned long long)a * b) >> 32);
}
inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
inline int __mul24(int a, int b) { return a * b; }
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  unsigned long long v = ((unsigned long long)y << 32) | x;
  unsigned r = 0;
  for (int i = 0; i < 4; ++i) {
    unsigned sel = (s >> (4 * i)) & 7;
    r |= (unsigned)((v >> (8 * sel)) & 0xff) << (8 * i);
  }
  return r;
}
inline float __expf(float x) { return expf(x); }
inline float __exp10f(float x) { return powf(10.0f, x); }
inline float __logf(float x) { return logf(x); }
inline float __log2f(float x) { return log2f(x); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __tanf(float x) { return tanf(x); }
inline float __powf(float a, float b) { return powf(a, b); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __frcp_rn(float a) { return 1.0f / a; }
inline float __fsqrt_rn(float a) { return sqrtf(a); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline int __float2int_rn(float x) { return (int)nearbyintf(x); }
inline int __float2int_rz(float x) { return (int)x; }
inline float __int2float_rn(int x) { return (float)x; }
inline float exp10f(float x) { return powf(10.0f, x); }

template <class A, class B>
inline auto max(A a, B b) -> typename std::common_type<A, B>::type {
  using T = typename std::common_type<A, B>::type;
  return (T)a > (T)b ? (T)a : (T)b;
}
template <class A, class B>
inline auto min(A a, B b) -> typename std::common_type<A, B>::type {
  using T = typename std::common_type<A, B>::type;
  return (T)a < (T)b ? (T)a : (T)b;
}
inline float max(float a, float b) { return fmaxf(a, b); }
inline float min(float a, float b) { return fminf(a, b); }
inline double max(double a, double b) { return fmax(a, b); }
inline double min(double a, double b) { return fmin(a, b); }

template <class T>
inline T __ldg(const T* p) { return *p; }
template <class T>
inline T __ldcg(const T* p) { return *p; }
template <class T>
inline T __ldca(const T* p) { return *p; }
template <class T>
inline T __ldcs(const T* p) { return *p; }
template <class T>
inline T __ldlu(const T* p) { return *p; }
template <class T>
inline void __stcg(T* p, T v) { *p = v; }
template <class T>
inline void __stcs(T* p, T v) { *p = v; }
template <class T>
inline void __stwt(T* p, T v) { *p = v; }

// ---------------------------------------------------------------------------
// Synchronization, warp collectives, atomics. Each is a call into the
// emulator, made from a non-inlined function so its return address names the
// kernel line.

inline void __threadfence() {}
inline void __threadfence_block() {}
inline void __threadfence_system() {}
TLC_EMU_NOINLINE void __syncthreads() { tlc_emu_host->bar_sync(0, 0, TLC_EMU_PC); }
TLC_EMU_NOINLINE void __syncwarp(unsigned mask = 0xffffffffu) {
  tlc_emu_host->warp_sync(mask, TLC_EMU_PC);
}
TLC_EMU_NOINLINE int __syncthreads_count(int pred) {
  return tlc_emu_host->bar_red(TLC_EMU_BAR_RED_POPC, pred, TLC_EMU_PC);
}
TLC_EMU_NOINLINE int __syncthreads_and(int pred) {
  return tlc_emu_host->bar_red(TLC_EMU_BAR_RED_AND, pred, TLC_EMU_PC);
}
TLC_EMU_NOINLINE int __syncthreads_or(int pred) {
  return tlc_emu_host->bar_red(TLC_EMU_BAR_RED_OR, pred, TLC_EMU_PC);
}
TLC_EMU_NOINLINE long long clock64() { return tlc_emu_host->clock(); }
TLC_EMU_NOINLINE long long clock() { return tlc_emu_host->clock(); }
TLC_EMU_NOINLINE void __trap() { tlc_emu_host->trap("__trap() executed", TLC_EMU_PC); }
TLC_EMU_NOINLINE void __brkpt() { tlc_emu_host->trap("__brkpt() executed", TLC_EMU_PC); }
TLC_EMU_NOINLINE void tlc_emu_assert_fail(const char* expr, const char* file, int line) {
  char buf[512];
  snprintf(buf, sizeof buf, "assertion `%s` failed (%s:%d)", expr, file, line);
  tlc_emu_host->trap(buf, TLC_EMU_PC);
}
#undef assert
#define assert(e) ((e) ? (void)0 : tlc_emu_assert_fail(#e, __FILE__, __LINE__))

namespace tlc_emu {

TLC_EMU_NOINLINE uint32_t shfl32(int mode, unsigned mask, uint32_t v, int arg, int width,
                                 const void* pc) {
  return tlc_emu_host->shfl(mode, mask, v, arg, width, nullptr, pc);
}
template <class T>
inline T shfl(int mode, unsigned mask, T v, int arg, int width, const void* pc) {
  static_assert(sizeof(T) <= 16 && sizeof(T) % 2 == 0 || sizeof(T) == 1, "shuffle type");
  if constexpr (sizeof(T) <= 4) {
    uint32_t u = 0;
    memcpy(&u, &v, sizeof(T));
    u = shfl32(mode, mask, u, arg, width, pc);
    T r;
    memcpy(&r, &u, sizeof(T));
    return r;
  } else {
    constexpr int words = (sizeof(T) + 3) / 4;
    uint32_t u[words] = {};
    memcpy(u, &v, sizeof(T));
    for (int i = 0; i < words; ++i) u[i] = shfl32(mode, mask, u[i], arg, width, pc);
    T r;
    memcpy(&r, u, sizeof(T));
    return r;
  }
}

}  // namespace tlc_emu

#define TLC_EMU_SHFL_FN(Name, Mode)                                                   \
  template <class T>                                                                 \
  __attribute__((noinline)) T Name(unsigned mask, T v, int arg, int width = 32) {    \
    return tlc_emu::shfl(Mode, mask, v, arg, width, TLC_EMU_PC);                     \
  }
TLC_EMU_SHFL_FN(__shfl_sync, TLC_EMU_SHFL_IDX)
TLC_EMU_SHFL_FN(__shfl_up_sync, TLC_EMU_SHFL_UP)
TLC_EMU_SHFL_FN(__shfl_down_sync, TLC_EMU_SHFL_DOWN)
TLC_EMU_SHFL_FN(__shfl_xor_sync, TLC_EMU_SHFL_XOR)
#undef TLC_EMU_SHFL_FN

TLC_EMU_NOINLINE unsigned __ballot_sync(unsigned mask, int pred) {
  return tlc_emu_host->vote(TLC_EMU_VOTE_BALLOT, mask, pred, TLC_EMU_PC);
}
TLC_EMU_NOINLINE int __all_sync(unsigned mask, int pred) {
  return (int)tlc_emu_host->vote(TLC_EMU_VOTE_ALL, mask, pred, TLC_EMU_PC);
}
TLC_EMU_NOINLINE int __any_sync(unsigned mask, int pred) {
  return (int)tlc_emu_host->vote(TLC_EMU_VOTE_ANY, mask, pred, TLC_EMU_PC);
}
TLC_EMU_NOINLINE unsigned __activemask() {
  tlc_emu_host->trap("__activemask has no meaning under the emulator's scheduling", TLC_EMU_PC);
  return 0;
}

namespace tlc_emu {
template <class T>
inline uint64_t toBits(T v) {
  uint64_t u = 0;
  memcpy(&u, &v, sizeof(T));
  return u;
}
template <class T>
inline T fromBits(uint64_t u) {
  T v;
  memcpy(&v, &u, sizeof(T));
  return v;
}
template <class T>
constexpr int atomType() {
  if constexpr (std::is_same_v<T, int>) return TLC_EMU_TY_S32;
  else if constexpr (std::is_same_v<T, unsigned>) return TLC_EMU_TY_U32;
  else if constexpr (std::is_same_v<T, long long>) return TLC_EMU_TY_S64;
  else if constexpr (std::is_same_v<T, unsigned long long>) return TLC_EMU_TY_U64;
  else if constexpr (std::is_same_v<T, long>) return TLC_EMU_TY_S64;
  else if constexpr (std::is_same_v<T, unsigned long>) return TLC_EMU_TY_U64;
  else if constexpr (std::is_same_v<T, float>) return TLC_EMU_TY_F32;
  else if constexpr (std::is_same_v<T, double>) return TLC_EMU_TY_F64;
  else if constexpr (std::is_same_v<T, __half>) return TLC_EMU_TY_F16;
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return TLC_EMU_TY_BF16;
  else if constexpr (std::is_same_v<T, __half2>) return TLC_EMU_TY_F16X2;
  else if constexpr (std::is_same_v<T, __nv_bfloat162>) return TLC_EMU_TY_BF16X2;
  else if constexpr (std::is_same_v<T, unsigned short>) return TLC_EMU_TY_U16;
  else return -1;
}
template <class T>
TLC_EMU_NOINLINE T atomic(int op, T* addr, T v, T cmp, const void* pc) {
  static_assert(atomType<T>() >= 0, "atomic on an unsupported type");
  return fromBits<T>(tlc_emu_host->atomic(op, atomType<T>(), (void*)addr, toBits(v), toBits(cmp), pc));
}
}  // namespace tlc_emu

#define TLC_EMU_ATOMIC_FN(Name, Op)                                               \
  template <class T>                                                             \
  __attribute__((noinline)) T Name(T* addr, T v) {                               \
    return tlc_emu::atomic<T>(Op, addr, v, v, TLC_EMU_PC);                        \
  }                                                                              \
  template <class T>                                                             \
  __attribute__((noinline)) T Name##_block(T* addr, T v) {                       \
    return tlc_emu::atomic<T>(Op, addr, v, v, TLC_EMU_PC);                        \
  }                                                                              \
  template <class T>                                                             \
  __attribute__((noinline)) T Name##_system(T* addr, T v) {                      \
    return tlc_emu::atomic<T>(Op, addr, v, v, TLC_EMU_PC);                        \
  }
TLC_EMU_ATOMIC_FN(atomicAdd, TLC_EMU_ATOM_ADD)
TLC_EMU_ATOMIC_FN(atomicMin, TLC_EMU_ATOM_MIN)
TLC_EMU_ATOMIC_FN(atomicMax, TLC_EMU_ATOM_MAX)
TLC_EMU_ATOMIC_FN(atomicExch, TLC_EMU_ATOM_EXCH)
TLC_EMU_ATOMIC_FN(atomicAnd, TLC_EMU_ATOM_AND)
TLC_EMU_ATOMIC_FN(atomicOr, TLC_EMU_ATOM_OR)
TLC_EMU_ATOMIC_FN(atomicXor, TLC_EMU_ATOM_XOR)
TLC_EMU_ATOMIC_FN(atomicInc, TLC_EMU_ATOM_INC)
TLC_EMU_ATOMIC_FN(atomicDec, TLC_EMU_ATOM_DEC)
#undef TLC_EMU_ATOMIC_FN
template <class T>
__attribute__((noinline)) T atomicSub(T* addr, T v) {
  return tlc_emu::atomic<T>(TLC_EMU_ATOM_ADD, addr, (T)(-v), (T)(-v), TLC_EMU_PC);
}
template <class T>
__attribute__((noinline)) T atomicCAS(T* addr, T compare, T v) {
  return tlc_emu::atomic<T>(TLC_EMU_ATOM_CAS, addr, v, compare, TLC_EMU_PC);
}

// ---------------------------------------------------------------------------
// PTX-level building blocks for the host versions of the device helpers.
// Shared-memory addresses (as from __cvta_generic_to_shared) are 32-bit
// offsets from the start of the shared section.

inline unsigned long long __cvta_generic_to_shared(const void* p) {
  return (unsigned long long)((const unsigned char*)p - __start_tlc_emu_shared);
}
inline void* __cvta_shared_to_generic(unsigned long long a) { return __start_tlc_emu_shared + a; }
inline bool __isShared(const void* p) {
  return (const unsigned char*)p >= __start_tlc_emu_shared &&
         (const unsigned char*)p < __stop_tlc_emu_shared;
}
inline bool __isGlobal(const void* p) { return !__isShared(p); }

namespace tlc_emu {

inline void* smem_ptr(uint32_t shared_addr) { return __start_tlc_emu_shared + shared_addr; }

// mma.sync.aligned (kind: TLC_EMU_MMA_*); fragments are 32-bit registers.
TLC_EMU_NOINLINE void mma(int kind, uint32_t* d, const uint32_t* a, const uint32_t* b,
                          const uint32_t* c) {
  tlc_emu_host->mma(kind, d, a, b, c, TLC_EMU_PC);
}
// mma with float accumulators given as float arrays.
TLC_EMU_NOINLINE void mma_f32(int kind, float* d, const uint32_t* a, const uint32_t* b,
                              const float* c) {
  tlc_emu_host->mma(kind, reinterpret_cast<uint32_t*>(d), a, b,
                    reinterpret_cast<const uint32_t*>(c), TLC_EMU_PC);
}
TLC_EMU_NOINLINE void ldmatrix(int num, bool trans, uint32_t* dst, const void* row_addr) {
  tlc_emu_host->ldmatrix(num, trans ? 1 : 0, dst, row_addr, TLC_EMU_PC);
}
TLC_EMU_NOINLINE void stmatrix(int num, bool trans, const uint32_t* src, void* row_addr) {
  tlc_emu_host->stmatrix(num, trans ? 1 : 0, src, row_addr, TLC_EMU_PC);
}
TLC_EMU_NOINLINE void cp_async(void* smem_dst, const void* gmem_src, int cp_size, int src_size) {
  tlc_emu_host->cp_async(smem_dst, gmem_src, cp_size, src_size, TLC_EMU_PC);
}
TLC_EMU_NOINLINE void cp_async_commit() { tlc_emu_host->cp_async_commit(TLC_EMU_PC); }
TLC_EMU_NOINLINE void cp_async_wait(int n) { tlc_emu_host->cp_async_wait(n, TLC_EMU_PC); }
TLC_EMU_NOINLINE void trap(const char* message) { tlc_emu_host->trap(message, TLC_EMU_PC); }

// Hopper: mbarriers, tensor copies, wgmma, setmaxnreg, named barriers.
TLC_EMU_NOINLINE void bar_sync(unsigned id, unsigned count) { tlc_emu_host->bar_sync(id, count, TLC_EMU_PC); }
TLC_EMU_NOINLINE void mbar_init(void* bar, unsigned count) { tlc_emu_host->mbar_init(bar, count, TLC_EMU_PC); }
TLC_EMU_NOINLINE void mbar_arrive(void* bar, unsigned expect_tx) {
  tlc_emu_host->mbar_arrive(bar, expect_tx, TLC_EMU_PC);
}
TLC_EMU_NOINLINE void mbar_wait(void* bar, unsigned parity) { tlc_emu_host->mbar_wait(bar, parity, TLC_EMU_PC); }
TLC_EMU_NOINLINE void fence(int kind) { tlc_emu_host->fence(kind, TLC_EMU_PC); }
TLC_EMU_NOINLINE void tma_load(int rank, void* smem, const void* map, void* bar, int c0, int c1 = 0, int c2 = 0,
                               int c3 = 0, int c4 = 0) {
  const int coords[5] = {c0, c1, c2, c3, c4};
  tlc_emu_host->tma_load(rank, smem, map, bar, coords, TLC_EMU_PC);
}
TLC_EMU_NOINLINE void tma_load_im2col(void* smem, const void* map, void* bar, int c, int w, int h, int n,
                                      unsigned short off_w, unsigned short off_h) {
  const int coords[4] = {c, w, h, n};
  const uint16_t offsets[2] = {off_w, off_h};
  tlc_emu_host->tma_load_im2col(smem, map, bar, coords, offsets, TLC_EMU_PC);
}
TLC_EMU_NOINLINE void tma_store(int rank, const void* map, const void* smem, int c0, int c1 = 0, int c2 = 0,
                                int c3 = 0, int c4 = 0) {
  const int coords[5] = {c0, c1, c2, c3, c4};
  tlc_emu_host->tma_store(rank, map, smem, coords, TLC_EMU_PC);
}
TLC_EMU_NOINLINE void wgmma(int n, int kind, int trans_a, int trans_b, float* d, uint64_t desc_a,
                            uint64_t desc_b, int scale_d) {
  tlc_emu_host->wgmma(n, kind, trans_a, trans_b, d, desc_a, desc_b, scale_d, TLC_EMU_PC);
}
TLC_EMU_NOINLINE void wgmma_rs(int n, int kind, int trans_b, float* d, const uint32_t* a, uint64_t desc_b,
                               int scale_d) {
  tlc_emu_host->wgmma_rs(n, kind, trans_b, d, a, desc_b, scale_d, TLC_EMU_PC);
}
TLC_EMU_NOINLINE void wgmma_sync(int op, int n) { tlc_emu_host->wgmma_sync(op, n, TLC_EMU_PC); }
TLC_EMU_NOINLINE void setmaxnreg(int inc, unsigned regs) { tlc_emu_host->setmaxnreg(inc, regs, TLC_EMU_PC); }

// CDNA: v_mfma_* over the calling thread's 64-lane wavefront (TLC_EMU_MFMA_*).
TLC_EMU_NOINLINE void mfma(int kind, float* d, const void* a, const void* b) {
  tlc_emu_host->mfma(kind, d, static_cast<const uint16_t*>(a), static_cast<const uint16_t*>(b), TLC_EMU_PC);
}

}  // namespace tlc_emu

// Launch trampolines: called by the emulator with cuLaunchKernel-style
// argument arrays.
namespace tlc_emu {
template <class... A, size_t... I>
inline void call_with_args(void (*f)(A...), void** args, std::index_sequence<I...>) {
  f(*static_cast<std::remove_cv_t<std::remove_reference_t<A>>*>(args[I])...);
}
template <class... A>
inline void call_kernel(void (*f)(A...), void** args) {
  call_with_args(f, args, std::index_sequence_for<A...>{});
}
template <class... A>
constexpr int kernel_arity(void (*)(A...)) {
  return (int)sizeof...(A);
}
template <class... A>
inline void kernel_arg_sizes(void (*)(A...), int* out) {
  int i = 0;
  ((out[i++] = (int)sizeof(std::remove_cv_t<std::remove_reference_t<A>>)), ...);
}
}  // namespace tlc_emu
// A kernel's __launch_bounds__(threads, minBlocks), for the register count
// setmaxnreg starts from.
#define TLC_EMU_DEFINE_BOUNDS(K, T, B)                                                      \
  extern "C" __attribute__((visibility("default"))) void tlc_emu_bounds_##K(int* out) {  \
    out[0] = (T);                                                                        \
    out[1] = (B);                                                                        \
  }
#define TLC_EMU_DEFINE_LAUNCH(K)                                                           \
  extern "C" __attribute__((visibility("default"))) void tlc_emu_launch_##K(void** args) { \
    tlc_emu::call_kernel(K, args);                                                         \
  }                                                                                        \
  extern "C" __attribute__((visibility("default"))) int tlc_emu_arity_##K(int* sizes) {    \
    if (sizes) tlc_emu::kernel_arg_sizes(K, sizes);                                        \
    return tlc_emu::kernel_arity(K);                                                       \
  }
