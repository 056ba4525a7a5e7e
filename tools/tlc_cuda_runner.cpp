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
// of its first tensor (float16, bfloat16, int8 with B as [N, K] and int32 C,
// or float8 with B as [N, K] through cublasLt; tools/cublas_timing.h) in the
// same process, before and after the kernel and for as long as the
// kernel each time, and prints the ratio to the faster.
// --copy-bandwidth (with --bench) measures device-to-device copy bandwidth
// in the same process and prints the kernel's fraction of it.

#include <fstream>
#include <iostream>
#include <algorithm>
#include <cstring>
#include <sstream>

#include "compiler/backends/cuda/cuda_archs.h"
#include "compiler/backends/gpu_driver.h"
#include "compiler/driver/cuda_target.h"
#include "compiler/sema/frontend.h"
#include "tools/cublas_timing.h"

using namespace tlc;
using tlc::tools::GemmKind;

namespace {

int usage() {
  std::cerr << "usage: tlc_cuda_runner FILE [-D NAME=VALUE]... [--dim NAME=SIZE]... [--kernel NAME] [--seed N] [--fill NAME=LO:HI]\n"
               "                       [--load DIR] [--arch sm_XX] [--check] [--bench] [--cublas] [--copy-bandwidth] [--emit]\n"
               "                       [--no-warp-specialize] [--persistent | --no-persistent] [--no-async-copies] [--no-tma-staging]\n";
  return 2;
}

// Device-to-device copy bandwidth in GB/s counting read + write.
double copyBandwidth(backend::GpuDriver* drv) {
  size_t bytes = size_t(1) << 30;
  backend::DevicePtr a, b;
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
  bool cublas = false, copyBw = false, emit = false, warpSpecialize = true, persistent = true, stageTma = true,
       asyncCopies = true;
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
    } else if (is("--fill")) {
      auto f = driver::parseFillSetting(value("--fill"));
      if (!f) return usage();
      settings.fills[f->first] = f->second;
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
    } else if (a == "--persistent") {
      persistent = true;
    } else if (a == "--no-persistent") {
      persistent = false;
    } else if (a == "--no-tma-staging") {
      stageTma = false;
    } else if (a == "--no-async-copies") {
      asyncCopies = false;
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
    auto module = compileSource(sources, diags, id, defines, nullptr, "", "cuda:" + arch);
    if (!module) {
      std::cerr << diags.renderAll();
      return 1;
    }
    driver::CudaOptions options;
    options.arch = arch;
    options.warpSpecialize = warpSpecialize;
    options.persistent = persistent;
    options.stageTma = stageTma;
    options.asyncStandaloneCopies = asyncCopies;
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
        if (p.buffer->dtype == DType::Float8E4M3 || p.buffer->dtype == DType::Float8E5M2) kind = GemmKind::F8;
        break;
      }
    std::string why;
    double cublasMs = -1;
    if (cublas && settings.bench) {
      backend::GpuDriver* drv = backend::GpuDriver::get(backend::GpuRuntime::Cuda, &why);
      if (!drv || (cublasMs = tools::timeCublas(drv, M, N, K, batch, kind, &why).ms) < 0) {
        std::cerr << "cublas: " << why << "\n";
        return 1;
      }
    }
    rc = driver::runOnCuda(*module, settings, options, diags);
    std::cerr << diags.renderAll();
    if (rc != 0 || !settings.bench) return rc;
    auto& bench = driver::lastCudaBench();
    if (!bench) return rc;
    backend::GpuDriver* drv = backend::GpuDriver::get(backend::GpuRuntime::Cuda, &why);
    if (cublas) {
      tools::CublasTiming second = tools::timeCublas(drv, M, N, K, batch, kind, &why);
      double after = second.ms;
      if (after < 0) {
        std::cerr << "cublas: " << why << "\n";
        return 1;
      }
      double ms = std::min(cublasMs, after);
      double flops = 2.0 * batch * M * N * K;
      std::cout << "cublas: " << second.configuration << " " << (batch > 1 ? std::to_string(batch) + "x" : "") << M << "x"
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
