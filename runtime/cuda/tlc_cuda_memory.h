// Part of tlc_cuda.h, included inside its namespace tlc: atomics, warp
// shuffles and reductions, vector loads and stores.
#pragma once
// ---- atomics -----------------------------------------------------------------
// Each returns the element's value before the update.
template <class T> __device__ __forceinline__ T atomic_add(T* p, T v) { return atomicAdd(p, v); }
template <> __device__ __forceinline__ i64 atomic_add<i64>(i64* p, i64 v) {
  return (i64)atomicAdd((unsigned long long*)p, (unsigned long long)v);
}
template <class T> __device__ __forceinline__ T atomic_max(T* p, T v) { return atomicMax(p, v); }
template <class T> __device__ __forceinline__ T atomic_min(T* p, T v) { return atomicMin(p, v); }
// Floating max/min by compare-and-swap on the bit pattern.
template <class T, class Bits, class Op> __device__ __forceinline__ T atomic_cas_op(T* p, T v, Op op) {
  Bits* addr = (Bits*)p;
  Bits old = *addr, assumed;
  do {
    assumed = old;
    T cur = *(T*)&assumed;
    T next = op(cur, v);
    Bits nb = *(Bits*)&next;
    if (nb == assumed) break;
    old = atomicCAS(addr, assumed, nb);
  } while (old != assumed);
  return *(T*)&assumed;
}
struct MaxOp { template <class T> __device__ T operator()(T a, T b) const { return max(a, b); } };
struct MinOp { template <class T> __device__ T operator()(T a, T b) const { return min(a, b); } };
template <> __device__ __forceinline__ float atomic_max<float>(float* p, float v) { return atomic_cas_op<float, unsigned int>(p, v, MaxOp()); }
template <> __device__ __forceinline__ float atomic_min<float>(float* p, float v) { return atomic_cas_op<float, unsigned int>(p, v, MinOp()); }
template <> __device__ __forceinline__ double atomic_max<double>(double* p, double v) { return atomic_cas_op<double, unsigned long long>(p, v, MaxOp()); }
template <> __device__ __forceinline__ double atomic_min<double>(double* p, double v) { return atomic_cas_op<double, unsigned long long>(p, v, MinOp()); }
template <> __device__ __forceinline__ __half atomic_max<__half>(__half* p, __half v) { return atomic_cas_op<__half, unsigned short>(p, v, MaxOp()); }
template <> __device__ __forceinline__ __half atomic_min<__half>(__half* p, __half v) { return atomic_cas_op<__half, unsigned short>(p, v, MinOp()); }
template <> __device__ __forceinline__ __nv_bfloat16 atomic_max<__nv_bfloat16>(__nv_bfloat16* p, __nv_bfloat16 v) { return atomic_cas_op<__nv_bfloat16, unsigned short>(p, v, MaxOp()); }
template <> __device__ __forceinline__ __nv_bfloat16 atomic_min<__nv_bfloat16>(__nv_bfloat16* p, __nv_bfloat16 v) { return atomic_cas_op<__nv_bfloat16, unsigned short>(p, v, MinOp()); }
template <> __device__ __forceinline__ i64 atomic_max<i64>(i64* p, i64 v) { return (i64)atomicMax((long long*)p, (long long)v); }
template <> __device__ __forceinline__ i64 atomic_min<i64>(i64* p, i64 v) { return (i64)atomicMin((long long*)p, (long long)v); }

// ---- warp reductions ---------------------------------------------------------
// The value of lane (this lane ^ lane_mask) within segments of `width` lanes:
// at most 32 on NVIDIA; 64, the whole wavefront, on CDNA (HIP C).
template <class T> __device__ __forceinline__ T shfl_xor(T v, int lane_mask, int width = 32) { return __shfl_xor_sync(0xffffffffu, v, lane_mask, width); }
template <> __device__ __forceinline__ __half shfl_xor<__half>(__half v, int m, int width) {
  unsigned short b = __half_as_ushort(v);
  return __ushort_as_half((unsigned short)__shfl_xor_sync(0xffffffffu, (unsigned)b, m, width));
}
template <> __device__ __forceinline__ __nv_bfloat16 shfl_xor<__nv_bfloat16>(__nv_bfloat16 v, int m, int width) {
  unsigned short b = __bfloat16_as_ushort(v);
  return __ushort_as_bfloat16((unsigned short)__shfl_xor_sync(0xffffffffu, (unsigned)b, m, width));
}
template <> __device__ __forceinline__ bool shfl_xor<bool>(bool v, int m, int width) { return __shfl_xor_sync(0xffffffffu, (int)v, m, width) != 0; }
template <> __device__ __forceinline__ i8 shfl_xor<i8>(i8 v, int m, int width) { return (i8)__shfl_xor_sync(0xffffffffu, (int)v, m, width); }
template <> __device__ __forceinline__ u8 shfl_xor<u8>(u8 v, int m, int width) { return (u8)__shfl_xor_sync(0xffffffffu, (int)v, m, width); }
template <> __device__ __forceinline__ i16 shfl_xor<i16>(i16 v, int m, int width) { return (i16)__shfl_xor_sync(0xffffffffu, (int)v, m, width); }
template <> __device__ __forceinline__ u16 shfl_xor<u16>(u16 v, int m, int width) { return (u16)__shfl_xor_sync(0xffffffffu, (int)v, m, width); }

struct SumOp { template <class T> __device__ T operator()(T a, T b) const { return a + b; } };
// Combines the values of `group` consecutive lanes (a power of two: at most
// 32, or 64 on a CDNA wavefront, whose step of distance 32 crosses its two
// halves); every lane gets the result.
#ifdef TLC_HIP_LANES
// CDNA (the HIP dialect): the steps go up from distance 1, so each aligned
// block of s lanes holds one value when the step of distance s starts, and
// a DPP move that pairs the block with its neighbour gives the value the
// xor shuffle would, without the LDS crossbar: quad_perm [1,0,3,2] and
// [2,3,0,1] (distances 1 and 2), row_half_mirror (4), row_mirror (8);
// distance 16 is ds_swizzle's xor 16 (no address), 32 a shuffle.
template <int swizzle, int ctrl, class T> __device__ __forceinline__ T lane_move(T v) {
  static_assert(sizeof(T) <= 8, "a lane move of at most 8 bytes");
  int w[2] = {0, 0};
  memcpy(w, &v, sizeof(T));
  for (int i = 0; i < (sizeof(T) > 4 ? 2 : 1); ++i) {
    if constexpr (swizzle) w[i] = tlc_lane_swizzle<ctrl>(w[i]);
    else w[i] = tlc_lane_dpp<ctrl>(w[i]);
  }
  memcpy(&v, w, sizeof(T));
  return v;
}
template <int group, class T, class Op> __device__ __forceinline__ T group_allreduce(T v, Op op) {
  if constexpr (group >= 2) v = op(v, lane_move<0, 0xB1>(v));
  if constexpr (group >= 4) v = op(v, lane_move<0, 0x4E>(v));
  if constexpr (group >= 8) v = op(v, lane_move<0, 0x141>(v));
  if constexpr (group >= 16) v = op(v, lane_move<0, 0x140>(v));
  if constexpr (group >= 32) v = op(v, lane_move<1, 0x401F>(v));
  if constexpr (group >= 64) v = op(v, shfl_xor(v, 32, 64));
  return v;
}
#else
template <int group, class T, class Op> __device__ __forceinline__ T group_allreduce(T v, Op op) {
#pragma unroll
  for (int s = group / 2; s >= 1; s >>= 1) v = op(v, shfl_xor(v, s, group > 32 ? 64 : 32));
  return v;
}
#endif

// ---- vector memory access ------------------------------------------------------
// Raw bytes moved as one access. `may_alias`: the elements they carry keep
// their own type (a `__half` array read through these words is not undefined
// behaviour the optimizer may exploit).
struct __attribute__((__may_alias__)) __align__(2) Bits2 { unsigned short w[1]; };
struct __attribute__((__may_alias__)) __align__(4) Bits4 { unsigned w[1]; };
struct __attribute__((__may_alias__)) __align__(8) Bits8 { unsigned w[2]; };
struct __attribute__((__may_alias__)) __align__(16) Bits16 { unsigned w[4]; };
#ifdef TLC_EMU_HOOK
// The CUDA emulator's host build: 8 and 16 bytes as one vector (unaligned
// moves: a misaligned address is the emulator's finding, not a host fault).
typedef unsigned TlcEmuWords2 __attribute__((vector_size(8), aligned(1), __may_alias__));
typedef unsigned TlcEmuWords4 __attribute__((vector_size(16), aligned(1), __may_alias__));
template <int Bytes> struct EmuVec { typedef TlcEmuWords2 type; };
template <> struct EmuVec<16> { typedef TlcEmuWords4 type; };
#endif
template <int Bytes> struct VecBits;
template <> struct VecBits<2> { typedef Bits2 type; };
template <> struct VecBits<4> { typedef Bits4 type; };
template <> struct VecBits<8> { typedef Bits8 type; };
template <> struct VecBits<16> { typedef Bits16 type; };
// Copies N elements of T with one access of N * sizeof(T) bytes (aligned by the caller).
template <class T, int N> __device__ __forceinline__ void copy_vec(T* dst, const T* src) {
  typedef typename VecBits<sizeof(T) * N>::type V;
#ifdef TLC_EMU_HOOK
  // The emulator's host build: a volatile vector each way, which the host
  // compiler keeps one access (it splits a plain one into the elements their
  // uses read) and its instrumentation records as the GPU's one access.
  if constexpr (sizeof(T) * N >= 8) {
    typedef typename EmuVec<sizeof(T) * N>::type E;
    *reinterpret_cast<volatile E*>(dst) = *reinterpret_cast<const volatile E*>(src);
    return;
  }
#endif
  *reinterpret_cast<V*>(dst) = *reinterpret_cast<const V*>(src);
}
// The 4 bytes at `p` (aligned by the caller) as one 32-bit word, the first in the low byte.
template <class T> __device__ __forceinline__ unsigned load_word(const T* p) {
  return reinterpret_cast<const Bits4*>(p)->w[0];
}
// The integer holding a pair of B-byte elements, stored with one access (a
// pair built in an array and copied through a struct may be split into two
// stores by a compiler; one integer store is not).
template <int B> struct PairWord;
template <> struct PairWord<2> { typedef unsigned short half; typedef unsigned type; };
template <> struct PairWord<4> { typedef unsigned half; typedef unsigned long long type; };
template <class T, int B = sizeof(T)> struct PairStore {
  static __device__ __forceinline__ void store(T* dst, T a, T b) {
    __align__(2 * sizeof(T)) T v[2] = {a, b};
    copy_vec<T, 2>(dst, v);
  }
};
template <class T> struct PairStore<T, 2> {
  typedef typename PairWord<2>::type Word;
  typedef Word __attribute__((__may_alias__)) Aliased;
  static __device__ __forceinline__ void store(T* dst, T a, T b) {
    *reinterpret_cast<Aliased*>(dst) = (Word)(typename PairWord<2>::half)bits_of(a) |
                                       ((Word)(typename PairWord<2>::half)bits_of(b) << 16);
  }
};
template <class T> struct PairStore<T, 4> {
  typedef typename PairWord<4>::type Word;
  typedef Word __attribute__((__may_alias__)) Aliased;
  static __device__ __forceinline__ void store(T* dst, T a, T b) {
    *reinterpret_cast<Aliased*>(dst) = (Word)(typename PairWord<4>::half)bits_of(a) |
                                       ((Word)(typename PairWord<4>::half)bits_of(b) << 32);
  }
};
// Stores two adjacent elements with one access of 2 * sizeof(T) bytes (aligned by the caller).
template <class T> __device__ __forceinline__ void store_pair(T* dst, T a, T b) { PairStore<T>::store(dst, a, b); }
// Element i of type T kept in an array of 32-bit words (register tiles loaded
// ahead keep their elements packed as loaded).
template <class T> __device__ __forceinline__ void pack(unsigned* words, int i, T v) {
  memcpy(reinterpret_cast<char*>(words) + i * sizeof(T), &v, sizeof(T));
}
template <class T> __device__ __forceinline__ T unpack(const unsigned* words, int i) {
  T v;
  memcpy(&v, reinterpret_cast<const char*>(words) + i * sizeof(T), sizeof(T));
  return v;
}
// Loads the Bytes (4, 8 or 16) bytes at `src`, which need only be aligned to
// their elements, into `dst` (aligned to Bytes): the aligned word of Bytes
// bytes that holds the first of them and, when `src` is not aligned, the next
// one, shifted into place in registers (two vector loads where a row of a
// tensor whose rows are not whole vectors long would take one load per
// element). The caller guarantees that the Bytes bytes after the run lie in
// the same allocation: the second word may reach them.
template <int Bytes> __device__ __forceinline__ void load_shifted(void* dst, const void* src) {
  typedef typename VecBits<Bytes>::type V;
  constexpr int W = Bytes / 4;
  const unsigned long long a = reinterpret_cast<unsigned long long>(src);
  const unsigned s = (unsigned)(a & (unsigned long long)(Bytes - 1));
  const V* base = reinterpret_cast<const V*>(reinterpret_cast<const char*>(src) - s);
  V lo = base[0], hi;
#pragma unroll
  for (int i = 0; i < W; ++i) hi.w[i] = 0u;
  if (s) hi = base[1];
  unsigned x[2 * W];
#pragma unroll
  for (int i = 0; i < W; ++i) {
    x[i] = lo.w[i];
    x[W + i] = hi.w[i];
  }
  // Whole words first (s / 4 of them, one bit of the count at a time), then
  // the bytes within a word.
  const unsigned q = s >> 2, r = (s & 3u) * 8u;
#pragma unroll
  for (int bit = W / 2; bit >= 1; bit /= 2) {
    const bool take = (q & (unsigned)bit) != 0;
#pragma unroll
    for (int i = 0; i + bit < 2 * W; ++i) x[i] = take ? x[i + bit] : x[i];
  }
  V out;
#pragma unroll
  for (int i = 0; i < W; ++i)
    out.w[i] = (unsigned)(((((unsigned long long)x[i + 1]) << 32) | (unsigned long long)x[i]) >> r);
  *reinterpret_cast<V*>(dst) = out;
}
// `p`, as a value the compiler cannot see into: an address computed once
// (a loop-invariant base) is then not folded back into the arithmetic of
// each of its uses, which would compute it again there.
template <class T> __device__ __forceinline__ const T* opaque(const T* p) {
  asm("" : "+l"(p));
  return p;
}
__device__ __forceinline__ bool aligned(const void* p, int bytes) {
  return (reinterpret_cast<unsigned long long>(p) & (unsigned long long)(bytes - 1)) == 0;
}

// ---- staging for TMA -------------------------------------------------------------
// Copies `rows` rows of `row_bytes` bytes, back to back at `src` (aligned to
// their elements), to rows `pitch` bytes apart at `dst` (16-byte
// aligned, pitch a multiple of 16), each row's tail zero: a tensor whose rows
// TMA cannot address, copied to rows it can (tensor_map.h, StagedTensor).
// Each thread writes 16-byte vectors of one row, `row_threads` threads per
// row; a vector wholly inside the row whose two aligned neighbours lie inside
// the tensor is loaded shifted (load_shifted), the others element by element.
// `Elem`: an unsigned word of the elements' size.
template <class Elem>
__device__ __forceinline__ void stage_rows(const unsigned char* src, unsigned char* dst, long long rows,
                                           long long row_bytes, long long pitch, int row_threads) {
  constexpr int E = sizeof(Elem);
  const long long chunks = pitch / 16;
  const unsigned long long begin = reinterpret_cast<unsigned long long>(src);
  const unsigned long long end = begin + (unsigned long long)(rows * row_bytes);
  const int lane = (int)threadIdx.x % row_threads;
  const long long rows_per_block = (long long)(blockDim.x / row_threads);
  for (long long r = (long long)blockIdx.y * rows_per_block + threadIdx.x / row_threads; r < rows;
       r += (long long)gridDim.y * rows_per_block) {
    for (long long c = (long long)blockIdx.x * row_threads + lane; c < chunks; c += (long long)gridDim.x * row_threads) {
      const unsigned char* from = src + r * row_bytes + c * 16;
      const unsigned long long a = reinterpret_cast<unsigned long long>(from) & ~15ull;
      Bits16 v;
      if (c * 16 + 16 <= row_bytes && a >= begin && a + 32 <= end) {
        load_shifted<16>(&v, from);
      } else {
        unsigned char bytes[16];
#pragma unroll
        for (int i = 0; i < 16 / E; ++i) {
          Elem e = 0;
          if (c * 16 + (long long)(i + 1) * E <= row_bytes) e = *reinterpret_cast<const Elem*>(from + i * E);
          memcpy(bytes + i * E, &e, E);
        }
        memcpy(&v, bytes, 16);
      }
      *reinterpret_cast<Bits16*>(dst + r * pitch + c * 16) = v;
    }
  }
}
// The staging kernel's body for elements of `elem_bytes` bytes (1, 2, 4 or 8).
__device__ __forceinline__ void stage_rows_of(const void* src, void* dst, long long rows, long long row_bytes,
                                              long long pitch, int elem_bytes, int row_threads) {
  const unsigned char* s = static_cast<const unsigned char*>(src);
  unsigned char* d = static_cast<unsigned char*>(dst);
  switch (elem_bytes) {
    case 1: stage_rows<u8>(s, d, rows, row_bytes, pitch, row_threads); break;
    case 2: stage_rows<u16>(s, d, rows, row_bytes, pitch, row_threads); break;
    case 4: stage_rows<u32>(s, d, rows, row_bytes, pitch, row_threads); break;
    default: stage_rows<u64>(s, d, rows, row_bytes, pitch, row_threads); break;
  }
}
