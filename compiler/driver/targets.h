// Dispatch from the driver's --target string to the backends.
//
// Targets: `interp` (the reference interpreter), `cpu` (LLVM, this machine's
// CPU unless --cpu/--features say otherwise), `cuda:ARCH` for the
// architectures in cuda::supportedCudaArchs() (compiler/backends/cuda/
// cuda_archs.h; NVRTC; running needs a GPU, or --emulate to run in the CPU
// emulator). An unknown or unavailable target is
// reported with the list of known ones and the closest name.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "compiler/driver/run_common.h"
#include "compiler/ir/ir.h"
#include "compiler/support/diagnostics.h"

namespace tlc::driver {

struct TargetRequest {
  std::string target;
  bool emulate = false;
  bool printAfterAll = false;
  bool timePasses = false;
  std::string cpu;
  std::string features;
  bool checkBounds = false;  // --check-bounds (cpu)
  bool warpSpecialize = true;  // --no-warp-specialize (cuda:sm_90a)
  bool persistent = true;      // --persistent / --no-persistent (cuda:sm_90a)
  bool stageTma = true;        // --no-tma-staging turns it off (cuda:sm_90a)
  bool warnSpills = false;     // --warn-spills (cuda)
};

// The target `tlc run` uses when none is given: cpu when the CPU backend is built.
std::string defaultRunTarget();
// The target a program is compiled for (what `T.target(...)` tests): the
// request's, or for `tlc emit --stage=cuda|ptx|hip|amdgcn` the GPU target
// that stage prints when the request names another kind.
std::string frontendTarget(const TargetRequest& request, const std::string& stage = "");

// Every target this build of tlc has, in --help order.
std::vector<std::string> availableTargets();
// "interp | cpu | cuda:sm_80 | ...", for --help.
std::string targetsHelp();
// True when `target` is one of availableTargets(); otherwise prints why to
// stderr (with a did-you-mean) and returns false: the caller exits with 2.
bool checkTargetName(const std::string& target);

// `tlc run`: returns the process exit code.
int runOnTarget(const ir::Module& module, const RunSettings& settings, const TargetRequest& request,
                DiagnosticEngine& diags);
// `tlc build`: returns the process exit code.
int buildForTarget(const ir::Module& module, const std::string& output, const TargetRequest& request,
                   DiagnosticEngine& diags);

// `tlc emit --stage=cuda|ptx|llvm|asm`: prints the backend's output for the
// module (cuda/ptx for the request's CUDA arch, sm_80 when the target is not a
// CUDA one; llvm/asm for the CPU). Returns the process exit code.
int emitForTarget(const ir::Module& module, const std::string& stage, const TargetRequest& request,
                  DiagnosticEngine& diags, std::ostream& os);

}  // namespace tlc::driver
