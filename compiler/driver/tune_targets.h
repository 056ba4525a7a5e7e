// The targets `tlc tune` measures on: the CPU (tune_cpu.cpp) and CUDA GPUs
// (tune_cuda.cpp), chosen by the request's --target.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "compiler/driver/tuner.h"

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
std::unique_ptr<TuneTarget> makeCudaTuneTarget(const TargetRequest& request, const TuneSettings& settings,
                                               std::string* error);
std::optional<std::string> cudaTuneDevice(std::string* why);
#endif

}  // namespace tlc::driver
