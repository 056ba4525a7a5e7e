// Part of tlc_cuda.h, included inside its namespace tlc: the integer type
// names, conversions, float16/bfloat16 arithmetic, bit reinterpretation and
// packed 4-bit (int4, uint4, fp4) unpacking, math functions, limits and
// integer division.
#pragma once
typedef signed char i8;
typedef short i16;
typedef int i32;
typedef long long i64;
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

// ---- scalar conversions and math (half types compute through float) --------
template <class T> struct Compute { typedef T type; };
template <> struct Compute<__half> { typedef float type; };
template <> struct Compute<__nv_bfloat16> { typedef float type; };

template <class To, class From>
__device__ __forceinline__ To cvt(From x) { return (To)x; }
// Float to integer: toward zero, saturated to the integer's range, NaN gives 0
// (PTX cvt.rzi.sat; the same on every target, docs/builtins.md).
template <class T> struct IntRange;
#define TLC_INT_RANGE(T, LO, HI) \
  template <> struct IntRange<T> { static constexpr T lo = LO, hi = HI; };
TLC_INT_RANGE(i8, -128, 127)
TLC_INT_RANGE(i16, -32768, 32767)
TLC_INT_RANGE(i32, -2147483647 - 1, 2147483647)
TLC_INT_RANGE(i64, -9223372036854775807ll - 1, 9223372036854775807ll)
TLC_INT_RANGE(u8, 0, 255)
TLC_INT_RANGE(u16, 0, 65535)
TLC_INT_RANGE(u32, 0, 4294967295u)
TLC_INT_RANGE(u64, 0, 18446744073709551615ull)
#undef TLC_INT_RANGE
template <class T, class F> __device__ __forceinline__ T sat_int(F x) {
  if (!(x == x)) return T(0);
  if (x <= (F)IntRange<T>::lo) return IntRange<T>::lo;
  if (x >= (F)IntRange<T>::hi) return IntRange<T>::hi;
  return (T)x;
}
#define TLC_CVT_SATURATED(T)                                                                    \
  template <> __device__ __forceinline__ T cvt<T, float>(float x) { return sat_int<T>(x); }   \
  template <> __device__ __forceinline__ T cvt<T, double>(double x) { return sat_int<T>(x); } \
  template <> __device__ __forceinline__ T cvt<T, __nv_fp8_e4m3>(__nv_fp8_e4m3 x) { return sat_int<T>((float)x); } \
  template <> __device__ __forceinline__ T cvt<T, __nv_fp8_e5m2>(__nv_fp8_e5m2 x) { return sat_int<T>((float)x); }
TLC_CVT_SATURATED(i8)
TLC_CVT_SATURATED(i16)
TLC_CVT_SATURATED(i32)
TLC_CVT_SATURATED(i64)
TLC_CVT_SATURATED(u8)
TLC_CVT_SATURATED(u16)
TLC_CVT_SATURATED(u32)
TLC_CVT_SATURATED(u64)
#undef TLC_CVT_SATURATED
template <> __device__ __forceinline__ __half cvt<__half, float>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __half cvt<__half, double>(double x) { return __double2half(x); }
template <> __device__ __forceinline__ __nv_bfloat16 cvt<__nv_bfloat16, float>(float x) { return __float2bfloat16_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 cvt<__nv_bfloat16, double>(double x) { return __double2bfloat16(x); }
template <> __device__ __forceinline__ float cvt<float, __half>(__half x) { return __half2float(x); }
template <> __device__ __forceinline__ float cvt<float, __nv_bfloat16>(__nv_bfloat16 x) { return __bfloat162float(x); }
template <> __device__ __forceinline__ double cvt<double, __half>(__half x) { return (double)__half2float(x); }
template <> __device__ __forceinline__ double cvt<double, __nv_bfloat16>(__nv_bfloat16 x) { return (double)__bfloat162float(x); }
template <> __device__ __forceinline__ __half cvt<__half, __nv_bfloat16>(__nv_bfloat16 x) { return __float2half_rn(__bfloat162float(x)); }
template <> __device__ __forceinline__ __nv_bfloat16 cvt<__nv_bfloat16, __half>(__half x) { return __float2bfloat16_rn(__half2float(x)); }
template <> __device__ __forceinline__ __half cvt<__half, __half>(__half x) { return x; }
template <> __device__ __forceinline__ __nv_bfloat16 cvt<__nv_bfloat16, __nv_bfloat16>(__nv_bfloat16 x) { return x; }
#define TLC_CVT_VIA_FLOAT(T)                                                                         \
  template <> __device__ __forceinline__ __half cvt<__half, T>(T x) { return __float2half_rn((float)x); } \
  template <> __device__ __forceinline__ __nv_bfloat16 cvt<__nv_bfloat16, T>(T x) { return __float2bfloat16_rn((float)x); } \
  template <> __device__ __forceinline__ T cvt<T, __half>(__half x) { return cvt<T>(__half2float(x)); }    \
  template <> __device__ __forceinline__ T cvt<T, __nv_bfloat16>(__nv_bfloat16 x) { return cvt<T>(__bfloat162float(x)); }
TLC_CVT_VIA_FLOAT(bool)
TLC_CVT_VIA_FLOAT(i8)
TLC_CVT_VIA_FLOAT(i16)
TLC_CVT_VIA_FLOAT(i32)
TLC_CVT_VIA_FLOAT(i64)
TLC_CVT_VIA_FLOAT(u8)
TLC_CVT_VIA_FLOAT(u16)
TLC_CVT_VIA_FLOAT(u32)
TLC_CVT_VIA_FLOAT(u64)
#undef TLC_CVT_VIA_FLOAT

// a + b, a - b, a * b of two float16 or two bfloat16 values (the emitter's
// spelling of those operations): the native instruction, one rounding to
// nearest even, which equals the float computation rounded once.
template <class T> __device__ __forceinline__ T hadd(T a, T b) { return __hadd(a, b); }
template <class T> __device__ __forceinline__ T hsub(T a, T b) { return __hsub(a, b); }
template <class T> __device__ __forceinline__ T hmul(T a, T b) { return __hmul(a, b); }
// The same on two lanes at once: register nests whose value is such
// arithmetic compute two adjacent elements per instruction (pair builds the
// pair, low / high take its lanes apart).
__device__ __forceinline__ __half2 pair(__half a, __half b) { return __halves2half2(a, b); }
__device__ __forceinline__ __nv_bfloat162 pair(__nv_bfloat16 a, __nv_bfloat16 b) { return __halves2bfloat162(a, b); }
__device__ __forceinline__ __half2 hadd(__half2 a, __half2 b) { return __hadd2(a, b); }
__device__ __forceinline__ __half2 hsub(__half2 a, __half2 b) { return __hsub2(a, b); }
__device__ __forceinline__ __half2 hmul(__half2 a, __half2 b) { return __hmul2(a, b); }
__device__ __forceinline__ __nv_bfloat162 hadd(__nv_bfloat162 a, __nv_bfloat162 b) { return __hadd2(a, b); }
__device__ __forceinline__ __nv_bfloat162 hsub(__nv_bfloat162 a, __nv_bfloat162 b) { return __hsub2(a, b); }
__device__ __forceinline__ __nv_bfloat162 hmul(__nv_bfloat162 a, __nv_bfloat162 b) { return __hmul2(a, b); }
__device__ __forceinline__ __half low(__half2 p) { return __low2half(p); }
__device__ __forceinline__ __half high(__half2 p) { return __high2half(p); }
__device__ __forceinline__ __nv_bfloat16 low(__nv_bfloat162 p) { return __low2bfloat16(p); }
__device__ __forceinline__ __nv_bfloat16 high(__nv_bfloat162 p) { return __high2bfloat16(p); }

__device__ __forceinline__ float f(float x) { return x; }
__device__ __forceinline__ double f(double x) { return x; }
__device__ __forceinline__ float f(__half x) { return __half2float(x); }
__device__ __forceinline__ float f(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float f(__nv_fp8_e4m3 x) { return (float)x; }
__device__ __forceinline__ float f(__nv_fp8_e5m2 x) { return (float)x; }
template <class T> __device__ __forceinline__ auto f(T x) { return x; }

// ---- bits and packed 4-bit data (T.reinterpret, T.unpack_*) --------------------
// bits_of(x): the bits of x as the unsigned word of its width; FromBits<T>:
// the value of T with those bits.
#define TLC_INT_BITS(T, U) __device__ __forceinline__ U bits_of(T x) { return (U)x; }
TLC_INT_BITS(i8, u8) TLC_INT_BITS(u8, u8) TLC_INT_BITS(i16, u16) TLC_INT_BITS(u16, u16)
TLC_INT_BITS(i32, u32) TLC_INT_BITS(u32, u32) TLC_INT_BITS(i64, u64) TLC_INT_BITS(u64, u64)
#undef TLC_INT_BITS
__device__ __forceinline__ u16 bits_of(__half x) { return __half_as_ushort(x); }
__device__ __forceinline__ u16 bits_of(__nv_bfloat16 x) { return __bfloat16_as_ushort(x); }
__device__ __forceinline__ u32 bits_of(float x) { return __float_as_uint(x); }
__device__ __forceinline__ u64 bits_of(double x) { return (u64)__double_as_longlong(x); }
__device__ __forceinline__ u8 bits_of(__nv_fp8_e4m3 x) { return x.__x; }
__device__ __forceinline__ u8 bits_of(__nv_fp8_e5m2 x) { return x.__x; }
template <class T> struct FromBits {
  template <class U> static __device__ __forceinline__ T of(U u) { return (T)u; }
};
template <> struct FromBits<__half> {
  static __device__ __forceinline__ __half of(u16 u) { return __ushort_as_half(u); }
};
template <> struct FromBits<__nv_bfloat16> {
  static __device__ __forceinline__ __nv_bfloat16 of(u16 u) { return __ushort_as_bfloat16(u); }
};
template <> struct FromBits<float> {
  static __device__ __forceinline__ float of(u32 u) { return __uint_as_float(u); }
};
template <> struct FromBits<double> {
  static __device__ __forceinline__ double of(u64 u) { return __longlong_as_double((long long)u); }
};
#define TLC_FP8_FROM_BITS(T)                                                               \
  template <> struct FromBits<T> {                                                         \
    static __device__ __forceinline__ T of(u8 u) { T r; r.__x = u; return r; }              \
  };
TLC_FP8_FROM_BITS(__nv_fp8_e4m3)
TLC_FP8_FROM_BITS(__nv_fp8_e5m2)
#undef TLC_FP8_FROM_BITS
template <class To, class From> __device__ __forceinline__ To reinterpret(From x) { return FromBits<To>::of(bits_of(x)); }

// Nibble `i mod (2 * sizeof(W))` of the integer word w, in 0..15.
template <class W> __device__ __forceinline__ u32 nibble(W w, int i) {
  const int n = 2 * (int)sizeof(W);
  if (sizeof(W) <= 4) return ((u32)bits_of(w) >> (4 * (i & (n - 1)))) & 0xFu;
  return (u32)(((u64)bits_of(w) >> (4 * (i & (n - 1)))) & 0xFu);
}
// An unsigned nibble (0..15) or a biased signed one (n ^ 8 = value + 8) as a
// float: the exponent-bias trick. The nibble fills the low mantissa bits of
// a power of two P whose unit in the last place is 1 (P = 1024 in float16,
// 128 in bfloat16, 2^23 in float32), then P (+ 8 for signed) is subtracted:
// one integer OR and one float subtraction, exact, no int-to-float convert.
template <class To> __device__ __forceinline__ To nibble_to(u32 n, u32 bias) { return cvt<To>((int)n - (int)bias); }
template <> __device__ __forceinline__ __half nibble_to<__half>(u32 n, u32 bias) {
  return __hsub(__ushort_as_half((u16)(0x6400u | n)), __ushort_as_half((u16)(0x6400u | bias)));
}
template <> __device__ __forceinline__ __nv_bfloat16 nibble_to<__nv_bfloat16>(u32 n, u32 bias) {
  return __hsub(__ushort_as_bfloat16((u16)(0x4300u | n)), __ushort_as_bfloat16((u16)(0x4300u | bias)));
}
template <> __device__ __forceinline__ float nibble_to<float>(u32 n, u32 bias) {
  return __uint_as_float(0x4b000000u | n) - __uint_as_float(0x4b000000u | bias);
}
template <class To, class W> __device__ __forceinline__ To unpack_uint4(W w, int i) { return nibble_to<To>(nibble(w, i), 0); }
template <class To, class W> __device__ __forceinline__ To unpack_int4(W w, int i) { return nibble_to<To>(nibble(w, i) ^ 8u, 8); }
// Two nibbles as a pair of float16 / bfloat16 (register nests computed in
// pairs): the two exponent-bias patterns side by side, one paired subtraction.
template <class T> struct NibbleBase;
template <> struct NibbleBase<__half> { static constexpr u32 bits = 0x6400u; };
template <> struct NibbleBase<__nv_bfloat16> { static constexpr u32 bits = 0x4300u; };
template <class To> __device__ __forceinline__ auto nibbles_to_pair(u32 n0, u32 n1, u32 bias) {
  const u32 base = NibbleBase<To>::bits;
  return hsub(pair(FromBits<To>::of((u16)(base | n0)), FromBits<To>::of((u16)(base | n1))),
              pair(FromBits<To>::of((u16)(base | bias)), FromBits<To>::of((u16)(base | bias))));
}
// (a & b) ^ c as one LOP3: with both masks in registers (which the compiler
// loads once), where ptxas otherwise emits an AND and an XOR of immediates.
__device__ __forceinline__ u32 xor_and(u32 a, u32 b, u32 c) {
  u32 r;
  asm("lop3.b32 %0, %1, %2, %3, 0x6A;\n" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
}
// The byte of word w holding nibble i (0..2 * sizeof(W) - 1), zero-extended;
// of a 32-bit word (a packed tile read a word at a time) by one PRMT.
template <class W> __device__ __forceinline__ u32 byte_at(W w, int i) {
  const int n = 2 * (int)sizeof(W);
  if (sizeof(W) == 4) return __byte_perm((u32)bits_of(w), 0u, 0x4440u | (u32)((i & 7) >> 1));
  return (u32)(((u64)bits_of(w) >> (4 * (i & (n - 1) & ~1))) & 0xFFu);
}
// The two nibbles of the byte of w holding nibble i (i even; the low nibble
// first) as such a pair, without taking the nibbles apart; `flip` (8 for
// signed nibbles) is XORed into both, `bias` subtracted from both.
// float16: a word holding the byte in bytes 0 and 2 (one PRMT from a 32-bit
// word, one multiply from a byte) has the low nibble in bits 0-3 and the high
// one in bits 20-23; one LOP3 puts them under the pattern of 1024, giving
// 1024 + lo and 1024 + 16 hi, and one paired multiply-add by (1, 1/16) takes
// (1024 + bias, 64 + bias) off, exactly.
// bfloat16 (whose 1 / 16-scaled pattern would reach the exponent): b * 0x1001
// holds the low nibble in bits 0-3 and the high one in bits 16-19, which one
// LOP3 puts under both bias patterns, and a paired subtraction takes them off.
template <class To, class W> __device__ __forceinline__ auto byte_to_pair(W w, int i, u32 flip, u32 bias) {
  const u32 base = NibbleBase<To>::bits;
  const auto bias2 = pair(FromBits<To>::of((u16)(base | bias)), FromBits<To>::of((u16)(base | bias)));
  auto h = bias2;
  if constexpr (sizeof(To) == 2 && NibbleBase<To>::bits == 0x6400u) {
    const u32 k = (u32)((i & (2 * (int)sizeof(W) - 1)) >> 1);
    const u32 spread = sizeof(W) == 4 ? __byte_perm((u32)bits_of(w), 0u, 0x4040u | (k * 0x0101u)) : byte_at(w, i) * 0x10001u;
    const u32 x = xor_and(spread, 0x00F0000Fu, (base * 0x10001u) ^ (flip * 0x00100001u));
    memcpy(&h, &x, sizeof x);
    const auto scale = pair(FromBits<To>::of((u16)0x3C00u), FromBits<To>::of((u16)0x2C00u));  // 1, 1/16
    const auto offset = pair(FromBits<To>::of((u16)(0xE400u | bias)), FromBits<To>::of((u16)(0xD400u | (bias << 4))));
    return __hfma2(h, scale, offset);
  } else {
    const u32 x = xor_and(byte_at(w, i) * 0x1001u, 0x000F000Fu, (base * 0x10001u) ^ (flip * 0x10001u));
    memcpy(&h, &x, sizeof x);
    return hsub(h, bias2);
  }
}
// Whether the two lanes' nibbles are the low and high nibble of one byte of
// one word (the dequantizing nests' case, folded at compile time).
template <class W> __device__ __forceinline__ bool byte_of_pair(W w0, int i0, W w1, int i1) {
  return bits_of(w0) == bits_of(w1) && (i0 & 1) == 0 && i1 == i0 + 1;
}
template <class To, class W> __device__ __forceinline__ auto unpack_uint4_pair(W w0, int i0, W w1, int i1) {
  if (byte_of_pair(w0, i0, w1, i1)) return byte_to_pair<To>(w0, i0, 0, 0);
  return nibbles_to_pair<To>(nibble(w0, i0), nibble(w1, i1), 0);
}
template <class To, class W> __device__ __forceinline__ auto unpack_int4_pair(W w0, int i0, W w1, int i1) {
  if (byte_of_pair(w0, i0, w1, i1)) return byte_to_pair<To>(w0, i0, 8, 8);
  return nibbles_to_pair<To>(nibble(w0, i0) ^ 8u, nibble(w1, i1) ^ 8u, 8);
}
// A float4 e2m1 code (sign, 2 exponent bits of bias 1, 1 mantissa bit) as the
// bits of a float with `man` mantissa bits, in integer operations only:
// magnitudes 0 and 0.5 (codes 0, 1) are 0 and `half`; the others move the
// exponent and mantissa bits into place and add the exponent of 0.5.
__device__ __forceinline__ u32 fp4_bits(u32 c, int man, u32 half, int signShift) {
  u32 em = c & 7u;
  u32 mag = em < 2u ? em * half : (em << (man - 1)) + half;
  return mag | ((c & 8u) << signShift);
}
template <class To> __device__ __forceinline__ To fp4_to(u32 c) { return cvt<To>(__uint_as_float(fp4_bits(c, 23, 0x3f000000u, 28))); }
// float16 (and float through it): the code's three magnitude bits placed at
// bits 9-11 (the exponent's two low bits and the mantissa's top bit) make the
// float16 of value fp4 * 2^-14, a subnormal for exponent 0 (whose 0.5 comes
// out right that way), and one multiplication by 2^14 gives the value: float16
// arithmetic keeps subnormals. No compare and select.
template <> __device__ __forceinline__ __half fp4_to<__half>(u32 c) {
  return __hmul(__ushort_as_half((u16)(((c & 7u) << 9) | ((c & 8u) << 12))), __ushort_as_half((u16)0x7400u));
}
template <> __device__ __forceinline__ float fp4_to<float>(u32 c) { return __half2float(fp4_to<__half>(c)); }
template <> __device__ __forceinline__ __nv_bfloat16 fp4_to<__nv_bfloat16>(u32 c) {
  return __ushort_as_bfloat16((u16)fp4_bits(c, 7, 0x3f00u, 12));
}
template <class To, class W> __device__ __forceinline__ To unpack_fp4(W w, int i) { return fp4_to<To>(nibble(w, i)); }

#define TLC_UNARY_MATH(name, ffn, dfn)                                                             \
  __device__ __forceinline__ float name(float x) { return ffn(x); }                                \
  __device__ __forceinline__ double name(double x) { return dfn(x); }                              \
  __device__ __forceinline__ __half name(__half x) { return __float2half_rn(ffn(__half2float(x))); } \
  __device__ __forceinline__ __nv_bfloat16 name(__nv_bfloat16 x) { return __float2bfloat16_rn(ffn(__bfloat162float(x))); }
TLC_UNARY_MATH(exp, expf, ::exp)
TLC_UNARY_MATH(exp2, exp2f, ::exp2)
TLC_UNARY_MATH(exp10, exp10f, ::exp10)
TLC_UNARY_MATH(expm1, expm1f, ::expm1)
TLC_UNARY_MATH(log, logf, ::log)
TLC_UNARY_MATH(log2, log2f, ::log2)
TLC_UNARY_MATH(log10, log10f, ::log10)
TLC_UNARY_MATH(log1p, log1pf, ::log1p)
TLC_UNARY_MATH(sqrt, sqrtf, ::sqrt)
TLC_UNARY_MATH(rsqrt, rsqrtf, ::rsqrt)
TLC_UNARY_MATH(sin, sinf, ::sin)
TLC_UNARY_MATH(cos, cosf, ::cos)
TLC_UNARY_MATH(tan, tanf, ::tan)
TLC_UNARY_MATH(asin, asinf, ::asin)
TLC_UNARY_MATH(acos, acosf, ::acos)
TLC_UNARY_MATH(atan, atanf, ::atan)
TLC_UNARY_MATH(sinh, sinhf, ::sinh)
TLC_UNARY_MATH(cosh, coshf, ::cosh)
TLC_UNARY_MATH(tanh, tanhf, ::tanh)
TLC_UNARY_MATH(erf, erff, ::erf)
TLC_UNARY_MATH(floor, floorf, ::floor)
TLC_UNARY_MATH(ceil, ceilf, ::ceil)
TLC_UNARY_MATH(round, rintf, ::rint)
TLC_UNARY_MATH(trunc, truncf, ::trunc)
TLC_UNARY_MATH(fabs, fabsf, ::fabs)
#undef TLC_UNARY_MATH
__device__ __forceinline__ float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
__device__ __forceinline__ double sigmoid(double x) { return 1.0 / (1.0 + ::exp(-x)); }
__device__ __forceinline__ __half sigmoid(__half x) { return __float2half_rn(sigmoid(__half2float(x))); }
__device__ __forceinline__ __nv_bfloat16 sigmoid(__nv_bfloat16 x) { return __float2bfloat16_rn(sigmoid(__bfloat162float(x))); }

#define TLC_BINARY_MATH(name, ffn, dfn)                                                                  \
  __device__ __forceinline__ float name(float x, float y) { return ffn(x, y); }                          \
  __device__ __forceinline__ double name(double x, double y) { return dfn(x, y); }                       \
  __device__ __forceinline__ __half name(__half x, __half y) { return __float2half_rn(ffn(__half2float(x), __half2float(y))); } \
  __device__ __forceinline__ __nv_bfloat16 name(__nv_bfloat16 x, __nv_bfloat16 y) {                      \
    return __float2bfloat16_rn(ffn(__bfloat162float(x), __bfloat162float(y)));                          \
  }
TLC_BINARY_MATH(pow, powf, ::pow)
TLC_BINARY_MATH(atan2, atan2f, ::atan2)
TLC_BINARY_MATH(fmod, fmodf, ::fmod)
#undef TLC_BINARY_MATH

template <class T> __device__ __forceinline__ T abs(T x) { return x < T(0) ? T(-x) : x; }
__device__ __forceinline__ float abs(float x) { return fabsf(x); }
__device__ __forceinline__ double abs(double x) { return ::fabs(x); }
__device__ __forceinline__ __half abs(__half x) { return __habs(x); }
__device__ __forceinline__ __nv_bfloat16 abs(__nv_bfloat16 x) { return __habs(x); }

// min/max, computed in the compute type: a NaN operand gives NaN (either
// one: `y != y` catches a NaN in b, and a NaN in a fails the comparison).
// The select is made in the compute type too, without a branch: 16-bit
// values selected after a short-circuit branch, in unrolled vector lanes,
// were miscompiled by ptxas (CUDA 13.0, -O1 and above: wrong register
// halves read), and the conversion back is exact.
template <class T> __device__ __forceinline__ T min(T a, T b) {
  const auto x = f(a), y = f(b);
  return cvt<T>((y < x) | (y != y) ? y : x);
}
template <class T> __device__ __forceinline__ T max(T a, T b) {
  const auto x = f(a), y = f(b);
  return cvt<T>((x < y) | (y != y) ? y : x);
}
#define TLC_INT_MINMAX(T)                                                          \
  template <> __device__ __forceinline__ T min<T>(T a, T b) { return b < a ? b : a; } \
  template <> __device__ __forceinline__ T max<T>(T a, T b) { return a < b ? b : a; }
TLC_INT_MINMAX(bool)
TLC_INT_MINMAX(i8)
TLC_INT_MINMAX(i16)
TLC_INT_MINMAX(i32)
TLC_INT_MINMAX(i64)
TLC_INT_MINMAX(u8)
TLC_INT_MINMAX(u16)
TLC_INT_MINMAX(u32)
TLC_INT_MINMAX(u64)
#undef TLC_INT_MINMAX
// sm_80 and newer have both in one instruction: `max.NaN` / `min.NaN` give
// a NaN when either operand is one (a canonical NaN; signed zeros compare
// equal, so the zero returned may differ in sign from the forms above).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && !defined(__TLC_CUDA_EMULATED__)
template <> __device__ __forceinline__ float max<float>(float a, float b) {
  float r;
  asm("max.NaN.f32 %0, %1, %2;\n" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
template <> __device__ __forceinline__ float min<float>(float a, float b) {
  float r;
  asm("min.NaN.f32 %0, %1, %2;\n" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
template <> __device__ __forceinline__ __half max<__half>(__half a, __half b) { return __hmax_nan(a, b); }
template <> __device__ __forceinline__ __half min<__half>(__half a, __half b) { return __hmin_nan(a, b); }
template <> __device__ __forceinline__ __nv_bfloat16 max<__nv_bfloat16>(__nv_bfloat16 a, __nv_bfloat16 b) {
  return __hmax_nan(a, b);
}
template <> __device__ __forceinline__ __nv_bfloat16 min<__nv_bfloat16>(__nv_bfloat16 a, __nv_bfloat16 b) {
  return __hmin_nan(a, b);
}
#endif
template <class T> __device__ __forceinline__ T clamp(T x, T lo, T hi) { return min(max(x, lo), hi); }
template <class T> __device__ __forceinline__ T fma(T a, T b, T c) { return cvt<T>(f(a) * f(b) + f(c)); }
__device__ __forceinline__ float fma(float a, float b, float c) { return fmaf(a, b, c); }
__device__ __forceinline__ double fma(double a, double b, double c) { return ::fma(a, b, c); }
template <class T> __device__ __forceinline__ bool isnan(T x) { return ::isnan(f(x)); }
template <class T> __device__ __forceinline__ bool isinf(T x) { return ::isinf(f(x)); }
template <class T> __device__ __forceinline__ bool isfinite(T x) { return ::isfinite(f(x)); }

template <class T> __device__ __forceinline__ T inf() { return cvt<T>(__int_as_float(0x7f800000)); }
template <> __device__ __forceinline__ double inf<double>() { return __longlong_as_double(0x7ff0000000000000ll); }
template <class T> __device__ __forceinline__ T ninf() { return cvt<T>(-__int_as_float(0x7f800000)); }
template <> __device__ __forceinline__ double ninf<double>() { return -__longlong_as_double(0x7ff0000000000000ll); }
// A float argument of T.print's printf: NaN as the positive quiet NaN, which
// prints `nan` whatever the sign and payload (compiler/ir/print_format.h).
__device__ __forceinline__ double print_float(double x) { return ::isnan(x) ? __longlong_as_double(0x7ff8000000000000ll) : x; }

// The smallest and largest finite-or-infinite values (identities of max / min).
template <class T> __device__ __forceinline__ T lowest() { return ninf<T>(); }
template <class T> __device__ __forceinline__ T highest() { return inf<T>(); }
#define TLC_INT_LIMITS(T, LO, HI)                                        \
  template <> __device__ __forceinline__ T lowest<T>() { return (T)(LO); } \
  template <> __device__ __forceinline__ T highest<T>() { return (T)(HI); }
TLC_INT_LIMITS(bool, 0, 1)
TLC_INT_LIMITS(i8, -128, 127)
TLC_INT_LIMITS(i16, -32768, 32767)
TLC_INT_LIMITS(i32, -2147483647 - 1, 2147483647)
TLC_INT_LIMITS(i64, -9223372036854775807ll - 1, 9223372036854775807ll)
TLC_INT_LIMITS(u8, 0, 255)
TLC_INT_LIMITS(u16, 0, 65535)
TLC_INT_LIMITS(u32, 0, 4294967295u)
TLC_INT_LIMITS(u64, 0, 18446744073709551615ull)
#undef TLC_INT_LIMITS

// Floor division and modulo of signed integers (the IR's `//` and `%`).
template <class T> __device__ __forceinline__ T floordiv(T a, T b) {
  T q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
template <class T> __device__ __forceinline__ T floormod(T a, T b) {
  T r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
template <class T> __device__ __forceinline__ T ceildiv(T a, T b) { return -floordiv<T>(-a, b); }
