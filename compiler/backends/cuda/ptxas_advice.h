// What ptxas says about a kernel's speed while NVRTC builds its cubin: the
// wgmmas it serialized (C7514) and the registers it spilled to local memory.
// Both are silent slowdowns of the generated code, so tlc reports them as
// warnings at the kernel's `T.Kernel` line.
#pragma once
#include <string>
#include <vector>

#include "compiler/backends/cuda/cuda_codegen.h"
#include "compiler/support/diagnostics.h"

namespace tlc::cuda {

struct PtxasAdvice {
  enum class Kind { WgmmaSerialized, Spills } kind;
  std::string function;  // the kernel's C name
  int64_t spillStores = 0, spillLoads = 0;  // bytes, Spills only
};

// The NVRTC options that make ptxas write the advice into the program log.
std::vector<std::string> ptxasAdviceOptions();
// The advice in an NVRTC program log (one entry per kernel and kind).
std::vector<PtxasAdvice> parsePtxasAdvice(const std::string& log);
// Reports each piece of advice in `log` as a warning at the `T.Kernel` of the
// kernel it names (cuda-wgmma-serialized, cuda-register-spills).
void reportPtxasAdvice(const CudaModule& module, const std::string& log, DiagnosticEngine& diags);

}  // namespace tlc::cuda
