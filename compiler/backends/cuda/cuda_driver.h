// The CUDA driver API, loaded at run time with dlopen (libcuda.so.1), and a
// small RAII layer for what tlc needs: a context per device (the primary
// context, shared with libraries such as cuBLAS), device memory, modules
// loaded from .cubin bytes, launches and event timing. A context is current
// per thread: a thread that works on a device other than the one it got
// the driver on calls makeCurrent() first (`tlc tune` runs one thread per GPU).
//
// Nothing here links CUDA: on a machine without a driver, CudaDriver::get()
// returns null and `error()` says why.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/backends/cuda/tensor_map.h"

namespace tlc::cuda {

using CUdeviceptr = unsigned long long;

class CudaDriver {
 public:
  // The process-wide driver with a current context on device 0; null after
  // setting *why when the driver or a GPU is unavailable.
  static CudaDriver* get(std::string* why);
  // The driver of device `ordinal`, its context made current on the calling
  // thread when the driver is created; null after setting *why.
  static CudaDriver* forDevice(int ordinal, std::string* why);
  // How many GPUs the driver sees; 0 and *why when there is no driver.
  static int deviceCount(std::string* why);

  // Makes this device's context current on the calling thread.
  bool makeCurrent();
  std::string deviceName() const { return deviceName_; }
  int computeCapability() const { return cc_; }  // e.g. 90
  int ordinal() const { return ordinal_; }
  int64_t l2CacheBytes() const { return l2Bytes_; }
  int64_t maxSharedPerBlock() const { return maxShared_; }  // opt-in dynamic shared memory
  int64_t smCount() const { return smCount_; }

  // Each returns false and sets lastError() on failure.
  bool alloc(CUdeviceptr* p, size_t bytes);
  void free(CUdeviceptr p);
  bool copyToDevice(CUdeviceptr dst, const void* src, size_t bytes);
  bool copyToHost(void* dst, CUdeviceptr src, size_t bytes);
  bool copyDeviceToDevice(CUdeviceptr dst, CUdeviceptr src, size_t bytes);
  bool memset8(CUdeviceptr dst, unsigned char value, size_t bytes);
  bool loadModule(const std::string& cubin, void** module);
  bool getFunction(void* module, const std::string& name, void** fn);
  bool setDynamicShared(void* fn, int bytes);
  // Encodes a TMA tensor map into the 128 bytes at `out` (64-byte aligned).
  bool encodeTensorMap(const TensorMapSpec& spec, void* out);
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
  bool record(int which);
  double elapsed();
  struct Api;
  static Api* api(std::string* why);
  Api* api_ = nullptr;  // shared by every device, never freed
  void* ctx_ = nullptr;
  int ordinal_ = 0;
  std::string deviceName_;
  int cc_ = 0;
  int64_t l2Bytes_ = 0, maxShared_ = 0, smCount_ = 0;
  void* events_[2] = {nullptr, nullptr};
  std::string error_;
};

}  // namespace tlc::cuda
