// What ptxas says about a kernel's speed while NVRTC builds its cubin: the
// wgmmas it serialized (C7514) and the registers it spilled to local memory.
// Serialized wgmmas are always a slowdown, reported as a warning at the
// kernel's `T.Kernel` line. Spills are reported there when asked
// (--warn-spills): ptxas counts them per kernel, and a spill in a path that
// rarely runs (an unaligned tile's shifted loads) costs nothing.
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
// Reports the advice in `log` as warnings at the `T.Kernel` of the kernel it
// names: cuda-wgmma-serialized, and with `spills` cuda-register-spills.
void reportPtxasAdvice(const CudaModule& module, const std::string& log, bool spills, DiagnosticEngine& diags);

}  // namespace tlc::cuda
