#include "compiler/backends/gpu_driver.h"

#include <map>
#include <memory>
#include <mutex>

namespace tlc::backend {

int GpuDriver::deviceCount(GpuRuntime runtime, std::string* why) {
  const GpuDriverApi* a = gpuDriverApi(runtime, why);
  int n = 0;
  if (!a || a->deviceGetCount(&n) != 0) return 0;
  return n;
}

GpuDriver* GpuDriver::get(GpuRuntime runtime, std::string* why) { return forDevice(runtime, 0, why); }

GpuDriver* GpuDriver::forDevice(GpuRuntime runtime, int ordinal, std::string* why) {
  static std::mutex mutex;
  static std::map<std::pair<GpuRuntime, int>, std::unique_ptr<GpuDriver>> instances;
  static std::map<std::pair<GpuRuntime, int>, std::string> failures;
  const std::pair<GpuRuntime, int> key{runtime, ordinal};
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = instances.find(key); it != instances.end()) return it->second.get();
  if (auto it = failures.find(key); it != failures.end()) {
    if (why) *why = it->second;
    return nullptr;
  }
  std::string failure;
  const GpuDriverApi* a = gpuDriverApi(runtime, &failure);
  auto d = std::unique_ptr<GpuDriver>(new GpuDriver());
  int dev = 0;
  const bool cuda = runtime == GpuRuntime::Cuda;
  if (a) {
    d->api_ = a;
    d->ordinal_ = ordinal;
    bool ok = d->check(a->deviceGet(&dev, ordinal), cuda ? "cuDeviceGet" : "hipDeviceGet");
    if (ok && cuda) ok = d->check(a->primaryCtxRetain(&d->ctx_, dev), "cuDevicePrimaryCtxRetain");
    if (!ok || !d->makeCurrent())
      failure = "no usable " + std::string(cuda ? "GPU " : "AMD GPU ") + std::to_string(ordinal) + ": " + d->error_;
  }
  if (!failure.empty()) {
    failures[key] = failure;
    if (why) *why = failure;
    return nullptr;
  }
  char name[256] = {0};
  a->deviceGetName(name, sizeof name, dev);
  d->deviceName_ = name;
  if (cuda) {
    int major = 0, minor = 0, l2 = 0, shared = 0, sms = 0;
    a->deviceGetAttribute(&major, 75, dev);  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
    a->deviceGetAttribute(&minor, 76, dev);
    a->deviceGetAttribute(&l2, 38, dev);      // CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE
    a->deviceGetAttribute(&shared, 97, dev);  // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
    a->deviceGetAttribute(&sms, 16, dev);     // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
    d->cc_ = major * 10 + minor;
    d->l2Bytes_ = l2;
    d->maxShared_ = shared;
    d->smCount_ = sms;
  }
  a->eventCreate(&d->events_[0], 0);
  a->eventCreate(&d->events_[1], 0);
  return instances.emplace(key, std::move(d)).first->second.get();
}

const char* GpuDriver::entry(const char* cudaName, const char* hipName) const {
  return api_->runtime == GpuRuntime::Cuda ? cudaName : hipName;
}

bool GpuDriver::makeCurrent() {
  if (api_->runtime == GpuRuntime::Hip) return check(api_->setDevice(ordinal_), "hipSetDevice");
  return check(api_->ctxSetCurrent(ctx_), "cuCtxSetCurrent");
}

bool GpuDriver::check(int rc, const char* what) {
  if (rc == 0) return true;
  error_ = std::string(what) + " failed: " + api_->describe(rc);
  return false;
}

bool GpuDriver::alloc(DevicePtr* p, size_t bytes) {
  return check(api_->memAlloc(p, bytes ? bytes : 1), entry("cuMemAlloc", "hipMalloc"));
}
void GpuDriver::free(DevicePtr p) {
  if (p) api_->memFree(p);
}
bool GpuDriver::copyToDevice(DevicePtr dst, const void* src, size_t bytes) {
  return !bytes || check(api_->memcpyHtoD(dst, src, bytes), entry("cuMemcpyHtoD", "hipMemcpyHtoD"));
}
bool GpuDriver::copyToHost(void* dst, DevicePtr src, size_t bytes) {
  return !bytes || check(api_->memcpyDtoH(dst, src, bytes), entry("cuMemcpyDtoH", "hipMemcpyDtoH"));
}
bool GpuDriver::copyDeviceToDevice(DevicePtr dst, DevicePtr src, size_t bytes) {
  return check(api_->memcpyDtoD(dst, src, bytes), entry("cuMemcpyDtoD", "hipMemcpyDtoD"));
}
bool GpuDriver::memset8(DevicePtr dst, unsigned char value, size_t bytes) {
  return check(api_->memsetD8(dst, value, bytes), entry("cuMemsetD8", "hipMemsetD8"));
}
bool GpuDriver::loadModule(const std::string& cubin, void** module) {
  return check(api_->moduleLoadData(module, cubin.data()), entry("cuModuleLoadData", "hipModuleLoadData"));
}
bool GpuDriver::getFunction(void* module, const std::string& name, void** fn) {
  return check(api_->moduleGetFunction(fn, module, name.c_str()),
               (std::string(entry("cuModuleGetFunction(", "hipModuleGetFunction(")) + name + ")").c_str());
}
bool GpuDriver::setDynamicShared(void* fn, int bytes) {
  if (!api_->funcSetAttribute) return true;  // HIP: all of the LDS, no opt-in
  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
  return check(api_->funcSetAttribute(fn, 8, bytes), "cuFuncSetAttribute");
}
bool GpuDriver::encodeTensorMap(const cuda::TensorMapSpec& spec, void* out) {
  const char* name = cuda::tensorMapEncoderName(spec);
  int rc = cuda::encodeTensorMap(api_->tensorMapEncodeTiled, api_->tensorMapEncodeIm2col, spec, out);
  if (rc == cuda::kTensorMapEncoderMissing) {
    error_ = std::string("the CUDA driver lacks ") + name + " (CUDA 12 or newer), which " +
             (spec.im2col ? "TMA kernels with im2col loads need" : "TMA kernels need");
    return false;
  }
  return check(rc, name);
}

bool GpuDriver::launch(void* fn, const unsigned grid[3], unsigned threads, unsigned sharedBytes, void** args) {
  return check(api_->launchKernel(fn, grid[0], grid[1], grid[2], threads, 1, 1, sharedBytes, nullptr, args, nullptr),
               entry("cuLaunchKernel", "hipModuleLaunchKernel"));
}
bool GpuDriver::synchronize() {
  return check(api_->deviceSynchronize(),
               entry("kernel execution (cuCtxSynchronize)", "kernel execution (hipDeviceSynchronize)"));
}
bool GpuDriver::record(int which) { return check(api_->eventRecord(events_[which], nullptr), "event record"); }
double GpuDriver::elapsed() {
  if (!check(api_->eventSynchronize(events_[1]), "event synchronize")) return -1;
  float ms = 0;
  if (!check(api_->eventElapsedTime(&ms, events_[0], events_[1]), "event elapsed time")) return -1;
  return ms;
}

}  // namespace tlc::backend
