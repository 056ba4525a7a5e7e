// Runs tests/cuda_emu/data/gemm_multistage.cu (with whatever BUG_* macro is
// defined on the command line) on a real GPU and compares C with a
// double-precision reference: the GPU side of the emulator-vs-hardware
// agreement check (tests/cuda_emu/gpu/run_on_gpu.sh).
// Usage: gemm_gpu_check M N K   (exit 0: results match, 1: mismatch, 2: CUDA error)
#include <cuda_fp16.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "../data/gemm_multistage.cu"

#define CK(x)                                                                  \
  do {                                                                         \
    cudaError_t e = (x);                                                       \
    if (e != cudaSuccess) {                                                    \
      std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); \
      return 2;                                                                \
    }                                                                          \
  } while (0)

int main(int argc, char** argv) {
  int M = argc > 1 ? atoi(argv[1]) : 64, N = argc > 2 ? atoi(argv[2]) : 64, K = argc > 3 ? atoi(argv[3]) : 64;
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<__half> A((size_t)M * K), B((size_t)K * N);
  for (auto& x : A) x = __float2half(dist(rng));
  for (auto& x : B) x = __float2half(dist(rng));
  __half *dA, *dB;
  float* dC;
  CK(cudaMalloc(&dA, A.size() * 2));
  CK(cudaMalloc(&dB, B.size() * 2));
  CK(cudaMalloc(&dC, (size_t)M * N * 4));
  CK(cudaMemcpy(dA, A.data(), A.size() * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dB, B.data(), B.size() * 2, cudaMemcpyHostToDevice));
  CK(cudaMemset(dC, 0xff, (size_t)M * N * 4));  // poison: unwritten outputs show as NaN
  dim3 grid((N + 63) / 64, (M + 63) / 64), block(128);
  size_t smem = 3 * (64 * 32 + 32 * 64) * 2;
  gemm_kernel<<<grid, block, smem>>>(dA, dB, dC, M, N, K);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<float> C((size_t)M * N);
  CK(cudaMemcpy(C.data(), dC, C.size() * 4, cudaMemcpyDeviceToHost));
  double maxErr = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double ref = 0;
      for (int k = 0; k < K; ++k)
        ref += (double)__half2float(A[(size_t)i * K + k]) * (double)__half2float(B[(size_t)k * N + j]);
      double e = std::fabs(ref - C[(size_t)i * N + j]);
      if (!(e <= maxErr)) maxErr = std::isnan(e) ? INFINITY : e;
    }
  std::printf("M=%d N=%d K=%d max_abs_err=%g %s\n", M, N, K, maxErr, maxErr < 1e-3 ? "MATCH" : "MISMATCH");
  return maxErr < 1e-3 ? 0 : 1;
}
