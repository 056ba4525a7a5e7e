// Runs the gemm built by tlc_add_kernel (K=96 bound, M and N dynamic)
// through its generated header and checks it against a plain loop; then
// checks that a wrong-shape call is rejected with a message. Built with a
// HIP target, it also loads the embedded code object: on a machine without
// an AMD GPU (or without the HIP runtime) that must fail with the runtime's
// message naming what is missing, never crash.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "gemm.h"
#ifdef TLC_TEST_HIP_HEADER
#include TLC_TEST_HIP_HEADER

// 0 when the HIP module loads, or fails for want of the HIP runtime or a GPU.
static int loadHipModule() {
  tlc_module* hip = TLC_TEST_HIP_MODULE();
  if (hip) {
    std::printf("HIP module loaded: %s, %d kernel(s)\n", tlcModuleTarget(hip), (int)tlcModuleNumKernels(hip));
    return tlcModuleBackend(hip) == TLC_BACKEND_HIP ? 0 : 1;
  }
  const char* why = tlcGetLastError();
  std::printf("HIP module not loaded: %s\n", why);
  return std::strstr(why, "HIP runtime") && (std::strstr(why, "AMD GPU") || std::strstr(why, "not found")) ? 0 : 1;
}
#endif

int main() {
  const int64_t M = 150, N = 70, K = 96;
  std::vector<float> A(M * K), B(K * N), C(M * N, -1.0f);
  for (int64_t i = 0; i < M * K; ++i) A[i] = float((i * 37) % 17) / 8.0f - 1.0f;
  for (int64_t i = 0; i < K * N; ++i) B[i] = float((i * 29) % 13) / 6.0f - 1.0f;
  tlc_module* module = gemm_module();
  if (!module) {
    std::fprintf(stderr, "cannot load the embedded module: %s\n", tlcGetLastError());
    return 1;
  }
  if (gemm_launch(module, A.data(), B.data(), C.data(), M, N, nullptr) != TLC_SUCCESS) {
    std::fprintf(stderr, "launch failed: %s\n", tlcGetLastError());
    return 1;
  }
  double maxErr = 0;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double ref = 0;
      for (int64_t k = 0; k < K; ++k) ref += double(A[i * K + k]) * B[k * N + j];
      maxErr = std::fmax(maxErr, std::fabs(ref - C[i * N + j]));
    }
  std::printf("gemm %lldx%lldx%lld on %s: max abs error %.3g\n", (long long)M, (long long)N, (long long)K,
              tlcModuleTarget(module), maxErr);
  if (maxErr > 1e-3) return 1;

  // The generic API rejects a B of the wrong shape.
  tlc_kernel* kernel = nullptr;
  if (tlcGetKernel(module, "gemm", &kernel) != TLC_SUCCESS) return 1;
  int64_t sa[] = {M, K}, sb[] = {32, N}, sc[] = {M, N};
  tlc_arg args[] = {tlcTensorArg(A.data(), TLC_FLOAT32, 2, sa), tlcTensorArg(B.data(), TLC_FLOAT32, 2, sb),
                    tlcTensorArg(C.data(), TLC_FLOAT32, 2, sc)};
  if (tlcLaunch(kernel, args, 3, nullptr) != TLC_ERROR_SHAPE) return 1;
  std::printf("rejected: %s\n", tlcGetLastError());
#ifdef TLC_TEST_HIP_HEADER
  return loadHipModule();
#else
  return 0;
#endif
}
