#include "compiler/backends/cuda/nvrtc.h"

#include <cstdlib>
#include <mutex>
#include <thread>
#include <sys/stat.h>

#include "compiler/backends/rtc_library.h"

namespace tlc::cuda {

namespace {

#include "tlc_cuda_header.inc"  // kTlcCudaHeader, generated from runtime/cuda/tlc_cuda.h

// NVRTC's entry points beyond those every runtime compiler has.
struct Nvrtc : backend::RtcLibrary {
  SizeFn cubinSize = nullptr, ptxSize = nullptr;
  GetFn cubin = nullptr, ptx = nullptr;
};

bool fileExists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

Nvrtc& nvrtc() {
  static Nvrtc lib;
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::string> candidates;
    if (const char* env = std::getenv("TLC_NVRTC")) candidates.push_back(env);
    for (const char* n : {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"}) candidates.push_back(n);
    for (const char* n : {"/lib64/libnvrtc.so", "/lib64/libnvrtc.so.13", "/lib64/libnvrtc.so.12"})
      candidates.push_back(cudaHome() + n);
    if (lib.load(candidates, "nvrtc")) {
      lib.cubinSize = (Nvrtc::SizeFn)lib.symbol("nvrtcGetCUBINSize");
      lib.cubin = (Nvrtc::GetFn)lib.symbol("nvrtcGetCUBIN");
      lib.ptxSize = (Nvrtc::SizeFn)lib.symbol("nvrtcGetPTXSize");
      lib.ptx = (Nvrtc::GetFn)lib.symbol("nvrtcGetPTX");
      if (lib.cubinSize && lib.cubin && lib.ptxSize && lib.ptx) return;
      lib.handle = nullptr;
      lib.error = "the loaded NVRTC library lacks expected functions (too old?)";
      return;
    }
    lib.error = "cannot load NVRTC (libnvrtc.so): install the CUDA toolkit, or set TLC_NVRTC to the library's path";
  });
  return lib;
}

}  // namespace

const char* deviceHelperHeader() { return kTlcCudaHeader; }

std::string cudaHome() {
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"}) {
    const char* v = std::getenv(env);
    if (v && *v && fileExists(std::string(v) + "/include/cuda_fp16.h")) return v;
  }
  return "/usr/local/cuda";
}

bool nvrtcAvailable(std::string* why) {
  Nvrtc& lib = nvrtc();
  if (!lib.handle && why) *why = lib.error;
  return lib.handle != nullptr;
}

NvrtcResult compileWithNvrtc(const std::string& source, const std::string& arch, bool ptx,
                             const std::vector<std::string>& extraOptions) {
  NvrtcResult result;
  Nvrtc& lib = nvrtc();
  if (!lib.handle) {
    result.error = lib.error;
    return result;
  }
  Nvrtc::Program prog = nullptr;
  const char* headers[] = {kTlcCudaHeader};
  const char* names[] = {"tlc_cuda.h"};
  int rc = lib.create(&prog, source.c_str(), "tlc_kernel.cu", 1, headers, names);
  if (rc != 0) {
    result.error = std::string("nvrtcCreateProgram failed: ") + lib.errorString(rc);
    return result;
  }
  // A real architecture gives SASS; PTX is asked of the matching virtual one.
  std::string archOpt = "--gpu-architecture=" + (ptx ? "compute_" + arch.substr(3) : arch);
  std::string includeOpt = "--include-path=" + cudaHome() + "/include";
  std::vector<std::string> opts = {archOpt, includeOpt, "--std=c++17", "-default-device", "--use_fast_math",
                                   "--generate-line-info"};
  opts.insert(opts.end(), extraOptions.begin(), extraOptions.end());
  std::vector<const char*> argv;
  for (auto& o : opts) argv.push_back(o.c_str());
  rc = lib.compile(prog, (int)argv.size(), argv.data());
  result.log = lib.programLog(prog);
  if (rc != 0) {
    result.error = std::string("NVRTC failed to compile the generated CUDA (") + lib.errorString(rc) + "):\n" + result.log;
    lib.destroy(&prog);
    return result;
  }
  size_t size = 0;
  if (ptx) {
    lib.ptxSize(prog, &size);
    result.binary.resize(size);
    lib.ptx(prog, result.binary.data());
    while (!result.binary.empty() && result.binary.back() == '\0') result.binary.pop_back();
  } else {
    lib.cubinSize(prog, &size);
    result.binary.resize(size);
    lib.cubin(prog, result.binary.data());
  }
  lib.destroy(&prog);
  result.ok = true;
  return result;
}

std::vector<NvrtcResult> compileConcurrentlyWithNvrtc(const std::vector<std::string>& sources,
                                                      const std::string& arch, bool ptx,
                                                      const std::vector<std::string>& extraOptions) {
  std::vector<NvrtcResult> results(sources.size());
  std::vector<std::thread> threads;
  for (size_t i = 1; i < sources.size(); ++i)
    threads.emplace_back([&, i] { results[i] = compileWithNvrtc(sources[i], arch, ptx, extraOptions); });
  if (!sources.empty()) results[0] = compileWithNvrtc(sources[0], arch, ptx, extraOptions);
  for (std::thread& t : threads) t.join();
  return results;
}

}  // namespace tlc::cuda
