#include "compiler/driver/tune_targets.h"

namespace tlc::driver {

std::unique_ptr<TuneTarget> makeTuneTarget(const TargetRequest& request, const TuneSettings& settings,
                                           std::string* error) {
#ifdef TLC_HAVE_CPU_TARGET
  if (request.target == "cpu") return makeCpuTuneTarget(request, settings, error);
#endif
#ifdef TLC_HAVE_CUDA_TARGET
  if (request.target.rfind("cuda:", 0) == 0) {
    if (request.emulate) {
      *error = "`tlc tune` times kernels on the device: --emulate does not apply";
      return nullptr;
    }
    return makeCudaTuneTarget(request, settings, error);
  }
#endif
  *error = request.target == "interp" ? "the interpreter is the oracle, not a target to tune for: use --target=cpu "
                                        "or cuda:sm_XX"
                                      : "tlc cannot tune for `" + request.target + "` in this build";
  return nullptr;
}

std::optional<std::string> localTuneDevice(const TargetRequest& request, std::string* why) {
#ifdef TLC_HAVE_CPU_TARGET
  if (request.target == "cpu") return cpuTuneDevice(request);
#endif
#ifdef TLC_HAVE_CUDA_TARGET
  if (request.target.rfind("cuda:", 0) == 0) return cudaTuneDevice(why);
#endif
  *why = "no device for `" + request.target + "` here";
  return std::nullopt;
}

}  // namespace tlc::driver
