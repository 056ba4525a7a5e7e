// The LLVM CPU backend's public interface. No LLVM type appears here: only
// this library links LLVM.
//
// Input is a module already lowered by lowerForCpu (compiler/passes/cpu_pipeline.h).
// Every PrimFunc `f` becomes an exported C function
//     void tlc_f(void* const* args, const int64_t* shape_vars);
// args[i] is the data pointer of tensor parameter i (dense, row-major) or a
// pointer to the value of scalar parameter i (in the parameter's dtype);
// shape_vars[j] is the value of f.shapeVars[j] (may be null when there are
// none). The grid's blocks run on the thread pool of runtime/cpu.
//
// A module whose kernels can fail at run time (bounds checks, block-local
// buffers on the heap) also exports
//     const tlc_cpu_report* tlc_module_last_failure(void);
// the calling thread's last kernel call's failure, or null
// (runtime/cpu/tlc_cpu_runtime.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "compiler/ir/ir.h"
#include "runtime/cpu/tlc_cpu_runtime.h"

namespace tlc {
class SourceManager;
}

namespace tlc::cpu {

struct CpuOptions {
  std::string cpu;       // target CPU name ("" = the host's, e.g. "znver5")
  std::string features;  // extra LLVM features, "+avx2,-avx512f" ("" = the host's)
  int optLevel = 3;      // 0..3
  bool printAfterAll = false;  // print the tile IR after every lowering pass
  bool timePasses = false;     // time the lowering passes and the LLVM stages
  bool dumpLLVM = false;       // print the optimized LLVM IR to stderr
  // Test every load, store, atomic and gemm operand against its buffer's
  // shape; the first access outside stops the kernel and is reported through
  // tlc_module_last_failure. Off: the code is what it is without the option.
  bool checkBounds = false;
  // Names the source files in bounds-check reports (null: no file names).
  const SourceManager* sources = nullptr;
  // Kernel metadata (compiler/backends/metadata.h); when set, buildSharedObject
  // exports it as the NUL-terminated char array `tlc_module_metadata`.
  std::string moduleMetadata;
};

using CpuKernelFn = void (*)(void* const* args, const int64_t* shapeVars);
using CpuFailureFn = const tlc_cpu_report* (*)();

// The exported symbol of a kernel: `tlc_kernel_` and the C spelling of its
// name (backend::cName), so no kernel name meets the runtime's `tlc_cpu_*`
// functions or `tlc_module_metadata`; a kernel's internal functions add
// `.blocks<N>` (no C spelling contains a dot).
std::string cpuKernelSymbol(const std::string& funcName);

// The exported symbol of the module's failure accessor (see above).
inline constexpr const char* kCpuFailureSymbol = "tlc_module_last_failure";

// Kernels compiled into this process with ORC LLJIT.
class CpuJitModule {
 public:
  virtual ~CpuJitModule() = default;
  // The entry point of the kernel `funcName`, or nullptr.
  virtual CpuKernelFn kernel(const std::string& funcName) = 0;
  // The module's failure accessor, or nullptr when its kernels cannot fail.
  virtual CpuFailureFn failureAccessor() = 0;
};

// JIT-compiles a lowered module. Returns null and sets *error on failure.
std::unique_ptr<CpuJitModule> jitCompile(const ir::Module& lowered, const CpuOptions& options, std::string* error);

// Compiles a lowered module to a shared library at `path` (object emission,
// then a link with the CPU runtime, then the integrity trailer of
// compiler/support/module_image.h). Returns false and sets *error on failure.
bool buildSharedObject(const ir::Module& lowered, const std::string& path, const CpuOptions& options,
                       std::string* error);

// The optimized LLVM IR of a lowered module, as text (for `tlc emit --stage=llvm`).
std::string emitLLVMText(const ir::Module& lowered, const CpuOptions& options, bool optimized);

// The module in LLVM's text form `llvmIR` after narrow_vector_compares.h's
// pass on each of its functions, as text ("; error: ..." when it does not
// parse): the pass on textual IR, for its tests.
std::string narrowVectorComparesInText(const std::string& llvmIR);

// Assembly for the target (for `tlc emit --stage=asm`).
std::string emitAssembly(const ir::Module& lowered, const CpuOptions& options);

// The CPU name and feature string that `options` resolve to on this host.
std::string describeTarget(const CpuOptions& options);

// "" when LLVM can generate code for options.cpu / options.features on this
// host; else the problem, with the valid choices (an unknown CPU or feature,
// with a close name when there is one; a 32-bit CPU, or SSE/SSE2 turned off,
// for x86-64).
std::string checkCpuOptions(const CpuOptions& options);

}  // namespace tlc::cpu
