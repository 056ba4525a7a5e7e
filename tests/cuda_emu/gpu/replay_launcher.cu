// Repeats one emulated launch on a GPU and compares the results with the
// emulator's: reads a replay bundle written by the CUDA emulator
// (LaunchOptions::replayDir: launch.txt, argI.in.bin, argI.emu.bin) and a
// cubin compiled from the bundle's kernel.cu, launches the kernel with the
// same inputs through the driver API, and compares every writable buffer
// element-wise (float types with a tolerance for accumulation order,
// integers exactly).
// Usage: replay_launcher BUNDLE_DIR KERNEL.cubin   (exit 0: agree, 1: differ, 2: error)
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#define CK(x)                                                        \
  do {                                                               \
    CUresult e = (x);                                                \
    if (e != CUDA_SUCCESS) {                                         \
      const char* s = nullptr;                                       \
      cuGetErrorString(e, &s);                                       \
      std::printf("CUDA error %s at line %d\n", s ? s : "?", __LINE__); \
      return 2;                                                      \
    }                                                                \
  } while (0)

struct Arg {
  bool buffer = false;
  std::string name, dtype;
  size_t bytes = 0;
  bool writable = false;
  std::vector<unsigned char> scalar;
  std::vector<unsigned char> in, emu, gpu;
  CUdeviceptr dev = 0;
};

static std::vector<unsigned char> readAll(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return std::vector<unsigned char>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

static double element(const std::string& dt, const unsigned char* p) {
  if (dt == "float32") { float v; std::memcpy(&v, p, 4); return v; }
  if (dt == "float64") { double v; std::memcpy(&v, p, 8); return v; }
  if (dt == "float16") { __half v; std::memcpy(&v, p, 2); return __half2float(v); }
  if (dt == "bfloat16") { __nv_bfloat16 v; std::memcpy(&v, p, 2); return __bfloat162float(v); }
  if (dt == "int32") { int v; std::memcpy(&v, p, 4); return v; }
  if (dt == "int64") { long long v; std::memcpy(&v, p, 8); return (double)v; }
  return p[0];
}
static int elemBytes(const std::string& dt) {
  if (dt == "float64" || dt == "int64" || dt == "uint64") return 8;
  if (dt == "float32" || dt == "int32" || dt == "uint32") return 4;
  if (dt == "float16" || dt == "bfloat16" || dt == "int16" || dt == "uint16") return 2;
  return 1;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    std::printf("usage: %s BUNDLE_DIR KERNEL.cubin\n", argv[0]);
    return 2;
  }
  std::string dir = argv[1];
  std::ifstream man(dir + "/launch.txt");
  std::string kernel, line;
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  size_t shared = 0;
  std::vector<Arg> args;
  while (std::getline(man, line)) {
    std::istringstream ss(line);
    std::string key;
    ss >> key;
    if (key == "kernel") ss >> kernel;
    else if (key == "grid") ss >> grid[0] >> grid[1] >> grid[2];
    else if (key == "block") ss >> block[0] >> block[1] >> block[2];
    else if (key == "shared") ss >> shared;
    else if (key == "buffer") {
      Arg a;
      a.buffer = true;
      int w;
      ss >> a.name >> a.bytes >> w >> a.dtype;
      a.writable = w != 0;
      size_t i = args.size();
      a.in = readAll(dir + "/arg" + std::to_string(i) + ".in.bin");
      a.emu = readAll(dir + "/arg" + std::to_string(i) + ".emu.bin");
      args.push_back(a);
    } else if (key == "scalar") {
      Arg a;
      ss >> a.name >> a.bytes;
      for (size_t b = 0; b < a.bytes; ++b) {
        int v;
        ss >> v;
        a.scalar.push_back((unsigned char)v);
      }
      args.push_back(a);
    }
  }
  CK(cuInit(0));
  CUdevice dev;
  CK(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(cuCtxSetCurrent(ctx));
  CUmodule mod;
  CK(cuModuleLoad(&mod, argv[2]));
  CUfunction fn;
  CK(cuModuleGetFunction(&fn, mod, kernel.c_str()));
  if (shared > 48 * 1024) CK(cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)shared));
  std::vector<void*> params;
  for (auto& a : args) {
    if (a.buffer) {
      CK(cuMemAlloc(&a.dev, a.bytes ? a.bytes : 1));
      if (a.bytes) CK(cuMemcpyHtoD(a.dev, a.in.data(), a.bytes));
      params.push_back(&a.dev);
    } else {
      params.push_back(a.scalar.data());
    }
  }
  CK(cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], (unsigned)shared, nullptr,
                    params.data(), nullptr));
  CK(cuCtxSynchronize());
  int status = 0;
  for (auto& a : args) {
    if (!a.buffer || !a.writable) continue;
    a.gpu.resize(a.bytes);
    CK(cuMemcpyDtoH(a.gpu.data(), a.dev, a.bytes));
    int eb = elemBytes(a.dtype);
    bool isFloat = a.dtype.rfind("float", 0) == 0 || a.dtype == "bfloat16";
    double tol = a.dtype == "float16" || a.dtype == "bfloat16" ? 1e-2 : 1e-3;
    size_t bad = 0, n = a.bytes / eb;
    double worst = 0;
    for (size_t i = 0; i < n; ++i) {
      double g = element(a.dtype, &a.gpu[i * eb]), e = element(a.dtype, &a.emu[i * eb]);
      bool ok;
      if (isFloat) {
        double d = std::fabs(g - e);
        ok = (std::isnan(g) && std::isnan(e)) || d <= tol * (1 + std::fabs(g));
        if (d > worst && !std::isnan(d)) worst = d;
      } else {
        ok = std::memcmp(&a.gpu[i * eb], &a.emu[i * eb], eb) == 0;
      }
      if (!ok) bad++;
    }
    std::printf("%s: %s `%s` %zu elements, %zu differ from the emulator (max abs diff %g)\n", dir.c_str(),
                bad ? "DIFFER" : "AGREE", a.name.c_str(), n, bad, worst);
    if (bad) status = 1;
  }
  return status;
}
