#include "compiler/backends/cuda/nvrtc.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <sys/stat.h>

namespace tlc::cuda {

namespace {

#include "tlc_cuda_header.inc"  // kTlcCudaHeader, generated from runtime/cuda/tlc_cuda.h

using Program = void*;
using CreateFn = int (*)(Program*, const char*, const char*, int, const char* const*, const char* const*);
using CompileFn = int (*)(Program, int, const char* const*);
using SizeFn = int (*)(Program, size_t*);
using GetFn = int (*)(Program, char*);
using DestroyFn = int (*)(Program*);
using ErrorStringFn = const char* (*)(int);

struct Nvrtc {
  void* handle = nullptr;
  std::string error;
  CreateFn create = nullptr;
  CompileFn compile = nullptr;
  SizeFn logSize = nullptr, cubinSize = nullptr, ptxSize = nullptr;
  GetFn log = nullptr, cubin = nullptr, ptx = nullptr;
  DestroyFn destroy = nullptr;
  ErrorStringFn errorString = nullptr;
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
    for (auto& c : candidates) {
      lib.handle = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (lib.handle) break;
    }
    if (!lib.handle) {
      lib.error = "cannot load NVRTC (libnvrtc.so): install the CUDA toolkit, or set TLC_NVRTC to the library's path";
      return;
    }
    auto sym = [&](const char* name) { return dlsym(lib.handle, name); };
    lib.create = (CreateFn)sym("nvrtcCreateProgram");
    lib.compile = (CompileFn)sym("nvrtcCompileProgram");
    lib.logSize = (SizeFn)sym("nvrtcGetProgramLogSize");
    lib.log = (GetFn)sym("nvrtcGetProgramLog");
    lib.cubinSize = (SizeFn)sym("nvrtcGetCUBINSize");
    lib.cubin = (GetFn)sym("nvrtcGetCUBIN");
    lib.ptxSize = (SizeFn)sym("nvrtcGetPTXSize");
    lib.ptx = (GetFn)sym("nvrtcGetPTX");
    lib.destroy = (DestroyFn)sym("nvrtcDestroyProgram");
    lib.errorString = (ErrorStringFn)sym("nvrtcGetErrorString");
    if (!lib.create || !lib.compile || !lib.logSize || !lib.log || !lib.cubinSize || !lib.cubin || !lib.ptxSize ||
        !lib.ptx || !lib.destroy || !lib.errorString) {
      lib.error = "the loaded NVRTC library lacks expected functions (too old?)";
      lib.handle = nullptr;
    }
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
  Program prog = nullptr;
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
  size_t logSize = 0;
  lib.logSize(prog, &logSize);
  if (logSize > 1) {
    result.log.resize(logSize);
    lib.log(prog, result.log.data());
    result.log.resize(logSize - 1);
  }
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

}  // namespace tlc::cuda
