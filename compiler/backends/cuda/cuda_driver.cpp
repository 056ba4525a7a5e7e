#include "compiler/backends/cuda/cuda_driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <mutex>

namespace tlc::cuda {

struct CudaDriver::Api {
  void* handle = nullptr;
  int (*cuInit)(unsigned);
  int (*cuDeviceGetCount)(int*);
  int (*cuDeviceGet)(int*, int);
  int (*cuDeviceGetName)(char*, int, int);
  int (*cuDeviceGetAttribute)(int*, int, int);
  int (*cuDevicePrimaryCtxRetain)(void**, int);
  int (*cuCtxSetCurrent)(void*);
  int (*cuCtxSynchronize)();
  int (*cuMemAlloc)(CUdeviceptr*, size_t);
  int (*cuMemFree)(CUdeviceptr);
  int (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t);
  int (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t);
  int (*cuMemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);
  int (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t);
  int (*cuModuleLoadData)(void**, const void*);
  int (*cuModuleGetFunction)(void**, void*, const char*);
  int (*cuFuncSetAttribute)(void*, int, int);
  int (*cuLaunchKernel)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**,
                        void**);
  int (*cuEventCreate)(void**, unsigned);
  int (*cuEventRecord)(void*, void*);
  int (*cuEventSynchronize)(void*);
  int (*cuEventElapsedTime)(float*, void*, void*);
  int (*cuGetErrorString)(int, const char**);
  EncodeTiledFn cuTensorMapEncodeTiled = nullptr;  // CUDA 12+
};

namespace {
template <class F>
bool bind(void* h, F& fn, const char* name) {
  fn = reinterpret_cast<F>(dlsym(h, name));
  return fn != nullptr;
}
}  // namespace

CudaDriver::Api* CudaDriver::api(std::string* why) {
  static Api* shared = nullptr;
  static std::string failure;
  static std::once_flag once;
  std::call_once(once, [] {
    auto owned = std::make_unique<Api>();
    Api& a = *owned;
    for (const char* n : {"libcuda.so.1", "libcuda.so"}) {
      a.handle = dlopen(n, RTLD_NOW | RTLD_LOCAL);
      if (a.handle) break;
    }
    if (!a.handle) {
      failure = "cannot load the CUDA driver (libcuda.so.1): this machine has no NVIDIA driver; "
                "use `--emulate` to run CUDA code on the CPU";
      return;
    }
    bool ok = bind(a.handle, a.cuInit, "cuInit") && bind(a.handle, a.cuDeviceGetCount, "cuDeviceGetCount") &&
              bind(a.handle, a.cuDeviceGet, "cuDeviceGet") &&
              bind(a.handle, a.cuDeviceGetName, "cuDeviceGetName") &&
              bind(a.handle, a.cuDeviceGetAttribute, "cuDeviceGetAttribute") &&
              bind(a.handle, a.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain") &&
              bind(a.handle, a.cuCtxSetCurrent, "cuCtxSetCurrent") &&
              bind(a.handle, a.cuCtxSynchronize, "cuCtxSynchronize") && bind(a.handle, a.cuMemAlloc, "cuMemAlloc_v2") &&
              bind(a.handle, a.cuMemFree, "cuMemFree_v2") && bind(a.handle, a.cuMemcpyHtoD, "cuMemcpyHtoD_v2") &&
              bind(a.handle, a.cuMemcpyDtoH, "cuMemcpyDtoH_v2") && bind(a.handle, a.cuMemcpyDtoD, "cuMemcpyDtoD_v2") &&
              bind(a.handle, a.cuMemsetD8, "cuMemsetD8_v2") && bind(a.handle, a.cuModuleLoadData, "cuModuleLoadData") &&
              bind(a.handle, a.cuModuleGetFunction, "cuModuleGetFunction") &&
              bind(a.handle, a.cuFuncSetAttribute, "cuFuncSetAttribute") &&
              bind(a.handle, a.cuLaunchKernel, "cuLaunchKernel") && bind(a.handle, a.cuEventCreate, "cuEventCreate") &&
              bind(a.handle, a.cuEventRecord, "cuEventRecord") &&
              bind(a.handle, a.cuEventSynchronize, "cuEventSynchronize") &&
              bind(a.handle, a.cuGetErrorString, "cuGetErrorString");
    bind(a.handle, a.cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled");
    if (!bind(a.handle, a.cuEventElapsedTime, "cuEventElapsedTime_v2")) ok &= bind(a.handle, a.cuEventElapsedTime, "cuEventElapsedTime");
    if (!ok) {
      failure = "the CUDA driver library lacks expected functions (driver too old?)";
      return;
    }
    if (int rc = a.cuInit(0); rc != 0) {
      const char* msg = nullptr;
      a.cuGetErrorString(rc, &msg);
      failure = std::string("no usable GPU: cuInit failed: ") + (msg ? msg : "error " + std::to_string(rc));
      return;
    }
    shared = owned.release();
  });
  if (!shared && why) *why = failure;
  return shared;
}

int CudaDriver::deviceCount(std::string* why) {
  Api* a = api(why);
  int n = 0;
  if (!a || a->cuDeviceGetCount(&n) != 0) return 0;
  if (n == 0 && why) *why = "the CUDA driver sees no GPU";
  return n;
}

CudaDriver* CudaDriver::get(std::string* why) { return forDevice(0, why); }

CudaDriver* CudaDriver::forDevice(int ordinal, std::string* why) {
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<CudaDriver>> instances;
  static std::map<int, std::string> failures;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = instances.find(ordinal); it != instances.end()) return it->second.get();
  if (auto it = failures.find(ordinal); it != failures.end()) {
    if (why) *why = it->second;
    return nullptr;
  }
  std::string failure;
  Api* a = api(&failure);
  auto d = std::unique_ptr<CudaDriver>(new CudaDriver());
  int dev = 0;
  if (a) {
    d->api_ = a;
    d->ordinal_ = ordinal;
    if (!d->check(a->cuDeviceGet(&dev, ordinal), "cuDeviceGet") ||
        !d->check(a->cuDevicePrimaryCtxRetain(&d->ctx_, dev), "cuDevicePrimaryCtxRetain") || !d->makeCurrent())
      failure = "no usable GPU " + std::to_string(ordinal) + ": " + d->error_;
  }
  if (!failure.empty()) {
    failures[ordinal] = failure;
    if (why) *why = failure;
    return nullptr;
  }
  char name[256] = {0};
  a->cuDeviceGetName(name, sizeof name, dev);
  d->deviceName_ = name;
  int major = 0, minor = 0, l2 = 0, shared = 0, sms = 0;
  a->cuDeviceGetAttribute(&major, 75, dev);  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
  a->cuDeviceGetAttribute(&minor, 76, dev);
  a->cuDeviceGetAttribute(&l2, 38, dev);      // CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE
  a->cuDeviceGetAttribute(&shared, 97, dev);  // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
  a->cuDeviceGetAttribute(&sms, 16, dev);     // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
  d->cc_ = major * 10 + minor;
  d->l2Bytes_ = l2;
  d->maxShared_ = shared;
  d->smCount_ = sms;
  a->cuEventCreate(&d->events_[0], 0);
  a->cuEventCreate(&d->events_[1], 0);
  return instances.emplace(ordinal, std::move(d)).first->second.get();
}

bool CudaDriver::makeCurrent() { return check(api_->cuCtxSetCurrent(ctx_), "cuCtxSetCurrent"); }

bool CudaDriver::check(int rc, const char* what) {
  if (rc == 0) return true;
  const char* msg = nullptr;
  if (api_->cuGetErrorString) api_->cuGetErrorString(rc, &msg);
  error_ = std::string(what) + " failed: " + (msg ? msg : "error " + std::to_string(rc));
  return false;
}

bool CudaDriver::alloc(CUdeviceptr* p, size_t bytes) { return check(api_->cuMemAlloc(p, bytes ? bytes : 1), "cuMemAlloc"); }
void CudaDriver::free(CUdeviceptr p) {
  if (p) api_->cuMemFree(p);
}
bool CudaDriver::copyToDevice(CUdeviceptr dst, const void* src, size_t bytes) {
  return !bytes || check(api_->cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD");
}
bool CudaDriver::copyToHost(void* dst, CUdeviceptr src, size_t bytes) {
  return !bytes || check(api_->cuMemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH");
}
bool CudaDriver::copyDeviceToDevice(CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
  return check(api_->cuMemcpyDtoD(dst, src, bytes), "cuMemcpyDtoD");
}
bool CudaDriver::memset8(CUdeviceptr dst, unsigned char value, size_t bytes) {
  return check(api_->cuMemsetD8(dst, value, bytes), "cuMemsetD8");
}
bool CudaDriver::loadModule(const std::string& cubin, void** module) {
  return check(api_->cuModuleLoadData(module, cubin.data()), "cuModuleLoadData");
}
bool CudaDriver::getFunction(void* module, const std::string& name, void** fn) {
  return check(api_->cuModuleGetFunction(fn, module, name.c_str()), ("cuModuleGetFunction(" + name + ")").c_str());
}
bool CudaDriver::setDynamicShared(void* fn, int bytes) {
  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
  return check(api_->cuFuncSetAttribute(fn, 8, bytes), "cuFuncSetAttribute");
}
bool CudaDriver::encodeTensorMap(const TensorMapSpec& spec, void* out) {
  if (!api_->cuTensorMapEncodeTiled) {
    error_ = "the CUDA driver lacks cuTensorMapEncodeTiled (CUDA 12 or newer), which TMA kernels need";
    return false;
  }
  return check(cuda::encodeTensorMap(api_->cuTensorMapEncodeTiled, spec, out), "cuTensorMapEncodeTiled");
}

bool CudaDriver::launch(void* fn, const unsigned grid[3], unsigned threads, unsigned sharedBytes, void** args) {
  return check(api_->cuLaunchKernel(fn, grid[0], grid[1], grid[2], threads, 1, 1, sharedBytes, nullptr, args, nullptr),
               "cuLaunchKernel");
}
bool CudaDriver::synchronize() { return check(api_->cuCtxSynchronize(), "kernel execution (cuCtxSynchronize)"); }
bool CudaDriver::record(int which) { return check(api_->cuEventRecord(events_[which], nullptr), "cuEventRecord"); }
double CudaDriver::elapsed() {
  if (!check(api_->cuEventSynchronize(events_[1]), "cuEventSynchronize")) return -1;
  float ms = 0;
  if (!check(api_->cuEventElapsedTime(&ms, events_[0], events_[1]), "cuEventElapsedTime")) return -1;
  return ms;
}

}  // namespace tlc::cuda
