#include "compiler/driver/targets.h"

#include <algorithm>
#include <iostream>
#include <regex>

#include "compiler/driver/exit_codes.h"
#include "compiler/support/suggest.h"
#ifdef TLC_HAVE_CPU_TARGET
#include "compiler/driver/cpu_cache.h"
#include "compiler/driver/cpu_target.h"
#endif
#ifdef TLC_HAVE_CUDA_TARGET
#include "compiler/backends/cuda/cuda_archs.h"
#include "compiler/driver/cuda_target.h"
#endif
#ifdef TLC_HAVE_HIP_TARGET
#include "compiler/backends/hip/hip_archs.h"
#include "compiler/driver/hip_target.h"
#endif
#ifdef TLC_HAVE_CUDA_EMULATOR
#include "compiler/driver/emulate_target.h"
#endif

namespace tlc::driver {
namespace {

bool startsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

bool isAvailableTarget(const std::string& target) {
  std::vector<std::string> known = availableTargets();
  return std::find(known.begin(), known.end(), target) != known.end();
}

int unknownTarget(const std::string& target) {
  checkTargetName(target);
  return kExitUsage;
}

#ifdef TLC_HAVE_CPU_TARGET
CpuOptions cpuOptions(const TargetRequest& r) {
  CpuOptions o;
  o.cpu = r.cpu;
  o.features = r.features;
  o.checkBounds = r.checkBounds;
  o.printAfterAll = r.printAfterAll;
  o.timePasses = r.timePasses;
  return o;
}
#endif

#ifdef TLC_HAVE_CUDA_TARGET
// "cuda:sm_90" -> "sm_90"; empty when the target is not a CUDA one.
std::string cudaArch(const std::string& target) {
  if (!startsWith(target, "cuda:")) return "";
  return target.substr(5);
}
CudaOptions cudaOptions(const TargetRequest& r, const std::string& arch) {
  CudaOptions o;
  o.arch = arch;
  o.warpSpecialize = r.warpSpecialize;
  o.persistent = r.persistent;
  o.stageTma = r.stageTma;
  o.warnSpills = r.warnSpills;
  o.printAfterAll = r.printAfterAll;
  o.timePasses = r.timePasses;
  return o;
}
#endif

#ifdef TLC_HAVE_HIP_TARGET
// "hip:gfx942" -> the emitter's options for gfx942; the arch is one of
// hip::supportedHipArchs() (checkTargetName ran before).
cuda::CudaOptions hipOptionsFor(const TargetRequest& r, const std::string& arch) {
  cuda::CudaOptions o = hip::hipOptions(arch);
  o.printAfterAll = r.printAfterAll;
  o.timePasses = r.timePasses;
  return o;
}
#endif

// --check-bounds builds checks into CPU code; the other targets check always
// (interpreter, CUDA emulator) or not at all (CUDA).
bool checkBoundsMisplaced(const TargetRequest& r) {
  if (!r.checkBounds || r.target == "cpu") return false;
  std::cerr << "tlc: error: --check-bounds is an option of --target=cpu (the interpreter and the CUDA emulator "
               "always check bounds)\n";
  return true;
}

}  // namespace

std::vector<std::string> availableTargets() {
  std::vector<std::string> out = {"interp"};
#ifdef TLC_HAVE_CPU_TARGET
  out.push_back("cpu");
#endif
#ifdef TLC_HAVE_CUDA_TARGET
  for (const std::string& arch : cuda::supportedCudaArchs()) out.push_back("cuda:" + arch);
#endif
#ifdef TLC_HAVE_HIP_TARGET
  for (const hip::HipArch& arch : hip::supportedHipArchs()) out.push_back("hip:" + arch.name);
#endif
  return out;
}

std::string targetsHelp() {
  std::string out;
  for (const std::string& t : availableTargets()) out += (out.empty() ? "" : " | ") + t;
  return out;
}

bool checkTargetName(const std::string& target) {
  if (isAvailableTarget(target)) return true;
  std::vector<std::string> known = availableTargets();
  std::string list;
  for (const std::string& t : known) list += (list.empty() ? "" : ", ") + t;
  std::cerr << "tlc: error: unknown target `" << target << "`";
#ifndef TLC_HAVE_CPU_TARGET
  if (target == "cpu") {
    std::cerr << ": this tlc was built without the CPU backend (configured with -DTLC_ENABLE_CPU_BACKEND=OFF; "
                 "the CPU backend needs LLVM 19)\n  the targets are: "
              << list << "\n";
    return false;
  }
#endif
#ifdef TLC_HAVE_HIP_TARGET
  if (std::string gfx; hip::parseHipTarget(target, &gfx)) {
    if (!startsWith(target, "hip:") && isAvailableTarget("hip:" + gfx))
      std::cerr << "; did you mean `hip:" << gfx << "`?";
    else
      std::cerr << ": tlc does not generate code for the AMD architecture `" << gfx
                << "` (it knows gfx90a: MI210/MI250, and gfx942: MI300)";
    std::cerr << "\n  the targets are: " << list << "\n";
    return false;
  }
#endif
  std::string arch = startsWith(target, "cuda:") ? target.substr(5) : target;
  static const std::regex smArch("sm_([0-9]{1,4})a?");
  std::smatch m;
#ifdef TLC_HAVE_CUDA_TARGET
  if (std::regex_match(arch, m, smArch)) {
    if (std::stoi(m[1].str()) < 80)
      std::cerr << ": the CUDA backend needs sm_80 or newer (its tensor-core and cp.async code)";
    else if (!startsWith(target, "cuda:") && isAvailableTarget("cuda:" + arch))
      std::cerr << "; did you mean `cuda:" << arch << "`?";
    else
      std::cerr << ": tlc does not generate code for " << arch << " yet";
  } else {
    std::cerr << didYouMean(target, known);
  }
#else
  if (std::regex_match(arch, m, smArch))
    std::cerr << ": this tlc was built without the CUDA backend (it needs the CUDA toolkit's NVRTC)";
  else
    std::cerr << didYouMean(target, known);
#endif
  std::cerr << "\n  the targets are: " << list << "\n";
  return false;
}

std::string defaultRunTarget() {
#ifdef TLC_HAVE_CPU_TARGET
  return "cpu";
#else
  return "interp";
#endif
}

int runOnTarget(const ir::Module& module, const RunSettings& settings, const TargetRequest& request,
                DiagnosticEngine& diags) {
  if (request.emulate && !startsWith(request.target, "cuda:") && !startsWith(request.target, "hip:")) {
    std::cerr << "tlc: error: --emulate runs GPU code: use it with --target=cuda:sm_XX or hip:gfxNNN\n";
    return kExitUsage;
  }
  if (checkBoundsMisplaced(request)) return kExitUsage;
  if (request.target == "interp") return runWithInterpreter(module, settings, diags);
#ifdef TLC_HAVE_CPU_TARGET
  if (request.target == "cpu") return runOnCpu(module, settings, cpuOptions(request), diags);
#endif
#ifdef TLC_HAVE_CUDA_TARGET
  if (std::string arch = cudaArch(request.target); !arch.empty()) {
#ifdef TLC_HAVE_CUDA_EMULATOR
    if (request.emulate) {
      EmulateOptions eo;
      eo.warpSpecialize = request.warpSpecialize;
      eo.persistent = request.persistent;
      eo.stageTma = request.stageTma;
      return runCudaEmulated(module, settings, arch, diags, eo);
    }
#endif
    return runOnCuda(module, settings, cudaOptions(request, arch), diags);
  }
#endif
#ifdef TLC_HAVE_HIP_TARGET
  if (startsWith(request.target, "hip:")) {
#ifdef TLC_HAVE_CUDA_EMULATOR
    if (request.emulate) return runEmulated(module, settings, hipOptionsFor(request, request.target.substr(4)), diags);
#endif
    return runOnHip(module, settings, hipOptionsFor(request, request.target.substr(4)), diags);
  }
#endif
  return unknownTarget(request.target);
}

int buildForTarget(const ir::Module& module, const std::string& output, const TargetRequest& request,
                   DiagnosticEngine& diags) {
  if (checkBoundsMisplaced(request)) return kExitUsage;
#ifdef TLC_HAVE_CPU_TARGET
  if (request.target == "cpu")
    return buildForCpuCached(module, output, cpuOptions(request), diags, KernelCache::fromEnvironment());
#endif
#ifdef TLC_HAVE_CUDA_TARGET
  if (std::string arch = cudaArch(request.target); !arch.empty())
    return buildForCuda(module, output, cudaOptions(request, arch), diags);
#endif
#ifdef TLC_HAVE_HIP_TARGET
  if (startsWith(request.target, "hip:"))
    return buildForHip(module, output, hipOptionsFor(request, request.target.substr(4)), diags);
#endif
  if (request.target == "interp") {
    std::cerr << "tlc: error: the interpreter runs programs but builds nothing: use --target=cpu or cuda:sm_XX\n";
    return kExitUsage;
  }
  return unknownTarget(request.target);
}

std::string frontendTarget(const TargetRequest& request, const std::string& stage) {
  if ((stage == "cuda" || stage == "ptx") && !startsWith(request.target, "cuda:")) return "cuda:sm_80";
  if ((stage == "hip" || stage == "amdgcn") && !startsWith(request.target, "hip:")) return "hip:gfx942";
  return request.target;
}

int emitForTarget(const ir::Module& module, const std::string& stage, const TargetRequest& request,
                  DiagnosticEngine& diags, std::ostream& os) {
  const std::string target = frontendTarget(request, stage);
#ifdef TLC_HAVE_CUDA_TARGET
  if (stage == "cuda" || stage == "ptx")
    return emitCuda(module, stage == "ptx", cudaOptions(request, cudaArch(target)), os, diags);
#endif
#ifdef TLC_HAVE_HIP_TARGET
  if (stage == "hip" || stage == "amdgcn") return emitHip(module, stage, hipOptionsFor(request, target.substr(4)), os, diags);
#endif
#ifdef TLC_HAVE_CPU_TARGET
  if (stage == "llvm" || stage == "asm") {
    CpuOptions options = cpuOptions(request);
    options.sources = &diags.sources();  // names the files of --check-bounds sites
    if (!cpuOptionsUsable(options)) return kExitUsage;
    auto lowered = lowerModuleForCpu(module, options, diags);
    if (!lowered) return kExitUserError;
    os << (stage == "llvm" ? cpu::emitLLVMText(*lowered, options, /*optimized=*/true)
                           : cpu::emitAssembly(*lowered, options));
    return diags.hasErrors() ? kExitUserError : kExitOk;
  }
#endif
  std::cerr << "tlc: error: --stage=" << stage << " needs a backend this tlc was built without\n";
  return kExitUsage;
}

}  // namespace tlc::driver
