// A GPU for `tlc run` and `tlc tune`: the CUDA driver or the HIP runtime
// (gpu_driver_api.h, loaded at run time with dlopen) behind one small RAII
// layer: a device made current (CUDA: its primary context, shared with
// libraries such as cuBLAS; HIP: hipSetDevice), device memory, modules
// loaded from .cubin / .hsaco bytes, launches and event timing. The current
// device is per thread: a thread that works on a device other than the one
// it got the driver on calls makeCurrent() first (`tlc tune` runs one
// thread per GPU).
//
// Nothing here links CUDA or ROCm: on a machine without the library or a
// GPU, GpuDriver::get() returns null and says why.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/backends/gpu_driver_api.h"

namespace tlc::backend {

class GpuDriver {
 public:
  // The process-wide driver of `runtime` with device 0 current; null after
  // setting *why when the library or a GPU is unavailable.
  static GpuDriver* get(GpuRuntime runtime, std::string* why);
  // The driver of device `ordinal`, made current on the calling thread when
  // the driver is created; null after setting *why.
  static GpuDriver* forDevice(GpuRuntime runtime, int ordinal, std::string* why);
  // How many GPUs the library sees; 0 and *why when there is none.
  static int deviceCount(GpuRuntime runtime, std::string* why);

  // Makes this device current on the calling thread.
  bool makeCurrent();
  GpuRuntime runtime() const { return api_->runtime; }
  std::string deviceName() const { return deviceName_; }
  int computeCapability() const { return cc_; }  // e.g. 90; 0 on HIP
  int ordinal() const { return ordinal_; }
    // CUDA only (the HIP attribute numbers changed between ROCm versions): 0 on HIP.
  int64_t l2CacheBytes() const { return l2Bytes_; }
  int64_t maxSharedPerBlock() const { return maxShared_; }  // opt-in dynamic shared memory
  int64_t smCount() const { return smCount_; }

  // Each returns false and sets lastError() on failure.
  bool alloc(DevicePtr* p, size_t bytes);
  void free(DevicePtr p);
  bool copyToDevice(DevicePtr dst, const void* src, size_t bytes);
  bool copyToHost(void* dst, DevicePtr src, size_t bytes);
  bool copyDeviceToDevice(DevicePtr dst, DevicePtr src, size_t bytes);
  bool memset8(DevicePtr dst, unsigned char value, size_t bytes);
  bool loadModule(const std::string& cubin, void** module);
  bool getFunction(void* module, const std::string& name, void** fn);
  // Allows `bytes` of dynamic shared memory (CUDA: an opt-in above 48 KiB;
  // HIP needs none).
  bool setDynamicShared(void* fn, int bytes);
  // Encodes a TMA tensor map into the 128 bytes at `out` (64-byte aligned).
  bool encodeTensorMap(const cuda::TensorMapSpec& spec, void* out);
  bool launch(void* fn, const unsigned grid[3], unsigned threads, unsigned sharedBytes, void** args);
  bool synchronize();
  // Milliseconds taken by `work` (enqueued on the default stream), measured
  // with events; negative on failure.
  template <class F>
  double time(F&& work) {
    if (!record(0)) return -1;
    if (!work()) return -1;
    if (!record(1)) return -1;
    return elapsed();
  }
  const std::string& lastError() const { return error_; }

 private:
  bool check(int rc, const char* what);
  // The name of an entry point in this runtime, for messages.
  const char* entry(const char* cudaName, const char* hipName) const;
  bool record(int which);
  double elapsed();
  const GpuDriverApi* api_ = nullptr;  // shared by every device, never freed
  void* ctx_ = nullptr;
  int ordinal_ = 0;
  std::string deviceName_;
  int cc_ = 0;
  int64_t l2Bytes_ = 0, maxShared_ = 0, smCount_ = 0;
  void* events_[2] = {nullptr, nullptr};
  std::string error_;
};

}  // namespace tlc::backend
