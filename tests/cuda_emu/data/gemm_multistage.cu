// A hand-written multistage tensor-core GEMM in the style tlc's CUDA backend
// emits (helpers from tlc_cuda.h: cp.async, ldmatrix, mma.sync), used to test
// that the CUDA emulator runs such kernels correctly and that its checks fire
// when bugs are planted. Each BUG_* macro plants one bug.
//
// C[M,N] (float) = A[M,K] (half, row-major) * B[K,N] (half, row-major).
// Block tile 64x64x32, 4 warps as 2x2 (each 32x32), 3 stages, XOR-swizzled
// shared tiles. Requires K % 8 == 0 and N % 8 == 0; M arbitrary.
#include "tlc_cuda.h"

#define BM 64
#define BN 64
#define BK 32
#define STAGES 3

// Swizzled 16-byte chunk of a row: A rows are 4 chunks (64 B), B rows 8 (128 B).
__device__ __forceinline__ int swz_a(int row, int chunk) {
#if defined(BUG_NO_SWIZZLE)
  return row * 4 + chunk;
#else
  return row * 4 + (chunk ^ ((row >> 1) & 3));
#endif
}
__device__ __forceinline__ int swz_a_read(int row, int chunk) {
#if defined(BUG_SWIZZLE_MISMATCH)
  return row * 4 + chunk;  // reader forgets the swizzle the writer applied
#else
  return swz_a(row, chunk);
#endif
}
__device__ __forceinline__ int swz_b(int row, int chunk) {
#if defined(BUG_NO_SWIZZLE)
  return row * 8 + chunk;
#else
  return row * 8 + (chunk ^ (row & 7));
#endif
}

__device__ __forceinline__ void load_stage(__half* As, __half* Bs, const __half* A, const __half* B,
                                           int M, int N, int K, int m0, int n0, int kt, int tid) {
  const bool tile_valid = kt * BK < K;
  // A: 64 rows x 4 chunks = 256 chunks, 2 per thread.
  for (int i = 0; i < 2; ++i) {
    int c = tid + i * 128;
    int row = c / 4, chunk = c % 4;
    int grow = m0 + row, gk = kt * BK + chunk * 8;
#if defined(BUG_NO_PREDICATE)
    bool valid = tile_valid && gk < K;
#else
    bool valid = tile_valid && grow < M && gk < K;
#endif
    const __half* src = valid ? A + (long)grow * K + gk : A;
    tlc::cp_async16(As + swz_a(row, chunk) * 8, src, valid);
  }
  // B: 32 rows x 8 chunks = 256 chunks, 2 per thread.
  for (int i = 0; i < 2; ++i) {
    int c = tid + i * 128;
    int row = c / 8, chunk = c % 8;
    int gk = kt * BK + row, gn = n0 + chunk * 8;
    bool valid = tile_valid && gk < K && gn < N;
    const __half* src = valid ? B + (long)gk * N + gn : B;
    tlc::cp_async16(Bs + swz_b(row, chunk) * 8, src, valid);
  }
}

extern "C" __global__ void __launch_bounds__(128) gemm_kernel(const __half* __restrict__ A,
                                                             const __half* __restrict__ B,
                                                             float* __restrict__ C, int M, int N, int K) {
  extern __shared__ __align__(128) unsigned char smem[];
  __half* As = reinterpret_cast<__half*>(smem);                   // [STAGES][BM*BK]
  __half* Bs = reinterpret_cast<__half*>(smem) + STAGES * BM * BK;  // [STAGES][BK*BN]
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int wm = warp / 2, wn = warp % 2;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int KT = (K + BK - 1) / BK;
#if defined(BUG_EARLY_EXIT)
  if (m0 + tid / 2 >= M) return;  // exits before the barriers of the main loop
#endif

  float acc[2][4][4];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.f;

  for (int s = 0; s < STAGES - 1; ++s) {
    load_stage(As + s * BM * BK, Bs + s * BK * BN, A, B, M, N, K, m0, n0, s, tid);
    tlc::cp_async_commit();
  }
  for (int kt = 0; kt < KT; ++kt) {
#if defined(BUG_SHORT_WAIT)
    tlc::cp_async_wait<STAGES - 1>();
#else
    tlc::cp_async_wait<STAGES - 2>();
#endif
#if !defined(BUG_NO_BARRIER)
    __syncthreads();
#endif
#if defined(BUG_REFILL_STAGE)
    int refill = kt % STAGES;  // overwrites the stage about to be read
#else
    int refill = (kt + STAGES - 1) % STAGES;
#endif
    load_stage(As + refill * BM * BK, Bs + refill * BK * BN, A, B, M, N, K, m0, n0, kt + STAGES - 1, tid);
    tlc::cp_async_commit();

    const __half* as = As + (kt % STAGES) * BM * BK;
    const __half* bs = Bs + (kt % STAGES) * BK * BN;
    for (int kk = 0; kk < BK / 16; ++kk) {
      unsigned a[2][4], b[4][2];
      for (int mi = 0; mi < 2; ++mi) {
        int row = wm * 32 + mi * 16 + lane % 16;
        int chunk = kk * 2 + lane / 16;
        tlc::ldmatrix_x4(a[mi], as + swz_a_read(row, chunk) * 8);
#if defined(BUG_FRAGMENT)
        unsigned t = a[mi][1];
        a[mi][1] = a[mi][2];
        a[mi][2] = t;
#endif
      }
      for (int nj = 0; nj < 2; ++nj) {
        int krow = kk * 16 + lane % 8 + 8 * ((lane / 8) % 2);
        int chunk = (wn * 32 + nj * 16) / 8 + lane / 16;
        unsigned r[4];
        tlc::ldmatrix_x4_trans(r, bs + swz_b(krow, chunk) * 8);
        b[2 * nj][0] = r[0];
        b[2 * nj][1] = r[1];
        b[2 * nj + 1][0] = r[2];
        b[2 * nj + 1][1] = r[3];
      }
      for (int mi = 0; mi < 2; ++mi)
        for (int ni = 0; ni < 4; ++ni) tlc::mma_m16n8k16_f16(acc[mi][ni], a[mi], b[ni]);
    }
  }
  tlc::cp_async_wait<0>();

  const int g = lane / 4, t4 = lane % 4;
  for (int mi = 0; mi < 2; ++mi)
    for (int ni = 0; ni < 4; ++ni)
      for (int r = 0; r < 4; ++r) {
        int row = m0 + wm * 32 + mi * 16 + g + 8 * (r / 2);
        int col = n0 + wn * 32 + ni * 8 + 2 * t4 + (r % 2);
#if defined(BUG_EPILOGUE_PREDICATE)
        if (row < M) C[(long)row * N + col] = acc[mi][ni][r];
#else
        if (row < M && col < N) C[(long)row * N + col] = acc[mi][ni][r];
#endif
      }
}
