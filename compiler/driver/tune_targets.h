// The targets `tlc tune` measures on: the CPU (tune_cpu.cpp) and NVIDIA and
// AMD GPUs (tune_gpu.cpp), chosen by the request's --target.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "compiler/driver/tuner.h"
#ifdef TLC_HAVE_CUDA_TARGET
#include "compiler/backends/cuda/cuda_options.h"
#include "compiler/backends/gpu_driver_api.h"
#endif

namespace tlc::driver {

// Null and *error when the target cannot be tuned on here (the interpreter,
// no GPU, a bad --cpu).
std::unique_ptr<TuneTarget> makeTuneTarget(const TargetRequest& request, const TuneSettings& settings,
                                           std::string* error);

#ifdef TLC_HAVE_CPU_TARGET
std::unique_ptr<TuneTarget> makeCpuTuneTarget(const TargetRequest& request, const TuneSettings& settings,
                                              std::string* error);
std::string cpuTuneDevice(const TargetRequest& request);
#endif
#ifdef TLC_HAVE_CUDA_TARGET
// The GPUs of the runtime `options` are for (CUDA, or HIP when that target
// is built: options.language), the kernels generated with `options`.
std::unique_ptr<TuneTarget> makeGpuTuneTarget(const TargetRequest& request, const TuneSettings& settings,
                                              cuda::CudaOptions options, std::string* error);
std::optional<std::string> gpuTuneDevice(backend::GpuRuntime runtime, std::string* why);
#endif

}  // namespace tlc::driver
