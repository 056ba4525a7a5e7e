// `tlc run|build|emit` for `--target=cuda:sm_XX`: the CUDA backend
// (compiler/backends/cuda) compiled by NVRTC and run through the CUDA driver
// API, both loaded at run time.
//
// run: generates CUDA C, compiles a .cubin for the arch, makes seeded
// arguments (run_common.h), copies them to the GPU, launches every kernel of
// the function in order (grids and host-side lets evaluated from the
// arguments), copies the outputs back and, with --check, compares with the
// reference interpreter. With --bench it times the launches with CUDA events
// (warm-up, then median of repeated runs) and prints the time with TFLOP/s
// (2*M*N*K per gemm execution, counted from the IR) and GB/s (every tensor
// argument's bytes, once).
// build: writes the .cubin. emit: prints the CUDA C (or the PTX).
// runOnGpu is the run shared with `--target=hip:gfxNNN` (hip_target.h).
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include "compiler/backends/cuda/cuda_codegen.h"
#include "compiler/backends/cuda/cuda_options.h"
#include "compiler/driver/cuda_launch.h"
#include "compiler/driver/run_common.h"
#include "compiler/ir/ir.h"
#include "compiler/support/diagnostics.h"

namespace tlc::driver {

using CudaOptions = cuda::CudaOptions;

// Exit code: 0, or 1 after errors / a failed check.
int runOnCuda(const ir::Module& module, const RunSettings& settings, const CudaOptions& options,
              DiagnosticEngine& diags);

// How runOnGpu reports and checks a run on one kind of GPU.
struct GpuRun {
  std::string label;                                 // "cuda:sm_90", "hip:gfx942"
  DiagKind launchFailed = DiagKind::CudaLaunchFailed;  // reported for driver errors
  bool tf32Gemm = false;                             // float32 gemms run in tf32 (--check's tolerance)
};
// The run half of runOnCuda, for either GPU runtime: loads `binary` (the
// .cubin or .hsaco `lm.generated` was compiled into) on `drv`, then runs
// every function of `module` with seeded arguments, checks and benchmarks
// as `settings` asks.
int runOnGpu(const ir::Module& module, const RunSettings& settings, const CudaOptions& options,
             backend::GpuDriver* drv, LoadedCudaModule& lm, const std::string& binary, const GpuRun& run,
             DiagnosticEngine& diags);
int buildForCuda(const ir::Module& module, const std::string& outPath, const CudaOptions& options,
                 DiagnosticEngine& diags);
// Prints the generated CUDA C, or with `ptx` the PTX NVRTC makes of it.
int emitCuda(const ir::Module& module, bool ptx, const CudaOptions& options, std::ostream& os,
             DiagnosticEngine& diags);

// What --bench measured in the last runOnCuda of this process (for tools
// that compare with a library in the same process).
struct CudaBenchResult {
  double medianMs = 0;
  std::optional<double> flops;  // per run
  double bytes = 0;             // tensor argument bytes, once each
};
const std::optional<CudaBenchResult>& lastCudaBench();
// How many timed launches --bench makes when one takes `oneMs`: about 0.5 s
// of them, at least `atLeast` and at most 1000, so that the median is taken
// at the clocks the GPU sustains.
int sustainedRuns(double oneMs, int atLeast = 5);

// Generates and compiles; reports cuda-build-failed. With `ptx`, the PTX of
// every kernel. Otherwise the .cubin of the primary kernels
// (CudaModule::primarySource) and, when `fallbackCubin` is given, the .cubin
// of their versions without TMA in it (empty when there are none): the two
// programs compile at once, on two threads.
std::optional<std::string> compileForCuda(const ir::Module& module, const CudaOptions& options, bool ptx,
                                          DiagnosticEngine& diags, cuda::CudaModule* generated = nullptr,
                                          std::string* fallbackCubin = nullptr);

}  // namespace tlc::driver
