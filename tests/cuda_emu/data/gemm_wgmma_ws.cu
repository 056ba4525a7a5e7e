// A hand-written warp-specialized Hopper GEMM tile (helpers from tlc_cuda.h:
// mbarriers, tensor copies, wgmma), used to test the CUDA emulator's Hopper
// instructions and checks. Each BUG_* macro plants one bug.
//
// C[M,N] (float) = A[M,K] (half, row-major) * B[K,N] (half, row-major).
// Block tile 64x128x64, 256 threads: warpgroup 0 consumes (wgmma m64n128k16,
// A K-major and B N-major, both 128B-swizzled), warpgroup 1 produces (one
// thread issues the tensor copies) into a 2-stage ring guarded by full and
// empty mbarriers. Tails are handled by the tensor copies' zero fill.
#include "tlc_cuda.h"

#define BM 64
#define BN 128
#define BK 64
#define STAGES 2
#define A_STAGE (BM * BK)  // halves
#define B_STAGE (BK * BN)
#define STAGE_BYTES ((A_STAGE + B_STAGE) * 2)

extern "C" __global__ void __launch_bounds__(256)
    ws_gemm(const __grid_constant__ tlc::TensorMap A_map, const __grid_constant__ tlc::TensorMap B_map, float* C,
            int M, int N, int K) {
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ tlc::u64 full[STAGES], empty[STAGES];
  __half* As = reinterpret_cast<__half*>(smem);
  __half* Bs = reinterpret_cast<__half*>(smem + STAGES * A_STAGE * 2);
  const int tid = threadIdx.x;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int ktiles = (K + BK - 1) / BK;
  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      tlc::mbar_init(&full[s], 1);
      tlc::mbar_init(&empty[s], 1);
    }
    tlc::mbar_init_fence();
  }
  __syncthreads();
  if (tid >= 128) {  // producer warpgroup
    tlc::reg_dealloc<40>();
    if (tid == 128) {
      tlc::tma_prefetch(&A_map);
      tlc::tma_prefetch(&B_map);
      for (int kt = 0; kt < ktiles; ++kt) {
        const int s = kt % STAGES;
        const unsigned phase = (kt / STAGES) & 1;
#if !defined(BUG_NO_EMPTY_WAIT)
        tlc::mbar_wait(&empty[s], phase ^ 1);
#endif
#if defined(BUG_SHORT_TX)
        tlc::mbar_arrive_expect_tx(&full[s], STAGE_BYTES - 1024);
#else
        tlc::mbar_arrive_expect_tx(&full[s], STAGE_BYTES);
#endif
        tlc::tma_load_2d(As + s * A_STAGE, &A_map, &full[s], kt * BK, m0);
        tlc::tma_load_2d(Bs + s * B_STAGE, &B_map, &full[s], n0, kt * BK);
        tlc::tma_load_2d(Bs + s * B_STAGE + BK * 64, &B_map, &full[s], n0 + 64, kt * BK);
      }
    }
    return;
  }
  tlc::reg_alloc<232>();  // consumer warpgroup
  float acc[BN / 2];
  for (int i = 0; i < BN / 2; ++i) acc[i] = 0.f;
  for (int kt = 0; kt < ktiles; ++kt) {
    const int s = kt % STAGES;
    const unsigned phase = (kt / STAGES) & 1;
#if defined(BUG_WRONG_PARITY)
    tlc::mbar_wait(&full[s], phase ^ 1);
#else
    tlc::mbar_wait(&full[s], phase);
#endif
    tlc::wgmma_fence();
    for (int kk = 0; kk < BK / 16; ++kk) {
      // A: 64 rows of 128 B (K-major), 8-row groups 1024 B apart; a k16 step is 32 B.
      tlc::u64 da = tlc::smem_desc(As + s * A_STAGE + kk * 16, 16, 1024, 128);
      // B: N-major, two 64-wide chunks BK * 128 B apart (LBO), 8 k-rows 1024 B
      // apart (SBO); a k16 step is 16 rows of 128 B.
      tlc::u64 db = tlc::smem_desc(Bs + s * B_STAGE + kk * 16 * 64, BK * 128, 1024, 128);
      tlc::wgmma_m64n128k16<0, 0, 1>(acc, da, db, 1);
    }
    tlc::wgmma_commit();
#if defined(BUG_LAST_WAIT_MISSING)
    if (kt + 1 < ktiles) tlc::wgmma_wait<0>();  // the epilogue reads the last group's accumulators unretired
#else
    tlc::wgmma_wait<0>();
#endif
    if (tid == 0) tlc::mbar_arrive(&empty[s]);
  }
  const int w = tid / 32, g = (tid % 32) / 4, q = tid % 4;
  for (int r = 0; r < BN / 2; ++r) {
    const int j = r / 4, e = r % 4;
    const int row = m0 + 16 * w + g + 8 * (e / 2), col = n0 + 8 * j + 2 * q + (e % 2);
    if (row < M && col < N) C[(size_t)row * N + col] = acc[r];
  }
}
