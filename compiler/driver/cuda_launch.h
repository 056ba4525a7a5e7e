// Launching a function's device kernels from the driver (`tlc run` and
// `tlc tune` on a GPU): the arguments copied to the device, the host lets
// and grids evaluated from them, the tensor maps of TMA kernels encoded (or
// their fallback kernels chosen when a tensor cannot be mapped), and the
// kernels launched in order (tensors TMA cannot address first staged into
// a workspace, cuda::StagedTensor).
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/backends/cuda/cuda_codegen.h"
#include "compiler/backends/gpu_driver.h"
#include "compiler/driver/run_common.h"
#include "compiler/ir/ir.h"

namespace tlc::driver {

// Host-side evaluation of launch expressions (grids, lets, shape variables).
struct HostValues {
  std::map<const ir::VarNode*, double> values;
  std::map<std::string, double> byName;

  std::optional<double> eval(const ir::Expr& e) const;
};

// A generated module loaded on a device, with the functions looked up so far.
// `module` holds the primary kernels (CudaModule::primarySource);
// `fallbackModule` their versions without TMA, compiled for `arch` and
// loaded by the first launch that needs one.
struct LoadedCudaModule {
  cuda::CudaModule generated;
  std::string arch;
  void* module = nullptr;
  void* fallbackModule = nullptr;
  std::map<std::string, void*> functions;
};

// One function's launches on one device. Owns the device copies of the
// arguments (freed by the destructor).
class CudaLaunches {
 public:
  explicit CudaLaunches(backend::GpuDriver* drv) : drv_(drv) {}
  ~CudaLaunches();
  CudaLaunches(const CudaLaunches&) = delete;
  CudaLaunches& operator=(const CudaLaunches&) = delete;

  // Copies `args` to the device and prepares every launch of `func`; false
  // and *error on failure. Notes (a TMA kernel replaced by its fallback) are
  // appended to *notes.
  bool prepare(LoadedCudaModule& lm, const ir::PrimFunc& func, const RunArgs& args, std::string* error,
               std::string* notes);
  // Enqueues every launch on the default stream.
  bool launchAll();
  // Copies the tensors `func` writes back into `args`.
  bool copyOutputs(const ir::PrimFunc& func, RunArgs& args);
  // The bytes of every tensor argument, once each.
  double tensorBytes() const { return bytes_; }
  // The values the launches were evaluated with (for FLOP counts).
  const HostValues& values() const { return env_; }

 private:
  struct alignas(64) TensorMapBytes {
    unsigned char bytes[128];
  };
  struct Launch {
    void* fn;
    unsigned grid[3];
    unsigned threads, shared;
    std::vector<TensorMapBytes> maps;  // after the function's arguments (Hopper TMA)
    std::vector<void*> params;
    // A launch of cuda::kStageRowsEntry: its own arguments, instead of the function's.
    std::vector<std::array<unsigned char, 8>> own;
  };
  backend::GpuDriver* drv_;
  HostValues env_;
  std::vector<backend::DevicePtr> dev_;
  std::vector<backend::DevicePtr> work_;  // workspaces of staged tensors (cuda::StagedTensor)
  std::vector<std::array<unsigned char, 8>> storage_;  // kernel arguments, in FuncLaunch::args order
  std::vector<Launch> launches_;
  double bytes_ = 0;
};

}  // namespace tlc::driver
