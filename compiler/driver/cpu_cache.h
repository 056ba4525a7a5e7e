// CPU kernels through the kernel cache (kernel_cache.h): the shared object
// of a module is built once per (tile IR after the front end, CPU name and
// features, optimization level, tlc version) and reused by later runs, which
// skip lowering and LLVM entirely. The result is used like a JIT module.
//
// `tlc run --target=cpu` (runOnCpu) and `tlc build --target=cpu`
// (buildForCpuCached) go through it unless the user asked to see the
// compilation (--print-after-all, --time-passes, LLVM dumps).
#pragma once

#include <memory>

#include "compiler/backends/cpu/cpu_backend.h"
#include "compiler/driver/kernel_cache.h"
#include "compiler/ir/ir.h"
#include "compiler/support/diagnostics.h"

namespace tlc::driver {

// The cache key of a module built for the CPU with `options`.
std::string cpuCacheKey(const ir::Module& module, const cpu::CpuOptions& options);

// Builds (or finds in `cache`) the module's shared object and opens it.
// Null after reporting errors. *hit tells whether the cache answered. With
// the cache disabled this JIT-compiles, as compileForCpu does.
std::unique_ptr<cpu::CpuJitModule> compileForCpuCached(const ir::Module& module, const cpu::CpuOptions& options,
                                                       DiagnosticEngine& diags, const KernelCache& cache,
                                                       bool* hit = nullptr);

// `tlc build --target=cpu`: writes the module's shared object to `outPath`,
// copied from `cache` when an entry exists (keyed like cpuCacheKey and the
// module's metadata, so the copy is byte for byte what a build writes), else
// built and stored. `outPath` is replaced whole (replaceNamedFile), never
// rewritten: a process that has loaded the old library keeps it intact.
// Returns the process exit code, as buildForCpu does.
int buildForCpuCached(const ir::Module& module, const std::string& outPath, const cpu::CpuOptions& options,
                      DiagnosticEngine& diags, const KernelCache& cache, bool* hit = nullptr);

}  // namespace tlc::driver
