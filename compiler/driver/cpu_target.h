// `tlc run --target=cpu` and `tlc build --target=cpu`: the tile IR through the
// CPU lowering pipeline and the LLVM CPU backend.
//
// run: lowers, JIT-compiles, makes seeded arguments (run_common.h), runs the
// kernel, and with --check compares with the reference interpreter. Under
// --check or --check-bounds the kernel is built with bounds checks, and an
// access outside its buffer is an out-of-bounds-access error at its line. With
// --bench it times the kernel (one warm-up, then repeated runs for at least
// 0.5 s, at least 5 runs) and prints the median time with GFLOP/s (kernels
// with gemm: 2*M*N*K per gemm execution, counted from the IR) or GB/s (the
// bytes of every tensor argument, once).
// build: lowers and writes a shared library exporting, per kernel `f`,
//   void tlc_f(void* const* args, const int64_t* shape_vars)
// (see compiler/backends/cpu/cpu_backend.h for the argument convention).
// Both print the time spent compiling with --time-passes.
#pragma once

#include <optional>
#include <string>

#include "compiler/backends/cpu/cpu_backend.h"
#include "compiler/driver/run_common.h"
#include "compiler/ir/ir.h"
#include "compiler/support/diagnostics.h"

namespace tlc::driver {

using CpuOptions = cpu::CpuOptions;

// Exit code: 0, 1 after errors / a failed check, or 2 (a command-line error,
// printed to stderr) when --cpu / --features name a CPU LLVM cannot generate
// code for (cpu::checkCpuOptions).
int runOnCpu(const ir::Module& module, const RunSettings& settings, const CpuOptions& options, DiagnosticEngine& diags);
// The kernel metadata a CPU build of `module` carries (compiler/backends/metadata.h).
std::string cpuModuleMetadata(const ir::Module& module, const SourceManager* sources);
int buildForCpu(const ir::Module& module, const std::string& outPath, const CpuOptions& options,
                DiagnosticEngine& diags);

// Prints the problem with --cpu / --features as a command-line error; true
// when there is none.
bool cpuOptionsUsable(const CpuOptions& options);

// The pieces, for tests and benchmarks.
// The CPU lowering pipeline with the options' --print-after-all / --time-passes.
std::optional<ir::Module> lowerModuleForCpu(const ir::Module& module, const CpuOptions& options,
                                            DiagnosticEngine& diags);
// Lowers and JIT-compiles; reports cpu-invalid-target (at the module's first
// function) / cpu-build-failed.
std::unique_ptr<cpu::CpuJitModule> compileForCpu(const ir::Module& module, const CpuOptions& options,
                                                 DiagnosticEngine& diags);
// Calls a compiled kernel on arguments made by makeArguments (in place).
void callCpuKernel(cpu::CpuKernelFn fn, const ir::PrimFunc& func, RunArgs& args);
// After a call: reports the failure the kernel detected (an out-of-bounds
// access under bounds checks, heap block-local buffers it could not
// allocate), located at the access when its file is one of `diags`'
// sources. Returns whether there was one.
bool reportCpuFailure(cpu::CpuJitModule& jit, const ir::PrimFunc& func, DiagnosticEngine& diags);
// Floating-point operations of one run: 2*M*N*K per gemm execution; nullopt
// when the kernel has no gemm or a count cannot be evaluated.
std::optional<double> gemmFlops(const ir::PrimFunc& func, const RunArgs& args);

}  // namespace tlc::driver
