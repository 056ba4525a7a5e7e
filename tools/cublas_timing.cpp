#include "tools/cublas_timing.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "compiler/driver/cuda_target.h"

namespace tlc::tools {

namespace {

// Random values in (-1, 1) as float16 / bfloat16 bit patterns.
std::vector<uint16_t> randomHalves(size_t n, bool bf16, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<uint16_t> v(n);
  for (auto& x : v) {
    float f = dist(rng);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if (bf16) {
      x = (uint16_t)((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
    } else {
      // float -> half for |f| < 1 (normal range only; tiny values flush to zero).
      int exp = (int)((bits >> 23) & 0xff) - 127 + 15;
      uint16_t sign = (uint16_t)((bits >> 16) & 0x8000);
      if (exp <= 0) x = sign;
      else x = (uint16_t)(sign | (exp << 10) | ((bits >> 13) & 0x3ff));
    }
  }
  return v;
}

void* openLibrary(const char* const* names, std::string* why) {
  for (const char* const* n = names; *n; ++n)
    if (void* h = dlopen(*n, RTLD_NOW | RTLD_GLOBAL)) return h;
  *why = std::string("cannot load ") + names[0];
  return nullptr;
}

// Median milliseconds of `run` launched for about as long as a kernel's
// --bench, after three warm-up runs; negative when a run fails.
template <class F>
double sustainedMedian(backend::GpuDriver* drv, F&& run) {
  for (int i = 0; i < 3; ++i)
    if (!run()) return -1;
  drv->synchronize();
  double one = drv->time(run);
  if (one < 0) return -1;
  int runs = driver::sustainedRuns(one, 20);
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) times.push_back(drv->time(run));
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Device buffers for A, B and C, freed on destruction.
struct Operands {
  backend::GpuDriver* drv;
  backend::DevicePtr a = 0, b = 0, c = 0;
  Operands(backend::GpuDriver* d, size_t aBytes, size_t bBytes, size_t cBytes, bool bf16) : drv(d) {
    drv->alloc(&a, aBytes);
    drv->alloc(&b, bBytes);
    drv->alloc(&c, cBytes);
    auto ha = randomHalves(aBytes / 2 + 1, bf16, 1), hb = randomHalves(bBytes / 2 + 1, bf16, 2);
    drv->copyToDevice(a, ha.data(), aBytes);
    drv->copyToDevice(b, hb.data(), bBytes);
  }
  ~Operands() {
    drv->free(a);
    drv->free(b);
    drv->free(c);
  }
};

CublasTiming timeGemmEx(backend::GpuDriver* drv, int64_t M, int64_t N, int64_t K, int64_t batch, GemmKind kind,
                        std::string* why) {
  static const char* const names[] = {"libcublas.so", "libcublas.so.13", "libcublas.so.12", nullptr};
  void* h = openLibrary(names, why);
  if (!h) return {};
  using Create = int (*)(void**);
  using Gemm = int (*)(void*, int, int, int, int, int, const void*, const void*, int, int, long long, const void*,
                       int, int, long long, const void*, void*, int, int, long long, int, int, int);
  auto create = (Create)dlsym(h, "cublasCreate_v2");
  auto gemm = (Gemm)dlsym(h, "cublasGemmStridedBatchedEx");
  if (!create || !gemm) {
    *why = "libcublas lacks cublasCreate_v2 / cublasGemmStridedBatchedEx";
    return {};
  }
  void* handle = nullptr;
  if (create(&handle) != 0) {
    *why = "cublasCreate failed";
    return {};
  }
  bool i8 = kind == GemmKind::I8;
  int64_t in = i8 ? 1 : 2, out = i8 ? 4 : 2;
  Operands ops(drv, batch * M * K * in, batch * K * N * in, batch * M * N * out, kind == GemmKind::BF16);
  float alpha = 1, beta = 0;
  int32_t ialpha = 1, ibeta = 0;
  int type = i8 ? 3 : kind == GemmKind::BF16 ? 14 : 2;  // CUDA_R_8I / CUDA_R_16BF / CUDA_R_16F
  int ctype = i8 ? 10 : type;                           // CUDA_R_32I
  int compute = i8 ? 72 : 68;                           // CUBLAS_COMPUTE_32I / CUBLAS_COMPUTE_32F
  auto run = [&] {
    // Column-major view: C^T (N x M) = op(B) (N x K) @ A^T (K x M); int8's B
    // is [N, K] row-major, so op(B) transposes it (the TN form).
    return gemm(handle, i8 ? 1 : 0, 0, (int)N, (int)M, (int)K, i8 ? (const void*)&ialpha : &alpha, (void*)ops.b, type,
                i8 ? (int)K : (int)N, K * N, (void*)ops.a, type, (int)K, M * K, i8 ? (const void*)&ibeta : &beta,
                (void*)ops.c, ctype, (int)N, M * N, (int)batch, compute, -1 /*CUBLAS_GEMM_DEFAULT*/) == 0;
  };
  CublasTiming t;
  t.ms = sustainedMedian(drv, run);
  if (t.ms < 0) *why = "cublasGemmStridedBatchedEx failed";
  t.configuration = std::string("cublasGemmStridedBatchedEx, ") + gemmKindName(kind);
  return t;
}

// cublasLt's float8 gemm: e4m3 x e4m3 -> bfloat16 with float32 accumulation.
CublasTiming timeLtFloat8(backend::GpuDriver* drv, int64_t M, int64_t N, int64_t K, int64_t batch, std::string* why) {
  static const char* const names[] = {"libcublasLt.so", "libcublasLt.so.13", "libcublasLt.so.12", nullptr};
  void* h = openLibrary(names, why);
  if (!h) return {};
  using Create = int (*)(void**);
  using DescCreate = int (*)(void**, int, int);
  using SetAttr = int (*)(void*, int, const void*, size_t);
  using LayoutCreate = int (*)(void**, int, uint64_t, uint64_t, int64_t);
  using PrefCreate = int (*)(void**);
  struct Heuristic {
    uint64_t algo[8];
    size_t workspaceSize;
    int state;
    float wavesCount;
    int reserved[4];
  };
  using GetHeuristic = int (*)(void*, void*, void*, void*, void*, void*, void*, int, Heuristic*, int*);
  using Matmul = int (*)(void*, void*, const void*, const void*, void*, const void*, void*, const void*, const void*,
                         void*, void*, void*, const void*, void*, size_t, void*);
  auto create = (Create)dlsym(h, "cublasLtCreate");
  auto descCreate = (DescCreate)dlsym(h, "cublasLtMatmulDescCreate");
  auto descSet = (SetAttr)dlsym(h, "cublasLtMatmulDescSetAttribute");
  auto layoutCreate = (LayoutCreate)dlsym(h, "cublasLtMatrixLayoutCreate");
  auto layoutSet = (SetAttr)dlsym(h, "cublasLtMatrixLayoutSetAttribute");
  auto prefCreate = (PrefCreate)dlsym(h, "cublasLtMatmulPreferenceCreate");
  auto prefSet = (SetAttr)dlsym(h, "cublasLtMatmulPreferenceSetAttribute");
  auto heuristic = (GetHeuristic)dlsym(h, "cublasLtMatmulAlgoGetHeuristic");
  auto matmul = (Matmul)dlsym(h, "cublasLtMatmul");
  if (!create || !descCreate || !descSet || !layoutCreate || !layoutSet || !prefCreate || !prefSet || !heuristic ||
      !matmul) {
    *why = "libcublasLt lacks the cublasLtMatmul entry points";
    return {};
  }
  void* handle = nullptr;
  if (create(&handle) != 0) {
    *why = "cublasLtCreate failed";
    return {};
  }
  const int kE4M3 = 28, kBF16 = 14, kF32 = 0, kCompute32F = 68;
  const int kTransA = 3, kTransB = 4, kFastAccum = 25, kBatchCount = 5, kStridedBatchOffset = 6;
  const int kMaxWorkspace = 1;
  size_t workspaceBytes = 64ull << 20;
  Operands ops(drv, batch * M * K, batch * N * K, batch * M * N * 2, false);
  backend::DevicePtr workspace = 0;
  drv->alloc(&workspace, workspaceBytes);
  // Column-major view: D^T (N x M) = B (N x K, stored [N, K] row-major: op T
  // of a K x N column-major matrix) @ A^T (K x M: A [M, K] row-major).
  void *la = nullptr, *lb = nullptr, *lc = nullptr;
  layoutCreate(&la, kE4M3, (uint64_t)K, (uint64_t)N, K);
  layoutCreate(&lb, kE4M3, (uint64_t)K, (uint64_t)M, K);
  layoutCreate(&lc, kBF16, (uint64_t)N, (uint64_t)M, N);
  int32_t count = (int32_t)batch;
  int64_t strides[3] = {N * K, M * K, M * N};
  void* layouts[3] = {la, lb, lc};
  for (int i = 0; i < 3; ++i) {
    layoutSet(layouts[i], kBatchCount, &count, sizeof count);
    layoutSet(layouts[i], kStridedBatchOffset, &strides[i], sizeof strides[i]);
  }
  void* pref = nullptr;
  prefCreate(&pref);
  prefSet(pref, kMaxWorkspace, &workspaceBytes, sizeof workspaceBytes);
  float alpha = 1, beta = 0;
  CublasTiming best;
  for (int8_t fast : {0, 1}) {
    void* desc = nullptr;
    if (descCreate(&desc, kCompute32F, kF32) != 0) continue;
    int32_t opT = 1, opN = 0;
    descSet(desc, kTransA, &opT, sizeof opT);
    descSet(desc, kTransB, &opN, sizeof opN);
    descSet(desc, kFastAccum, &fast, sizeof fast);
    Heuristic result{};
    int found = 0;
    if (heuristic(handle, desc, la, lb, lc, lc, pref, 1, &result, &found) != 0 || found == 0) continue;
    auto run = [&] {
      return matmul(handle, desc, &alpha, (void*)ops.b, la, (void*)ops.a, lb, &beta, (void*)ops.c, lc, (void*)ops.c, lc,
                    result.algo, (void*)workspace, workspaceBytes, nullptr) == 0;
    };
    double ms = sustainedMedian(drv, run);
    if (ms > 0 && (best.ms < 0 || ms < best.ms)) {
      best.ms = ms;
      best.configuration = std::string("cublasLtMatmul, float8 e4m3 -> bfloat16, ") +
                           (fast ? "fast accumulation" : "default accumulation");
    }
  }
  drv->free(workspace);
  if (best.ms < 0) *why = "cublasLt found no float8 algorithm or its matmul failed";
  return best;
}

}  // namespace

const char* gemmKindName(GemmKind k) {
  switch (k) {
    case GemmKind::I8: return "int8";
    case GemmKind::BF16: return "bfloat16";
    case GemmKind::F8: return "float8_e4m3";
    default: return "float16";
  }
}

CublasTiming timeCublas(backend::GpuDriver* drv, int64_t M, int64_t N, int64_t K, int64_t batch, GemmKind kind,
                        std::string* why) {
  if (kind == GemmKind::F8) return timeLtFloat8(drv, M, N, K, batch, why);
  return timeGemmEx(drv, M, N, K, batch, kind, why);
}

}  // namespace tlc::tools
