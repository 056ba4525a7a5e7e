#include "compiler/backends/gpu_driver_api.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>

namespace tlc::backend {
namespace {

template <class F>
bool bind(void* handle, F& fn, const char* name) {
  fn = reinterpret_cast<F>(dlsym(handle, name));
  return fn != nullptr;
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// Binds the entry points of `runtime`; the name of the first missing one.
std::string bindEntryPoints(GpuRuntime runtime, GpuDriverApi& a) {
  void* h = a.handle;
  struct Entry {
    bool bound;
    const char* name;
  };
  std::vector<Entry> required;
  if (runtime == GpuRuntime::Cuda) {
    required = {{bind(h, a.init, "cuInit"), "cuInit"},
                {bind(h, a.deviceGetCount, "cuDeviceGetCount"), "cuDeviceGetCount"},
                {bind(h, a.deviceGet, "cuDeviceGet"), "cuDeviceGet"},
                {bind(h, a.deviceGetName, "cuDeviceGetName"), "cuDeviceGetName"},
                {bind(h, a.deviceGetAttribute, "cuDeviceGetAttribute"), "cuDeviceGetAttribute"},
                {bind(h, a.deviceSynchronize, "cuCtxSynchronize"), "cuCtxSynchronize"},
                {bind(h, a.memAlloc, "cuMemAlloc_v2"), "cuMemAlloc_v2"},
                {bind(h, a.memFree, "cuMemFree_v2"), "cuMemFree_v2"},
                {bind(h, a.memcpyHtoD, "cuMemcpyHtoD_v2"), "cuMemcpyHtoD_v2"},
                {bind(h, a.memcpyDtoH, "cuMemcpyDtoH_v2"), "cuMemcpyDtoH_v2"},
                {bind(h, a.memcpyDtoD, "cuMemcpyDtoD_v2"), "cuMemcpyDtoD_v2"},
                {bind(h, a.memsetD8, "cuMemsetD8_v2"), "cuMemsetD8_v2"},
                {bind(h, a.moduleLoadData, "cuModuleLoadData"), "cuModuleLoadData"},
                {bind(h, a.moduleUnload, "cuModuleUnload"), "cuModuleUnload"},
                {bind(h, a.moduleGetFunction, "cuModuleGetFunction"), "cuModuleGetFunction"},
                {bind(h, a.launchKernel, "cuLaunchKernel"), "cuLaunchKernel"},
                {bind(h, a.eventCreate, "cuEventCreate"), "cuEventCreate"},
                {bind(h, a.eventRecord, "cuEventRecord"), "cuEventRecord"},
                {bind(h, a.eventSynchronize, "cuEventSynchronize"), "cuEventSynchronize"},
                {bind(h, a.eventElapsedTime, "cuEventElapsedTime_v2") ||
                     bind(h, a.eventElapsedTime, "cuEventElapsedTime"),
                 "cuEventElapsedTime"},
                {bind(h, a.pointerGetAttribute, "cuPointerGetAttribute"), "cuPointerGetAttribute"},
                {bind(h, a.ctxGetCurrent, "cuCtxGetCurrent"), "cuCtxGetCurrent"},
                {bind(h, a.ctxSetCurrent, "cuCtxSetCurrent"), "cuCtxSetCurrent"},
                {bind(h, a.primaryCtxRetain, "cuDevicePrimaryCtxRetain"), "cuDevicePrimaryCtxRetain"},
                {bind(h, a.funcSetAttribute, "cuFuncSetAttribute"), "cuFuncSetAttribute"},
                {bind(h, a.cuGetErrorString, "cuGetErrorString"), "cuGetErrorString"}};
    bind(h, a.ctxGetDevice, "cuCtxGetDevice");
    bind(h, a.tensorMapEncodeTiled, "cuTensorMapEncodeTiled");
    bind(h, a.tensorMapEncodeIm2col, "cuTensorMapEncodeIm2col");
    bind(h, a.memAllocAsync, "cuMemAllocAsync");
    bind(h, a.memFreeAsync, "cuMemFreeAsync");
  } else {
    required = {{bind(h, a.init, "hipInit"), "hipInit"},
                {bind(h, a.deviceGetCount, "hipGetDeviceCount"), "hipGetDeviceCount"},
                {bind(h, a.deviceGet, "hipDeviceGet"), "hipDeviceGet"},
                {bind(h, a.deviceGetName, "hipDeviceGetName"), "hipDeviceGetName"},
                {bind(h, a.deviceGetAttribute, "hipDeviceGetAttribute"), "hipDeviceGetAttribute"},
                {bind(h, a.deviceSynchronize, "hipDeviceSynchronize"), "hipDeviceSynchronize"},
                {bind(h, a.memAlloc, "hipMalloc"), "hipMalloc"},
                {bind(h, a.memFree, "hipFree"), "hipFree"},
                {bind(h, a.memcpyHtoD, "hipMemcpyHtoD"), "hipMemcpyHtoD"},
                {bind(h, a.memcpyDtoH, "hipMemcpyDtoH"), "hipMemcpyDtoH"},
                {bind(h, a.memcpyDtoD, "hipMemcpyDtoD"), "hipMemcpyDtoD"},
                {bind(h, a.memsetD8, "hipMemsetD8"), "hipMemsetD8"},
                {bind(h, a.moduleLoadData, "hipModuleLoadData"), "hipModuleLoadData"},
                {bind(h, a.moduleUnload, "hipModuleUnload"), "hipModuleUnload"},
                {bind(h, a.moduleGetFunction, "hipModuleGetFunction"), "hipModuleGetFunction"},
                {bind(h, a.launchKernel, "hipModuleLaunchKernel"), "hipModuleLaunchKernel"},
                {bind(h, a.eventCreate, "hipEventCreateWithFlags"), "hipEventCreateWithFlags"},
                {bind(h, a.eventRecord, "hipEventRecord"), "hipEventRecord"},
                {bind(h, a.eventSynchronize, "hipEventSynchronize"), "hipEventSynchronize"},
                {bind(h, a.eventElapsedTime, "hipEventElapsedTime"), "hipEventElapsedTime"},
                {bind(h, a.setDevice, "hipSetDevice"), "hipSetDevice"},
                {bind(h, a.getDevice, "hipGetDevice"), "hipGetDevice"},
                {bind(h, a.hipGetErrorString, "hipGetErrorString"), "hipGetErrorString"}};
    bind(h, a.pointerGetAttribute, "hipPointerGetAttribute");
    int (*runtimeVersion)(int*) = nullptr;
    if (bind(h, runtimeVersion, "hipRuntimeGetVersion")) runtimeVersion(&a.version);
  }
  for (const Entry& e : required)
    if (!e.bound) return e.name;
  return "";
}

}  // namespace

const char* gpuRuntimeName(GpuRuntime r) { return r == GpuRuntime::Cuda ? "CUDA" : "HIP"; }

std::string GpuDriverApi::describe(int rc) const {
  const char* s = nullptr;
  if (cuGetErrorString) cuGetErrorString(rc, &s);
  if (hipGetErrorString) s = hipGetErrorString(rc);
  return std::string(s ? s : "unknown error") + " (" + std::to_string(rc) + ")";
}

bool GpuDriverApi::deviceAccessible(const void* ptr, std::string* why) const {
  if (!pointerGetAttribute) return true;
  // CU_POINTER_ATTRIBUTE_MEMORY_TYPE and HIP_POINTER_ATTRIBUTE_MEMORY_TYPE are both 2.
  unsigned int memoryType = 0;
  int rc = pointerGetAttribute(&memoryType, 2, (DevicePtr)(uintptr_t)ptr);
  // Memory unknown to the library is an error (CUDA, ROCm 5), or on ROCm 6
  // hipMemoryTypeUnregistered (0; ROCm 5's 0 is page-locked host memory).
  bool plainHost = rc != 0 || (runtime == GpuRuntime::Hip && version >= 60000000 && memoryType == 0);
  if (!plainHost) return true;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", ptr);
  *why = std::string("the data pointer ") + buf + " is not memory the GPU can access (allocate it with " +
         (runtime == GpuRuntime::Cuda ? "cudaMalloc, managed or pinned memory)" : "hipMalloc, hipMallocManaged or hipHostMalloc)");
  return false;
}

std::vector<std::string> gpuDriverCandidates(GpuRuntime runtime) {
  if (runtime == GpuRuntime::Cuda) return {"libcuda.so.1", "libcuda.so"};
  if (const char* path = std::getenv("TLC_HIP_RUNTIME"); path && *path) return {path};
  return {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5", "/opt/rocm/lib/libamdhip64.so"};
}

bool bindGpuDriverApi(GpuRuntime runtime, const std::vector<std::string>& candidates, GpuDriverApi* api,
                      std::string* error) {
  GpuDriverApi& a = *api;
  a = GpuDriverApi();
  a.runtime = runtime;
  const bool hip = runtime == GpuRuntime::Hip;
  std::string dlerrors;
  for (const std::string& c : candidates) {
    a.handle = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (a.handle) {
      a.library = c;
      break;
    }
    if (const char* e = dlerror(); e && c.find('/') != std::string::npos) dlerrors += (dlerrors.empty() ? "" : "; ") + std::string(e);
  }
  if (!a.handle) {
    if (!hip) {
      *error = "the CUDA driver (libcuda.so.1) is not installed or not on the library path: this machine has no "
               "NVIDIA driver";
    } else {
      bool fromEnv = std::getenv("TLC_HIP_RUNTIME") && *std::getenv("TLC_HIP_RUNTIME");
      *error = "the HIP runtime (libamdhip64.so) was not found: looked for " + joined(candidates) +
               (fromEnv ? ", named by $TLC_HIP_RUNTIME" : "") + (dlerrors.empty() ? "" : " (" + dlerrors + ")") +
               "; install ROCm's HIP runtime (the `rocm-hip-runtime` package of ROCm, or Debian's `libamdhip64-5`) "
               "or set TLC_HIP_RUNTIME to the path of libamdhip64.so";
    }
    return false;
  }
  std::string missing = bindEntryPoints(runtime, a);
  if (!missing.empty()) {
    *error = "the " + std::string(hip ? "HIP runtime" : "CUDA driver") + " library " + a.library + " lacks `" +
             missing + "`, which tlc needs (" + (hip ? "not a HIP runtime, or one older than ROCm 5?" : "driver too old?") +
             ")";
    return false;
  }
  // Either library reports a machine without a GPU from its init function
  // (HIP: hipErrorInvalidDevice or hipErrorNoDevice) or by counting none.
  const std::string what = hip ? "the HIP runtime (" + a.library + ")" : "the CUDA driver (" + a.library + ")";
  const char* gpu = hip ? "AMD GPU" : "NVIDIA GPU";
  int rc = a.init(0);
  int count = 0;
  if (rc == 0) rc = a.deviceGetCount(&count);
  if (rc != 0 || count == 0) {
    *error = what + " found no usable " + gpu + ": " + (hip ? "hipInit" : "cuInit") + " / device count failed: " +
             (rc != 0 ? a.describe(rc) : "no devices") +
             (hip ? " (is the amdgpu kernel driver loaded, and /dev/kfd readable by this user?)" : "");
    return false;
  }
  return true;
}

const GpuDriverApi* gpuDriverApi(GpuRuntime runtime, std::string* why) {
  struct Slot {
    std::once_flag once;
    std::unique_ptr<GpuDriverApi> api;
    std::string failure;
  };
  static Slot slots[2];
  Slot& s = slots[runtime == GpuRuntime::Cuda ? 0 : 1];
  std::call_once(s.once, [&] {
    auto api = std::make_unique<GpuDriverApi>();
    if (bindGpuDriverApi(runtime, gpuDriverCandidates(runtime), api.get(), &s.failure)) s.api = std::move(api);
  });
  if (!s.api && why) *why = s.failure;
  return s.api.get();
}

}  // namespace tlc::backend
