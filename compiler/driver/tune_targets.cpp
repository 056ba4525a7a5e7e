#include "compiler/driver/tune_targets.h"

#ifdef TLC_HAVE_HIP_TARGET
#include "compiler/backends/hip/hip_archs.h"
#endif

namespace tlc::driver {

std::unique_ptr<TuneTarget> makeTuneTarget(const TargetRequest& request, const TuneSettings& settings,
                                           std::string* error) {
#ifdef TLC_HAVE_CPU_TARGET
  if (request.target == "cpu") return makeCpuTuneTarget(request, settings, error);
#endif
#ifdef TLC_HAVE_CUDA_TARGET
  if (request.target.rfind("cuda:", 0) == 0) {
    cuda::CudaOptions o;
    o.arch = request.target.substr(5);
    o.warpSpecialize = request.warpSpecialize;
    o.persistent = request.persistent;
    o.stageTma = request.stageTma;
    return makeGpuTuneTarget(request, settings, o, error);
  }
#endif
#ifdef TLC_HAVE_HIP_TARGET
  if (std::string arch; hip::parseHipTarget(request.target, &arch) && hip::findHipArch(arch))
    return makeGpuTuneTarget(request, settings, hip::hipOptions(arch), error);
#endif
  *error = request.target == "interp" ? "the interpreter is the oracle, not a target to tune for: use --target=cpu "
                                        "or cuda:sm_XX or hip:gfxNNN"
                                      : "tlc cannot tune for `" + request.target + "` in this build";
  return nullptr;
}

std::optional<std::string> localTuneDevice(const TargetRequest& request, std::string* why) {
#ifdef TLC_HAVE_CPU_TARGET
  if (request.target == "cpu") return cpuTuneDevice(request);
#endif
#ifdef TLC_HAVE_CUDA_TARGET
  if (request.target.rfind("cuda:", 0) == 0) return gpuTuneDevice(backend::GpuRuntime::Cuda, why);
#endif
#ifdef TLC_HAVE_HIP_TARGET
  if (request.target.rfind("hip:", 0) == 0) return gpuTuneDevice(backend::GpuRuntime::Hip, why);
#endif
  *why = "no device for `" + request.target + "` here";
  return std::nullopt;
}

}  // namespace tlc::driver
