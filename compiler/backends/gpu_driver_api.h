// The GPU driver C API that the CUDA driver (cu*, libcuda.so.1) and the HIP
// runtime's module API (hip*, libamdhip64.so) share, loaded with dlopen:
// tlc and its runtime link neither, so they build and run on machines
// without them and say which library is missing.
//
// The two APIs are nearly one: handles are opaque pointers, device pointers
// are 64-bit integers, results are ints with 0 for success, and a module's
// kernels are launched with the same arguments (function, grid, block,
// dynamic shared memory / LDS, stream, an array of pointers to the argument
// values). One table of entry points is bound by name to either library
// (`bindGpuDriverApi`); what exists on one side only is null on the other:
//   - CUDA: contexts (cuCtx*, primary contexts), cuFuncSetAttribute (shared
//     memory above 48 KiB is opt-in), cuTensorMapEncodeTiled and
//     cuTensorMapEncodeIm2col (TMA);
//   - HIP: hipSetDevice / hipGetDevice (a current device per thread, no
//     contexts: LDS needs no opt-in), hipRuntimeGetVersion (the pointer
//     attributes' memory types were renumbered in ROCm 6).
// Used by the host runtime (runtime/device_module.cpp) and by `tlc run`
// and `tlc tune` (gpu_driver.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/backends/cuda/tensor_map.h"

namespace tlc::backend {

enum class GpuRuntime { Cuda, Hip };

// "CUDA" / "HIP", for messages.
const char* gpuRuntimeName(GpuRuntime r);

using DevicePtr = unsigned long long;  // CUdeviceptr / hipDeviceptr_t

struct GpuDriverApi {
  GpuRuntime runtime = GpuRuntime::Cuda;
  void* handle = nullptr;
  std::string library;  // the file that was opened
  int version = 0;      // cuDriverGetVersion / hipRuntimeGetVersion (HIP: major * 10^7 + minor * 10^5 + patch)

  // Both.
  int (*init)(unsigned) = nullptr;
  int (*deviceGetCount)(int*) = nullptr;
  int (*deviceGet)(int*, int) = nullptr;
  int (*deviceGetName)(char*, int, int) = nullptr;
  int (*deviceGetAttribute)(int*, int, int) = nullptr;  // attribute numbers differ: CUDA's only are used
  int (*deviceSynchronize)() = nullptr;                 // cuCtxSynchronize / hipDeviceSynchronize
  int (*memAlloc)(DevicePtr*, size_t) = nullptr;        // cuMemAlloc_v2 / hipMalloc
  int (*memFree)(DevicePtr) = nullptr;
  int (*memcpyHtoD)(DevicePtr, const void*, size_t) = nullptr;
  int (*memcpyDtoH)(void*, DevicePtr, size_t) = nullptr;
  int (*memcpyDtoD)(DevicePtr, DevicePtr, size_t) = nullptr;
  int (*memsetD8)(DevicePtr, unsigned char, size_t) = nullptr;
  int (*moduleLoadData)(void**, const void*) = nullptr;
  int (*moduleUnload)(void*) = nullptr;
  int (*moduleGetFunction)(void**, void*, const char*) = nullptr;
  int (*launchKernel)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**,
                      void**) = nullptr;  // cuLaunchKernel / hipModuleLaunchKernel
  int (*eventCreate)(void**, unsigned) = nullptr;  // cuEventCreate / hipEventCreateWithFlags
  int (*eventRecord)(void*, void*) = nullptr;
  int (*eventSynchronize)(void*) = nullptr;
  int (*eventElapsedTime)(float*, void*, void*) = nullptr;
  int (*pointerGetAttribute)(void*, int, DevicePtr) = nullptr;  // optional on HIP (ROCm 5+)

  // CUDA only.
  int (*ctxGetCurrent)(void**) = nullptr;
  int (*ctxSetCurrent)(void*) = nullptr;
  int (*ctxGetDevice)(int*) = nullptr;
  int (*primaryCtxRetain)(void**, int) = nullptr;
  int (*funcSetAttribute)(void*, int, int) = nullptr;
  cuda::EncodeTiledFn tensorMapEncodeTiled = nullptr;  // CUDA 12+; only kernels with tensor maps need it
  cuda::EncodeIm2colFn tensorMapEncodeIm2col = nullptr;  // CUDA 12+; only kernels with im2col maps need it
  // Stream-ordered allocation (CUDA 11.2+; optional): workspaces of staged tensor maps.
  int (*memAllocAsync)(DevicePtr*, size_t, void*) = nullptr;
  int (*memFreeAsync)(DevicePtr, void*) = nullptr;
  int (*cuGetErrorString)(int, const char**) = nullptr;

  // HIP only.
  int (*setDevice)(int) = nullptr;
  int (*getDevice)(int*) = nullptr;
  const char* (*hipGetErrorString)(int) = nullptr;

  // "hipErrorNoDevice (100)".
  std::string describe(int rc) const;
  // Whether `ptr` is memory a kernel can read: device, managed or
  // page-locked host memory. False with *why (naming the allocator to
  // use) for plain host memory; true when the library cannot tell.
  bool deviceAccessible(const void* ptr, std::string* why) const;
};

// Where the library of `runtime` is looked for, in order: for HIP
// $TLC_HIP_RUNTIME when set (and then only there), else libamdhip64.so,
// .so.6, .so.5 and /opt/rocm/lib/libamdhip64.so; for CUDA libcuda.so.1,
// libcuda.so.
std::vector<std::string> gpuDriverCandidates(GpuRuntime runtime);

// Opens the first of `candidates` that loads, binds the entry points and
// initializes the library (cuInit / hipInit), then checks that it sees a
// GPU. False with *error saying what was looked for, what is missing and
// what to install or set; the table is then unusable.
bool bindGpuDriverApi(GpuRuntime runtime, const std::vector<std::string>& candidates, GpuDriverApi* api,
                      std::string* error);

// The process-wide table of `runtime`, bound once from gpuDriverCandidates;
// null with *why (the same reason on every call) when it cannot be used.
const GpuDriverApi* gpuDriverApi(GpuRuntime runtime, std::string* why);

}  // namespace tlc::backend
