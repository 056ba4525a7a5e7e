// tlc_cuda_runner: runs .tl kernels on a GPU without the rest of tlc (no
// LLVM), for GPU machines that only get this one binary.
//
//   tlc_cuda_runner FILE [-D NAME=VALUE]... [--dim NAME=SIZE]... [--kernel NAME]
//                   [--seed N] [--arch sm_90] [--check] [--bench]
//                   [--cublas] [--copy-bandwidth] [--emit]
//
// --check compares with the reference interpreter; --bench times the kernel.
// --cublas (with --bench on a gemm) times cuBLAS on the kernel's M x N x K
// (BATCH products when the kernel has that dimension) with the element type
// of its first tensor (float16, bfloat16, or int8 with B as [N, K] and int32
// C) in the same process, before and after the kernel and for as long as the
// kernel each time, and prints the ratio to the faster.
// --copy-bandwidth (with --bench) measures device-to-device copy bandwidth
// in the same process and prints the kernel's fraction of it.
#include <dlfcn.h>

#include <fstream>
#include <iostream>
#include <random>
#include <algorithm>
#include <cstring>
#include <sstream>

#include "compiler/backends/cuda/cuda_archs.h"
#include "compiler/backends/cuda/cuda_driver.h"
#include "compiler/driver/cuda_target.h"
#include "compiler/sema/frontend.h"

using namespace tlc;

namespace {

int usage() {
  std::cerr << "usage: tlc_cuda_runner FILE [-D NAME=VALUE]... [--dim NAME=SIZE]... [--kernel NAME] [--seed N]\n"
               "                       [--load DIR] [--arch sm_XX] [--check] [--bench] [--cublas] [--copy-bandwidth] [--emit]\n"
               "                       [--no-warp-specialize]\n";
  return 2;
}

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

// The element type cuBLAS is timed with: that of the gemm's first tensor.
enum class GemmKind { F16, BF16, I8 };
const char* gemmKindName(GemmKind k) { return k == GemmKind::I8 ? "int8" : k == GemmKind::BF16 ? "bfloat16" : "float16"; }

// Times cuBLAS (row-major C = A @ B, `batch` independent products) in ms:
// 16-bit inputs with float32 accumulation into 16-bit C (GemmEx), or int8
// inputs with B given as [N, K] and int32 accumulation into int32 C (its
// int8 tensor-core form).
double timeCublas(cuda::CudaDriver* drv, int64_t M, int64_t N, int64_t K, int64_t batch, GemmKind kind,
                  std::string* why) {
  void* h = nullptr;
  for (const char* n : {"libcublas.so", "libcublas.so.13", "libcublas.so.12"})
    if ((h = dlopen(n, RTLD_NOW | RTLD_GLOBAL))) break;
  if (!h) {
    *why = "cannot load libcublas.so";
    return -1;
  }
  using Create = int (*)(void**);
  using Gemm = int (*)(void*, int, int, int, int, int, const void*, const void*, int, int, long long, const void*,
                       int, int, long long, const void*, void*, int, int, long long, int, int, int);
  auto create = (Create)dlsym(h, "cublasCreate_v2");
  auto gemm = (Gemm)dlsym(h, "cublasGemmStridedBatchedEx");
  if (!create || !gemm) {
    *why = "libcublas lacks cublasCreate_v2 / cublasGemmStridedBatchedEx";
    return -1;
  }
  void* handle = nullptr;
  if (create(&handle) != 0) {
    *why = "cublasCreate failed";
    return -1;
  }
  bool i8 = kind == GemmKind::I8;
  int64_t in = i8 ? 1 : 2, out = i8 ? 4 : 2;
  cuda::CUdeviceptr a, b, c;
  drv->alloc(&a, batch * M * K * in);
  drv->alloc(&b, batch * K * N * in);
  drv->alloc(&c, batch * M * N * out);
  auto ha = randomHalves(batch * M * K * in / 2 + 1, kind == GemmKind::BF16, 1);
  auto hb = randomHalves(batch * K * N * in / 2 + 1, kind == GemmKind::BF16, 2);
  drv->copyToDevice(a, ha.data(), batch * M * K * in);
  drv->copyToDevice(b, hb.data(), batch * K * N * in);
  float alpha = 1, beta = 0;
  int32_t ialpha = 1, ibeta = 0;
  int type = i8 ? 3 : kind == GemmKind::BF16 ? 14 : 2;  // CUDA_R_8I / CUDA_R_16BF / CUDA_R_16F
  int ctype = i8 ? 10 : type;                           // CUDA_R_32I
  int compute = i8 ? 72 : 68;                           // CUBLAS_COMPUTE_32I / CUBLAS_COMPUTE_32F
  auto run = [&] {
    // Column-major view: C^T (N x M) = op(B) (N x K) @ A^T (K x M); int8's B
    // is [N, K] row-major, so op(B) transposes it (the TN form).
    return gemm(handle, i8 ? 1 : 0, 0, (int)N, (int)M, (int)K, i8 ? (const void*)&ialpha : &alpha, (void*)b, type,
                i8 ? (int)K : (int)N, K * N, (void*)a, type, (int)K, M * K, i8 ? (const void*)&ibeta : &beta, (void*)c,
                ctype, (int)N, M * N, (int)batch, compute, -1 /*CUBLAS_GEMM_DEFAULT*/) == 0;
  };
  for (int i = 0; i < 3; ++i)
    if (!run()) {
      *why = "cublasGemmStridedBatchedEx failed";
      return -1;
    }
  drv->synchronize();
  // Timed like the kernel (--bench): launches for about 0.5 s, so that both
  // run at the clocks the GPU sustains, not only at its first boost.
  double one = drv->time(run);
  int runs = driver::sustainedRuns(one, 20);
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) times.push_back(drv->time(run));
  std::sort(times.begin(), times.end());
  drv->free(a);
  drv->free(b);
  drv->free(c);
  return times[times.size() / 2];
}

// Device-to-device copy bandwidth in GB/s counting read + write.
double copyBandwidth(cuda::CudaDriver* drv) {
  size_t bytes = size_t(1) << 30;
  cuda::CUdeviceptr a, b;
  if (!drv->alloc(&a, bytes) || !drv->alloc(&b, bytes)) return -1;
  drv->memset8(a, 1, bytes);
  auto run = [&] { return drv->copyDeviceToDevice(b, a, bytes); };
  run();
  std::vector<double> times;
  for (int i = 0; i < 20; ++i) times.push_back(drv->time(run));
  std::sort(times.begin(), times.end());
  drv->free(a);
  drv->free(b);
  return 2.0 * bytes / (times[times.size() / 2] * 1e-3) / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  std::string file, arch = "sm_90";
  std::vector<Define> defines;
  driver::RunSettings settings;
  bool cublas = false, copyBw = false, emit = false, warpSpecialize = true;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    auto value = [&](const std::string& flag) {
      if (a.rfind(flag + "=", 0) == 0) return a.substr(flag.size() + 1);
      return next();
    };
    auto is = [&](const std::string& flag) { return a == flag || a.rfind(flag + "=", 0) == 0; };
    if (a == "-D" || (a.rfind("-D", 0) == 0 && a.size() > 2)) {
      std::string d = a == "-D" ? next() : a.substr(2);
      auto eq = d.find('=');
      if (eq == std::string::npos) return usage();
      defines.push_back({d.substr(0, eq), d.substr(eq + 1)});
    } else if (is("--dim")) {
      auto d = driver::parseDimSetting(value("--dim"));
      if (!d) return usage();
      settings.dims[d->first] = d->second;
    } else if (is("--kernel")) {
      settings.kernel = value("--kernel");
    } else if (is("--seed")) {
      settings.seed = std::stoull(value("--seed"));
    } else if (is("--load")) {
      settings.loadDir = value("--load");
    } else if (is("--arch")) {
      if (!cuda::parseCudaTarget(value("--arch"), &arch)) return usage();
      if (!cuda::isSupportedCudaArch(arch)) {
        std::string list;
        for (const std::string& a : cuda::supportedCudaArchs()) list += (list.empty() ? "" : ", ") + a;
        std::cerr << "tlc_cuda_runner: --arch " << arch << " is not supported; use one of " << list << "\n";
        return 2;
      }
    } else if (a == "--check") {
      settings.check = true;
    } else if (a == "--bench") {
      settings.bench = true;
    } else if (a == "--cublas") {
      cublas = true;
    } else if (a == "--copy-bandwidth") {
      copyBw = true;
    } else if (a == "--emit") {
      emit = true;
    } else if (a == "--no-warp-specialize") {
      warpSpecialize = false;
    } else if (!a.empty() && a[0] != '-' && file.empty()) {
      file = a;
    } else {
      return usage();
    }
  }
  if (file.empty()) return usage();
  SourceManager sources;
  DiagnosticEngine diags(sources);
  std::ifstream in(file);
  if (!in) {
    std::cerr << "tlc_cuda_runner: cannot read " << file << "\n";
    return 1;
  }
  std::stringstream text;
  text << in.rdbuf();
  uint32_t id = sources.addBuffer(file, text.str());
  int rc = 0;
  try {
    auto module = compileSource(sources, diags, id, defines);
    if (!module) {
      std::cerr << diags.renderAll();
      return 1;
    }
    driver::CudaOptions options;
    options.arch = arch;
    options.warpSpecialize = warpSpecialize;
    if (emit) {
      rc = driver::emitCuda(*module, false, options, std::cout, diags);
      std::cerr << diags.renderAll();
      return rc;
    }
    // cuBLAS is timed before and after the kernel, each time for as long as
    // the kernel (about 0.5 s of launches), and the faster median is the
    // reference: both then run at the clocks the GPU sustains, and the
    // comparison never favours the kernel by the order of the runs.
    auto dim = [&](const char* n) -> int64_t {
      if (auto it = settings.dims.find(n); it != settings.dims.end()) return it->second;
      for (auto& d : defines)
        if (d.name == n) return std::stoll(d.value);
      return 0;
    };
    int64_t M = dim("M"), N = dim("N"), K = dim("K"), batch = std::max<int64_t>(1, dim("BATCH"));
    GemmKind kind = GemmKind::F16;
    for (auto& p : module->funcs[0]->params)
      if (p.buffer) {
        if (p.buffer->dtype == DType::BFloat16) kind = GemmKind::BF16;
        if (p.buffer->dtype == DType::Int8) kind = GemmKind::I8;
        break;
      }
    std::string why;
    double cublasMs = -1;
    if (cublas && settings.bench) {
      cuda::CudaDriver* drv = cuda::CudaDriver::get(&why);
      if (!drv || (cublasMs = timeCublas(drv, M, N, K, batch, kind, &why)) < 0) {
        std::cerr << "cublas: " << why << "\n";
        return 1;
      }
    }
    rc = driver::runOnCuda(*module, settings, options, diags);
    std::cerr << diags.renderAll();
    if (rc != 0 || !settings.bench) return rc;
    auto& bench = driver::lastCudaBench();
    if (!bench) return rc;
    cuda::CudaDriver* drv = cuda::CudaDriver::get(&why);
    if (cublas) {
      double after = timeCublas(drv, M, N, K, batch, kind, &why);
      if (after < 0) {
        std::cerr << "cublas: " << why << "\n";
        return 1;
      }
      double ms = std::min(cublasMs, after);
      double flops = 2.0 * batch * M * N * K;
      std::cout << "cublas: " << gemmKindName(kind) << " " << (batch > 1 ? std::to_string(batch) + "x" : "") << M << "x"
                << N << "x" << K << ": median " << ms << " ms, " << flops / (ms * 1e-3) / 1e12 << " TFLOP/s (the faster of the runs before and after: "
                << flops / (cublasMs * 1e-3) / 1e12 << ", " << flops / (after * 1e-3) / 1e12 << "); tlc "
                << flops / (bench->medianMs * 1e-3) / 1e12 << " TFLOP/s; ratio tlc/cublas = " << ms / bench->medianMs
                << "\n";
    }
    if (copyBw) {
      double bw = copyBandwidth(drv);
      double ours = bench->bytes / (bench->medianMs * 1e-3) / 1e9;
      std::cout << "copy bandwidth: " << bw << " GB/s (device-to-device, read + write); tlc " << ours
                << " GB/s; ratio = " << ours / bw << "\n";
    }
  } catch (const InternalError& e) {
    std::cerr << "tlc_cuda_runner: internal error: " << e.what() << "\n";
    return 70;
  }
  return rc;
}
