// host_app: calls the gemm and softmax kernels of examples/ through the C
// headers that tlc_add_kernel generated, and checks them against plain C++.
//
//   host_app [--target cpu|cuda] [M N K]
//
// The kernels were built ahead of time and are embedded in this program; the
// tlc runtime checks every call's arguments against the kernels' signatures.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gemm.h"
#include "softmax.h"
#ifdef HOST_APP_WITH_CUDA
#include <cuda_runtime.h>
#include GEMM_CUDA_HEADER
#include SOFTMAX_CUDA_HEADER
#endif

namespace {

void referenceGemm(const std::vector<float>& A, const std::vector<float>& B, std::vector<double>& C, int64_t M,
                   int64_t N, int64_t K) {
  C.assign(M * N, 0.0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K; ++k) {
      double a = A[i * K + k];
      for (int64_t j = 0; j < N; ++j) C[i * N + j] += a * B[k * N + j];
    }
}

void referenceSoftmax(const std::vector<float>& X, std::vector<double>& Y, int64_t M, int64_t N) {
  Y.assign(M * N, 0.0);
  for (int64_t i = 0; i < M; ++i) {
    double mx = -INFINITY, sum = 0;
    for (int64_t j = 0; j < N; ++j) mx = std::fmax(mx, X[i * N + j]);
    for (int64_t j = 0; j < N; ++j) sum += std::exp(X[i * N + j] - mx);
    for (int64_t j = 0; j < N; ++j) Y[i * N + j] = std::exp(X[i * N + j] - mx) / sum;
  }
}

double maxRelError(const std::vector<float>& got, const std::vector<double>& ref) {
  double scale = 0, err = 0;
  for (double r : ref) scale = std::fmax(scale, std::fabs(r));
  for (size_t i = 0; i < ref.size(); ++i) err = std::fmax(err, std::fabs(got[i] - ref[i]));
  return scale > 0 ? err / scale : err;
}

bool check(const char* what, tlc_status st) {
  if (st == TLC_SUCCESS) return true;
  std::fprintf(stderr, "host_app: %s failed (%s): %s\n", what, tlcStatusName(st), tlcGetLastError());
  return false;
}

// Device buffers for --target cuda; host pointers on the CPU.
struct Buffers {
  bool device;
  std::vector<void*> owned;
  float* put(const std::vector<float>& host) {
#ifdef HOST_APP_WITH_CUDA
    if (device) {
      void* p = nullptr;
      if (cudaMalloc(&p, host.size() * sizeof(float)) != cudaSuccess) std::exit(1);
      cudaMemcpy(p, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice);
      owned.push_back(p);
      return static_cast<float*>(p);
    }
#endif
    return const_cast<float*>(host.data());
  }
  void get(std::vector<float>& host, const float* p) {
#ifdef HOST_APP_WITH_CUDA
    if (device) {
      cudaDeviceSynchronize();
      cudaMemcpy(host.data(), p, host.size() * sizeof(float), cudaMemcpyDeviceToHost);
    }
#endif
    (void)host, (void)p;
  }
  ~Buffers() {
#ifdef HOST_APP_WITH_CUDA
    for (void* p : owned) cudaFree(p);
#endif
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::string target = "cpu";
  std::vector<int64_t> dims;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--target") && i + 1 < argc) target = argv[++i];
    else dims.push_back(std::atoll(argv[i]));
  }
  int64_t M = dims.size() > 0 ? dims[0] : 257, N = dims.size() > 1 ? dims[1] : 190, K = dims.size() > 2 ? dims[2] : 131;

  tlc_module* gemm = gemm_module();
  tlc_module* softmax = softmax_module();
  if (target == "cuda") {
#ifdef HOST_APP_WITH_CUDA
    gemm = GEMM_CUDA_MODULE();
    softmax = SOFTMAX_CUDA_MODULE();
#else
    std::fprintf(stderr, "host_app: built without CUDA kernels (configure with -DHOST_APP_CUDA=ON)\n");
    return 2;
#endif
  } else if (target != "cpu") {
    std::fprintf(stderr, "host_app: unknown target `%s` (cpu or cuda)\n", target.c_str());
    return 2;
  }
  if (!gemm || !softmax) {
    std::fprintf(stderr, "host_app: cannot load the kernels: %s\n", tlcGetLastError());
    return 1;
  }

  std::mt19937 rng(2024);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> A(M * K), B(K * N), C(M * N), X(M * N), Y(M * N);
  for (auto* v : {&A, &B, &X})
    for (float& x : *v) x = u(rng);
  for (float& x : X) x *= 8.0f;

  Buffers buf{target == "cuda", {}};
  float *dA = buf.put(A), *dB = buf.put(B), *dC = buf.put(C), *dX = buf.put(X), *dY = buf.put(Y);
  // Shape symbols are passed in their order of first appearance (see the headers).
  if (!check("gemm", gemm_launch(gemm, dA, dB, dC, M, K, N, nullptr))) return 1;
  if (!check("softmax", softmax_launch(softmax, dX, dY, M, N, nullptr))) return 1;
  buf.get(C, dC);
  buf.get(Y, dY);

  std::vector<double> refC, refY;
  referenceGemm(A, B, refC, M, N, K);
  referenceSoftmax(X, refY, M, N);
  double eGemm = maxRelError(C, refC), eSoftmax = maxRelError(Y, refY);
  std::printf("host_app on %s: gemm %lldx%lldx%lld max rel error %.2e; softmax %lldx%lld max rel error %.2e\n",
              tlcModuleTarget(gemm), (long long)M, (long long)N, (long long)K, eGemm, (long long)M, (long long)N,
              eSoftmax);
  // float32 everywhere on the CPU; tf32 tensor cores on CUDA.
  double tol = target == "cuda" ? 2e-2 : 1e-4;
  if (eGemm > tol || eSoftmax > tol) {
    std::fprintf(stderr, "host_app: results differ from the reference\n");
    return 1;
  }
  std::printf("host_app: OK\n");
  return 0;
}
